"""Document-level test sets: corpus BLEU of several systems (sentence-level baseline,
concatenation, context-aware Transformer with each training strategy and context
depth) on the same test documents, in the layout of the thesis's Table 5.5.

Test documents are lists of (source, reference) sentences; each system gives, for each
document, one hypothesis per sentence. BLEU is corpus BLEU (core.evaluate.metrics,
sacrebleu) over all documents' sentences concatenated in document order, so every
system is scored on exactly the same sentences. The delta column is each system's BLEU
minus the baseline's.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import CorpusError
from core.evaluate.metrics import Score, corpus_bleu
from core.evaluate.report import Table

TestDocument = Sequence[tuple[str, str]]  # (source, reference) per sentence, in order

COLUMNS = ["system", "training strategy", "context depth", "BLEU", "Δ BLEU"]


@dataclass(frozen=True)
class SystemInfo:
    """How a system was built, for the table's row labels. `strategy`: e.g.
    'sentence-level', 'concat', 'ws' (weight sharing), 'ts' (two-stage);
    `context_depth`: context-encoder layers (None where it does not apply)."""

    strategy: str = ""
    context_depth: int | None = None


@dataclass
class DocBleuResult:
    """`scores[name]`: sacrebleu corpus BLEU of each system (with its signature);
    `baseline`: the system the deltas are taken against."""

    scores: dict[str, Score]
    baseline: str
    info: dict[str, SystemInfo] = field(default_factory=dict)
    n_documents: int = 0
    n_sentences: int = 0

    def delta(self, name: str) -> float:
        """BLEU of system `name` minus the baseline's (BLEU points); KeyError for an unknown
        name."""
        return self.scores[name].score - self.scores[self.baseline].score

    def to_table(self, title: str = "") -> Table:
        """One row per system: strategy, context depth, BLEU and delta against the baseline,
        with the sacreBLEU signatures as notes."""
        rows = []
        for name, score in self.scores.items():
            info = self.info.get(name, SystemInfo())
            rows.append([name, info.strategy or None, info.context_depth, round(score.score, 2),
                         None if name == self.baseline else round(self.delta(name), 2)])
        sigs = sorted({s.signature for s in self.scores.values()})
        title = title or (f"Document-level BLEU ({self.n_documents} documents, "
                          f"{self.n_sentences} sentences)")
        notes = [f"Δ BLEU against {self.baseline!r}.", *(f"sacreBLEU {s}" for s in sigs)]
        return Table(list(COLUMNS), rows, title, notes)

    def save(self, stem: str | Path, title: str = "") -> tuple[Path, Path]:
        """Write ``stem.md`` and ``stem.csv`` (each atomically); returns both paths."""
        stem = Path(stem)
        table = self.to_table(title)
        md = table.save(stem.with_name(stem.name + ".md"), "md")
        csv = table.save(stem.with_name(stem.name + ".csv"), "csv")
        return md, csv


def _flatten(documents: Sequence[TestDocument], systems: Mapping[str, Sequence[Sequence[str]]]
             ) -> tuple[list[str], dict[str, list[str]]]:
    """References and each system's hypotheses, concatenated in document order; a
    CorpusError names the system and document whose counts do not match."""
    refs = [ref for doc in documents for _, ref in doc]
    hyps: dict[str, list[str]] = {}
    for name, docs in systems.items():
        if len(docs) != len(documents):
            raise CorpusError(None, None, f"system {name!r} has {len(docs)} documents but the test "
                              f"set has {len(documents)}; translate every test document")
        for d, (doc, out) in enumerate(zip(documents, docs, strict=True), start=1):
            if len(out) != len(doc):
                raise CorpusError(None, None, f"system {name!r}, document {d}: {len(out)} "
                                  f"hypotheses for {len(doc)} sentences; one per sentence")
        hyps[name] = [h for doc in docs for h in doc]
    return refs, hyps


def document_bleu(
    documents: Sequence[TestDocument], systems: Mapping[str, Sequence[Sequence[str]]],
    baseline: str | None = None, info: Mapping[str, SystemInfo] | None = None,
    tokenize: str = "13a",
) -> DocBleuResult:
    """Corpus BLEU of each system (name -> documents of hypotheses, in the test
    documents' order) on the concatenated test documents. `baseline` defaults to the
    first system; rows keep the systems' order."""
    if not systems:
        raise ValueError("give at least one system")
    baseline = baseline if baseline is not None else next(iter(systems))
    if baseline not in systems:
        raise ValueError(f"baseline {baseline!r} is not one of the systems {list(systems)}")
    refs, hyps = _flatten(documents, systems)
    if not refs:
        raise CorpusError(None, None, "the test documents hold no sentences")
    scores = {name: corpus_bleu(h, refs, tokenize=tokenize) for name, h in hyps.items()}
    return DocBleuResult(scores, baseline, dict(info or {}), len(documents), len(refs))
