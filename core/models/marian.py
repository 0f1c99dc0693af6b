"""Family 'marian': a Marian / OPUS-MT model (Hugging Face layout) behind the Seq2Seq
contract, run by transformers' own MarianMTModel (the optional `marian` extra).

Why a wrapper and not the workbench's Transformer: Marian's architecture differs in
ways that change every number (its sinusoids are not interleaved but sines then
cosines, its feed-forward uses swish, its output has a bias of its own, its vocabulary is
shared by both sides with `</s>` at id 0 and `<pad>` as the decoder's start). Running
transformers' implementation keeps the model exactly what its authors trained.

Ids: the run's vocabularies (core.data.marian_vocab) are in the workbench's order; two
buffers map them to Marian's ids, `src_ids[w]` and `tgt_ids[w]` (filled from the
checkpoint, so they travel with the weights). Output columns come back in the workbench
order: Marian's log-softmax over its whole vocabulary, picked by `tgt_ids`, with BOS
(which only repeats Marian's `<pad>` column) at -inf: so `log_probs` are exactly the
model's. A search step also puts `<pad>` at -inf, as OPUS-MT's `bad_words_ids` do.

Attention: every decoder layer's and head's cross-attention, as transformers reports it
(output_attentions, eager attention), over the source pieces and the `</s>` that ends
every Marian source.

Search steps keep a key/value cache (transformers' EncoderDecoderCache of two
DynamicCaches): a step feeds the decoder only its newest token, which attends to the
cached keys and values of the earlier ones (self-attention) and of the source
(cross-attention, computed at the first step). The cache travels in the search state
as `state["cache"]`, a KVCache: select_batch picks its rows as it picks a tensor's, and
the cache's own reorder_cache does it, in place (search never steps from a state again
once it has picked rows of it). Kept as one object, the cache is never copied to be
rebuilt: rebuilding a DynamicCache from tensors at every step copied all of it, a fifth
of a beam step's time on a busy host. The numbers are transformers' cached decoding (its
`generate`'s); `cached = False` gives the step that re-reads the whole prefix instead
(the same numbers up to rounding, at a cost per step that grows with the prefix).

The model's own config.json travels in `model.external` (ModelConfig) as JSON text.
"""
from __future__ import annotations

import functools
import inspect
import json
from typing import Any

import torch
from torch import Tensor, nn

from core import limits
from core.config import ModelConfig
from core.errors import ConfigError
from core.models import matmul
from core.models.base import BOS, PAD, Seq2Seq, Seq2SeqOutput, State, length_mask

NEG_INF = float("-inf")
INSTALL_HINT = "install the optional extra: pip install 'nmt-workbench[marian]'"

#: config.json keys checked against the workbench's limits before anything is built:
#: (key, limit)
SIZE_KEYS = (("d_model", limits.MAX_WIDTH), ("encoder_layers", limits.MAX_LAYERS),
             ("decoder_layers", limits.MAX_LAYERS), ("encoder_attention_heads", limits.MAX_HEADS),
             ("decoder_attention_heads", limits.MAX_HEADS), ("encoder_ffn_dim", limits.MAX_FF),
             ("decoder_ffn_dim", limits.MAX_FF), ("vocab_size", limits.MAX_VOCAB),
             ("decoder_vocab_size", limits.MAX_VOCAB),
             ("max_position_embeddings", limits.MAX_SOURCE_LEN * 16))


def transformers_module() -> Any:
    """transformers, or ConfigError saying how to install it."""
    try:
        import transformers  # the optional `marian` extra: only imported runs need it
    except ImportError:
        raise ConfigError(f"Marian models need the transformers library; {INSTALL_HINT}") from None
    return transformers


@functools.cache
def cache_keyword() -> str:
    """The keyword MarianMTModel.forward takes a key/value cache by: `cache` since
    transformers renamed it, `past_key_values` before."""
    forward = transformers_module().MarianMTModel.forward
    return "cache" if "cache" in inspect.signature(forward).parameters else "past_key_values"


