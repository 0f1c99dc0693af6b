"""Where alignments are read off the attention (core.evaluate.readings): at the step
predicting a word, one step later (Shift-Att) or both, and without the final-punctuation
sink; through attention_alignments and the align command."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import Tensor, nn

from core.cli import run_cli
from core.config import RunConfig
from core.data.preprocess import Preprocessor
from core.data.vocab import Vocab
from core.evaluate.aer import corpus_aer
from core.evaluate.alignment import Alignment
from core.evaluate.attention_aer import reading_alignments
from core.evaluate.goldsets import GoldSet
from core.evaluate.readings import drop_sink, is_punctuation, read_attention
from core.infer.session import TranslationSession
from core.models.base import Seq2Seq, Seq2SeqOutput
from core.train.artifacts import LoadedModel

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


def test_readings_pick_the_rows_of_the_predicting_and_the_next_step():
    a = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])  # 2 target words + EOS row
    assert read_attention(a, "predict").tolist() == [[1, 0], [0, 1]]
    assert read_attention(a, "shift").tolist() == [[0, 1], [0.5, 0.5]]
    assert read_attention(a, "sum").tolist() == [[0.5, 0.5], [0.25, 0.75]]
    # one step earlier; the first word keeps its own row
    assert read_attention(a, "previous").tolist() == [[1, 0], [1, 0]]
    with pytest.raises(ValueError, match="unknown attention reading 'later'"):
        read_attention(a, "later")


def test_the_final_full_stop_is_no_candidate_for_words():
    m = np.array([[0.2, 0.2, 0.6], [0.1, 0.1, 0.8]])  # 'casa' and '.' over 'la casa .'
    out = drop_sink(m, ["la", "casa", "."], ["house", "."])
    assert out[0].tolist() == [0.5, 0.5, 0.0]  # the word's row renormalised without '.'
    assert out[1].tolist() == [0.1, 0.1, 0.8]  # punctuation may still align to '.'
    # no final punctuation: unchanged
    assert drop_sink(m, ["la", "casa", "x"], ["house", "."]).tolist() == m.tolist()
    assert is_punctuation("\u2581.") and is_punctuation("¿") and not is_punctuation("a.")


class LaggingModel(Seq2Seq):
    """Target row t attends 0.7 to source word min(t - lag, S - 1) (0 when negative) and
    spreads 0.3 over the others: with lag 1 the attention at a word's predicting step
    still sits on the previous word, the behaviour Shift-Att corrects; with lag -1 it
    already sits on the next word (an input-feeding Luong model's habit)."""

    family = "luong"

    def __init__(self, vocab: int, lag: int):
        super().__init__()
        self.vocab, self.lag = vocab, lag
        self.dummy = nn.Parameter(torch.zeros(1))

    def forward(self, src: Tensor, src_lens: Tensor, tgt_in: Tensor, **extra) -> Seq2SeqOutput:
        batch, width, steps = src.size(0), src.size(1), tgt_in.size(1)
        attn = torch.zeros(batch, steps, width)  # batch x T x S
        for b in range(batch):
            s = int(src_lens[b])
            for t in range(steps):
                attn[b, t, :s] = 0.3 / max(s - 1, 1)
                attn[b, t, min(max(t - self.lag, 0), s - 1)] = 0.7
        scores = torch.full((batch, steps, self.vocab), -math.log(self.vocab))
        return Seq2SeqOutput(scores + 0 * self.dummy, attn)


@pytest.mark.parametrize("lag, best", [(0, "predict"), (1, "shift"), (-1, "previous")])
def test_the_reading_that_undoes_the_models_lag_finds_the_diagonal(lag, best):
    words = ["a", "b", "c", "d", "x", "y", "z", "w"]
    vocab = Vocab(["<pad>", "<unk>", "<s>", "</s>", *words])
    loaded = LoadedModel(LaggingModel(len(vocab), lag), RunConfig(), vocab, vocab,
                         Preprocessor("es"), Preprocessor("en"), Path("none.pt"), 0)
    session = TranslationSession.from_loaded([loaded], ["lag"])
    src, tgt = [["a", "b", "c", "d"], ["b", "c", "d"]], [["x", "y", "z", "w"], ["y", "z", "w"]]
    golds = [Alignment({(i, i) for i in range(len(s))}) for s in src]
    gold = GoldSet("diag", src, tgt, golds, "es", "en")
    found = reading_alignments(session, gold, [("predict", False), ("shift", False),
                                               ("sum", False), ("previous", False)])
    aer = {r: corpus_aer(found[(r, False)], golds).aer for r, _ in found}
    assert aer[best] == min(aer.values())
    # 'previous' has no earlier row for a sentence's first word: those two stay wrong
    assert aer[best] == (pytest.approx(1 - 10 / 14) if best == "previous" else 0.0)
    assert all(aer[r] > 0.2 for r in ("predict", "shift", "previous") if r != best)


def test_align_cli_reports_every_reading_with_and_without_the_sink(tmp_path, capsys):
    from tests.core.conftest import train_tiny_demo_run

    root = train_tiny_demo_run(tmp_path / "ws", steps=2, dev_sample=2)
    out = tmp_path / "al"
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny",
                    "--gold-src", str(DEMO / "gold.es"), "--gold-tgt", str(DEMO / "gold.en"),
                    "--gold-links", str(DEMO / "gold.links"), "--reading", "all", "--no-sink",
                    "--out-dir", str(out)]) == 0
    table = capsys.readouterr().out
    names = ["tiny attention", "tiny attention (no sink)", "tiny attention (shift)",
             "tiny attention (shift, no sink)", "tiny attention (sum)",
             "tiny attention (sum, no sink)", "tiny attention (previous)",
             "tiny attention (previous, no sink)"]
    rows = [ln for ln in table.splitlines() if ln.startswith("| tiny attention")]
    assert [ln.split(" | ")[0][2:] for ln in rows] == names
    files = sorted(p.name for p in out.iterdir())
    assert len(files) == 8 and "tiny_attention_shift_no_sink.pharaoh" in files
    # every reading links each of the 56 gold sentences' target words once
    lines = (out / "tiny_attention_shift.pharaoh").read_text(encoding="utf-8").splitlines()
    en = (DEMO / "gold.en").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 56
    assert all(len(line.split()) == len(sent.split()) for line, sent in zip(lines, en, strict=True))


