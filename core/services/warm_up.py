"""The GUI's start-up job: the training and inference stack imported, and one optimiser
step taken, before the user's first job needs them."""
from __future__ import annotations

from core.jobs import JobContext


def warm_up(ctx: JobContext) -> None:
    """Import the training and inference stack and take one optimiser step on a dummy
    tensor (the first Adam step imports torch._dynamo and sympy: ~2-3 s of imports
    that would otherwise run inside the first training job, holding the GIL long
    enough to make the GUI stutter for a few hundred ms). Run once at start-up."""
    # lazy, all of them: importing them is this job's work, on its worker thread
    import sacrebleu  # noqa: F401
    import torch  # the warm-up's work (see the comment above)

    import core.infer.beam  # noqa: F401  (the warm-up's work)
    import core.infer.greedy  # noqa: F401  (the warm-up's work)
    import core.train.loop  # noqa: F401  (the warm-up's work)

    weight = torch.zeros(2, requires_grad=True)
    optimiser = torch.optim.Adam([weight])
    weight.sum().backward()
    optimiser.step()
