"""Greedy and beam search over any model that honours the Seq2Seq step contract.

Both searches decode a whole batch of sentences at once. Every returned hypothesis
carries its own attention matrix (one row per output token including EOS, one column
per real source token), for local-p models its own predicted positions, and for
context models the gate values lambda per source token (see `encoder_gates`).

Length limit: a sentence of `n` source tokens gets at most
`min(max_len_abs, ceil(max_len_ratio * n))` output tokens before EOS; at the step
after that EOS is forced, so every hypothesis ends with a scored EOS and its
`log_prob` always equals the forced-decoding score of its tokens (over the whole
vocabulary; with a shortlist, `out_vocab`, each step is normalised over the K candidate
words instead, so scores are higher than the forced score). `min_len` forbids EOS
before that many output tokens (with min_len = max_len_abs every output has exactly
that length: the decoding benchmark's fixed length).

Non-finite scores (NaN or infinite log-probabilities: NaN weights, an overflow) end a
search with NonFiniteScores. The test costs no extra read from the device: greedy checks
the log-probs its hypotheses bring to the host anyway, beam search the best alive score
per sentence it reads at every step (NaN wins torch's max and top-k, so a NaN candidate
reaches it) and, at the end, that every sentence finished (a NaN EOS never does).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor

from core.errors import WorkbenchError
from core.infer.topk import row_topk
from core.models import matmul
from core.models.base import BOS, EOS, Seq2Seq, select_batch

NEG_INF = float("-inf")


class NonFiniteScores(WorkbenchError):
    """A search met log-probabilities that are NaN or infinite: the model's weights are
    broken (or a reduced-precision step overflowed). `step` is the 1-based output step.
    TranslationSession turns it into a CheckpointError naming the checkpoints."""

    def __init__(self, step: int, value: float | None = None):
        self.step, self.value = step, value
        found = "" if value is None else f" ({value})"
        super().__init__(f"the model's scores are not finite{found} at output step "
                         f"{step}: its weights are NaN or infinite, or the step overflowed")


def _check_finite(value: float, step: int) -> None:
    """NonFiniteScores unless `value` (a log-probability or a sum of them, already on
    the host) is finite."""
    if not math.isfinite(value):
        raise NonFiniteScores(step, value)


@dataclass
class Hypothesis:
    tokens: list[int]  # output ids, without BOS/EOS
    token_log_probs: list[float]  # one per output token, EOS included
    score: float  # the ranking score (log_prob, possibly length-penalised)
    log_prob: float  # sum of token_log_probs
    attention: np.ndarray  # (len(tokens) + 1) x src_len
    positions: np.ndarray | None = None  # len(tokens) + 1 (local-p), else None
    gates: np.ndarray | None = None  # src_len: context models' lambda per token, else None


def encoder_gates(enc: dict[str, Tensor]) -> Tensor | None:
    """The gate values lambda of an encoded batch (batch x src_width, 0 on padding), or
    None for models without a gated context merge.

    Context models put them in their encoder state as ``enc["gates"]``: the context
    Transformer's lambda is d_model wide per token and is reported as its mean over the
    d_model dimensions (1 = the token's representation came from the sentence itself,
    0 = from the context); an Ensemble reports the mean over its members that have gates.
    The gates depend on the source and context only, so one row serves every hypothesis.
    """
    gates = enc.get("gates")
    return None if gates is None else gates.float()


def max_output_lengths(src_lens: Tensor, max_len_ratio: float, max_len_abs: int) -> list[int]:
    """Most output tokens (EOS excluded) allowed per sentence.

    src_lens: batch (1-D) -> min(max_len_abs, ceil(max_len_ratio * n)) per sentence,
    at least 1."""
    return [
        max(1, min(max_len_abs, math.ceil(max_len_ratio * int(n)))) for n in src_lens.tolist()
    ]


def lp_divisor(length: int, alpha: float = 0.0, normalise: bool = False) -> float:
    """Divisor of a hypothesis' log-prob: GNMT's ((5 + |Y|) / 6) ** alpha, or |Y| when
    `normalise` (plain length normalisation); 1 when alpha == 0 and not normalising.
    `length` counts the scored tokens, EOS included."""
    if normalise:
        return float(length)
    if alpha == 0.0:
        return 1.0
    return ((5.0 + length) / 6.0) ** alpha


def _hypothesis(
    tokens: list[int], token_lps: list[float], attn: np.ndarray, pos: np.ndarray | None,
    src_len: int, divisor: float = 1.0, gates: np.ndarray | None = None,
) -> Hypothesis:
    """attn: out_len x src_width, pos: out_len, gates: src_width, host arrays as _to_host
    gives them; the hypothesis keeps its own copies (attn and gates cropped to the
    sentence's real source length), not views that would keep a step's whole batch
    alive. The score is recomputed from the token log-probs (in float64), so equal
    outputs get exactly equal scores whichever search found them."""
    log_prob = float(sum(token_lps))
    return Hypothesis(
        tokens=tokens,
        token_log_probs=token_lps,
        score=log_prob / divisor,
        log_prob=log_prob,
        attention=attn[:, :src_len].copy(),
        positions=None if pos is None else pos.copy(),
        gates=None if gates is None else gates[:src_len].copy(),
    )


def _to_host(rows: Tensor, *histories: Tensor | None) -> list[np.ndarray | None]:
    """The histories' `rows` (a 1-D index), each as one fp32 (ids: int64) numpy array:
    one device-to-host copy per history for all hypotheses that end at a step, where a
    copy per hypothesis and history made a GPU search wait for the GPU some 1,800 times
    a batch of 64 sentences at beam 5; what each hypothesis then reads is numpy's, no
    tensor op. None stays None."""
    out = []
    for h in histories:
        if h is None:
            out.append(None)
            continue
        picked = h[rows]
        out.append((picked if picked.dtype == torch.long else picked.float()).cpu().numpy())
    return out


def _shortlist_opts(out_vocab: Tensor | None, device: torch.device) -> dict[str, Tensor]:
    """model.step's keyword for a shortlist: {} without one. ValueError unless the ids
    are sorted, unique and start with the specials 0..EOS (so that EOS's index among the
    candidates is EOS)."""
    if out_vocab is None:
        return {}
    ids = out_vocab.to(device=device, dtype=torch.long)
    if ids.dim() != 1 or ids.numel() <= EOS or not torch.equal(
            ids[:EOS + 1], torch.arange(EOS + 1, device=device)) or bool((ids.diff() <= 0).any()):
        raise ValueError("out_vocab must be sorted unique target ids starting with 0..EOS")
    return {"out_vocab": ids}


def _prepare(model: Seq2Seq, src: Tensor, src_lens: Tensor) -> tuple[Tensor, Tensor]:
    model.eval()
    param = next(model.parameters(), None)
    device = src.device if param is None else param.device
    return src.to(device), src_lens.to(device)


@torch.no_grad()  # not inference_mode: autocast caches weight casts only outside it
@matmul.packed_weights()  # a search packs its weights once (core/models/matmul.py)
def greedy(
    model: Seq2Seq, src: Tensor, src_lens: Tensor, max_len_ratio: float = 2.0,
    max_len_abs: int = 200, min_len: int = 0, out_vocab: Tensor | None = None,
    **extra: Tensor,
) -> list[Hypothesis]:
    """Pick the most probable token at each step. src: batch x src_len (natural order),
    src_lens: batch; out_vocab: K sorted target ids to choose from (a shortlist,
    core.infer.shortlist) or None for the whole vocabulary. Returns one hypothesis per
    sentence, in input order."""
    src, src_lens = _prepare(model, src, src_lens)
    step_opts = _shortlist_opts(out_vocab, src.device)
    n_sent, device = src.size(0), src.device
    limits = max_output_lengths(src_lens, max_len_ratio, max_len_abs)
    lens = src_lens.tolist()
    enc = model.encode(src, src_lens, **extra)
    gates = encoder_gates(enc)  # batch x src_width, in input order (or None)
    gates = None if gates is None else gates.cpu().numpy()  # read by each hypothesis
    state = model.init_state(enc)
    active = list(range(n_sent))  # original index of each row still decoding
    y = torch.full((n_sent,), BOS, dtype=torch.long, device=device)
    hist_tok = torch.zeros(n_sent, 0, dtype=torch.long, device=device)
    hist_lp = torch.zeros(n_sent, 0, device=device)
    hist_attn: Tensor | None = None  # rows x t x src_width
    hist_pos: Tensor | None = None  # rows x t
    out: list[Hypothesis | None] = [None] * n_sent
    t = 0
    while active:
        logp, attn, state, pos = model.step(y, state, enc, **step_opts)  # rows x V (K), S
        logp = logp.float()
        # the two best tokens: the second replaces EOS in a row still short of min_len
        # (a row at its length limit is not held back: the limit wins)
        top_lp, top = row_topk(logp, min(2, logp.size(-1)))
        best_lp, best = top_lp[:, 0], top[:, 0]
        # (masks built on the host only where rows differ: each is a copy to a GPU)
        if t < min_len and top.size(1) > 1:
            under = [t < limits[i] for i in active]
            short = best == EOS
            if not all(under):
                short &= torch.tensor(under, device=device)
            best = torch.where(short, top[:, 1], best)
            best_lp = torch.where(short, top_lp[:, 1], best_lp)
        at_limit = [t >= limits[i] for i in active]
        if any(at_limit):
            last = torch.tensor(at_limit, device=device)
            best = torch.where(last, torch.full_like(best, EOS), best)
            best_lp = torch.where(last, logp[:, EOS], best_lp)
        if out_vocab is not None:  # candidate index -> token id (EOS keeps its index)
            best = step_opts["out_vocab"][best]
        hist_tok = torch.cat([hist_tok, best[:, None]], 1)
        hist_lp = torch.cat([hist_lp, best_lp[:, None]], 1)
        attn_now = attn.float()[:, None, :]
        hist_attn = attn_now if hist_attn is None else torch.cat([hist_attn, attn_now], 1)
        if pos is not None:
            pos_now = pos.float()[:, None]
            hist_pos = pos_now if hist_pos is None else torch.cat([hist_pos, pos_now], 1)
        t += 1
        tokens = best.tolist()
        keep = [a for a, tok in enumerate(tokens) if tok != EOS]
        ended = [a for a, tok in enumerate(tokens) if tok == EOS]
        if ended:
            toks, lps, attns, poss = _to_host(torch.tensor(ended, device=device), hist_tok,
                                              hist_lp, hist_attn, hist_pos)
            for j, a in enumerate(ended):
                i = active[a]
                out[i] = _hypothesis(
                    toks[j, :-1].tolist(), lps[j].tolist(), attns[j],
                    None if poss is None else poss[j], lens[i],
                    gates=None if gates is None else gates[i],
                )
                _check_finite(out[i].log_prob, t)
        if len(keep) < len(active):
            sel = torch.tensor(keep, dtype=torch.long, device=device)
            enc, state = select_batch(enc, sel), select_batch(state, sel)
            hist_tok, hist_lp, hist_attn = hist_tok[sel], hist_lp[sel], hist_attn[sel]
            hist_pos = None if hist_pos is None else hist_pos[sel]
            active = [active[a] for a in keep]
            best = best[sel]
        y = best
    return [h for h in out if h is not None]


@torch.no_grad()  # not inference_mode: autocast caches weight casts only outside it
@matmul.packed_weights()  # a search packs its weights once (core/models/matmul.py)
def beam_search(
    model: Seq2Seq, src: Tensor, src_lens: Tensor, beam: int = 5, n_best: int = 1,
    length_penalty: float = 0.0, length_norm: bool = False,
    max_len_ratio: float = 2.0, max_len_abs: int = 200, min_len: int = 0,
    out_vocab: Tensor | None = None, onmt_style: bool = False, **extra: Tensor,
) -> list[list[Hypothesis]]:
    """Batched beam search: all beams of all sentences decode as one tensor of
    (active sentences * beam) rows; sentences that are done leave the batch.

    Finished hypotheses are set aside; a sentence stops once its n_best-th finished
    score is no worse than the best score any alive beam could still reach.
    `onmt_style`: OpenNMT-py 3.x's beam with its default `-length_penalty avg` instead:
    of a step's k best candidates those ending in EOS finish, scored log-prob / (length
    + 1), the length counting EOS (its steps counted from its start token: the scores
    onmt_translate reports), and only the others stay alive (not the k best non-EOS); a
    sentence stops at the first step whose best candidate is EOS once it has n_best
    finished. Returns,
    per sentence in input order, up to `n_best` distinct hypotheses best first.

    src: batch x S (natural order), src_lens: batch; out_vocab: K sorted target ids to
    search over (a shortlist, core.infer.shortlist) or None for the whole vocabulary.
    ValueError unless 1 <= n_best <= beam and length_penalty >= 0."""
    if beam < 1 or n_best < 1 or n_best > beam:
        raise ValueError(f"need 1 <= n_best <= beam, got beam={beam}, n_best={n_best}")
    if length_penalty < 0:
        raise ValueError("length_penalty must be >= 0")
    beams = _Beams(model, src, src_lens, beam, (length_penalty, length_norm), max_len_ratio,
                   max_len_abs, min_len, out_vocab, extra)
    beams.onmt_style = onmt_style
    while beams.active:
        logp, attn, pos, logp_row = beams.step()
        cands = beams.expand(logp, logp_row)
        now = beams.histories_now(attn, pos)
        beams.finish(cands, now)
        rows, flat_tok = beams.advance(logp, logp_row, cands, now)
        beams.prune(n_best, rows, flat_tok)
    return beams.results(n_best)


class _Candidates(NamedTuple):
    """The 2k best continuations of each active sentence (n_act x 2k, best first)."""

    lp: Tensor  # their scores (the beam's score + the word's log-prob)
    beam: Tensor  # the beam each continues
    tok: Tensor  # the word (a candidate index with a shortlist)
    is_eos: Tensor
    eos_lp: Tensor  # per alive row: EOS's log-prob at this step


class _Beams:
    """The beams of one batch of sentences in a beam search, with its named steps:
    `step` (the model), `expand` (the 2k best candidates per sentence), `finish` (EOS
    candidates become hypotheses), `advance` (the k best others stay alive), `prune`
    (sentences that are done leave the batch), `results`. Rows of the tensors are
    active sentence * k + beam."""

    def __init__(self, model: Seq2Seq, src: Tensor, src_lens: Tensor, k: int,
                 penalty: tuple[float, bool], max_len_ratio: float, max_len_abs: int,
                 min_len: int, out_vocab: Tensor | None, extra: dict[str, Tensor]) -> None:
        src, src_lens = _prepare(model, src, src_lens)
        self.model, self.k, self.min_len, self.penalty = model, k, min_len, penalty
        self.device = device = src.device
        self.out_vocab = out_vocab
        self.step_opts = _shortlist_opts(out_vocab, device)
        self.n_sent = n_sent = src.size(0)
        self.limits = max_output_lengths(src_lens, max_len_ratio, max_len_abs)
        self.lens = src_lens.tolist()
        self.enc = model.encode(src, src_lens, **extra)
        gates = encoder_gates(self.enc)  # batch x src_width, in input order (or None)
        self.gates = None if gates is None else gates.cpu().numpy()  # read by each hypothesis
        # every beam of a sentence is the same before the first word: the first step runs
        # once per sentence, then its outputs, the state and the encoding are copied k times
        self.expand_rows = torch.arange(n_sent, device=device).repeat_interleave(k)
        self.state = model.init_state(self.enc)
        self.active = list(range(n_sent))  # original index of each active sentence
        self.alive_lp = torch.full((n_sent, k), NEG_INF, device=device)
        self.alive_lp[:, 0] = 0.0  # only one beam is real at the start
        self.y = torch.full((n_sent * k,), BOS, dtype=torch.long, device=device)
        self.hist_tok = torch.zeros(n_sent * k, 0, dtype=torch.long, device=device)
        self.hist_lp = torch.zeros(n_sent * k, 0, device=device)
        self.hist_attn: Tensor | None = None  # rows x t x src_width
        self.hist_pos: Tensor | None = None  # rows x t
        self.finished: list[list[Hypothesis]] = [[] for _ in range(n_sent)]
        self.t = 0
        self.onmt_style = False  # beam_search's onmt_style
        self.best_is_eos: list[bool] = []  # per active sentence: this step's best candidate

    def lp(self, length: int) -> float:
        """The divisor of a hypothesis of `length` scored tokens (EOS included)."""
        return float(length + 1) if self.onmt_style else lp_divisor(length, *self.penalty)

    def step(self) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        """The model's step -> (fp32 log-probs, attention, positions, logp_row). logp_row:
        the row of logp of each alive row, or None when they are the same (at the first
        step logp keeps one row per sentence: copying it k times cost 3 ms for
        32 x 14,790)."""
        logp_row: Tensor | None = None
        if self.t == 0:
            logp, attn, state, pos = self.model.step(self.y[::self.k], self.state, self.enc,
                                                     **self.step_opts)
            attn, self.state = attn[self.expand_rows], select_batch(state, self.expand_rows)
            pos = None if pos is None else pos[self.expand_rows]
            self.enc = select_batch(self.enc, self.expand_rows)
            logp_row = self.expand_rows
        else:  # rows x V (K), S
            logp, attn, self.state, pos = self.model.step(self.y, self.state, self.enc,
                                                          **self.step_opts)
        return logp.float(), attn, pos, logp_row

    def expand(self, logp: Tensor, logp_row: Tensor | None) -> _Candidates:
        """The 2k best candidates of each sentence. They are among the 2k best of each of
        its rows, and a row's best words do not depend on its beam's score: a top-k over
        each row's log-probs, then over k x 2k candidate scores per sentence (never a
        rows x V sum). No EOS before min_len; only EOS at a sentence's length limit."""
        k, t, device = self.k, self.t, self.device
        per_row = min(2 * k, logp.size(-1))
        eos_lp = logp[:, EOS].clone()  # rows of logp
        if t < self.min_len:  # no EOS before min_len, unless the row is at its length limit
            copies = k if logp_row is None else 1
            under = [t < self.limits[i] for i in self.active for _ in range(copies)]
            if all(under):  # no mask to copy to a GPU
                logp[:, EOS] = NEG_INF
            else:
                logp[:, EOS].masked_fill_(torch.tensor(under, device=device), NEG_INF)
        row_lp, row_tok = row_topk(logp, per_row)  # rows of logp x per_row
        if t < self.min_len:
            logp[:, EOS] = eos_lp  # the step's output as it was
        if logp_row is not None:  # one row of logp per alive row
            row_lp, row_tok, eos_lp = row_lp[logp_row], row_tok[logp_row], eos_lp[logp_row]
        # at a sentence's last step only EOS may follow
        at_limit = [t >= self.limits[i] for i in self.active]
        if any(at_limit):
            rows_last = torch.tensor(at_limit, device=device).repeat_interleave(k)
            row_lp[rows_last] = NEG_INF
            row_lp[rows_last, 0] = eos_lp[rows_last]
            row_tok[rows_last, 0] = EOS
        row_lp = row_lp + self.alive_lp.view(-1, 1)  # candidate scores, rows x per_row
        n_act = len(self.active)
        top_lp, top_j = row_lp.view(n_act, k * per_row).topk(
            min(2 * k, k * per_row), dim=-1)  # n_act x 2k, best first
        top_beam = torch.div(top_j, per_row, rounding_mode="floor")
        top_tok = row_tok.view(n_act, k * per_row).gather(1, top_j)
        return _Candidates(top_lp, top_beam, top_tok, top_tok == EOS, eos_lp)

    def histories_now(self, attn: Tensor, pos: Tensor | None) -> tuple[Tensor, Tensor | None]:
        """The attention and position histories including this step, per alive row."""
        attn_now = attn.float()[:, None, :]
        hist_attn = self.hist_attn
        hist_attn_now = attn_now if hist_attn is None else torch.cat([hist_attn, attn_now], 1)
        if pos is None:
            return hist_attn_now, None
        pos_now = pos.float()[:, None]
        return hist_attn_now, pos_now if self.hist_pos is None else torch.cat(
            [self.hist_pos, pos_now], 1)

    def finish(self, c: _Candidates, now: tuple[Tensor, Tensor | None]) -> None:
        """EOS candidates among the k best become finished hypotheses."""
        k = self.k
        if self.onmt_style:
            self.best_is_eos = c.is_eos[:, 0].tolist()
        eos_rank = c.is_eos.clone()
        eos_rank[:, k:] = False
        eos_rank &= torch.isfinite(c.lp)
        ends = eos_rank.nonzero()  # hypotheses x (active sentence, rank)
        ended = ends[:, 0].tolist()
        if not ended:
            return
        ended_rows = ends[:, 0] * k + c.beam[ends[:, 0], ends[:, 1]]
        toks, lps, eos_lps, attns, poss = _to_host(
            ended_rows, self.hist_tok, self.hist_lp, c.eos_lp, *now)
        eos_list = eos_lps.tolist()
        for j, a in enumerate(ended):
            i = self.active[a]
            tok_list = toks[j].tolist()
            self.finished[i].append(
                _hypothesis(
                    tok_list, lps[j].tolist() + [eos_list[j]], attns[j],
                    None if poss is None else poss[j], self.lens[i],
                    self.lp(len(tok_list) + 1), None if self.gates is None else self.gates[i],
                )
            )

    def advance(self, logp: Tensor, logp_row: Tensor | None, c: _Candidates,
                now: tuple[Tensor, Tensor | None]) -> tuple[Tensor, Tensor]:
        """The k best non-EOS candidates stay alive (stable order: rank, EOS last), or with
        onmt_style the non-EOS among the k best only (the other rows at -inf); their
        histories grow by this step. -> (the alive row each continues, its token ids)."""
        k, device = self.k, self.device
        n_act = len(self.active)
        rank = torch.arange(c.lp.size(1), device=device)
        out = c.is_eos | (rank >= k) if self.onmt_style else c.is_eos
        order = (out.long() * (2 * k) + rank).argsort(dim=-1)[:, :k]
        new_lp = c.lp.gather(1, order)
        new_lp = new_lp.masked_fill(out.gather(1, order), NEG_INF)
        new_beam = c.beam.gather(1, order)
        new_tok = c.tok.gather(1, order)
        rows = (torch.arange(n_act, device=device)[:, None] * k + new_beam).view(-1)
        flat_tok = new_tok.view(-1)  # candidate indices (= token ids without a shortlist)
        tok_lp = logp[rows if logp_row is None else logp_row[rows], flat_tok]
        if self.out_vocab is not None:
            flat_tok = self.step_opts["out_vocab"][flat_tok]
        self.hist_tok = torch.cat([self.hist_tok[rows], flat_tok[:, None]], 1)
        self.hist_lp = torch.cat([self.hist_lp[rows], tok_lp[:, None]], 1)
        hist_attn_now, hist_pos_now = now
        self.hist_attn = hist_attn_now[rows]
        self.hist_pos = None if hist_pos_now is None else hist_pos_now[rows]
        self.alive_lp = new_lp
        self.t += 1
        return rows, flat_tok

    def done_sentences(self, n_best: int) -> list[int]:
        """Which active sentences go on: not those with n_best finished that no alive beam
        can beat, nor those with no beam left. NonFiniteScores for a NaN or +inf best."""
        keep: list[int] = []
        best_alive_all = self.alive_lp.max(dim=1).values.tolist()
        for a, i in enumerate(self.active):
            best_alive = best_alive_all[a]
            if not best_alive < math.inf:  # NaN or +inf (-inf: no beam left)
                raise NonFiniteScores(self.t, best_alive)
            if best_alive == NEG_INF:
                continue
            if self.onmt_style:
                if not (self.best_is_eos[a] and len(self.finished[i]) >= n_best):
                    keep.append(a)
                continue
            if len(self.finished[i]) >= n_best:
                # longest reachable length gives the loosest bound (log-probs are <= 0)
                bound = best_alive / self.lp(self.limits[i] + 1) if best_alive < 0 else best_alive
                nth = sorted((h.score for h in self.finished[i]), reverse=True)[n_best - 1]
                if nth >= bound:
                    continue
            keep.append(a)
        return keep

    def prune(self, n_best: int, rows: Tensor, flat_tok: Tensor) -> None:
        """Sentences that are done leave the batch; the others' state follows their beams
        (`rows`, from advance) and `flat_tok` is the next step's input."""
        keep = self.done_sentences(n_best)
        k, device = self.k, self.device
        if len(keep) < len(self.active):
            sel = torch.tensor(keep, dtype=torch.long, device=device)
            row_sel = (sel[:, None] * k + torch.arange(k, device=device)).view(-1)
            self.enc = select_batch(self.enc, row_sel)
            self.active = [self.active[a] for a in keep]
            self.alive_lp = self.alive_lp.index_select(0, sel)
            rows = rows.index_select(0, row_sel)
            self.hist_tok, self.hist_lp = self.hist_tok[row_sel], self.hist_lp[row_sel]
            self.hist_attn = self.hist_attn[row_sel]
            self.hist_pos = None if self.hist_pos is None else self.hist_pos[row_sel]
            flat_tok = flat_tok.index_select(0, row_sel)
        if self.active:
            self.state = select_batch(self.state, rows)
            self.y = flat_tok

    def results(self, n_best: int) -> list[list[Hypothesis]]:
        """Per sentence in input order, up to n_best distinct hypotheses, best first;
        NonFiniteScores for a sentence that never finished (every candidate EOS at the
        length limit was NaN or -inf)."""
        out: list[list[Hypothesis]] = []
        for i in range(self.n_sent):
            if not self.finished[i]:
                raise NonFiniteScores(self.limits[i] + 1)
            ranked = sorted(self.finished[i], key=lambda h: h.score, reverse=True)
            unique: list[Hypothesis] = []
            seen: set[tuple[int, ...]] = set()
            for h in ranked:
                if tuple(h.tokens) not in seen:
                    seen.add(tuple(h.tokens))
                    unique.append(h)
                if len(unique) == n_best:
                    break
            out.append(unique)
        return out
