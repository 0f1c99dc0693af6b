"""Scale-out with torchrun: DistributedDataParallel over NCCL (GPUs) or gloo (CPU).

`torchrun --nproc_per_node N main.py train --distributed ...` sets RANK, WORLD_SIZE,
LOCAL_RANK and MASTER_ADDR/PORT; `DistContext.from_env()` joins the process group.
Each rank trains on every WORLD_SIZE-th batch of the shared (seed, epoch) batch list,
so ranks see disjoint data and DDP averages their gradients; only rank 0 writes.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from core.errors import ConfigError


@dataclass
class DistContext:
    rank: int
    world_size: int
    local_rank: int
    backend: str

    @classmethod
    def from_env(cls, backend: str | None = None) -> DistContext:
        """The process group of this torchrun process (RANK, WORLD_SIZE, LOCAL_RANK), joined if
        needed; `backend` defaults to NCCL with CUDA, else gloo; NCCL selects the local GPU."""
        missing = [k for k in ("MASTER_ADDR", "MASTER_PORT") if k not in os.environ]
        if missing and not dist.is_initialized():
            raise ConfigError(
                f"--distributed: {' and '.join(missing)} not set, so this process was not "
                "started by torchrun; launch it with torchrun, e.g. `torchrun "
                "--nproc_per_node 2 main.py train --distributed --preset luong-cpu --corpus "
                "CORPUS`, or leave --distributed out to train in one process")
        rank = int(os.environ.get("RANK", "0"))
        world = int(os.environ.get("WORLD_SIZE", "1"))
        local = int(os.environ.get("LOCAL_RANK", "0"))
        backend = backend or ("nccl" if torch.cuda.is_available() else "gloo")
        if not dist.is_initialized():
            dist.init_process_group(backend=backend, rank=rank, world_size=world)
        if backend == "nccl":
            torch.cuda.set_device(local)
        return cls(rank, world, local, backend)

    @property
    def device(self) -> str:
        """'cuda:<local rank>' under NCCL, else 'cpu'."""
        return f"cuda:{self.local_rank}" if self.backend == "nccl" else "cpu"

    def shard(self, batches: list[list[int]]) -> list[list[int]]:
        """Every rank gets the same number of batches (extra ones are dropped)."""
        usable = len(batches) - len(batches) % self.world_size
        return batches[self.rank:usable:self.world_size]

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        """`model` in DistributedDataParallel (find_unused_parameters, for step-wise decoders)."""
        ids = [self.local_rank] if self.backend == "nccl" else None
        # step-wise decoders may leave parameters unused in some batches (e.g. local-p)
        return DistributedDataParallel(model, device_ids=ids, find_unused_parameters=True)

    def broadcast_int(self, value: int) -> int:
        """Rank 0's `value` on every rank. The tensor lives on this rank's device: NCCL
        carries CUDA tensors only, gloo CPU ones."""
        box = torch.tensor([value if self.rank == 0 else 0], dtype=torch.long,
                           device=self.device)
        dist.broadcast(box, src=0)
        return int(box.item())

    def barrier(self) -> None:
        """Wait for every rank (on the local GPU under NCCL); no-op without a process group."""
        if dist.is_initialized():
            if self.backend == "nccl":
                dist.barrier(device_ids=[self.local_rank])
            else:
                dist.barrier()

    def close(self) -> None:
        """Leave the process group, if any."""
        if dist.is_initialized():
            dist.destroy_process_group()
