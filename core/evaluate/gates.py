"""Where a context model's gate opens: the mean gate lambda per source word and class.

A gated context model (the multi-encoder Transformer, WS or TS) merges each source
token's representation with the context's as lambda * sentence + (1 - lambda) * context;
lambda is reported per token as its mean over d_model (core.infer.search.encoder_gates).
A low lambda means the token drew on the context. The thesis's question, "does the gate
open where context should matter?", is answered by comparing lambda at the words whose
translation depends on the previous sentence (the source pronouns of a contrastive
pronoun set: English "it", "they" ...) with lambda at every other word.

`GateProfile` collects (tokens, gates) pairs; `contrastive_gate_profile` fills one from
a contrastive set: each example's source with its context (the gates depend on the
source and the context only, not on the target, so one forced pass of the correct
candidate per example is enough).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.evaluate.report import Table
from core.jobs import JobContext

#: the source words whose translation a previous sentence decides, per source language:
#: personal pronouns (gender and number of the antecedent) and demonstratives
#: (forms that are mostly articles, as French "la" or Spanish "los", are left out)
WATCHED_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("it", "they", "them", "its", "their", "he", "she", "him", "her", "this", "that",
           "these", "those"),
    "fr": ("il", "elle", "ils", "elles", "lui", "leur", "eux", "ce", "cela", "ça", "celui",
           "celle", "ceux", "celles"),
    "de": ("er", "sie", "es", "ihn", "ihm", "ihnen", "dies", "dieser", "diese", "dieses"),
    "es": ("él", "ella", "ellos", "ellas", "lo", "le", "les", "eso", "esto", "esa", "ese",
           "esta", "este"),
}

#: class names of the three kinds of source token
WATCHED, OTHER, PUNCTUATION = "watched words", "other words", "punctuation"


def word_of(token: str) -> str:
    """A token (or a word's pieces joined) -> the lowercased word it spells, without
    sentencepiece's word-start mark '▁'."""
    return token.replace("\u2581", "").lower()


def _is_punctuation(token: str) -> bool:
    return not any(ch.isalnum() for ch in word_of(token))


def words_and_gates(tokens: Sequence[str], gates: Sequence[float], subword: bool
                    ) -> list[tuple[str, float]]:
    """(word, gate) per source word: sentencepiece pieces (`subword`) are joined into
    their words (a piece starting with '▁' starts one), each with its pieces' mean gate;
    punctuation pieces stand alone, so 'it.' (▁it + .) is the word 'it' and '.'. Word
    tokens are words already."""
    if not subword:
        return list(zip(tokens, (float(g) for g in gates), strict=True))
    words: list[tuple[list[str], list[float]]] = []
    for i, (piece, gate) in enumerate(zip(tokens, gates, strict=True)):
        alone = _is_punctuation(piece)
        if i == 0 or piece.startswith("\u2581") or alone or _is_punctuation(tokens[i - 1]):
            words.append(([], []))
        words[-1][0].append(piece)
        words[-1][1].append(float(gate))
    return [("".join(p), sum(v) / len(v)) for p, v in words]


def watched_words(lang: str) -> tuple[str, ...]:
    """The default watched words of source language `lang` (its primary subtag); () for a
    language without a list."""
    return WATCHED_WORDS.get(lang.split("-")[0].split("_")[0].lower(), ())


@dataclass
class GateStats:
    """A running mean of gate values."""

    count: int = 0
    total: float = 0.0

    def add(self, value: float) -> None:
        """Count one gate value."""
        self.count += 1
        self.total += float(value)

    @property
    def mean(self) -> float | None:
        """The mean gate value; None when nothing was added."""
        return self.total / self.count if self.count else None


@dataclass
class GateProfile:
    """Mean gate per watched word, per token class (watched words, other words,
    punctuation) and, at the watched words, per phenomenon (a contrastive set's type)."""

    watched: tuple[str, ...]
    by_word: dict[str, GateStats] = field(default_factory=dict)
    by_class: dict[str, GateStats] = field(default_factory=dict)
    by_phenomenon: dict[str, GateStats] = field(default_factory=dict)

    def add(self, tokens: Sequence[str], gates: Sequence[float], phenomenon: str = "",
            subword: bool = False) -> None:
        """One sentence: its source tokens and their gate values (same length); with
        `subword` the tokens are sentencepiece pieces, counted per word (words_and_gates)."""
        if len(tokens) != len(gates):
            raise ValueError(f"{len(tokens)} tokens but {len(gates)} gate values")
        for token, gate in words_and_gates(tokens, gates, subword):
            word = word_of(token)
            if not word:  # a lone word-start mark
                continue
            if word in self.watched:
                kind = WATCHED
                self.by_word.setdefault(word, GateStats()).add(gate)
                if phenomenon:
                    self.by_phenomenon.setdefault(phenomenon, GateStats()).add(gate)
            elif _is_punctuation(word):
                kind = PUNCTUATION
            else:
                kind = OTHER
            self.by_class.setdefault(kind, GateStats()).add(gate)

    def metrics(self) -> dict[str, float | None]:
        """The means to store with an evaluation: per class, then per watched word."""
        out: dict[str, float | None] = {
            f"mean_gate {k}": self.by_class.get(k, GateStats()).mean
            for k in (WATCHED, OTHER, PUNCTUATION)}
        out.update({f"mean_gate '{w}'": s.mean for w, s in sorted(self.by_word.items())})
        return out

    def to_table(self, title: str = "Mean gate per source word") -> Table:
        """Rows: each class, each watched word seen, each phenomenon (at its watched
        words): tokens counted and the mean lambda."""
        rows: list[list] = [[f"class: {k}", s.count, s.mean] for k, s in
                            ((k, self.by_class[k]) for k in (WATCHED, OTHER, PUNCTUATION)
                             if k in self.by_class)]
        rows += [[f"word: {w}", s.count, s.mean] for w, s in sorted(self.by_word.items())]
        rows += [[f"phenomenon: {p} (at watched words)", s.count, s.mean]
                 for p, s in sorted(self.by_phenomenon.items())]
        return Table(["tokens", "count", "mean gate"], rows, title, formats={"mean gate": ".3f"},
                     notes=["lambda = 1: the token kept its own representation; lower: it "
                            "drew on the context. Watched words: "
                            + ", ".join(self.watched) + "."])


def contrastive_gate_profile(scorer, examples: Sequence, watched: Sequence[str],
                             context_side: str = "src", batch_size: int = 64,
                             ctx: JobContext | None = None) -> GateProfile | None:
    """The GateProfile of a ForcedScorer's model on contrastive `examples` (each example
    once: its source, its context on `context_side` 'src' or 'tgt', its correct
    candidate); None when the model has no gates (a sentence-level or concatenation
    model)."""
    profile = GateProfile(tuple(w.lower() for w in watched))
    subword = getattr(scorer.src_vocab, "kind", "word") == "subword"
    for start in range(0, len(examples), max(1, batch_size)):
        if ctx is not None:
            ctx.wait_if_paused()
            ctx.check_cancelled()
        chunk = examples[start:start + max(1, batch_size)]
        items = []
        for ex in chunk:
            context = ex.context_src if context_side == "src" else ex.context_tgt
            previous = list(context)[-scorer.k_context:] if scorer.k_context > 0 else []
            items.append(scorer.item(ex.source, ex.correct, previous=previous))
        for ex, result in zip(chunk, scorer.score(items, batch_size=len(items)), strict=True):
            if result.gates is None:
                return None
            tokens = scorer.source_tokens(ex.source)  # one per id of item.src
            profile.add(tokens, result.gates[:len(tokens)].tolist(), ex.phenomenon, subword)
    return profile
