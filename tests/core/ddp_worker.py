"""Entry point of one rank in the DDP test (spawned by torch.multiprocessing)."""
from __future__ import annotations

import os

import torch


def run_rank(rank: int, world: int, port: int, out_dir: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    from core.jobs import RecordingContext
    from core.models.registry import build_model
    from core.train.distributed import DistContext
    from core.train.loop import train_model
    from tests.core.reversal import reversal_train_data
    from tests.core.tiny_runs import tiny_luong_config

    dist = DistContext.from_env(backend="gloo")
    shared = dist.broadcast_int(41 + rank)  # rank 0's value (41) on every rank
    cfg = tiny_luong_config(max_steps=6, valid_every=3)
    torch.manual_seed(rank)  # different initial weights per rank: DDP must broadcast rank 0's
    model = build_model(cfg.model, 14, 14)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    ctx = RecordingContext()
    result = train_model(cfg, reversal_train_data(), os.path.join(out_dir, f"run{rank}"), ctx,
                         model=model, distributed=dist)
    torch.save({"final": model.state_dict(), "initial": initial, "steps": result.step,
                "events": len(ctx.events),
                "shared": shared}, os.path.join(out_dir, f"rank{rank}.pt"))
    dist.close()
