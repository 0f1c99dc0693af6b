"""What training a config costs in memory, worked out from its numbers alone.

Nothing is built, not even on the meta device (a 100,000-layer config took 32 minutes
to build there): `parameter_count` adds up each family's tensors (embeddings, recurrent
or Transformer layers, attention, output layer, alignment head) with the same formulas
the modules use, so it equals `sum(p.numel())` of the real model (tested for every
variant), and `estimate` adds the training state and the activations of one batch:

    weights      4 bytes a parameter (fp32)
    gradients    4 bytes a parameter
    optimiser    Adam's and Adadelta's two moments: 8 bytes a parameter (SGD: none)
    bf16 copies  2 bytes a parameter under train.amp (autocast's weight casts)
    activations  one batch (data.batch_size sentences, or data.batch_tokens tokens, of
                 data.max_len + 1 tokens a side): what the backward keeps per token and
                 layer, the attention weights per sentence, and the output layer's
                 scores (tokens x vocabulary, or x train.sampled_softmax; on a GPU the
                 loss keeps a second copy)

`check_fits` refuses, before a run exists, a config whose estimate exceeds the memory
available on its device; core.services.training.create_run (the CLI's `train` and the
GUI's Training screen) and train_run call it. tests/core/test_footprint.py compares the
estimate with a measured peak.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from core.errors import TrainingError
from core.families import family_traits

GIB = 1024 ** 3
FLOAT = 4  # bytes of an fp32 value


# --- parameters, per family ------------------------------------------------------------
def linear(n_in: int, n_out: int, bias: bool = True) -> int:
    """Parameters of a Linear(n_in, n_out)."""
    return n_in * n_out + (n_out if bias else 0)


def rnn(cell: str, n_in: int, hidden: int, layers: int = 1, directions: int = 1) -> int:
    """Parameters of nn.LSTM / nn.GRU (also a stack of LSTMCell / GRUCell): per layer and
    direction, gates x (input + hidden + 2 biases)."""
    gates = 4 if cell == "lstm" else 3
    total = 0
    for layer in range(layers):
        width = n_in if layer == 0 else hidden * directions
        total += directions * gates * hidden * (width + hidden + 2)
    return total


def _alignment_head(dec: int, tgt_emb: int, mem: int, src_emb: int, size: int) -> int:
    return linear(dec + 3 * tgt_emb, size) + linear(mem + 3 * src_emb, size) + size


def _luong(m, src_v: int, tgt_v: int) -> int:
    e, h, n = m.emb_size, m.hidden_size, m.layers
    encoder = rnn("lstm", e, h // 2, n, 2) if m.bidirectional else rnn("lstm", e, h, n)
    total = src_v * e + encoder + tgt_v * e
    total += rnn("lstm", e + h if m.input_feeding else e, h, n)
    # mlp (OpenNMT-py's): concat's with a query bias, and W_c with a bias
    total += {"general": h * h, "concat": 2 * h * h + h, "mlp": 2 * h * h + 2 * h + h,
              "location": h * m.max_src_len, "dot": 0}.get(m.score, 0)
    if m.attention == "local-p":
        total += h * h + h
    total += 2 * h * h + linear(h, tgt_v)
    if m.alignment_head:
        total += _alignment_head(h, e, h, e, h)
    return total


def _rnnsearch(m, src_v: int, tgt_v: int) -> int:
    e, h, pool = m.emb_size, m.hidden_size, m.maxout_pool
    units = max(1, h // 2)
    total = src_v * e + rnn("gru", e, h, m.layers, directions=2) + tgt_v * e
    total += h * h + (h * h + 2 * h * h + h)  # w_s; additive attention w_a, u_a, v_a
    total += rnn("gru", e + 2 * h, h)
    total += linear(h, pool * units) + (e + 2 * h) * pool * units + linear(units, tgt_v)
    if m.alignment_head:
        total += _alignment_head(3 * h, e, 2 * h, e, h)
    return total


def _rnnencdec(m, src_v: int, tgt_v: int) -> int:
    e, h, n = m.emb_size, m.hidden_size, m.layers
    return (src_v * e + rnn(m.cell, e, h, n) + tgt_v * e + rnn(m.cell, e, h, n)
            + linear(h, tgt_v))


def _transformer_layers(m) -> tuple[int, int]:
    """(encoder layer, decoder layer) parameters."""
    d = m.d_model
    attention, norm = 4 * linear(d, d), 2 * d
    ff = linear(d, m.ff_size) + linear(m.ff_size, d)
    return attention + 2 * norm + ff, 2 * attention + 3 * norm + ff


def _transformer(m, src_v: int, tgt_v: int) -> int:
    d = m.d_model
    enc, dec = _transformer_layers(m)
    total = (src_v + tgt_v) * d + m.dec_layers * dec
    total += 0 if m.tie_embeddings else d * tgt_v
    if m.family == "context_transformer":
        context_layer = enc + 4 * d * d + 4 * d + 2 * d + linear(2 * d, d)  # + ctx attn, norm, gate
        shared = min(m.ctx_layers, m.enc_layers - 1) if m.strategy == "ws" else 0
        return total + (m.enc_layers - 1) * enc + context_layer + (m.ctx_layers - shared) * enc
    return total + m.enc_layers * enc


_FAMILIES = {"luong": _luong, "rnnsearch": _rnnsearch, "rnnencdec": _rnnencdec,
             "transformer": _transformer, "concat": _transformer,
             "context_transformer": _transformer}


def parameter_count(model_config, src_vocab_size: int, tgt_vocab_size: int) -> int:
    """The parameters of the model `model_config` describes (shared tensors once), by
    arithmetic: microseconds for any size."""
    return _FAMILIES[model_config.family](model_config, src_vocab_size, tgt_vocab_size)


# --- activations of one batch --------------------------------------------------------
def _batch_shape(config) -> tuple[int, int, int]:
    """(sentences, target tokens, source tokens incl. context) of a full batch."""
    d, m = config.data, config.model
    length = d.max_len + 1  # the longest kept pair, with BOS / EOS
    sentences = max(1, d.batch_tokens // length) if d.batch_tokens else d.batch_size
    source = length
    if m.family == "concat":
        source = (m.ctx_sentences + 1) * length
    return sentences, length, source


def activation_bytes(config, tgt_vocab_size: int, device_type: str = "cpu") -> int:
    """What the backward of one full batch keeps, in bytes (fp32 values)."""
    m = config.model
    b, t, s = _batch_shape(config)
    out_words = config.train.sampled_softmax or tgt_vocab_size
    # the output layer's scores; on a GPU the loss keeps softmax(s) in a tensor of its own
    values = b * t * out_words * (1 if device_type == "cpu" else 2)
    if not family_traits(m.family).transformer:  # the recurrent families
        h, e = m.hidden_size, m.emb_size
        per_layer = 8 * h if m.cell == "lstm" or m.family == "luong" else 6 * h
        layers = m.layers * (2 if m.family == "rnnsearch" else 1)
        values += b * (s + t) * (layers * per_layer + 2 * e)
        if m.family != "rnnencdec":
            values += b * t * (3 * s + 6 * h)  # scores, weights, context and output vectors
    else:
        d, ff, heads = m.d_model, m.ff_size, m.heads
        enc_layers = m.enc_layers + (m.ctx_layers if m.family == "context_transformer" else 0)
        context = (m.ctx_sentences + m.ctx_following) * t if m.family == "context_transformer" else 0
        enc_tokens = s + context
        values += b * enc_tokens * enc_layers * (10 * d + 2 * ff)
        values += b * enc_layers * heads * 3 * s * s
        values += b * t * m.dec_layers * (16 * d + 2 * ff)
        values += b * m.dec_layers * heads * 3 * (t * t + t * s)
    return values * FLOAT


@dataclass(frozen=True)
class Footprint:
    """The estimate, in bytes, by part."""

    parameters: int
    weights: int
    gradients: int
    optimiser: int
    casts: int
    activations: int
    batch: tuple[int, int]  # sentences x tokens

    @property
    def total(self) -> int:
        """All parts together, in bytes."""
        return self.weights + self.gradients + self.optimiser + self.casts + self.activations

    def describe(self) -> str:
        """'3.2 GiB (weights 0.5, gradients 0.5, optimiser 1.0, activations of 64 x 51
        tokens 1.2)'."""
        def g(n: int) -> str:
            return f"{n / GIB:,.1f}"

        casts = f", bf16 copies {g(self.casts)}" if self.casts else ""
        return (f"{g(self.total)} GiB (weights {g(self.weights)}, gradients "
                f"{g(self.gradients)}, optimiser {g(self.optimiser)}{casts}, activations of "
                f"{self.batch[0]:,} x {self.batch[1]:,} tokens {g(self.activations)})")


