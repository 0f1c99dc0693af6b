"""The Evaluation screen's score table and BLEU-by-length figure: the columns and their
tips, what each cell shows (AER in %, with the gold set it was read on), the buckets'
ticks, and where exported heatmaps go."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.evaluate.metrics import MIN_BUCKET_SENTENCES, bucket_count

COLUMNS = ("Run", "Test set", "BLEU (test)", "chrF (test)", "TER (test)", "test perplexity",
           "best dev perplexity", "AER % (gold set)", "contrastive %",
           "gate: watched / other", "test sentences")
METRIC_KEYS = ("bleu", "chrf", "ter", "perplexity", "best_dev_ppl", "aer",
               "contrastive_accuracy", "gates", "sentences")
#: keys of evaluations stored before both fronts shared core.services.eval_scores
LEGACY_KEYS = {"best_dev_ppl": "ppl"}
HEADER_TIPS = (
    "The run, or the runs of an ensemble", "The set the run was scored on",
    "sacreBLEU on the test split (higher is better)", "chrF on the test split (higher is better)",
    "Translation edit rate on the test split (lower is better)",
    "Teacher-forced perplexity of the test references (lower is better)",
    "The lowest perplexity on the dev set during training (lower is better)",
    "Alignment error rate of the attention against the gold set, in % (lower is better)",
    "Contrastive set (evaluate --contrastive): the share of examples whose correct "
    "translation scored higher than every contrastive one",
    "Context models (evaluate --contrastive --gates): the mean gate lambda at the watched "
    "source words (pronouns) and at the other words; lower = drew more on the context",
    "Sentences of the test split translated")
AER_COLUMN = COLUMNS[2 + METRIC_KEYS.index("aer")]
#: columns shown only while some evaluation fills them (contrastive sets, gates)
OPTIONAL_KEYS = ("contrastive_accuracy", "gates")


def shown_cells(metrics: dict[str, Any]) -> list[Any]:
    """The metric cells of a row, as the columns say: AER (a stored fraction) in %;
    evaluations stored under older keys are read through LEGACY_KEYS."""
    values = [metrics.get(k, metrics.get(LEGACY_KEYS.get(k, ""))) for k in METRIC_KEYS]
    aer = METRIC_KEYS.index("aer")
    if isinstance(values[aer], int | float):
        values[aer] = 100 * float(values[aer])
    watched, other = (metrics.get(f"mean_gate {k}") for k in ("watched words", "other words"))
    if watched is not None or other is not None:
        values[METRIC_KEYS.index("gates")] = " / ".join(
            "–" if v is None else f"{v:.3f}" for v in (watched, other))
    return values


def length_systems(rows: list[tuple[Any, dict[str, Any], str]]
                   ) -> list[tuple[str, dict[str, Any], dict[str, int]]]:
    """(label, BLEU by bucket, sentences by bucket) of the rows (run ids, metrics, label)
    whose evaluation has BLEU by length (sentences unknown: {} for older evaluations)."""
    return [(label, m["bleu_by_length"], m.get("bucket_sizes") or {}) for _, m, label in rows
            if isinstance(m.get("bleu_by_length"), dict) and m["bleu_by_length"]]


def bucket_tick(bucket: str, sizes: list[int | None]) -> str:
    """A bucket's label under its bars: '10-19', its sentences on a second line, '*'
    when too few for its BLEU to mean much (core.evaluate.metrics.FEW_SENTENCES)."""
    count = bucket_count(sizes)
    if count is None:
        return bucket
    small = any(n is not None and 0 < n < MIN_BUCKET_SENTENCES for n in sizes)
    return f"{bucket}\nn={count}{'*' if small else ''}"


def heatmap_path(folder: Path, run_id: int, name: str, index: int) -> Path:
    """Where "Export heatmaps" writes pair `index`'s (from 0) heatmap under run `run_id`."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
    return folder / f"{run_id}-{safe}-{index + 1:03d}.png"


def aer_tooltip(metrics: dict[str, Any]) -> str:
    """Which gold set, how many of its pairs and which reading an AER cell was read on."""
    gold = metrics.get("aer_gold") or "the gold set"  # evaluations stored before aer_gold
    n = metrics.get("aer_sentences")
    reading = metrics.get("aer_reading")
    return (f"AER of the attention on {gold}" + (f" ({n} sentence pairs)" if n else "")
            + (f", read at '{reading}'" if reading else ""))
