"""OpenNMT-py 3.5.1's own outputs on the fixtures of experiments/onmt_fixtures.sh, read
back: tests/fixtures/onmt/<kind>/ holds model.pt (the released checkpoint), beam5.txt and
beam5.log.gz (`onmt_translate -tgt ... -beam_size 5 -verbose`: per sentence PRED, PRED
SCORE and GOLD SCORE, 4 decimals), greedy.txt and greedy.log.gz (`-beam_size 1
-attn_debug`: the attention of each translation, one row per output token and `</s>`,
7 decimals); tests/fixtures/onmt/test.es and test.en the sentences. The transformer kind
keeps its logs as .xz, its beam translations in beam5.log only and the attention of its
first 100 greedy translations (tests/fixtures/onmt/transformer: the repository's size)."""
from __future__ import annotations

import gzip
import lzma
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "onmt"
KINDS = ("lstm-general-feed", "lstm-brnn-mlp", "lstm-dot-std")


@dataclass
class BeamLine:
    """One sentence of the beam-5 log."""

    pred: str
    pred_score: float
    gold_score: float


def _log(kind: str, name: str) -> str:
    """A log's text, from `name`.gz (the RNN kinds) or `name`.xz (the transformer)."""
    gz, xz = FIXTURES / kind / f"{name}.gz", FIXTURES / kind / f"{name}.xz"
    if gz.exists():
        return gzip.decompress(gz.read_bytes()).decode("utf-8")
    return lzma.decompress(xz.read_bytes()).decode("utf-8")


def sentences() -> tuple[list[str], list[str]]:
    """The source and reference sentences OpenNMT-py read."""
    read = lambda name: (FIXTURES / name).read_text(encoding="utf-8").splitlines()  # noqa: E731
    return read("test.es"), read("test.en")


def beam_log(kind: str) -> list[BeamLine]:
    """PRED, PRED SCORE and GOLD SCORE of each sentence, in order."""
    text = _log(kind, "beam5.log")
    preds = re.findall(r"^PRED \d+: (.*)$", text, re.M)
    pred_scores = [float(x) for x in re.findall(r"^PRED SCORE: (\S+)$", text, re.M)]
    gold_scores = [float(x) for x in re.findall(r"^GOLD SCORE: (\S+)$", text, re.M)]
    assert len(preds) == len(pred_scores) == len(gold_scores), kind
    return [BeamLine(*row) for row in zip(preds, pred_scores, gold_scores, strict=True)]


def attention_log(kind: str) -> list[np.ndarray]:
    """Per sentence the attention matrix of the greedy translation: (output tokens + 1)
    x source tokens."""
    text = _log(kind, "greedy.log")
    blocks = re.split(r"^\[[^\]]* INFO\] ", text, flags=re.M)
    out = []
    for block in blocks:
        lines = block.split("\n")
        rows = [line.split()[1:] for line in lines[1:] if line.strip()]
        if not rows or not lines[0].strip() or "Loading" in lines[0]:
            continue
        out.append(np.array([[float(x) for x in row] for row in rows]))
    return out


def lines(kind: str, name: str) -> list[str]:
    """beam5.txt or greedy.txt (or greedy.txt.xz): OpenNMT-py's translations, one a line."""
    path = FIXTURES / kind / name
    if path.exists():
        return path.read_text(encoding="utf-8").splitlines()
    return lzma.decompress(path.with_name(name + ".xz").read_bytes()).decode("utf-8").splitlines()


def beam_ties(ours, logged: list[BeamLine], scorer, tol: float) -> int:
    """Check our beam-5 translations against onmt_translate's: the same translation scores
    its PRED SCORE within `tol`; a different one must be a tie (OpenNMT-py's translation,
    forced, scores the same log-prob / (length + 1) within `tol`). Returns the ties."""
    ties = 0
    for tr, line in zip(ours, logged, strict=True):
        if " ".join(tr.target_tokens) == line.pred:
            assert abs(tr.score - line.pred_score) <= tol
            continue
        theirs = scorer.score([scorer.item(tr.source, line.pred)])[0]
        assert abs(theirs.log_prob / (len(theirs.token_log_probs) + 1) - tr.score) <= tol, \
            (tr.source, tr.text, line.pred)
        ties += 1
    return ties
