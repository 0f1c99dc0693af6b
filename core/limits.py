"""Input limits: how much a file we are given may hold before we refuse it.

Every reader of untrusted input (corpus files, TMX, XLIFF, JSON lines, gold links, TOML
configs, documents to translate, the lines given to `translate`) checks these, so a
crafted or accidental giant (a .docx of 3 million tiny paragraphs, a 2 GiB
decompression bomb, a 50 MB one-line "sentence") ends in a one-line error naming the
file, the limit and how to raise it, instead of minutes of work and gigabytes of memory.
The defaults keep reading any one input within about 500 MB (a corpus of a million
lines a side fits; a bigger one needs NMT_WB_MAX_LINES and NMT_WB_MAX_INPUT_MB raised,
and the memory that goes with them).

Each limit is an environment variable (read on every check, so a test or a user can
change it without restarting anything): a positive whole number.

    NMT_WB_MAX_INPUT_MB          100      bytes of one input file read whole, and of a
                                          .docx's document part once decompressed (MB)
    NMT_WB_MAX_LINES             1000000  lines of a text file; units of a TMX/XLIFF file
    NMT_WB_MAX_PARAGRAPHS        100000   paragraphs of a document to translate
                                          (.docx, .txt, .md)
    NMT_WB_MAX_LINE_CHARS        20000    characters of one line, paragraph or segment
    NMT_WB_MAX_SENTENCE_TOKENS   200      tokens of a sentence given to a model; a
                                          longer one is cut, with a warning
    NMT_WB_MAX_ZIP_ENTRIES       10000    files inside a .docx (a zip)

One limit is fixed: XML elements nested more than XML_DEPTH deep are refused (no real
TMX, XLIFF or Word file comes near it; the parser's stack would be memory too).

Settings have fixed ceilings too, far above any real use and low enough that nothing
overflows or runs away below them (the config's RULES, the commands' options, what a
checkpoint may say): MAX_BEAM hypotheses per sentence, MAX_STEPS updates, MAX_LAYERS,
MAX_WIDTH (embedding, hidden and d_model sizes), MAX_FF, MAX_HEADS, MAX_VOCAB words,
MAX_BATCH sentences (MAX_BATCH_TOKENS tokens) per batch, MAX_CONTEXT sentences,
MAX_NAME_CHARS for a corpus or run name; CPU threads at most the machine's
(cpu_threads()). Whether a model fits in memory is core.train.footprint's estimate.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from core.errors import ConfigError, CorpusError

MB = 1024 * 1024
XML_DEPTH = 100_000

MAX_BEAM = 100  # the Translate screen's beam box goes to here
MAX_STEPS = 1_000_000_000
MAX_EPOCHS = 1_000_000
MAX_LAYERS = 1_000
MAX_WIDTH = 65_536
MAX_FF = 262_144
MAX_HEADS = 1_024
MAX_VOCAB = 10_000_000
MAX_BATCH = 100_000
MAX_BATCH_TOKENS = 10_000_000
MAX_SOURCE_LEN = 100_000  # model.max_src_len, data.max_len, model.window
MAX_CONTEXT = 100  # previous or following sentences a context model sees
MAX_NAME_CHARS = 200


def cpu_threads() -> int:
    """The CPU threads this process may use (its affinity mask, else os.cpu_count())."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Limit:
    """One limit: its environment variable, default, and what it counts."""

    env: str
    default: int
    what: str  # e.g. "characters in a line"

    def value(self) -> int:
        """The limit in force: the environment variable if set, else the default."""
        raw = os.environ.get(self.env, "").strip()
        if not raw:
            return self.default
        if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
            raise ConfigError(f"{self.env}={raw!r} is not a positive whole number; set it "
                              f"to the most {self.what} to accept (default {self.default}), "
                              "or unset it")
        return int(raw)

    def how_to_raise(self) -> str:
        """The advice every error over this limit ends with."""
        return f"raise the limit with the environment variable {self.env}=N"

    def error(self, path: str | Path | None, line: int | None, found: str,
              advice: str = "") -> CorpusError:
        """CorpusError: `found` (what the input holds), the limit and how to raise it."""
        advice = f"{advice}, or " if advice else ""
        return CorpusError(path, line, f"{found}, more than the limit of {self.value():,} "
                                       f"{self.what}; {advice}{self.how_to_raise()}")


