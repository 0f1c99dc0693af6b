"""Statistical baseline aligner (eflomal, Östling & Tiedemann 2016) and the bilingual
dictionary drawn from its alignments (for unknown-word replacement).

Like Luong et al. 2015 with the Berkeley aligner, the gold sentences are appended to the
training corpus so that the unsupervised model sees them; their alignments are returned.
eflomal's sampler seeds itself from /dev/urandom and offers no seed option, so two runs
may differ slightly; `n_samplers` independent samplers are averaged, which keeps the
spread small.
"""
from __future__ import annotations

import logging
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.atomic import write_text_atomic
from core.errors import CorpusError
from core.evaluate.alignment import Alignment, parse_pharaoh
from core.evaluate.symmetrize import symmetrize_corpus

Tokens = Sequence[str]


@dataclass
class BaselineAlignments:
    """Directional alignments (both as (src, tgt) links) of the sentences asked for."""

    forward: list[Alignment]   # src->tgt model: each target word has <= 1 source word
    reverse: list[Alignment]   # tgt->src model, turned round to (src, tgt)

    def symmetrized(self, heuristic: str = "grow-diag-final-and") -> list[Alignment]:
        """The forward and reverse alignments symmetrised per sentence with `heuristic`."""
        return symmetrize_corpus(self.forward, self.reverse, heuristic)


def _clean(sents: Sequence[Tokens], side: str) -> list[str]:
    lines = []
    for i, toks in enumerate(sents):
        if any(not t or any(c.isspace() for c in t) for t in toks):
            raise CorpusError(None, i + 1, f"{side} sentence {i + 1} has an empty token or a "
                              "token with spaces: pass tokenised sentences")
        lines.append(" ".join(toks) + "\n")
    return lines


def align_eflomal(src: Sequence[Tokens], tgt: Sequence[Tokens], *,
                  model: int = 3, n_samplers: int = 2, rel_iterations: float = 1.0,
                  null_prior: float = 0.2) -> BaselineAlignments:
    """Align every pair of the tokenised corpus with eflomal, both directions.

    Empty sentences are allowed (they get empty alignments). Tokens are lowercased by
    eflomal itself. Runs quietly in a temporary folder."""
    import eflomal  # imported here: a compiled extension the rest of core does not need

    if len(src) != len(tgt):
        raise CorpusError(None, None, f"{len(src)} source but {len(tgt)} target sentences")
    src_lines, tgt_lines = _clean(src, "source"), _clean(tgt, "target")
    aligner = eflomal.Aligner(model=model, n_samplers=n_samplers,
                              rel_iterations=rel_iterations, null_prior=null_prior)
    logging.getLogger("eflomal").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="nmtwb-eflomal-") as tmp:
        fwd_path, rev_path = Path(tmp) / "fwd", Path(tmp) / "rev"
        aligner.align(src_lines, tgt_lines, links_filename_fwd=str(fwd_path),
                      links_filename_rev=str(rev_path), quiet=True)
        fwd = parse_pharaoh(fwd_path.read_text(encoding="utf-8").splitlines(), path=fwd_path)
        rev = parse_pharaoh(rev_path.read_text(encoding="utf-8").splitlines(), path=rev_path)
    if len(fwd) != len(src) or len(rev) != len(src):
        raise RuntimeError(f"eflomal returned {len(fwd)}/{len(rev)} alignments for "
                           f"{len(src)} sentences")
    return BaselineAlignments(list(fwd), list(rev))


def align_with_training(train_src: Sequence[Tokens], train_tgt: Sequence[Tokens],
                        src: Sequence[Tokens], tgt: Sequence[Tokens],
                        **eflomal_args) -> tuple[BaselineAlignments, BaselineAlignments]:
    """Align `src`/`tgt` (e.g. gold sentences) with a model trained on the training
    corpus plus these sentences appended. Returns (alignments of src/tgt, alignments of
    the training corpus)."""
    both = align_eflomal(list(train_src) + list(src), list(train_tgt) + list(tgt),
                         **eflomal_args)
    n = len(train_src)
    return (BaselineAlignments(both.forward[n:], both.reverse[n:]),
            BaselineAlignments(both.forward[:n], both.reverse[:n]))


@dataclass
class Dictionary:
    """Source word -> counts of the target words aligned to it."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)

    def best(self, word: str) -> str | None:
        """The most frequently aligned target word (ties: alphabetical), or None."""
        c = self.counts.get(word)
        if not c:
            return None
        return min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0]

    def as_dict(self, min_count: int = 1) -> dict[str, str]:
        """word -> best translation, for words whose best link was seen >= min_count
        times (the mapping core.infer.unk_replace takes)."""
        out = {}
        for w, c in self.counts.items():
            b = self.best(w)
            if b is not None and c[b] >= min_count:
                out[w] = b
        return out

    def __contains__(self, word: str) -> bool:
        return word in self.counts

    def __len__(self) -> int:
        return len(self.counts)

    def save(self, path: str | Path) -> Path:
        """TSV `src<TAB>best_tgt<TAB>count<TAB>total`, one source word a line."""
        lines = []
        for w in sorted(self.counts):
            b = self.best(w)
            lines.append(f"{w}\t{b}\t{self.counts[w][b]}\t{sum(self.counts[w].values())}\n")
        return write_text_atomic(path, "".join(lines))

    @classmethod
    def load(cls, path: str | Path) -> Dictionary:
        """Read a saved dictionary (only the best translation and its count survive)."""
        d = cls()
        for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            f = line.split("\t")
            if len(f) != 4 or not f[2].isdigit():
                raise CorpusError(path, lineno, "expected 'src<TAB>tgt<TAB>count<TAB>total'")
            d.counts[f[0]] = Counter({f[1]: int(f[2])})
        return d


def build_dictionary(src: Sequence[Tokens], tgt: Sequence[Tokens],
                     alignments: Sequence[Alignment]) -> Dictionary:
    """Count, over all links (s, t), the pair (src[s], tgt[t])."""
    d = Dictionary()
    for k, (s_toks, t_toks, al) in enumerate(zip(src, tgt, alignments, strict=True)):
        for s, t in al.links:
            if s >= len(s_toks) or t >= len(t_toks):
                raise ValueError(f"sentence {k + 1}: link {s}-{t} outside the sentence")
            d.counts.setdefault(s_toks[s], Counter())[t_toks[t]] += 1
    return d


def stored_or_aligned_links(folder: Path, src: Sequence[Sequence[str]],
                            tgt: Sequence[Sequence[str]],
                            log: Callable[[str], None] = lambda _m: None
                            ) -> list[list[tuple[int, int]]]:
    """eflomal's grow-diag-final-and links (core.train.guidance.HEURISTIC) of the token lines `src`/`tgt` (one list of (source,
    target) positions per pair): read from `folder`/alignments when these exact lines were
    aligned before (core.train.guidance.link_file), else aligned once and stored there atomically. Guided
    alignment and shortlists share them."""
    from core.train import guidance  # lazy: a top-level import would load torch

    path = guidance.link_file(folder, src, tgt)
    if path.is_file():
        log(f"reusing the stored alignments {path.name}")
        return guidance.read_links(path, len(src))
    heuristic = guidance.HEURISTIC
    log(f"aligning {len(src):,} training pairs with eflomal ({heuristic}); stored for reuse")
    links = [sorted(a.sure) for a in align_eflomal(src, tgt).symmetrized(heuristic)]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, guidance.links_text(links))
    return links
