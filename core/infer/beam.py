"""Batched beam search: all beams of all sentences decode as one tensor.

`beam_search` drives `_Beams`, the bookkeeping of one batch's beams, through its named
steps (the model's step, the 2k best candidates, finishing, advancing, pruning). The
length limit, min_len, shortlists, length penalties and the non-finite check are
core.infer.search's (its module docstring); beam search reads the best alive score per
sentence at every step (NaN wins torch's max and top-k) and, at the end, checks that
every sentence finished.

One read of the device a step: what the host decides (which candidates end, which
sentences go on) comes from one small tensor, `_Beams.step_flags`, computed on the device
after the step's beams advanced (advancing needs nothing from the host), and read with
`host_read`; the finished hypotheses' histories follow in one `to_host` copy a history,
only at steps where some end. Lists the host sends to the device go without a wait
(`to_device`). On a GPU each read is a wait for the GPU's queue to drain.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from core.infer.search import (
    NEG_INF,
    Hypothesis,
    NonFiniteScores,
    encoder_gates,
    host_read,
    lp_divisor,
    max_output_lengths,
    new_hypothesis,
    prepare_inputs,
    shortlist_opts,
    to_device,
    to_host,
)
from core.infer.topk import row_topk
from core.models import matmul
from core.models.base import BOS, EOS, Seq2Seq, select_batch


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
        before = (beams.hist_tok, beams.hist_lp, cands.eos_lp, *now)  # advance replaces them
        rows, flat_tok = beams.advance(logp, logp_row, cands, now)
        flags = host_read(beams.step_flags(cands))  # the step's one read of the device
        beams.finish(flags, before)
        beams.prune(n_best, flags, rows, flat_tok)
    return beams.results(n_best)



class _Candidates(NamedTuple):
    """The 2k best continuations of each active sentence (n_act x 2k, best first)."""

    lp: Tensor  # their scores (the beam's score + the word's log-prob)
    rows: Tensor  # the alive row each continues (active sentence * k + beam)
    tok: Tensor  # the word (a candidate index with a shortlist)
    is_eos: Tensor
    eos_lp: Tensor  # per alive row: EOS's log-prob at this step


class _Beams:
    """The beams of one batch of sentences in a beam search, with its named steps:
    `step` (the model), `expand` (the 2k best candidates per sentence), `advance` (the
    k best others stay alive), `step_flags` (what the host decides from, read once),
    `finish` (EOS candidates become hypotheses, from the histories before advance),
    `prune` (sentences that are done leave the batch), `results`. Rows of the tensors
    are active sentence * k + beam."""

    def __init__(self, model: Seq2Seq, src: Tensor, src_lens: Tensor, k: int,
                 penalty: tuple[float, bool], max_len_ratio: float, max_len_abs: int,
                 min_len: int, out_vocab: Tensor | None, extra: dict[str, Tensor]) -> None:
        src, src_lens = prepare_inputs(model, src, src_lens)
        self.model, self.k, self.min_len, self.penalty = model, k, min_len, penalty
        self.device = device = src.device
        self.out_vocab = out_vocab
        self.step_opts = shortlist_opts(out_vocab, device)
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
        self._first_rows = torch.zeros(0, 1, dtype=torch.long)  # see first_rows
        rank = torch.arange(2 * k, device=device)  # a candidate's rank (advance's sort keys)
        self._keys = (rank, rank + 2 * k, rank >= k)  # staying, leaving, past the k best

    def first_rows(self, n_act: int) -> Tensor:
        """n_act x 1: the first alive row of each active sentence (a * k), kept until the
        number of active sentences changes."""
        if self._first_rows.size(0) != n_act:
            self._first_rows = torch.arange(0, n_act * self.k, self.k,
                                            device=self.device).unsqueeze(1)
        return self._first_rows

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
        eos_col = logp.select(1, EOS)  # a view: rows of logp
        eos_lp = eos_col.clone()
        if t < self.min_len:  # no EOS before min_len, unless the row is at its length limit
            copies = k if logp_row is None else 1
            under = [t < self.limits[i] for i in self.active for _ in range(copies)]
            if all(under):  # no mask to copy to a GPU
                eos_col.fill_(NEG_INF)
            else:
                eos_col.masked_fill_(to_device(under, device, torch.bool), NEG_INF)
        row_lp, row_tok = row_topk(logp, per_row)  # rows of logp x per_row
        if t < self.min_len:
            eos_col.copy_(eos_lp)  # the step's output as it was
        if logp_row is not None:  # one row of logp per alive row
            row_lp, row_tok, eos_lp = row_lp[logp_row], row_tok[logp_row], eos_lp[logp_row]
        self.only_eos_at_limit(row_lp, row_tok, eos_lp)
        row_lp = row_lp + self.alive_lp.view(-1, 1)  # candidate scores, rows x per_row
        n_act = len(self.active)
        top_lp, top_j = row_lp.view(n_act, k * per_row).topk(
            min(2 * k, k * per_row), dim=-1)  # n_act x 2k, best first
        top_rows = torch.div(top_j, per_row, rounding_mode="floor") + self.first_rows(n_act)
        top_tok = row_tok.view(n_act, k * per_row).gather(1, top_j)
        return _Candidates(top_lp, top_rows, top_tok, top_tok == EOS, eos_lp)

    def only_eos_at_limit(self, row_lp: Tensor, row_tok: Tensor, eos_lp: Tensor) -> None:
        """At a sentence's last step only EOS may follow: its rows' candidates (alive
        rows x per_row, in place) become EOS first, the others -inf. Without boolean
        indexing (on a GPU a wait for the GPU: it counts the rows first)."""
        at_limit = [self.t >= self.limits[i] for i in self.active]
        if not any(at_limit):
            return
        if all(at_limit):  # no mask to copy to a GPU
            row_lp.fill_(NEG_INF)
            row_lp[:, 0] = eos_lp
            row_tok[:, 0] = EOS
            return
        last = to_device([a for a in at_limit for _ in range(self.k)], self.device, torch.bool)
        row_lp.masked_fill_(last.unsqueeze(1), NEG_INF)
        row_lp[:, 0] = torch.where(last, eos_lp, row_lp[:, 0])
        row_tok[:, 0].masked_fill_(last, EOS)

    def histories_now(self, attn: Tensor, pos: Tensor | None) -> tuple[Tensor, Tensor | None]:
        """The attention and position histories including this step, per alive row."""
        attn_now = attn.float().unsqueeze(1)
        hist_attn = self.hist_attn
        hist_attn_now = attn_now if hist_attn is None else torch.cat([hist_attn, attn_now], 1)
        if pos is None:
            return hist_attn_now, None
        pos_now = pos.float().unsqueeze(1)
        return hist_attn_now, pos_now if self.hist_pos is None else torch.cat(
            [self.hist_pos, pos_now], 1)

    def advance(self, logp: Tensor, logp_row: Tensor | None, c: _Candidates,
                now: tuple[Tensor, Tensor | None]) -> tuple[Tensor, Tensor]:
        """The k best non-EOS candidates stay alive (stable order: rank, EOS last), or with
        onmt_style the non-EOS among the k best only (the other rows at -inf); their
        histories grow by this step. -> (the alive row each continues, its token ids)."""
        k = self.k
        staying, leaving, late = self._keys
        out = c.is_eos | late if self.onmt_style else c.is_eos
        # the k smallest keys (all distinct), smallest first: a stable sort's first k
        order = torch.where(out, leaving, staying).topk(k, dim=1, largest=False).indices
        self.alive_lp = c.lp.masked_fill(out, NEG_INF).gather(1, order)
        rows = c.rows.gather(1, order).view(-1)
        flat_tok = c.tok.gather(1, order).view(-1)  # candidate indices (ids without a shortlist)
        tok_lp = logp[rows if logp_row is None else logp_row[rows], flat_tok]
        if self.out_vocab is not None:
            flat_tok = self.step_opts["out_vocab"][flat_tok]
        self.hist_tok = torch.cat([self.hist_tok.index_select(0, rows), flat_tok.unsqueeze(1)], 1)
        self.hist_lp = torch.cat([self.hist_lp.index_select(0, rows), tok_lp.unsqueeze(1)], 1)
        hist_attn_now, hist_pos_now = now
        self.hist_attn = hist_attn_now.index_select(0, rows)
        self.hist_pos = None if hist_pos_now is None else hist_pos_now.index_select(0, rows)
        self.t += 1
        return rows, flat_tok

    def step_flags(self, c: _Candidates) -> Tensor:
        """What the host decides a step from, in one small tensor to read after `advance`
        (n_act x (k + 1), + 1 with onmt_style, fp32): per active sentence, for each of its k
        best candidates the alive row it ends (EOS with a finite score) or -1; its best
        alive score now (NaN wins the max); with onmt_style, 1 where its best candidate
        is EOS."""
        k = self.k
        ends = c.is_eos[:, :k] & (c.lp[:, :k].abs() < math.inf)  # NaN and +-inf fail
        parts = [torch.where(ends, c.rows[:, :k], -1).to(self.alive_lp.dtype),
                 self.alive_lp.amax(dim=1, keepdim=True)]
        if self.onmt_style:
            parts.append(c.is_eos[:, :1].to(self.alive_lp.dtype))
        return torch.cat(parts, 1)

    def finish(self, flags: list[list[float]], before: tuple[Tensor | None, ...]) -> None:
        """EOS candidates among the k best become finished hypotheses. flags: step_flags'
        values; before: the histories of the step's alive rows (tokens, log-probs, EOS's
        log-prob, attention, positions) as they were before `advance`."""
        ended: list[int] = []  # active sentence of each hypothesis, in candidate order
        rows: list[int] = []  # its alive row
        for a, sentence in enumerate(flags):
            for row in sentence[:self.k]:
                if row >= 0:
                    ended.append(a)
                    rows.append(int(row))
        if not ended:
            return
        toks, lps, eos_lps, attns, poss = to_host(to_device(rows, self.device), *before)
        eos_list = eos_lps.tolist()
        for j, a in enumerate(ended):
            i = self.active[a]
            tok_list = toks[j].tolist()
            self.finished[i].append(
                new_hypothesis(
                    tok_list, lps[j].tolist() + [eos_list[j]], attns[j],
                    None if poss is None else poss[j], self.lens[i],
                    self.lp(len(tok_list) + 1), None if self.gates is None else self.gates[i],
                )
            )

    def done_sentences(self, n_best: int, flags: list[list[float]]) -> list[int]:
        """Which active sentences go on: not those with n_best finished that no alive beam
        can beat, nor those with no beam left. NonFiniteScores for a NaN or +inf best.
        flags: step_flags' values."""
        keep: list[int] = []
        for a, i in enumerate(self.active):
            best_alive = flags[a][self.k]
            if not best_alive < math.inf:  # NaN or +inf (-inf: no beam left)
                raise NonFiniteScores(self.t, best_alive)
            if best_alive == NEG_INF:
                continue
            if self.onmt_style:
                if not (flags[a][self.k + 1] and len(self.finished[i]) >= n_best):
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

    def prune(self, n_best: int, flags: list[list[float]], rows: Tensor,
              flat_tok: Tensor) -> None:
        """Sentences that are done leave the batch; the others' state follows their beams
        (`rows`, from advance) and `flat_tok` is the next step's input. flags:
        step_flags' values."""
        keep = self.done_sentences(n_best, flags)
        k = self.k
        if len(keep) < len(self.active):
            row_sel = to_device([a * k + j for a in keep for j in range(k)], self.device)
            self.enc = select_batch(self.enc, row_sel)
            self.active = [self.active[a] for a in keep]
            self.alive_lp = self.alive_lp.view(-1).index_select(0, row_sel).view(-1, k)
            rows = rows.index_select(0, row_sel)
            self.hist_tok = self.hist_tok.index_select(0, row_sel)
            self.hist_lp = self.hist_lp.index_select(0, row_sel)
            self.hist_attn = self.hist_attn.index_select(0, row_sel)
            self.hist_pos = None if self.hist_pos is None else self.hist_pos.index_select(
                0, row_sel)
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