def estimate(config, src_vocab_size: int, tgt_vocab_size: int,
             device_type: str = "cpu") -> Footprint:
    """The memory training `config` takes on a `device_type` ('cpu' or 'cuda') device."""
    params = parameter_count(config.model, src_vocab_size, tgt_vocab_size)
    moments = 2 if config.train.optimizer in ("adam", "adadelta") else 0
    b, t, _ = _batch_shape(config)
    return Footprint(
        parameters=params, weights=params * FLOAT, gradients=params * FLOAT,
        optimiser=moments * params * FLOAT, casts=params * 2 if config.train.amp else 0,
        activations=activation_bytes(config, tgt_vocab_size, device_type), batch=(b, t))


# --- the memory there is ---------------------------------------------------------------
def available_memory(device) -> int | None:
    """Bytes free for training on `device` (a torch.device): a GPU's free memory, or the
    machine's available memory (MemAvailable: free plus what the kernel can reclaim);
    None when unknown."""
    if device.type == "cuda":
        import torch  # lazy: a top-level import would load torch

        try:
            return int(torch.cuda.mem_get_info(device)[0])
        except (AssertionError, RuntimeError):
            return None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def check_fits(config, src_vocab_size: int, tgt_vocab_size: int, device,
               available: int | None = None) -> Footprint:
    """TrainingError, with the estimate by part, when training `config` needs more than
    `available` bytes (default: available_memory(device)). Returns the estimate."""
    need = estimate(config, src_vocab_size, tgt_vocab_size, device.type)
    available = available_memory(device) if available is None else available
    if available is not None and need.total > available:
        where = "the GPU has" if device.type == "cuda" else "this machine has"
        raise TrainingError(
            f"the model is too large to train here: {need.parameters:,} parameters, training "
            f"needs about {need.describe()}, and {where} {available / GIB:,.1f} GiB available "
            "(the limit); lower the model's sizes (model.hidden_size, model.emb_size or "
            "model.d_model, the layers), the vocabulary sizes or the batch "
            "(data.batch_size, data.max_len)")
    return need
