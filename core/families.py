"""Model families and their traits: what every layer that must treat families
differently asks for by name (family_traits("luong").reading), instead of keeping its own
lists of family names. Depends on nothing but core.errors, so core.config can use it.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.errors import ConfigError


@dataclass(frozen=True)
class FamilyTraits:
    """What a model family is, for every layer that must treat families differently."""

    context: bool = False      # sees other sentences of its document (model.ctx_*)
    transformer: bool = False  # d_model / ff_size / heads / enc_layers / dec_layers sizes
    layered: bool = False      # per-layer, per-head cross-attention (layer_attention)
    previous_only: bool = False  # a context family that takes no following sentences
    # can encode the previous TARGET sentence with target embeddings (model.ctx_side)
    target_side: bool = False
    #: where word alignments are read off its attention by default (core.evaluate.readings;
    #: measured in experiments/RESULTS.md, section D)
    reading: str = "predict"
    #: can carry a target-conditioned word-alignment head (model.alignment_head,
    #: core/models/alignment_head.py)
    alignment_head: bool = False
    #: the Training screen and `train` can train it; False for an imported family, whose
    #: runs come from `runs import` (core.services.model_import) only
    trainable: bool = True
    #: its layers read model.pre_norm / norm_eps / generator_bias (core/models/transformer.py;
    #: OpenNMT-py's Transformers are imported with them, core.services.onmt_tf)
    norm_options: bool = False


TRAITS: dict[str, FamilyTraits] = {
    "rnnencdec": FamilyTraits(),
    "rnnsearch": FamilyTraits(alignment_head=True),
    # input feeding makes the trained attention look one word ahead (RESULTS.md D)
    "luong": FamilyTraits(reading="previous", alignment_head=True),
    "transformer": FamilyTraits(transformer=True, layered=True, norm_options=True),
    "concat": FamilyTraits(context=True, transformer=True, layered=True, previous_only=True,
                           norm_options=True),
    "context_transformer": FamilyTraits(context=True, transformer=True, layered=True,
                                        target_side=True),
    # a Marian / OPUS-MT model imported from the Hugging Face layout (core/models/marian.py)
    "marian": FamilyTraits(transformer=True, layered=True, trainable=False),
}


def family_traits(family: str) -> FamilyTraits:
    """The traits of `family` (ConfigError naming the known families otherwise)."""
    if family not in TRAITS:
        raise ConfigError(f"unknown model family {family!r}; known: {sorted(TRAITS)}")
    return TRAITS[family]


def families_with(**wanted: bool) -> tuple[str, ...]:
    """The families whose traits match, e.g. families_with(context=True)."""
    return tuple(f for f, t in TRAITS.items()
                 if all(getattr(t, k) == v for k, v in wanted.items()))


#: every model family, in the order forms and help texts list them
FAMILIES: tuple[str, ...] = tuple(TRAITS)
