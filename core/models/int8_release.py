"""translate --int8 without the fp32 copies: after an int8 search has packed the weights
it uses (core.models.int8), `release` frees the fp32 Parameters those packed forms
replace, and the weights built from them for the search (core.models.matmul.kept), so
the model holds int8 rows and scales only. Apart from core.models.int8 because it reaches
into both int8's packed forms and matmul's kept weights, and matmul imports int8."""
from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.utils.weak import WeakIdKeyDictionary

from core.models import int8, matmul

#: models released (release): model -> (matrices whose fp32 copy was dropped, bytes)
_released = WeakIdKeyDictionary()


def release(model: nn.Module) -> tuple[int, int]:
    """Drop `model`'s fp32 copies of the weights that int8 products have packed so far
    (call it after an int8 search, which packs what searches use): the model then holds
    their int8 rows and scales only. Each such Parameter keeps its shape but its storage
    is freed (torch raises on any read: an fp32 product can no longer run with it);
    weights built from Parameters for the search (core.models.matmul.kept: Luong's
    concatenated cell weights) become shape-only stand-ins on the 'meta' device that
    find the same packed form, and the Parameters they were built from are freed too.
    Kept: embedding tables (a lookup reads them), weights not packed (an encoder's
    nn.LSTM inside torch's own kernel) and Parameters sharing a storage. Returns
    (matrices dropped, bytes freed); (0, 0) for a model not prepared, or a second time."""
    if model not in int8._prepared or model in _released:
        return 0, 0
    embeddings = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    storages: dict[int, int] = {}
    for t in [*model.parameters(), *model.buffers()]:
        ptr = t.untyped_storage().data_ptr()
        storages[ptr] = storages.get(ptr, 0) + 1
    built_from: list[Tensor] = []
    replaced: list[Tensor] = []  # kept weights made stand-ins: their memory goes with them

    def stand_in(w: Tensor) -> Tensor:
        out = _stand_in(w)
        if out is not w:
            replaced.append(w)
        return out

    for module in model.modules():
        built_from += matmul.freeze_kept(module, stand_in)
    count = len(replaced)
    freed = sum(w.untyped_storage().nbytes() for w in replaced)
    del replaced[:]
    for p in [*model.parameters(), *built_from]:
        whole = (p.storage_offset() == 0 and p.untyped_storage().nbytes()
                 == p.numel() * p.element_size() and p.untyped_storage().nbytes() > 0)
        if (not whole or id(p) in embeddings or storages.get(p.untyped_storage().data_ptr()) != 1
                or not (p in int8._packed or any(p is b for b in built_from))):
            continue
        freed += p.untyped_storage().nbytes()
        p.untyped_storage().resize_(0)
        count += 1
    _released[model] = (count, freed)
    return count, freed


def _stand_in(w: Tensor) -> Tensor:
    """A packed weight -> a tensor of its shape on the 'meta' device (no memory) that
    packed_for maps to the same packed form; any other weight as it is."""
    base = w if w._base is None else w._base
    if base not in int8._packed or base.shape != w.shape:
        return w
    meta = torch.empty(w.shape, dtype=w.dtype, device="meta")
    int8._sources[meta], int8._packed[meta] = int8._sources[base], int8._packed[base]
    return meta


def released(model: nn.Module) -> tuple[int, int]:
    """(matrices, bytes) `release` dropped for `model`; (0, 0) if it was not released."""
    return _released.get(model, (0, 0))