def test_align_cli_symmetrises_two_directions_each_at_its_own_reading(tmp_path, capsys):
    """`align --reverse-run`: an es->en and an en->es run, each read at its family's
    default reading (Luong: 'previous'), and their grow-diag-final-and symmetrisation,
    which equals symmetrising the two written Pharaoh files; several readings are
    refused with the reason."""
    from core.evaluate.alignment import read_pharaoh
    from core.evaluate.symmetrize import symmetrize_corpus
    from core.jobs import JobContext
    from core.services.demo import demo_config, import_demo_corpus
    from core.services.training import create_run, train_run
    from core.workspace.store import Workspace

    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        corpus_id = import_demo_corpus(ws)
    assert run_cli(["--workspace", str(root), "corpus", "import", str(DEMO / "demo.en"),
                    str(DEMO / "demo.es"), "--format", "parallel", "--src-lang", "en",
                    "--tgt-lang", "es", "--name", "rev"]) == 0
    with Workspace.open(root) as ws:
        for name, corpus in (("fwd", corpus_id), ("bwd", "rev")):
            config = demo_config(name, dict(emb_size=16, hidden_size=24), max_steps=4,
                                 valid_every=4, device="cpu")
            config.data.dev_sample = 2
            assert train_run(ws, create_run(ws, corpus, config, name), JobContext()).status \
                == "finished"
    capsys.readouterr()
    out = tmp_path / "al"
    gold_args = ["--gold-src", str(DEMO / "gold.es"), "--gold-tgt", str(DEMO / "gold.en"),
                 "--gold-links", str(DEMO / "gold.links")]
    assert run_cli(["--workspace", str(root), "align", "--run", "fwd", "--reverse-run", "bwd",
                    *gold_args, "--out-dir", str(out)]) == 0
    rows = [ln.split(" | ")[0][2:] for ln in capsys.readouterr().out.splitlines()
            if ln.startswith("| ") and "attention" in ln]
    assert rows == ["fwd attention (previous)", "bwd attention (rev, previous)",
                    "attention grow-diag-final-and (previous + previous)"]
    fwd = read_pharaoh(out / "fwd_attention_previous.pharaoh")
    rev = read_pharaoh(out / "bwd_attention_rev_previous.pharaoh")
    sym = read_pharaoh(out / "attention_grow-diag-final-and_previous_previous.pharaoh")
    assert len(fwd) == len(rev) == len(sym) == 56
    assert [a.sure for a in sym] == [a.sure for a in symmetrize_corpus(fwd, rev)]
    # grow-diag-final-and lies between the two directions' intersection and union
    assert all(set(f.sure) & set(r.sure) <= set(s.sure) <= set(f.sure) | set(r.sure)
               for f, r, s in zip(fwd, rev, sym, strict=True))
    assert [a.sure for a in fwd] != [a.sure for a in rev]
    assert run_cli(["--workspace", str(root), "align", "--run", "fwd", "--reverse-run", "bwd",
                    *gold_args, "--reading", "all"]) == 2
    assert "give one --reading" in capsys.readouterr().err


