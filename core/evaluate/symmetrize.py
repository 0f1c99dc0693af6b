"""Symmetrisation of two directional word alignments (Och & Ney 2003; Koehn et al. 2003,
the heuristics of the Moses training pipeline).

Both inputs are in (src_index, tgt_index) coordinates: `fwd` from the src->tgt model
(each target word linked to at most one source word), `rev` from the tgt->src model
already turned round to (src, tgt).

- intersection: high precision, one-to-one.
- union: high recall.
- grow-diag: start from the intersection; repeatedly sweep the current links in order
  (source index, then target index); for each link look at its 8 neighbours
  (horizontal, vertical, diagonal) and add a neighbour that is in the union when its
  source word or its target word is not aligned yet. Stop when a sweep adds nothing.
- grow-diag-final: grow-diag, then FINAL over fwd and then over rev: go through the
  points of the directional alignment (in source, target order) and add one when its
  source word or its target word is still unaligned.
- grow-diag-final-and: the same, but FINAL adds a point only when BOTH its words are
  still unaligned.
("grow" without "-diag" uses only the 4 horizontal/vertical neighbours.)
"""
from __future__ import annotations

from collections.abc import Iterable

from core.evaluate.alignment import Alignment, Link

HEURISTICS = ("intersection", "union", "grow", "grow-diag", "grow-diag-final",
              "grow-diag-final-and")

_SIDE = ((-1, 0), (0, -1), (1, 0), (0, 1))
_DIAG = ((-1, -1), (-1, 1), (1, -1), (1, 1))


def _as_set(a: Alignment | Iterable[Link]) -> set[Link]:
    return set(a.links) if isinstance(a, Alignment) else {(int(s), int(t)) for s, t in a}


class _State:
    """The growing alignment with its aligned-word sets and per-source-word rows."""

    def __init__(self, links: set[Link]):
        self.links = set(links)
        self.src_aligned = {s for s, _ in links}
        self.tgt_aligned = {t for _, t in links}
        self.rows: dict[int, set[int]] = {}
        for s, t in links:
            self.rows.setdefault(s, set()).add(t)

    def add(self, s: int, t: int) -> None:
        self.links.add((s, t))
        self.src_aligned.add(s)
        self.tgt_aligned.add(t)
        self.rows.setdefault(s, set()).add(t)


def _grow(state: _State, union: set[Link], neighbours: tuple[Link, ...]) -> None:
    changed = True
    while changed:
        changed = False
        # Sweep rows in source order and, inside a row, targets in increasing order,
        # including points added to that row during the sweep (as a grid scan would).
        for s in sorted({s for s, _ in union}):
            last = -1
            while True:
                nxt = [t for t in state.rows.get(s, ()) if t > last]
                if not nxt:
                    break
                t = last = min(nxt)
                for ds, dt in neighbours:
                    ns, nt = s + ds, t + dt
                    if (ns, nt) in union and (ns, nt) not in state.links and (
                            ns not in state.src_aligned or nt not in state.tgt_aligned):
                        state.add(ns, nt)
                        changed = True


def _final(state: _State, direction: set[Link], both: bool) -> None:
    for s, t in sorted(direction):
        if (s, t) in state.links:
            continue
        s_free, t_free = s not in state.src_aligned, t not in state.tgt_aligned
        if (s_free and t_free) if both else (s_free or t_free):
            state.add(s, t)


def symmetrize(fwd: Alignment | Iterable[Link], rev: Alignment | Iterable[Link],
               heuristic: str = "grow-diag-final-and") -> Alignment:
    """Combine a src->tgt and a tgt->src alignment (both as (src, tgt) links)."""
    f, r = _as_set(fwd), _as_set(rev)
    if heuristic == "intersection":
        return Alignment.of(f & r)
    if heuristic == "union":
        return Alignment.of(f | r)
    if heuristic not in HEURISTICS:
        raise ValueError(f"unknown symmetrisation heuristic {heuristic!r}; "
                         f"choose one of {', '.join(HEURISTICS)}")
    state = _State(f & r)
    _grow(state, f | r, _SIDE if heuristic == "grow" else _SIDE + _DIAG)
    if heuristic.startswith("grow-diag-final"):
        both = heuristic.endswith("-and")
        _final(state, f, both)
        _final(state, r, both)
    return Alignment.of(state.links)


def symmetrize_corpus(fwd: Iterable[Alignment | Iterable[Link]],
                      rev: Iterable[Alignment | Iterable[Link]],
                      heuristic: str = "grow-diag-final-and") -> list[Alignment]:
    """`symmetrize` sentence by sentence."""
    return [symmetrize(a, b, heuristic) for a, b in zip(fwd, rev, strict=True)]
