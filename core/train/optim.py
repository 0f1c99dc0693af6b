"""Optimisers and learning-rate schedules of the papers.

- SGD with the Luong halving schedule: lr stays fixed until `decay_start_epoch`, then is
  multiplied by `lr_decay` (0.5) after every further epoch.
- Adam (the Spanish-English project, the Transformers) and Adadelta (Bahdanau: rho 0.95,
  eps 1e-6, lr 1.0).
"""
from __future__ import annotations

import torch

from core.config import TrainConfig
from core.errors import ConfigError


def build_optimizer(params, cfg: TrainConfig) -> torch.optim.Optimizer:
    """SGD, Adam (fused) or Adadelta (rho 0.95, eps 1e-6) at cfg.lr over the parameters
    that require gradients; ConfigError for another optimizer."""
    params = [p for p in params if p.requires_grad]
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr)
    if cfg.optimizer == "adam":
        # fused: one vectorised kernel for the whole update (CPU and CUDA), same math
        return torch.optim.Adam(params, lr=cfg.lr, fused=True)
    if cfg.optimizer == "adadelta":
        return torch.optim.Adadelta(params, lr=cfg.lr, rho=0.95, eps=1e-6)
    raise ConfigError(f"unknown optimizer {cfg.optimizer!r}; use sgd, adam or adadelta")


class EpochSchedule:
    """Epoch-level learning-rate decay (the halving schedule); a no-op when disabled."""

    def __init__(self, optimizer: torch.optim.Optimizer, cfg: TrainConfig):
        self.optimizer = optimizer
        self.base_lr = cfg.lr
        self.decay = cfg.lr_decay
        self.start = cfg.decay_start_epoch
        self.epochs_done = 0

    def lr_for(self, epochs_done: int) -> float:
        """The learning rate after `epochs_done` epochs: lr before decay_start_epoch, then
        lr * lr_decay ** (epochs_done - decay_start_epoch + 1); lr throughout when the
        start is 0."""
        if self.start <= 0 or epochs_done < self.start:
            return self.base_lr
        return self.base_lr * self.decay ** (epochs_done - self.start + 1)

    def end_epoch(self) -> float:
        """Call after each finished epoch; returns the new learning rate."""
        self.epochs_done += 1
        lr = self.lr_for(self.epochs_done)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        return lr

    @property
    def lr(self) -> float:
        """The optimiser's current learning rate (its first parameter group's)."""
        return self.optimizer.param_groups[0]["lr"]

    def state_dict(self) -> dict:
        """{'epochs_done': n}, for checkpoints."""
        return {"epochs_done": self.epochs_done}

    def load_state_dict(self, state: dict) -> None:
        """Restore epochs_done (the learning rate itself comes back with the optimiser's state)."""
        self.epochs_done = int(state["epochs_done"])


def embedding_rows(loss: torch.Tensor) -> dict[torch.Tensor, torch.Tensor]:
    """loss (a scalar) -> {parameter V x E: the rows looked up, 1-D long, possibly
    repeated}: the parameters whose every use in loss's graph is an embedding lookup
    (nn.Embedding, F.embedding). loss.backward() gives them a gradient that is 0 outside
    those rows.

    Call it before loss.backward() (which frees the saved indices), with the gradients
    zeroed to None: a parameter that already holds a gradient, or that any other
    operation uses (a tied output layer, a cast copy), is left out. Under data-parallel
    training the reduced gradient holds other ranks' rows too: do not use it there."""
    if loss.grad_fn is None:
        return {}
    uses: dict[int, list] = {}  # id(AccumulateGrad node) -> the nodes that feed it
    # every node visited, kept alive: a node's Python object can be freed once nothing
    # holds it, and a later one could then reuse its id
    seen, stack = {id(loss.grad_fn): loss.grad_fn}, [loss.grad_fn]
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            if hasattr(child, "variable"):
                uses.setdefault(id(child), []).append(node)
            if id(child) not in seen:
                seen[id(child)] = child
                stack.append(child)
    rows = {}
    for key, feeders in uses.items():
        param = seen[key].variable
        if param.grad is not None or param.dim() != 2:
            continue
        if all(type(f).__name__ == "EmbeddingBackward0" and not f._saved_sparse for f in feeders):
            rows[param] = torch.cat([f._saved_indices.reshape(-1) for f in feeders])
    return rows


def clip_gradients(parameters, max_norm: float,
                   rows: dict[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
    """torch.nn.utils.clip_grad_norm_ (the L2 norm of all gradients, scaled down to
    `max_norm` when above it) -> the norm before clipping (a scalar tensor).

    clip_grad_norm_ multiplies every gradient by min(1, max_norm / (norm + 1e-6)) even
    when that factor is 1, to spare a GPU a host sync; on a CPU the sync is free and the
    pass over every gradient (about 1.5 ms a step of the 15 M-parameter bench model) is
    not, so there the multiplication runs only when the factor is below 1. Without `rows`
    the gradients are clip_grad_norm_'s bit for bit.

    rows (embedding_rows, taken before the backward): a parameter's gradient is 0 outside
    these rows, so its norm is taken over them alone. The bench model's two embeddings are
    60 % of its parameters, of which a batch touches about 3 %; reading only those saves
    most of the norm's pass over memory. The norm is then equal up to summation order."""
    owners = [p for p in parameters if p.grad is not None]
    rows = rows or {}
    grads = [p.grad.index_select(0, rows[p].unique()) if p in rows else p.grad for p in owners]
    norm = torch.nn.utils.get_total_norm(grads)
    if norm.device.type != "cpu" or not bool(max_norm / (norm + 1e-6) >= 1.0):
        torch.nn.utils.clip_grads_with_norm_(owners, max_norm, norm)
    return norm
