"""Unknown-word replacement (Luong et al. 2015b; Jean et al. 2015).

Each <unk> in the output is aligned to the source position its attention row weights
most; the <unk> becomes that source word's dictionary translation when the
dictionary knows the word, else a copy of the source word (names, numbers and rare
words are often copied unchanged). Source tokens are in natural order, one per
source id the model saw, as the user typed them (not '<unk>').
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.models.base import UNK


@dataclass
class Replacement:
    tgt_pos: int  # index into the output tokens
    src_pos: int  # the source position attended to most
    src_word: str
    replacement: str
    by: str  # 'copy' or 'dictionary'


@dataclass
class UnkReport:
    n_unk: int = 0  # <unk> tokens in the output
    n_copied: int = 0
    n_dictionary: int = 0
    replacements: list[Replacement] = field(default_factory=list)
    # output positions left as <unk> (no attention to align them, e.g. rnnencdec)
    unresolved: list[int] = field(default_factory=list)

    @property
    def n_replaced(self) -> int:
        """<unk> tokens replaced: copied source words plus dictionary entries."""
        return self.n_copied + self.n_dictionary


def lookup(dictionary: dict[str, str] | None, word: str) -> str | None:
    """The word's translation: exact entry first, then the lower-cased entry."""
    if not dictionary:
        return None
    if word in dictionary:
        return dictionary[word]
    return dictionary.get(word.lower())


def replace_unknowns(
    tgt_ids: list[int],
    tgt_tokens: list[str],
    src_tokens: list[str],
    attention: np.ndarray,
    dictionary: dict[str, str] | None = None,
) -> tuple[list[str], UnkReport]:
    """Replace every output token whose id is UNK.

    tgt_ids/tgt_tokens: the output without BOS/EOS (same length);
    attention: tgt x src with at least len(tgt_ids) rows (an EOS row may follow) and
    len(src_tokens) columns. Returns the new token strings and a report.
    """
    if len(tgt_ids) != len(tgt_tokens):
        raise ValueError(f"{len(tgt_ids)} ids but {len(tgt_tokens)} tokens")
    if attention.shape[0] < len(tgt_ids) or attention.shape[1] != len(src_tokens):
        raise ValueError(
            f"attention {attention.shape} does not fit {len(tgt_ids)} output and "
            f"{len(src_tokens)} source tokens"
        )
    out = list(tgt_tokens)
    report = UnkReport()
    for t, tok_id in enumerate(tgt_ids):
        if tok_id != UNK:
            continue
        report.n_unk += 1
        row = attention[t]
        if len(src_tokens) == 0 or not np.any(row > 0):
            report.unresolved.append(t)
            continue
        j = int(np.argmax(row))
        word = src_tokens[j]
        translated = lookup(dictionary, word)
        if translated is not None:
            report.n_dictionary += 1
            replacement, by = translated, "dictionary"
        else:
            report.n_copied += 1
            replacement, by = word, "copy"
        out[t] = replacement
        report.replacements.append(Replacement(t, j, word, replacement, by))
    return out, report
