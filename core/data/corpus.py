"""Sentence pairs and corpora: the raw text exactly as the user's files hold it."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SentencePair:
    """One source/target pair. `line` is the 1-based line of origin in the source-side
    file (0 when the pair was made in memory); `doc_id` names its document, if any."""

    src: str
    tgt: str
    doc_id: str | None = None
    line: int = 0


@dataclass
class Corpus:
    """An ordered list of pairs in one direction (src_lang -> tgt_lang).

    `warnings` collects what a lenient read repaired, so nothing changes silently."""

    pairs: list[SentencePair]
    src_lang: str
    tgt_lang: str
    name: str = ""
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.pairs)

    def documents(self) -> dict[str, list[int]]:
        """Document id -> indices of its pairs, in corpus order (first-seen order of
        documents). Pairs without a doc id belong to no document."""
        docs: dict[str, list[int]] = {}
        for i, pair in enumerate(self.pairs):
            if pair.doc_id is not None:
                docs.setdefault(pair.doc_id, []).append(i)
        return docs

    def has_documents(self) -> bool:
        """True when at least one pair belongs to a document (has a doc_id)."""
        return any(p.doc_id is not None for p in self.pairs)

    def subset(self, indices: list[int], name: str | None = None) -> Corpus:
        """A new corpus holding the pairs at `indices` (in that order); the pair objects
        are shared, not copied."""
        return Corpus(
            [self.pairs[i] for i in indices],
            self.src_lang,
            self.tgt_lang,
            name=self.name if name is None else name,
            warnings=list(self.warnings),
        )
