"""Guide links from trained runs' own attention (train.guide_runs,
core/services/attention_links.py): the links are the argmax of the run's attention read
as `align` reads it, two runs are symmetrised, the file is stored and reused, and an
alignment head trains on them from the command line."""
from __future__ import annotations

import pytest

from core.cli import run_cli
from core.config import RunConfig, TrainConfig
from core.errors import ConfigError
from core.evaluate.attention_aer import reading_alignments
from core.evaluate.goldsets import GoldSet
from core.evaluate.symmetrize import symmetrize_corpus
from core.infer.session import TranslationSession
from core.services import attention_links
from core.services.alignment_runs import default_reading
from core.services.training import load_split_corpora
from core.train.artifacts import load_model
from core.workspace.store import Workspace
from tests.core.conftest import train_tiny_demo_run


def _train_lines(ws, n: int):
    info = ws.get_run("tiny")
    loaded = load_model(ws.run_dir(info.id), "best", run_config=info.config)
    _, parts = load_split_corpora(ws, info.corpus_id, loaded.config.train.seed)
    pairs = parts["train"].pairs[:n]
    src = [loaded.src_pre.tokenize(p.src) for p in pairs]
    tgt = [loaded.tgt_pre.tokenize(p.tgt) for p in pairs]
    return loaded, src, tgt


def test_links_are_the_attention_argmax_that_align_reads_and_are_stored(tmp_path):
    root = train_tiny_demo_run(tmp_path / "ws", steps=8, dev_sample=0)
    with Workspace.open(root) as ws:
        loaded, src, tgt = _train_lines(ws, 40)
        links = attention_links.run_attention_links(loaded, src, tgt)
        # the same links as `align` finds at the run's reading, sink left out
        session = TranslationSession.open(ws, ["tiny"])
        reading = default_reading(loaded.config)
        gold = GoldSet("train", src, tgt, [None] * len(src), "es", "en")
        found = reading_alignments(session, gold, [(reading, True)])[(reading, True)]
        assert links == [sorted(a.sure) for a in found]
        assert all(len({t for _, t in pairs}) == len(t_toks) for pairs, t_toks in
                   zip(links, tgt, strict=True))  # one link per target token
        corpus = ws.get_corpus(ws.get_run("tiny").corpus_id).path
        logs: list[str] = []
        both = attention_links.attention_guide_links(ws, corpus, src, tgt, ["tiny", "tiny"],
                                                     log=logs.append)
        reverse = attention_links.run_attention_links(loaded, tgt, src)
        expected = symmetrize_corpus(links, [[(s, t) for t, s in p] for p in reverse])
        assert both == [sorted(a.sure) for a in expected]
        assert logs[0].startswith("reading the attention of tiny, tiny over 40 training pairs")
        again = attention_links.attention_guide_links(ws, corpus, src, tgt, ["tiny", "tiny"],
                                                      log=logs.append)
        assert again == both and logs[1].startswith("reusing the stored attention links")
        # another run set (one run) is another file
        one = attention_links.attention_guide_links(ws, corpus, src, tgt, ["tiny"],
                                                    log=logs.append)
        assert one == links and logs[2].startswith("reading the attention")


def test_guide_runs_are_checked():
    for bad in ("a,b,c", "a,", ""):
        with pytest.raises(ConfigError, match="give one trained run, or a run and its reverse"):
            attention_links.guide_run_names(bad)
    with pytest.raises(ConfigError, match="set train.guided_alignment > 0 too"):
        RunConfig(train=TrainConfig(guide_runs="x")).validate()


def test_an_alignment_head_trains_on_its_own_runs_attention(tmp_path, capsys):
    root = train_tiny_demo_run(tmp_path / "ws", steps=8, dev_sample=0)
    assert run_cli(["--workspace", str(root), "train", "--alignment-head", "tiny",
                    "--guide-runs", "tiny", "--max-steps", "12", "--threads", "1",
                    "--quiet"]) == 0
    printed = capsys.readouterr()
    assert "guided alignment: reading the attention of tiny over" in printed.out + printed.err
    assert "eflomal" not in printed.out + printed.err
    with Workspace.open(root) as ws:
        config = RunConfig.from_dict(ws.get_run("tiny-head").config)
        assert config.train.guide_runs == "tiny" and ws.get_run("tiny-head").steps == 12
