"""Greedy search: the most probable word at each step, for a whole batch of sentences.

The length limit, min_len, shortlists, the hypotheses' attention and the non-finite
check are core.infer.search's (its module docstring); greedy checks the log-probs its
hypotheses bring to the host anyway.
"""
from __future__ import annotations

import torch
from torch import Tensor

from core.infer.search import (
    Hypothesis,
    check_finite,
    encoder_gates,
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
def greedy(
    model: Seq2Seq, src: Tensor, src_lens: Tensor, max_len_ratio: float = 2.0,
    max_len_abs: int = 200, min_len: int = 0, out_vocab: Tensor | None = None,
    **extra: Tensor,
) -> list[Hypothesis]:
    """Pick the most probable token at each step. src: batch x src_len (natural order),
    src_lens: batch; out_vocab: K sorted target ids to choose from (a shortlist,
    core.infer.shortlist) or None for the whole vocabulary. Returns one hypothesis per
    sentence, in input order."""
    src, src_lens = prepare_inputs(model, src, src_lens)
    step_opts = shortlist_opts(out_vocab, src.device)
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
                short &= to_device(under, device, torch.bool)
            best = torch.where(short, top[:, 1], best)
            best_lp = torch.where(short, top_lp[:, 1], best_lp)
        at_limit = [t >= limits[i] for i in active]
        if any(at_limit):
            last = to_device(at_limit, device, torch.bool)
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
            toks, lps, attns, poss = to_host(to_device(ended, device), hist_tok,
                                              hist_lp, hist_attn, hist_pos)
            for j, a in enumerate(ended):
                i = active[a]
                out[i] = new_hypothesis(
                    toks[j, :-1].tolist(), lps[j].tolist(), attns[j],
                    None if poss is None else poss[j], lens[i],
                    gates=None if gates is None else gates[i],
                )
                check_finite(out[i].log_prob, t)
        if len(keep) < len(active):
            sel = to_device(keep, device)
            enc, state = select_batch(enc, sel), select_batch(state, sel)
            hist_tok, hist_lp, hist_attn = hist_tok[sel], hist_lp[sel], hist_attn[sel]
            hist_pos = None if hist_pos is None else hist_pos[sel]
            active = [active[a] for a in keep]
            best = best[sel]
        y = best
    return [h for h in out if h is not None]
