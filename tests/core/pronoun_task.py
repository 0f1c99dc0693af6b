"""A constructed two-sentence document corpus whose pronoun needs the context, plus a
contrastive scorer (after the contrastive test sets of context-aware NMT).

Each document is::

    prev:    "i see the car ."   -> "je vois la voiture ."     (3 templates)
    current: "it is red ."       -> "elle est rouge ."

The source pronoun "it" is the same for every noun; the target pronoun (il / elle)
follows the grammatical gender of the noun of the PREVIOUS sentence in the target
language. Nothing in the current sentence tells them apart, so a sentence-level model
can only guess, and every test sentence "it is ADJ ." appears once with a masculine
and once with a feminine context: a context-blind model scores exactly 50%.

Contrastive scoring: a model prefers the correct target when its forced-decoding score
(sum of log-probabilities, EOS included) beats that of the target with the other
pronoun; ties count as errors.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import torch
from torch import Tensor

from core.models.base import BOS, EOS, PAD, Seq2Seq

SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]
DOC_START = "<doc>"  # the one-token context of a document's first sentence

NOUNS = {  # source noun -> (target noun, gender)
    "book": ("livre", "m"), "tree": ("arbre", "m"), "pen": ("stylo", "m"),
    "box": ("carton", "m"), "bag": ("sac", "m"), "desk": ("bureau", "m"),
    "table": ("table", "f"), "car": ("voiture", "f"), "door": ("porte", "f"),
    "chair": ("chaise", "f"), "house": ("maison", "f"), "lamp": ("lampe", "f"),
}
ADJECTIVES = {  # invariable in gender, so only the pronoun differs between genders
    "red": "rouge", "yellow": "jaune", "fast": "rapide", "modern": "moderne",
    "simple": "simple", "useful": "utile", "fragile": "fragile", "pink": "rose",
}
ARTICLE = {"m": "le", "f": "la"}
PRONOUN = {"m": "il", "f": "elle"}
TEMPLATES = [  # (source with N, target with ART and N)
    ("i see the N .", "je vois ART N ."),
    ("we buy the N .", "nous achetons ART N ."),
    ("the N is here .", "ART N est ici ."),
]


@dataclass
class Example:
    """One training pair with its context (all lists of ids, no BOS/EOS)."""

    ctx: list[int]
    src: list[int]
    tgt: list[int]


@dataclass
class Contrastive:
    ctx: list[int]
    src: list[int]
    correct: list[int]
    contrastive: list[int]


@dataclass
class PronounTask:
    src_itos: list[str]
    tgt_itos: list[str]
    train: list[Example]
    test: list[Contrastive]


def _vocab(sentences: list[str]) -> tuple[list[str], dict[str, int]]:
    words = sorted({w for s in sentences for w in s.split()})
    itos = SPECIALS + words
    return itos, {w: i for i, w in enumerate(itos)}


def make_task(seed: int = 0, held_out_per_gender: int = 3) -> PronounTask:
    """All template x noun x adjective documents; for every adjective,
    `held_out_per_gender` masculine and as many feminine documents are held out as
    contrastive test items, the rest (both sentences of each) is training data."""
    rng = random.Random(seed)
    docs = []  # (prev_src, prev_tgt, cur_src, cur_tgt, wrong_tgt, gender, adjective)
    for src_t, tgt_t in TEMPLATES:
        for noun, (t_noun, gender) in NOUNS.items():
            prev_src = src_t.replace("N", noun)
            prev_tgt = tgt_t.replace("ART", ARTICLE[gender]).replace("N", t_noun)
            other = "f" if gender == "m" else "m"
            for adj, t_adj in ADJECTIVES.items():
                docs.append((prev_src, prev_tgt, f"it is {adj} .", f"{PRONOUN[gender]} est {t_adj} .",
                             f"{PRONOUN[other]} est {t_adj} .", gender, adj))
    src_itos, s2i = _vocab([DOC_START] + [d[0] for d in docs] + [d[2] for d in docs])
    tgt_itos, t2i = _vocab([d[1] for d in docs] + [d[3] for d in docs] + [d[4] for d in docs])

    def s_ids(text: str) -> list[int]:
        return [s2i[w] for w in text.split()]

    def t_ids(text: str) -> list[int]:
        return [t2i[w] for w in text.split()]

    test_keys: set[int] = set()
    for adj in ADJECTIVES:
        for gender in ("m", "f"):
            pool = [i for i, d in enumerate(docs) if d[6] == adj and d[5] == gender]
            test_keys.update(rng.sample(pool, held_out_per_gender))
    train, test = [], []
    for i, (prev_src, prev_tgt, cur_src, cur_tgt, wrong, _, _) in enumerate(docs):
        if i in test_keys:
            test.append(Contrastive(s_ids(prev_src), s_ids(cur_src), t_ids(cur_tgt), t_ids(wrong)))
        else:
            train.append(Example([s2i[DOC_START]], s_ids(prev_src), t_ids(prev_tgt)))
            train.append(Example(s_ids(prev_src), s_ids(cur_src), t_ids(cur_tgt)))
    return PronounTask(src_itos, tgt_itos, train, test)


def _pad(rows: list[list[int]]) -> tuple[Tensor, Tensor]:
    """list of id lists -> (batch x max_len PAD-padded, lengths batch)."""
    lens = torch.tensor([len(r) for r in rows])
    out = torch.full((len(rows), int(lens.max())), PAD, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r)
    return out, lens


def collate(ctx: list[list[int]], src: list[list[int]], tgt: list[list[int]]) -> dict[str, Tensor]:
    """Tensors for a teacher-forced forward: tgt_in = BOS y, tgt_out = y EOS."""
    src_t, src_lens = _pad(src)
    ctx_t, ctx_lens = _pad(ctx)
    tgt_in, _ = _pad([[BOS] + t for t in tgt])
    tgt_out, _ = _pad([t + [EOS] for t in tgt])
    return {"src": src_t, "src_lens": src_lens, "ctx": ctx_t, "ctx_lens": ctx_lens,
            "tgt_in": tgt_in, "tgt_out": tgt_out}


def sentence_scores(model: Seq2Seq, batch: dict[str, Tensor]) -> Tensor:
    """Forced decoding: sum over target positions of log p(y_t), EOS included -> batch."""
    out = model(batch["src"], batch["src_lens"], batch["tgt_in"], ctx=batch["ctx"], ctx_lens=batch["ctx_lens"])
    token = out.log_probs.gather(-1, batch["tgt_out"][:, :, None])[:, :, 0]  # batch x tgt
    return (token * (batch["tgt_out"] != PAD)).sum(dim=1)


@torch.no_grad()
def contrastive_accuracy(model: Seq2Seq, items: list[Contrastive]) -> float:
    """Share of items whose correct target outscores the contrastive one (strictly)."""
    was_training = model.training
    model.eval()
    ctx, src = [c.ctx for c in items], [c.src for c in items]
    good = sentence_scores(model, collate(ctx, src, [c.correct for c in items]))
    bad = sentence_scores(model, collate(ctx, src, [c.contrastive for c in items]))
    model.train(was_training)
    return float((good > bad).float().mean())


def train_model(
    model: Seq2Seq, examples: list[Example], steps: int, batch_size: int = 32,
    lr: float = 3e-3, seed: int = 0,
) -> float:
    """Adam on the token-level NLL for a fixed number of steps; returns the last loss."""
    rng = random.Random(seed)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=lr)
    model.train()
    loss = torch.tensor(0.0)
    for _ in range(steps):
        chosen = rng.sample(examples, batch_size)
        batch = collate([e.ctx for e in chosen], [e.src for e in chosen], [e.tgt for e in chosen])
        out = model(batch["src"], batch["src_lens"], batch["tgt_in"], ctx=batch["ctx"], ctx_lens=batch["ctx_lens"])
        loss = torch.nn.functional.nll_loss(
            out.log_probs.flatten(0, 1), batch["tgt_out"].flatten(), ignore_index=PAD
        )
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
    return float(loss.detach())
