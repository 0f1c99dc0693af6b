"""Lexical shortlists (core.infer.shortlist): link counts, per-batch candidates, and
search over a shortlist against search over the whole vocabulary for every family."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch import nn

from core.errors import ConfigError
from core.infer.beam import beam_search
from core.infer.ensemble import Ensemble
from core.infer.greedy import greedy
from core.infer.shortlist import LexicalCounts, Shortlist, count_links, parse_spec
from tests.core.conftest import train_tiny_demo_run
from tests.core.family_models import NAMES, VOCAB, inputs, model_for


def small_counts() -> LexicalCounts:
    # source 5 -> target 7 (3 links) and 8 (1); source 6 -> target 9 (2); 4 unaligned
    src = [[5, 6], [5, 4], [5, 6, 5]]
    tgt = [[7, 9], [7, 10], [7, 9, 8]]
    links = [[(0, 0), (1, 1)], [(0, 0)], [(0, 0), (1, 1), (2, 2)]]
    return count_links(src, tgt, links, src_vocab_size=12, tgt_vocab_size=12)


def test_link_counts_rank_translations_by_frequency():
    c = small_counts()
    assert list(zip(c.src.tolist(), c.tgt.tolist(), c.count.tolist(), strict=True)) == [
        (5, 7, 3), (5, 8, 1), (6, 9, 2)]
    assert c.target_freq.tolist() == [0, 0, 0, 0, 0, 0, 0, 3, 1, 2, 1, 0]
    capped = count_links([[5, 5]], [[7, 8]], [[(0, 0), (1, 1), (0, 1)]], 12, 12, keep=1)
    assert capped.tgt.tolist() == [8]  # 5->8 twice beats 5->7 once


def test_candidates_are_specials_frequent_words_and_each_source_words_best(tmp_path):
    counts = small_counts()
    path = counts.save(tmp_path / "lex.npz")
    sl = Shortlist(LexicalCounts.load(path), per_word=1, frequent=1)
    # 7 is the most frequent target word; 5's best is 7, 6's best is 9; 8 and 10 are not in
    assert sl.candidates(torch.tensor([[5, 6, 0]])).tolist() == [0, 1, 2, 3, 7, 9]
    assert sl.candidates(torch.tensor([[4, 0]])).tolist() == [0, 1, 2, 3, 7]
    sl2 = Shortlist(counts, per_word=2, frequent=0)
    assert sl2.candidates(torch.tensor([[5], [11]])).tolist() == [0, 1, 2, 3, 7, 8]
    assert parse_spec("30,200") == (30, 200)
    with pytest.raises(ConfigError, match="PER_WORD,FREQUENT"):
        parse_spec("30")
    with pytest.raises(ConfigError, match="1 <= words per source word"):
        Shortlist(counts, per_word=0)


def test_a_damaged_lexicon_file_names_itself(tmp_path):
    bad = tmp_path / "shortlist.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ConfigError, match="shortlist.npz.*rebuilt"):
        LexicalCounts.load(bad)


def output_layer(model) -> nn.Linear:
    layers = [m for m in model.modules() if isinstance(m, nn.Linear) and m.out_features == VOCAB]
    assert len(layers) == 1
    return layers[0]


SUBSET = torch.tensor([0, 1, 2, 3, 5, 8, 9, 12, 13, 17])


@pytest.mark.parametrize("min_len", [0, 3])
@pytest.mark.parametrize("name", NAMES)
def test_search_over_a_shortlist_equals_search_with_the_other_words_ruled_out(name, min_len):
    """Searching over K candidates must give the hypotheses (tokens, scores) of a full
    search whose other V - K words have (numerically) zero probability."""
    src, lens, extra = inputs()
    model = model_for(name)
    masked = model_for(name)
    with torch.no_grad():
        out = output_layer(masked)
        if out.bias is None:
            out.bias = nn.Parameter(torch.zeros(VOCAB))
        off = torch.ones(VOCAB, dtype=torch.bool)
        off[SUBSET] = False
        out.bias[off] = -1e4
    opts = dict(max_len_ratio=1.5, min_len=min_len, **extra)
    g_short = greedy(model, src, lens, out_vocab=SUBSET, **opts)
    g_full = greedy(masked, src, lens, **opts)
    b_short = beam_search(model, src, lens, beam=3, n_best=2, out_vocab=SUBSET, **opts)
    b_full = beam_search(masked, src, lens, beam=3, n_best=2, **opts)
    for gs, gf in zip(g_short, g_full, strict=True):
        assert gs.tokens == gf.tokens
        assert set(gs.tokens) <= set(SUBSET.tolist())
        assert gs.score == pytest.approx(gf.score, abs=1e-4)
    for hs, hf in zip(b_short, b_full, strict=True):
        assert [h.tokens for h in hs] == [h.tokens for h in hf]
        assert [h.score for h in hs] == pytest.approx([h.score for h in hf], abs=1e-4)
        np.testing.assert_allclose(hs[0].attention, hf[0].attention, atol=1e-5)


@pytest.mark.parametrize("name", ["luong-global-general", "transformer"])
def test_a_shortlist_of_the_whole_vocabulary_changes_nothing(name):
    src, lens, extra = inputs()
    model = model_for(name)
    everything = torch.arange(VOCAB)
    full = beam_search(model, src, lens, beam=4, max_len_ratio=1.5, **extra)
    same = beam_search(model, src, lens, beam=4, max_len_ratio=1.5, out_vocab=everything,
                       **extra)
    for a, b in zip(full, same, strict=True):
        assert a[0].tokens == b[0].tokens
        assert a[0].score == pytest.approx(b[0].score, abs=1e-5)


def test_an_ensemble_searches_over_the_shortlist():
    src, lens, extra = inputs()
    ens = Ensemble([model_for("luong-global-general", 0), model_for("luong-global-general", 1)])
    hyps = beam_search(ens, src, lens, beam=3, out_vocab=SUBSET, max_len_ratio=1.5)
    assert all(set(h[0].tokens) <= set(SUBSET.tolist()) for h in hyps)
    assert any(h[0].tokens for h in hyps)


def test_target_side_context_through_the_id_mapping_searches_over_the_shortlist():
    """A source-context model given its own translations as context (TargetIdsAsSource,
    separate vocabularies) takes the shortlist like any model."""
    from core.infer.target_context import TargetIdsAsSource

    src, lens, extra = inputs()
    model = model_for("context_transformer")
    table = torch.arange(VOCAB).flip(0)  # target id i is source id V - 1 - i
    wrapped = TargetIdsAsSource(model, table)
    opts = dict(out_vocab=SUBSET, max_len_ratio=1.5, min_len=2, **extra)
    for hyps in (greedy(wrapped, src, lens, **opts),
                 [h[0] for h in beam_search(wrapped, src, lens, beam=3, **opts)]):
        assert all(len(h.tokens) >= 2 and set(h.tokens) <= set(SUBSET.tolist()) for h in hyps)


def test_links_past_their_sentence_are_refused():
    with pytest.raises(ValueError, match="points past its sentence pair"):
        count_links([[5, 6]], [[7]], [[(1, 1)]], 12, 12)


def test_a_lexicon_made_for_other_vocabularies_is_told_apart():
    counts = small_counts()
    assert counts.fits(12, 12)
    assert not counts.fits(12, 13) and not counts.fits(11, 12)


def test_a_shortlist_without_the_specials_in_place_is_refused():
    src, lens, _ = inputs()
    model = model_for("luong-global-general")
    for bad in (torch.tensor([0, 1, 3, 5]), torch.tensor([0, 1, 2, 3, 9, 5])):
        with pytest.raises(ValueError, match="starting with 0..EOS"):
            greedy(model, src, lens, out_vocab=bad)


# --- a trained run's shortlist, end to end ------------------------------------------------
@pytest.fixture(scope="module")
def tiny_ws(tmp_path_factory):
    """The demo corpus, a tiny run trained for a few steps and a guided one like it."""
    root = tmp_path_factory.mktemp("shortlist") / "ws"
    train_tiny_demo_run(root, steps=3, dev_sample=4)
    return train_tiny_demo_run(root, steps=3, dev_sample=4, name="tiny-guided",
                               guided_alignment=0.5)


def test_a_guided_runs_shortlist_reuses_its_training_links(tiny_ws):
    from core.services.shortlist_store import load_shortlist
    from core.workspace.store import Workspace

    logs: list[str] = []
    with Workspace.open(tiny_ws, create=False) as ws:
        load_shortlist(ws, "tiny-guided", log=logs.append)
    assert any("reusing the stored alignments" in m for m in logs), logs
    assert not any("aligning" in m for m in logs)


def test_a_runs_lexicon_comes_from_its_training_split_and_is_stored(tiny_ws):
    from core.services.shortlist_store import lexicon_path, load_shortlist
    from core.train.artifacts import load_text_side
    from core.workspace.store import Workspace

    logs: list[str] = []
    with Workspace.open(tiny_ws, create=False) as ws:
        run = ws.get_run("tiny")
        sl = load_shortlist(ws, "tiny", per_word=1, frequent=0, log=logs.append)
        assert lexicon_path(ws, run.id).is_file()
        src_vocab, tgt_vocab, _, _ = load_text_side(ws.run_dir(run.id))
        counts = LexicalCounts.load(lexicon_path(ws, run.id))
        (links_file,) = (ws.get_corpus(run.corpus_id).path / "alignments").glob("*.pharaoh")
        # the counts are the stored links' counts over the training pairs: recount one
        # source word's from the link file and the split's token ids
        from core.config import RunConfig
        from core.data.dataset import text_to_tokens
        from core.services.corpora import load_split_corpora
        from core.train.artifacts import load_text_side as side
        from core.train.guidance import read_links

        _, _, src_pre, tgt_pre = side(ws.run_dir(run.id))
        config = RunConfig.from_dict(run.config)
        _, parts = load_split_corpora(ws, run.corpus_id, config.train.seed)
        pairs = [(src_vocab.encode(text_to_tokens(p.src, src_pre, src_vocab)),
                  tgt_vocab.encode(text_to_tokens(p.tgt, tgt_pre, tgt_vocab)))
                 for p in parts["train"].pairs]
        pairs = [(s, t) for s, t in pairs  # what the run trained on: non-empty, not too long
                 if s and t and max(len(s), len(t)) <= config.data.max_len]
        links = read_links(links_file, len(pairs))
        casa = src_vocab.encode(["casa"])[0]
        recount: dict[int, int] = {}
        for (s, t), ls in zip(pairs, links, strict=True):
            for i, j in ls:
                if s[i] == casa:
                    recount[t[j]] = recount.get(t[j], 0) + 1
        mine = counts.src == casa
        assert dict(zip(counts.tgt[mine].tolist(), counts.count[mine].tolist(),
                        strict=True)) == recount
        # and they make sense (eflomal samples: only its stable links are asserted)
        assert tgt_vocab.decode(sl.table[casa].tolist()) in (["home"], ["house"])
        assert "train" in tgt_vocab.decode(
            Shortlist(counts, per_word=2).table[src_vocab.encode(["tren"])[0]].tolist())
        # (the guided run's training stored these pairs' links: they are reused)
        assert any("reusing the stored alignments" in m for m in logs), logs
        logs.clear()
        again = load_shortlist(ws, "tiny", per_word=3, frequent=10, log=logs.append)
        assert logs == []  # the stored lexicon is read, nothing is aligned again
        assert again.table.shape == (len(src_vocab), 3)


def test_translate_with_a_shortlist(tiny_ws, tmp_path, capsys):
    from core.cli import run_cli

    inp = tmp_path / "in.txt"
    inp.write_text("¿Dónde está la estación de tren?\nUna botella de agua.\n", encoding="utf-8")
    base = ["--workspace", str(tiny_ws), "translate", "--run", "tiny", "--beam", "3",
            "--input", str(inp)]
    assert run_cli(base) == 0
    full = capsys.readouterr().out
    # a shortlist holding every target word decodes exactly as the whole vocabulary does
    assert run_cli([*base, "--shortlist", "200,100000"]) == 0
    assert capsys.readouterr().out == full
    assert run_cli([*base, "--shortlist", "1,0", "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    from core.services.shortlist_store import load_shortlist
    from core.train.artifacts import load_text_side
    from core.workspace.store import Workspace

    with Workspace.open(tiny_ws, create=False) as ws:
        sl = load_shortlist(ws, "tiny", per_word=1, frequent=0)
        src_vocab, tgt_vocab, _, _ = load_text_side(ws.run_dir(ws.get_run("tiny").id))
    assert len(records) == 2
    # one batch: its candidates are those of both sentences' source words
    src = torch.tensor([i for rec in records for i in src_vocab.encode(rec["source_tokens"])])
    allowed = set(sl.candidates(src[None]).tolist())
    assert len(allowed) < len(tgt_vocab) // 4
    produced = [set(tgt_vocab.encode(rec["target_tokens"])) for rec in records]
    assert all(produced) and set.union(*produced) <= allowed


def test_evaluate_with_a_shortlist_names_the_system_and_scores_its_translations(
        tiny_ws, capsys):
    from core.cli import run_cli

    base = ["--workspace", str(tiny_ws), "evaluate", "--run", "tiny", "--beam", "2",
            "--max-sentences", "20"]
    assert run_cli(base) == 0
    plain = capsys.readouterr().out
    assert run_cli([*base, "--shortlist", "200,100000"]) == 0
    listed = capsys.readouterr().out
    assert "tiny +shortlist 200,100000" in listed

    def scores(table: str, system: str) -> list[str]:
        row = next(line for line in table.splitlines() if line.startswith(f"| {system} |"))
        return row.split("|")[2:]  # BLEU, chrF, TER, tok. BLEU, perplexity

    # every target word is a candidate: the same translations, the same scores
    assert scores(listed, "tiny +shortlist 200,100000") == scores(plain, "tiny")
    from core.workspace.store import Workspace

    with Workspace.open(tiny_ws, create=False) as ws:
        tests = [e.test_name for e in ws.evaluations(ws.get_run("tiny").id)]
    # stored apart from the full-vocabulary evaluation
    assert "demo:test[:20]" in tests and "demo:test[:20] +shortlist 200,100000" in tests
    capsys.readouterr()
    assert run_cli(["--workspace", str(tiny_ws), "evaluate", "--run", "tiny",
                    "--contrastive", "x.json", "--shortlist"]) == 2
    assert "--shortlist only changes search: drop it" in capsys.readouterr().err


def test_a_bundled_run_trained_elsewhere_gets_no_shortlist_from_the_demo_corpus(tmp_path):
    """The demo workspace's shipped runs were trained on Tatoeba, not on the demo corpus
    they are attached to: a lexicon from that corpus would be wrong, so none is built."""
    from core.services.demo import BUNDLED_MARK, ensure_demo_workspace
    from core.services.shortlist_store import load_shortlist
    from core.workspace.store import Workspace

    root = ensure_demo_workspace(tmp_path / "demo")
    with Workspace.open(root, create=False) as ws:
        runs = ws.list_runs()
        assert runs and all((ws.run_dir(r.id) / BUNDLED_MARK).is_file() for r in runs)
        with pytest.raises(ConfigError, match="installed from a bundle"):
            load_shortlist(ws, runs[0].id)
        # a demo workspace made before the mark existed gets it on its next opening
        for r in runs:
            (ws.run_dir(r.id) / BUNDLED_MARK).unlink()
    ensure_demo_workspace(root)
    with Workspace.open(root, create=False) as ws:
        assert all((ws.run_dir(r.id) / BUNDLED_MARK).is_file() for r in ws.list_runs())


def test_a_comparison_decodes_each_side_over_its_own_shortlist_or_none(tiny_ws):
    """translation.compare (the Translate screen's baseline view): the main run over its
    shortlist, the baseline over the whole vocabulary, exactly as it does alone."""
    from core.services import translation
    from core.services.shortlist_store import load_shortlist
    from core.train.artifacts import load_text_side
    from core.workspace.store import Workspace

    sentences = ["¿Dónde está la estación de tren?", "Una botella de agua sin gas."]
    with Workspace.open(tiny_ws, create=False) as ws:
        main = translation.open_session(ws, ["tiny"])
        base = translation.open_session(ws, ["tiny-guided"])
        sl = load_shortlist(ws, "tiny", per_word=1, frequent=0)
        src_vocab, _, _, _ = load_text_side(ws.run_dir(ws.get_run("tiny").id))
    alone = translation.translate(base, sentences, beam=2)
    both = translation.compare(main, base, sentences, beam=2, shortlists=(sl, None))
    assert [t.target_ids for t in both.baseline] == [t.target_ids for t in alone]
    src = torch.tensor([[i for t in both.main for i in src_vocab.encode(t.source_tokens)]])
    allowed = set(sl.candidates(src).tolist())
    assert all(t.target_ids and set(t.target_ids) <= allowed for t in both.main)