def check_sizes(raw: dict[str, Any], source: str) -> None:
    """ConfigError naming `source` and the key when a size in a Marian config.json is not
    a whole number from 1 to its limit (a crafted file must not allocate without bound)."""
    for key, most in SIZE_KEYS:
        value = raw.get(key)
        if value is None and key == "decoder_vocab_size":
            continue
        if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= most):
            raise ConfigError(f"{source}: {key} is {value!r:.40}, not a whole number from 1 to "
                              f"{most:,}; not a Marian model the workbench can load")


def hf_config(text: str, source: str = "model.external") -> Any:
    """The MarianConfig of config.json's text (eager attention, so that attention weights
    can be read); ConfigError when it is not a Marian config within the limits."""
    transformers = transformers_module()
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{source}: not JSON ({exc})") from None
    if not isinstance(raw, dict) or raw.get("model_type") != "marian":
        raise ConfigError(f"{source}: not a Marian model's config (model_type is "
                          f"{raw.get('model_type') if isinstance(raw, dict) else None!r})")
    check_sizes(raw, source)
    config = transformers.MarianConfig(**raw)
    config._attn_implementation = "eager"
    return config


def onednn_linears(module: nn.Module) -> None:
    """Put every nn.Linear of `module` on oneDNN's products: each becomes a
    core.models.matmul.Linear holding the same Parameters (tied weights stay tied, the
    state_dict keeps its keys), as the workbench's own layers are. fp32 products on the
    CPU then run through oneDNN, packed once per search (matmul.packed_weights), where
    torch's own run through MKL, about half as fast on AMD CPUs (docs/benchmarks.md,
    "fp32 products through oneDNN"): the same numbers up to summation order."""
    for parent in list(module.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is nn.Linear:
                swapped = matmul.Linear(child.in_features, child.out_features,
                                        bias=child.bias is not None, device="meta")
                swapped.weight, swapped.bias = child.weight, child.bias
                setattr(parent, name, swapped)


class KVCache:
    """transformers' EncoderDecoderCache in a search state (module docstring): its keys
    and values are batch x heads x length x head_dim per decoder layer, self-attention
    then cross-attention, and select_batch picks rows of them as of a tensor."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache

    def index_select(self, dim: int, index: Tensor) -> KVCache:
        """Rows `index` (1-D long) of every key and value, in place (reorder_cache): the
        cache follows the hypotheses search keeps. Returns itself."""
        if dim != 0:
            raise ValueError("a key/value cache is indexed by its rows (dim 0) only")
        self.cache.reorder_cache(index)
        return self


class MarianWrapped(Seq2Seq):
    """transformers' MarianMTModel with the workbench's ids, search steps and attention."""

    family = "marian"
    #: whether search steps use the key/value cache (False: re-read the whole prefix)
    cached = True

    def __init__(self, config: Any, src_vocab_size: int, tgt_vocab_size: int,
                 hf_model: Any = None):
        """`config`: a MarianConfig (hf_config); `hf_model`: its MarianMTModel with weights
        already read (an import), else one is built and load_state_dict fills it."""
        super().__init__()
        self.hf = hf_model if hf_model is not None else transformers_module().MarianMTModel(config)
        self.hf.eval()
        onednn_linears(self.hf)
        self.pad_id = int(config.pad_token_id)
        # workbench id -> Marian id, per side (filled by load_state_dict)
        self.register_buffer("src_ids", torch.zeros(src_vocab_size, dtype=torch.long))
        self.register_buffer("tgt_ids", torch.zeros(tgt_vocab_size, dtype=torch.long))

    # -- helpers ---------------------------------------------------------------------
    def _decode(self, prefix: Tensor, enc: State) -> tuple[Tensor, Tensor]:
        """prefix: batch x T Marian ids (the decoder start first) -> (logits batch x T x
        Marian vocabulary, cross-attention layers x batch x heads x T x S)."""
        encoded = transformers_module().modeling_outputs.BaseModelOutput(
            last_hidden_state=enc["memory"])
        out = self.hf(encoder_outputs=encoded, attention_mask=enc["mem_mask"].long(),
                      decoder_input_ids=prefix, output_attentions=True, use_cache=False)
        return out.logits, torch.stack(out.cross_attentions)

    def _log_probs(self, logits: Tensor, out_vocab: Tensor | None, searching: bool) -> Tensor:
        """Marian logits ... x Vm -> fp32 log-probs ... x V in the workbench's order (BOS
        at -inf; `<pad>` too when `searching`), or ... x K renormalised over `out_vocab`."""
        logp = torch.log_softmax(logits.float(), dim=-1).index_select(-1, self.tgt_ids)
        logp[..., BOS] = NEG_INF
        if searching:
            logp[..., PAD] = NEG_INF
        if out_vocab is not None:
            logp = torch.log_softmax(logp.index_select(-1, out_vocab), dim=-1)
        return logp

    # -- contract --------------------------------------------------------------------
    def encode(self, src: Tensor, src_lens: Tensor, **extra: Any) -> State:
        """src: batch x S workbench ids (`</s>` last) -> memory batch x S x d, mem_mask."""
        mask = length_mask(src_lens, src.size(1))
        ids = self.src_ids[src].masked_fill(~mask, self.pad_id)
        memory = self.hf.get_encoder()(input_ids=ids, attention_mask=mask.long()).last_hidden_state
        return {"memory": memory, "mem_mask": mask}

    def forward(self, src: Tensor, src_lens: Tensor, tgt_in: Tensor,
                out_vocab: Tensor | None = None, **extra: Any) -> Seq2SeqOutput:
        """Teacher-forced pass (base.Seq2Seq): src batch x S, src_lens batch, tgt_in batch x T
        -> scores (the model's log-probs) batch x T x V, attention batch x T x S,
        layer_attention layers x batch x heads x T x S."""
        enc = self.encode(src, src_lens)
        logits, cross = self._decode(self.tgt_ids[tgt_in], enc)
        return Seq2SeqOutput(self._log_probs(logits, out_vocab, searching=False),
                             cross[-1].mean(dim=1), layer_attention=cross)

    def init_state(self, enc: State) -> State:
        """No target yet: an empty cache (cached), or `prefix` batch x 0 Marian ids."""
        if self.cached:
            return {}
        return {"prefix": enc["mem_mask"].new_zeros(enc["mem_mask"].size(0), 0, dtype=torch.long)}

    def step(self, y_prev: Tensor, state: State, enc: State, out_vocab: Tensor | None = None
             ) -> tuple[Tensor, Tensor, State, None]:
        """One search step (base.Seq2Seq.step): y_prev batch -> (log-probs batch x V, or
        batch x K over `out_vocab`; the last layer's cross-attention, mean over heads,
        batch x S; the new state; None)."""
        if not self.cached:
            return self._step_whole_prefix(y_prev, state, enc, out_vocab)
        if "cache" in state:
            cache = state["cache"].cache
        else:  # the first step: the decoder fills both parts
            transformers = transformers_module()
            cache = transformers.EncoderDecoderCache(transformers.DynamicCache(),
                                                     transformers.DynamicCache())
        encoded = transformers_module().modeling_outputs.BaseModelOutput(
            last_hidden_state=enc["memory"])
        out = self.hf(encoder_outputs=encoded, attention_mask=enc["mem_mask"].long(),
                      decoder_input_ids=self.tgt_ids[y_prev][:, None], output_attentions=True,
                      use_cache=True, **{cache_keyword(): cache})
        return (self._log_probs(out.logits[:, -1], out_vocab, searching=True),
                out.cross_attentions[-1][:, :, -1].mean(dim=1), {"cache": KVCache(cache)}, None)

    def _step_whole_prefix(self, y_prev: Tensor, state: State, enc: State,
                           out_vocab: Tensor | None) -> tuple[Tensor, Tensor, State, None]:
        """The uncached step: the whole prefix (`prefix` batch x t+1) through the decoder."""
        prefix = torch.cat([state["prefix"], self.tgt_ids[y_prev][:, None]], dim=1)
        logits, cross = self._decode(prefix, enc)
        return (self._log_probs(logits[:, -1], out_vocab, searching=True),
                cross[-1, :, :, -1].mean(dim=1), {"prefix": prefix}, None)

def build(config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int) -> Seq2Seq:
    """Registry entry for family 'marian': the MarianMTModel of `config.external`."""
    return MarianWrapped(hf_config(config.external), src_vocab_size, tgt_vocab_size)
