"""A run's beam length penalty chosen on its dev split (`evaluate --tune-length-penalty`).

Beam search ranks hypotheses by the sum of their log-probabilities, which falls with
every word: without a penalty it prefers short translations (the demo's context runs
wrote 9-10 % fewer words than their references, and sacreBLEU's brevity penalty took
about 1.5 BLEU on held-out documents; experiments/RESULTS.md, section H). GNMT's length
penalty divides each score by ((5 + |Y|) / 6) ** alpha (core.infer.search.lp_divisor).
`tune` translates the pairs once per alpha, a context model by documents (each sentence
with its own document's context, as `evaluate --doc-level`), scores sacreBLEU on them
and stores the best alpha as the run's config.length_penalty, which every later
translation of the run then uses unless told otherwise (translate / evaluate
--length-penalty). The pairs should be the dev split: choosing on the test split would
make the test scores no longer held out.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.config import RunConfig
from core.errors import ConfigError
from core.evaluate.report import Table
from core.jobs import JobContext
from core.workspace.store import Workspace

#: why an OpenNMT-py import takes no alpha (core.infer.beam's onmt_style); {} its name
ONMT_BEAM = ("run {!r} was imported from OpenNMT-py and searches as onmt_translate does, "
             "each finished translation scored per word (its -length_penalty avg), which no "
             "alpha changes")
#: the alphas tried by default (GNMT's paper reports 0.6-1.0 as best; 2 is far past it)
ALPHAS = (0.0, 0.5, 1.0, 1.5, 2.0)


@dataclass(frozen=True)
class LengthPenaltyChoice:
    """The BLEU of each alpha tried (sacreBLEU, with its signature), the output length
    over the references', and the alpha chosen (the highest BLEU; the smaller alpha on a
    tie)."""

    bleu: dict[float, float]
    length_ratio: dict[float, float]
    signature: str
    best: float
    pairs: int

    def to_table(self, title: str) -> Table:
        """One row per alpha: BLEU, length ratio, and which one was chosen."""
        rows = [[f"{a:g}", self.bleu[a], self.length_ratio[a], "chosen" if a == self.best else ""]
                for a in self.bleu]
        return Table(["alpha", "BLEU", "length / reference", "choice"], rows, title,
                     notes=[f"sacreBLEU {self.signature}"], formats={"length / reference": ".3f"})


def parse_alphas(spec: str) -> tuple[float, ...]:
    """'0,0.5,1' -> (0.0, 0.5, 1.0): at least two, each in [0, 10], no repeats;
    ConfigError otherwise."""
    try:
        alphas = tuple(float(a) for a in spec.split(","))
    except ValueError:
        raise ConfigError(f"--tune-length-penalty {spec!r}: give alphas separated by commas, "
                          "e.g. 0,0.5,1,1.5") from None
    if len(alphas) < 2 or len(set(alphas)) != len(alphas) or not all(0 <= a <= 10 for a in alphas):
        raise ConfigError(f"--tune-length-penalty {spec!r}: give at least two different "
                          "alphas between 0 and 10, e.g. 0,0.5,1,1.5")
    return alphas


def tune(session: Any, pairs: Sequence, alphas: Sequence[float] = ALPHAS, beam: int = 5,
         ctx: JobContext | None = None, log=None) -> LengthPenaltyChoice:
    """Translate `pairs` (SentencePairs) with `session` once per alpha and score them.
    A context model translates each document's pairs in order (pairs without a
    document id each form their own); others translate sentence by sentence. The
    session's own length penalty is left as it was."""
    from core.evaluate.metrics import corpus_bleu  # lazy: a top-level import loads sacrebleu

    if getattr(session, "onmt_style", False):
        raise ConfigError(f"{ONMT_BEAM.format(session.names[0])}: nothing to tune")
    if beam < 2:
        raise ConfigError("the length penalty changes beam search only: tune with --beam 2 "
                          "or more (default 5)")
    if not pairs:
        raise ConfigError("no pairs to tune the length penalty on")
    documents: dict[Any, list[int]] = {}
    for i, p in enumerate(pairs):
        documents.setdefault(p.doc_id if p.doc_id is not None else ("line", i), []).append(i)
    order = [i for doc in documents.values() for i in doc]
    refs = [pairs[i].tgt for i in order]
    bleu, ratio, signature = {}, {}, ""
    for alpha in alphas:
        if log:
            log(f"length penalty {alpha:g}: translating {len(pairs)} sentences")
        if session.is_context_model:
            out = session.translate_documents([[pairs[i].src for i in doc]
                                               for doc in documents.values()],
                                              beam=beam, ctx=ctx, length_penalty=alpha)
            hyps = [t.text for doc in out for t in doc]
        else:
            hyps = [t.text for t in session.translate([pairs[i].src for i in order], beam=beam,
                                                      ctx=ctx, length_penalty=alpha)]
        score = corpus_bleu(hyps, refs)
        bleu[alpha], signature = score.score, score.signature
        ratio[alpha] = sum(len(h.split()) for h in hyps) / max(1, sum(len(r.split()) for r in refs))
    best = max(alphas, key=lambda a: (round(bleu[a], 6), -a))
    return LengthPenaltyChoice(bleu, ratio, signature, best, len(pairs))


def store(ws: Workspace, run_id: int, alpha: float) -> None:
    """Make `alpha` run `run_id`'s length penalty (config.length_penalty), on the run's
    config as it is now."""
    info = ws.get_run(run_id)
    config = RunConfig.from_dict({**info.config, "length_penalty": float(alpha)},
                                 source=f"run {info.name}")
    ws.update_run(run_id, config=config.to_dict())