def test_align_remembers_the_best_reading_as_the_runs_default(tmp_path, capsys):
    """`align --reading all --remember`: the reading with the lowest AER becomes the run's
    default for later `align` runs, evaluations and the Attention screen."""
    from core.config import READING_CHOICES
    from core.evaluate.readings import ATTENTION_READINGS, READINGS
    from core.jobs import JobContext
    from core.services.alignment_runs import default_reading
    from core.services.demo import demo_config, import_demo_corpus
    from core.services.training import create_run, train_run
    from core.workspace.store import Workspace

    assert READING_CHOICES == ("", *READINGS)  # config's copy of the reading names
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        corpus_id = import_demo_corpus(ws)
        config = demo_config("tiny", dict(emb_size=16, hidden_size=24), max_steps=6,
                             valid_every=6, device="cpu")
        config.data.dev_sample = 2
        train_run(ws, create_run(ws, corpus_id, config, "tiny"), JobContext())
        family_default = default_reading(RunConfig.from_dict(ws.get_run("tiny").config))
    gold = ["--gold-set", "demo-gold", "--gold-src", str(DEMO / "gold.es"), "--gold-tgt",
            str(DEMO / "gold.en"), "--gold-links", str(DEMO / "gold.links")]
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny", *gold,
                    "--reading", "all", "--remember"]) == 0
    captured = capsys.readouterr()
    rows = {ln.split(" | ")[0][2:]: float(ln.split(" | ")[1])
            for ln in captured.out.splitlines() if ln.startswith("| tiny attention")}
    by_reading = {"predict": rows["tiny attention"],
                  **{r: rows[f"tiny attention ({r})"] for r in ATTENTION_READINGS if r != "predict"}}
    best = min(ATTENTION_READINGS, key=lambda r: (by_reading[r], ATTENTION_READINGS.index(r)))
    assert f"run tiny now reads its attention at '{best}' by default" in captured.err
    with Workspace.open(root) as ws:
        stored = RunConfig.from_dict(ws.get_run("tiny").config)
    assert stored.alignment_reading == best and default_reading(stored) == best
    # a later align without --reading reads the run where it was measured best
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny",
                    "--gold-set", "demo-gold"]) == 0
    shown = [ln.split(" | ")[0][2:] for ln in capsys.readouterr().out.splitlines()
             if ln.startswith("| tiny attention")]
    assert shown == ["tiny attention" if best == "predict" else f"tiny attention ({best})"]
    assert family_default in READINGS  # before --remember: the family's reading
    # --remember picks one run's reading: not with a reverse run
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny", "--reverse-run",
                    "tiny", "--gold-set", "demo-gold", "--remember"]) == 2
    assert "leave out --reverse-run" in capsys.readouterr().err
    # --forget drops the stored reading: the family's is the default again
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny", "--forget"]) == 0
    assert (f"the remembered reading '{best}' is dropped; it reads its attention at "
            f"'{family_default}'") in capsys.readouterr().err
    with Workspace.open(root) as ws:
        stored = RunConfig.from_dict(ws.get_run("tiny").config)
    assert stored.alignment_reading == "" and default_reading(stored) == family_default
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny", "--forget"]) == 0
    assert "no reading was remembered" in capsys.readouterr().err
    assert run_cli(["--workspace", str(root), "align", "--run", "tiny", "--forget",
                    "--remember"]) == 2
    assert "not both" in capsys.readouterr().err


def test_a_stored_reading_is_validated():
    raw = RunConfig().to_dict()
    raw["alignment_reading"] = "sideways"
    with pytest.raises(Exception, match="alignment_reading"):
        RunConfig.from_dict(raw, source="run.toml")
