"""Tiny Seq2Seq models that honour core/models/base.py exactly, for the inference tests.

- ToyAttnModel: GRU encoder (masked, so padding never changes a sentence's result),
  GRU-cell decoder with dot attention over the encoder states; optionally reports an
  expected source position per step (like local-p) and accepts `ctx`/`ctx_lens`
  context ids whose mean embedding is added to the initial decoder state.
- BigramTableModel: step log-probs come from a hand-set table indexed by the previous
  token, so the best translation can be worked out by hand; uniform attention.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from core.models.base import BOS, EOS, Seq2Seq, Seq2SeqOutput, State, length_mask


class ToyAttnModel(Seq2Seq):
    family = "toy"

    def __init__(
        self, src_vocab: int = 12, tgt_vocab: int = 12, hidden: int = 16, seed: int = 0,
        with_positions: bool = False, sharpness: float = 1.0,
    ):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.tgt_vocab_size = tgt_vocab
        self.with_positions = with_positions
        self.sharpness = sharpness
        self.src_emb = nn.Embedding(src_vocab, hidden)
        self.tgt_emb = nn.Embedding(tgt_vocab, hidden)
        self.enc = nn.GRUCell(hidden, hidden)
        self.dec = nn.GRUCell(2 * hidden, hidden)
        self.out = nn.Linear(2 * hidden, tgt_vocab)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.8)

    # --- encoding ---------------------------------------------------------------
    def encode(self, src: Tensor, src_lens: Tensor, **extra) -> State:
        batch, width = src.shape
        mask = length_mask(src_lens, width)  # batch x S
        h = src.new_zeros(batch, self.enc.hidden_size, dtype=torch.float)
        states = []
        for j in range(width):
            h_new = self.enc(self.src_emb(src[:, j]), h)
            h = torch.where(mask[:, j : j + 1], h_new, h)  # padding keeps the last state
            states.append(h)
        memory = torch.stack(states, 1)  # batch x S x H
        final = h
        ctx, ctx_lens = extra.get("ctx"), extra.get("ctx_lens")
        if ctx is not None:
            cmask = length_mask(ctx_lens, ctx.size(1)).float()  # batch x C
            summed = (self.src_emb(ctx) * cmask[:, :, None]).sum(1)
            final = final + summed / cmask.sum(1, keepdim=True).clamp(min=1.0)
        return {"memory": memory, "mask": mask, "final": final}

    def init_state(self, enc: State) -> State:
        h = enc["final"]
        return {"h": h, "feed": torch.zeros_like(h)}

    def step(
        self, y_prev: Tensor, state: State, enc: State
    ) -> tuple[Tensor, Tensor, State, Tensor | None]:
        x = torch.cat([self.tgt_emb(y_prev), state["feed"]], -1)
        h = self.dec(x, state["h"])  # batch x H
        scores = torch.einsum("bsh,bh->bs", enc["memory"], h) * self.sharpness
        scores = scores.masked_fill(~enc["mask"], float("-inf"))
        attn = torch.softmax(scores, -1)  # batch x S
        context = torch.einsum("bs,bsh->bh", attn, enc["memory"])
        logp = torch.log_softmax(self.out(torch.cat([h, context], -1)), -1)
        pos = None
        if self.with_positions:
            pos = (attn * torch.arange(attn.size(1), dtype=attn.dtype)).sum(-1)
        return logp, attn, {"h": h, "feed": context}, pos

    # --- teacher forcing: the same recurrence over the whole target -----------------
    def forward(self, src: Tensor, src_lens: Tensor, tgt_in: Tensor, **extra) -> Seq2SeqOutput:
        enc = self.encode(src, src_lens, **extra)
        state = self.init_state(enc)
        lps, attns, poss = [], [], []
        for t in range(tgt_in.size(1)):
            logp, attn, state, pos = self.step(tgt_in[:, t], state, enc)
            lps.append(logp)
            attns.append(attn)
            poss.append(pos)
        positions = torch.stack(poss, 1) if self.with_positions else None
        return Seq2SeqOutput(torch.stack(lps, 1), torch.stack(attns, 1), positions)


class BigramTableModel(Seq2Seq):
    """log P(y_t | y_<t, x) = table[y_{t-1}, y_t], whatever the source."""

    family = "table"

    def __init__(self, probs: Tensor):
        super().__init__()
        self.tgt_vocab_size = probs.size(1)
        self.table = nn.Parameter(torch.log(probs.float()), requires_grad=False)

    def encode(self, src: Tensor, src_lens: Tensor, **extra) -> State:
        mask = length_mask(src_lens, src.size(1))
        return {"uniform": mask.float() / src_lens[:, None].float()}  # batch x S

    def init_state(self, enc: State) -> State:
        return {"dummy": enc["uniform"][:, :1].clone()}

    def step(self, y_prev: Tensor, state: State, enc: State):
        return self.table[y_prev], enc["uniform"], state, None

    def forward(self, src: Tensor, src_lens: Tensor, tgt_in: Tensor, **extra) -> Seq2SeqOutput:
        enc = self.encode(src, src_lens)
        attn = enc["uniform"][:, None, :].expand(-1, tgt_in.size(1), -1)
        return Seq2SeqOutput(self.table[tgt_in], attn)


def greedy_trap_table() -> Tensor:
    """Vocabulary PAD UNK BOS EOS a=4 b=5. After BOS: a 0.6, b 0.4. After b: EOS 0.9.
    After a: a 0.36, b 0.04, EOS 0.3 (the rest on UNK). Greedy follows 'a a a ...'
    (every step <= 0.36) while 'b EOS' has probability 0.4 * 0.9 = 0.36."""
    eps = 1e-4
    p = torch.full((6, 6), eps)
    p[BOS, 4], p[BOS, 5] = 0.6, 0.4
    p[5, 3] = 0.9
    p[5, 4], p[5, 5] = 0.05, 0.05
    p[4, 4], p[4, 5], p[4, 3], p[4, 1] = 0.36, 0.04, 0.3, 0.29
    return p / p.sum(1, keepdim=True)


class MonotoneModel(Seq2Seq):
    """Translates word by word: output t is `lexicon[src[t]]` (probability 0.9), then
    EOS after the last source word; attention is one-hot on source position t."""

    family = "monotone"

    def __init__(self, lexicon: list[int], tgt_vocab: int):
        super().__init__()
        self.tgt_vocab_size = tgt_vocab
        self.register_buffer("lexicon", torch.tensor(lexicon, dtype=torch.long))
        self.calls = 0  # encode calls, to see how many batches ran

    def encode(self, src: Tensor, src_lens: Tensor, **extra) -> State:
        self.calls += 1
        return {"src": src, "lens": src_lens}

    def init_state(self, enc: State) -> State:
        return {"t": torch.zeros_like(enc["lens"])}

    def step(self, y_prev: Tensor, state: State, enc: State):
        t, lens = state["t"], enc["lens"]
        pos = torch.minimum(t, lens - 1)  # batch
        word = self.lexicon[enc["src"].gather(1, pos[:, None])[:, 0]]
        target = torch.where(t < lens, word, torch.full_like(word, EOS))
        probs = torch.full((t.size(0), self.tgt_vocab_size), 0.1 / (self.tgt_vocab_size - 1))
        probs.scatter_(1, target[:, None], 0.9)
        attn = torch.nn.functional.one_hot(pos, enc["src"].size(1)).float()
        return probs.log(), attn, {"t": t + 1}, None

    def forward(self, src: Tensor, src_lens: Tensor, tgt_in: Tensor, **extra) -> Seq2SeqOutput:
        enc = self.encode(src, src_lens)
        state = self.init_state(enc)
        lps, attns = [], []
        for t in range(tgt_in.size(1)):
            logp, attn, state, _ = self.step(tgt_in[:, t], state, enc)
            lps.append(logp)
            attns.append(attn)
        return Seq2SeqOutput(torch.stack(lps, 1), torch.stack(attns, 1))