INPUT_MB = Limit("NMT_WB_MAX_INPUT_MB", 100, "MB in one input file or document part")
LINES = Limit("NMT_WB_MAX_LINES", 1_000_000, "lines or translation units in one file")
PARAGRAPHS = Limit("NMT_WB_MAX_PARAGRAPHS", 100_000, "paragraphs in one document")
LINE_CHARS = Limit("NMT_WB_MAX_LINE_CHARS", 20_000, "characters in one line, paragraph "
                                                   "or segment")
SENTENCE_TOKENS = Limit("NMT_WB_MAX_SENTENCE_TOKENS", 200, "tokens in one sentence")
ZIP_ENTRIES = Limit("NMT_WB_MAX_ZIP_ENTRIES", 10_000, "files inside one .docx")

ALL = (INPUT_MB, LINES, PARAGRAPHS, LINE_CHARS, SENTENCE_TOKENS, ZIP_ENTRIES)


def max_input_bytes() -> int:
    """NMT_WB_MAX_INPUT_MB in bytes."""
    return INPUT_MB.value() * MB


def check_input_size(path: str | Path | None, size: int, what: str = "the file") -> None:
    """CorpusError when `size` bytes exceed NMT_WB_MAX_INPUT_MB."""
    if size > max_input_bytes():
        raise INPUT_MB.error(path, None, f"{what} holds {size / MB:,.1f} MB",
                             "split the input")


def check_count(limit: Limit, path: str | Path | None, count: int, line: int | None,
                noun: str) -> None:
    """CorpusError when `count` (of `noun`, e.g. 'paragraphs') exceeds `limit`; `line`
    is where the first one too many starts, when known."""
    if count > limit.value():
        raise limit.error(path, line, f"it holds {count:,} {noun} or more",
                          "split the input into smaller files")


def check_length(path: str | Path | None, line: int | None, length: int,
                 what: str = "this line") -> None:
    """CorpusError when `length` characters (of `what`) exceed NMT_WB_MAX_LINE_CHARS."""
    if length > LINE_CHARS.value():
        raise LINE_CHARS.error(path, line, f"{what} has {length:,} characters",
                               "break it into shorter lines")


def first_long_line(text: str, limit: int) -> tuple[int, int] | None:
    """(1-based line number, length in characters) of the first '\\n'-separated line
    of `text` longer than `limit` (a CRLF line's '\\r' not counted), or None.

    Jumps from the last line break of each `limit`-long window to the next, so a text
    of many short lines costs a few C-level searches per `limit` characters."""
    start = 0
    while len(text) - start > limit:
        brk = text.rfind("\n", start, start + limit + 1)
        if brk >= 0:  # every line up to this break is short enough
            start = brk + 1
            continue
        end = text.find("\n", start)
        stop = len(text) if end < 0 else end
        length = stop - start - (1 if text[stop - 1] == "\r" else 0)
        if length > limit:
            return text.count("\n", 0, start) + 1, length
        if end < 0:
            return None
        start = end + 1
    return None


def check_beam(beam: int, n_best: int = 1, option: str = "--beam") -> None:
    """ConfigError unless 1 <= n_best <= beam <= MAX_BEAM (a beam of 100,000 took 3.8 GB
    for one word; 10^9 failed inside torch)."""
    if not 1 <= beam <= MAX_BEAM:
        raise ConfigError(f"{option} must be 1 or more (1 = greedy) and at most {MAX_BEAM} "
                          f"(the limit), not {beam}; beams beyond 10 seldom help")
    if not 1 <= n_best <= beam:
        raise ConfigError(f"--n-best must be from 1 to the beam size ({beam}), not {n_best:,}")
