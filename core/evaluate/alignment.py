"""Word alignments: sure/possible link sets, and the Pharaoh, TALP and WPT file formats.

A link is `(src_index, tgt_index)`, 0-based, in the orientation of the model that is
evaluated. Gold files often put English first; `swap=True` turns `en-fr` gold into links
for a `fr->en` model.

Formats read here:
- Pharaoh: one line per sentence, `i-j` sure, `i?j` or `ipj` possible, 0-based unless
  `one_based=True`.
- TALP: Pharaoh 1-based with `ipj` for possible links (WPT-03 trial.talp).
- WPT/NAACL: one link per line, `sent_id pos_1 pos_2 [S|P] [confidence]`, 1-based,
  grouped by sent_id (a missing S/P means S).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.atomic import write_text_atomic
from core.data.textio import CONVERT_TO_UTF8, decode_text, read_bytes, split_lines
from core.errors import AlignmentError, CorpusError

Link = tuple[int, int]  # (src_index, tgt_index), 0-based

_PHARAOH_LINK = re.compile(r"^([0-9]+)([-?p])([0-9]+)$")  # ASCII digits only
#: the default advice when a file looks 0-based but is read as 1-based, and the other
#: way round (the readers' keyword arguments; `align` names its options instead)
ZERO_BASED_ADVICE = "read it with one_based=False"
ONE_BASED_ADVICE = "read it with one_based=True"


@dataclass
class Alignment:
    """Sure and possible links of one sentence pair; every sure link is also possible
    (`possible` is completed with `sure` on construction). A predicted alignment has
    only sure links (`Alignment.of(links)`)."""

    sure: set[Link] = field(default_factory=set)
    possible: set[Link] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.sure = {(int(s), int(t)) for s, t in self.sure}
        self.possible = {(int(s), int(t)) for s, t in self.possible} | self.sure

    @classmethod
    def of(cls, links: Iterable[Link]) -> Alignment:
        """A predicted alignment: all links sure."""
        return cls(sure=set(links))

    @property
    def links(self) -> set[Link]:
        """All links (= possible, which includes sure)."""
        return self.possible

    def swapped(self) -> Alignment:
        """The same links seen from the other side: (i, j) -> (j, i)."""
        return Alignment({(t, s) for s, t in self.sure}, {(t, s) for s, t in self.possible})

    def to_matrix(self, src_len: int, tgt_len: int) -> np.ndarray:
        """tgt_len x src_len float matrix: 1 for sure, 0.5 for possible-only, else 0."""
        m = np.zeros((tgt_len, src_len), dtype=np.float32)
        for s, t in self.possible:
            m[t, s] = 0.5
        for s, t in self.sure:
            m[t, s] = 1.0
        return m

    def __len__(self) -> int:
        return len(self.possible)


@dataclass
class AlignmentCorpus:
    """Word alignments of a set of sentence pairs, (src, tgt) oriented: what a reader
    returns for a links file (tokens empty unless given, warnings such as indices that
    look off by one, WPT sentence ids) and what a gold set is (core.evaluate.goldsets stores and
    loads them with their tokenised sentences, name and languages; GoldSet is this type).
    """

    name: str = ""
    src_tokens: list[list[str]] = field(default_factory=list)
    tgt_tokens: list[list[str]] = field(default_factory=list)
    alignments: list[Alignment] = field(default_factory=list)
    src_lang: str = ""
    tgt_lang: str = ""
    warnings: list[str] = field(default_factory=list)
    ids: list[str] | None = None

    @property
    def sentences(self) -> list[Alignment]:
        """The alignments, one per sentence pair (the readers' word for them)."""
        return self.alignments

    def __len__(self) -> int:
        return len(self.alignments)

    def __iter__(self) -> Iterator[Alignment]:
        return iter(self.alignments)

    def __getitem__(self, i: int) -> Alignment:
        return self.alignments[i]

    @property
    def n_sure(self) -> int:
        """Sure links over all sentences."""
        return sum(len(a.sure) for a in self.alignments)

    @property
    def n_possible(self) -> int:
        """Links in P (which includes S)."""
        return sum(len(a.possible) for a in self.alignments)


# ---------------------------------------------------------------------------- checks


def _check_ranges(
    path: str | Path | None,
    raw: list[list[tuple[int, int, str, int]]],
    src_tokens: Sequence[Sequence[str]] | None,
    tgt_tokens: Sequence[Sequence[str]] | None,
    one_based: bool,
    swap: bool,
    as_one_based: str = ONE_BASED_ADVICE,
) -> list[str]:
    """Validate raw (first, second, token_text, line) links; return warnings.

    `raw` indices are already 0-based in the file's orientation; token lists are in the
    result's orientation (after `swap`). `as_one_based`: how to read the file as 1-based
    (the advice when it looks 1-based)."""
    warnings: list[str] = []
    n_links = sum(len(r) for r in raw)
    first_has_zero = any(a == 0 for r in raw for a, _, _, _ in r)
    second_has_zero = any(b == 0 for r in raw for _, b, _, _ in r)
    looks_one_based = (not one_based) and n_links > 0 and not first_has_zero and not second_has_zero
    hint = (" The indices look 1-based (no index 0 appears anywhere in the file): "
            f"{as_one_based}.") if looks_one_based else ""
    if looks_one_based:
        warnings.append(
            f"{path or '<input>'}: read as 0-based but no index 0 appears on either side in "
            f"{n_links} links; the file may be 1-based ({as_one_based})."
        )
    if src_tokens is None and tgt_tokens is None:
        return warnings
    first_toks, second_toks = (tgt_tokens, src_tokens) if swap else (src_tokens, tgt_tokens)
    first_name, second_name = ("target", "source") if swap else ("source", "target")
    for k, links in enumerate(raw):
        for a, b, text, line in links:
            for idx, toks, side in ((a, first_toks, first_name), (b, second_toks, second_name)):
                if toks is None:
                    continue
                if k >= len(toks):
                    raise AlignmentError(path, line, f"sentence {k + 1} has links but the token "
                                         f"lists hold only {len(toks)} sentences")
                n = len(toks[k])
                if idx >= n:
                    shown = idx + 1 if one_based else idx
                    raise AlignmentError(
                        path, line,
                        f"sentence {k + 1}: link '{text}' is outside the sentence: {side} index "
                        f"{shown} but the {side} sentence has {n} tokens ({'1' if one_based else '0'}-based)."
                        + hint,
                    )
    return warnings


def _finish(
    path: str | Path | None,
    raw: list[list[tuple[int, int, str, int]]],
    sure_flags: list[list[bool]],
    src_tokens: Sequence[Sequence[str]] | None,
    tgt_tokens: Sequence[Sequence[str]] | None,
    one_based: bool,
    swap: bool,
    ids: list[str] | None = None,
    as_one_based: str = ONE_BASED_ADVICE,
) -> AlignmentCorpus:
    for toks, name in ((src_tokens, "source"), (tgt_tokens, "target")):
        if toks is not None and len(toks) != len(raw):
            raise AlignmentError(path, None, f"{len(raw)} sentences of links but {len(toks)} "
                                 f"{name} sentences: the files must be line-parallel")
    warnings = _check_ranges(path, raw, src_tokens, tgt_tokens, one_based, swap,
                             as_one_based)
    sentences = []
    for links, flags in zip(raw, sure_flags, strict=True):
        sure = {(a, b) for (a, b, _, _), f in zip(links, flags, strict=True) if f}
        poss = {(a, b) for (a, b, _, _) in links}
        al = Alignment(sure, poss)
        sentences.append(al.swapped() if swap else al)
    return AlignmentCorpus(alignments=sentences, warnings=warnings, ids=ids)


# ---------------------------------------------------------------------------- readers


def parse_pharaoh(
    lines: Iterable[str],
    *,
    one_based: bool = False,
    swap: bool = False,
    src_tokens: Sequence[Sequence[str]] | None = None,
    tgt_tokens: Sequence[Sequence[str]] | None = None,
    path: str | Path | None = None,
    as_zero_based: str = ZERO_BASED_ADVICE,
    as_one_based: str = ONE_BASED_ADVICE,
) -> AlignmentCorpus:
    """Parse Pharaoh/TALP lines (one per sentence). `src_tokens`/`tgt_tokens` are the
    sentences in the result's orientation (after `swap`); given, links outside the
    sentence raise AlignmentError naming the sentence and the link. `as_zero_based` /
    `as_one_based`: the advice in errors and warnings when the file looks 0-based but is
    read as 1-based, or the other way round (default: this function's argument; a
    command names its own option)."""
    raw: list[list[tuple[int, int, str, int]]] = []
    flags: list[list[bool]] = []
    offset = 1 if one_based else 0
    for lineno, line in enumerate(lines, start=1):
        links: list[tuple[int, int, str, int]] = []
        sure: list[bool] = []
        for tok in line.split():
            m = _PHARAOH_LINK.match(tok)
            if m is None:
                raise AlignmentError(path, lineno, f"sentence {lineno}: link '{tok}' is not "
                                     "'i-j' (sure) or 'i?j' / 'ipj' (possible)")
            a, b = int(m.group(1)) - offset, int(m.group(3)) - offset
            if a < 0 or b < 0:
                raise AlignmentError(path, lineno, f"sentence {lineno}: link '{tok}' has index 0 "
                                     f"but the file was read as 1-based: {as_zero_based}")
            links.append((a, b, tok, lineno))
            sure.append(m.group(2) == "-")
        raw.append(links)
        flags.append(sure)
    return _finish(path, raw, flags, src_tokens, tgt_tokens, one_based, swap,
                   as_one_based=as_one_based)


def _ascii_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _read_lines(path: str | Path) -> list[str]:
    """The file's lines, split on '\\n' only (core.data.textio): errors name the line."""
    try:  # no lenient mode for alignments: the error says to convert the file
        text, _ = decode_text(read_bytes(path), path, advice=CONVERT_TO_UTF8)
    except AlignmentError:
        raise
    except CorpusError as exc:
        raise AlignmentError(exc.path, exc.line, exc.reason) from None
    return split_lines(text)


def read_pharaoh(
    path: str | Path,
    *,
    one_based: bool = False,
    swap: bool = False,
    src_tokens: Sequence[Sequence[str]] | None = None,
    tgt_tokens: Sequence[Sequence[str]] | None = None,
    as_zero_based: str = ZERO_BASED_ADVICE,
    as_one_based: str = ONE_BASED_ADVICE,
) -> AlignmentCorpus:
    """Read a Pharaoh file (`i-j` sure, `i?j`/`ipj` possible), see `parse_pharaoh`."""
    return parse_pharaoh(_read_lines(path), one_based=one_based, swap=swap,
                         src_tokens=src_tokens, tgt_tokens=tgt_tokens, path=path,
                         as_zero_based=as_zero_based, as_one_based=as_one_based)


def read_talp(
    path: str | Path,
    *,
    swap: bool = False,
    src_tokens: Sequence[Sequence[str]] | None = None,
    tgt_tokens: Sequence[Sequence[str]] | None = None,
    as_zero_based: str = "read it as Pharaoh (read_pharaoh): TALP is 1-based",
) -> AlignmentCorpus:
    """Read a TALP file: Pharaoh layout, 1-based, `i-j` sure and `ipj` possible."""
    return read_pharaoh(path, one_based=True, swap=swap, src_tokens=src_tokens,
                        tgt_tokens=tgt_tokens, as_zero_based=as_zero_based)


def read_wpt(
    path: str | Path,
    *,
    sent_ids: Sequence[str] | None = None,
    swap: bool = False,
    src_tokens: Sequence[Sequence[str]] | None = None,
    tgt_tokens: Sequence[Sequence[str]] | None = None,
) -> AlignmentCorpus:
    """Read a WPT/NAACL file: `sent_id pos_1 pos_2 [S|P] [confidence]` per line, 1-based.

    Sentences come in `sent_ids` order when given (ids without links get an empty
    alignment; a link with an unknown id is an error), else in order of first appearance.
    """
    order: list[str] = list(sent_ids) if sent_ids is not None else []
    groups: dict[str, list[tuple[int, int, str, int]]] = {i: [] for i in order}
    flags: dict[str, list[bool]] = {i: [] for i in order}
    for lineno, line in enumerate(_read_lines(path), start=1):
        f = line.split()
        if not f:
            continue
        if len(f) < 3 or len(f) > 5 or not (_ascii_digits(f[1]) and _ascii_digits(f[2])):
            raise AlignmentError(path, lineno, f"'{line.strip()}' is not 'sent_id pos_1 pos_2 "
                                 "[S|P] [confidence]' with 1-based positions")
        sid, a, b = f[0], int(f[1]) - 1, int(f[2]) - 1
        kind = f[3].upper() if len(f) >= 4 else "S"
        if kind not in ("S", "P"):
            raise AlignmentError(path, lineno, f"sentence {sid}: link type '{f[3]}' is not S or P")
        if a < 0 or b < 0:
            raise AlignmentError(path, lineno, f"sentence {sid}: link '{f[1]} {f[2]}' has "
                                 "position 0 but WPT positions are 1-based")
        if sid not in groups:
            if sent_ids is not None:
                raise AlignmentError(path, lineno, f"sentence id '{sid}' is not in the given "
                                     "sentence ids")
            order.append(sid)
            groups[sid], flags[sid] = [], []
        groups[sid].append((a, b, f"{sid} {f[1]} {f[2]}", lineno))
        flags[sid].append(kind == "S")
    raw = [groups[i] for i in order]
    corpus = _finish(path, raw, [flags[i] for i in order], src_tokens, tgt_tokens,
                     True, swap, ids=order)
    return corpus


# ---------------------------------------------------------------------------- writers


def format_pharaoh(alignment: Alignment, *, one_based: bool = False, swap: bool = False) -> str:
    """One Pharaoh line: sorted links, `i-j` sure and `i?j` possible-only."""
    al = alignment.swapped() if swap else alignment
    off = 1 if one_based else 0
    parts = []
    for s, t in sorted(al.possible):
        sep = "-" if (s, t) in al.sure else "?"
        parts.append(f"{s + off}{sep}{t + off}")
    return " ".join(parts)


def write_pharaoh(
    path: str | Path,
    alignments: Iterable[Alignment],
    *,
    one_based: bool = False,
    swap: bool = False,
) -> Path:
    """Write one Pharaoh line per sentence, atomically."""
    lines = [format_pharaoh(a, one_based=one_based, swap=swap) for a in alignments]
    return write_text_atomic(path, "".join(line + "\n" for line in lines))
