"""What Multigrid does where its parameters leave it open, per kind of executor: the cycle,
the smoother sweeps, the coarsest size and the levels cycled through in one launch, chosen from
measurements (``python benchmarks/bench_amg.py --tune``) and printed with the hierarchy."""
from __future__ import annotations

import attrs


@attrs.frozen
class CycleChoice:
    """What Multigrid does where its parameters leave it open, per kind of executor."""

    cycle: str           # "v", "w" or "f"
    smoother_iters: int  # Jacobi sweeps before and after the coarse correction
    min_coarse_rows: int
    merged_rows: int     # levels of at most this many rows cycled through in one launch (0: none)
    why: str


# Chosen from measurements (python benchmarks/bench_amg.py --tune: AMG-CG whole solves of 2D and
# 3D Poisson for each cycle, sweep count and merge size; see the README's multigrid section). The
# GPU's, on an H100 (V-cycle, 2 sweeps, <= 2048 rows merged / 2 sweeps, 8192 / 1 sweep, 8192, the
# previous choice / the best W-cycle): 2D Poisson 1000^2 72 / 78 / 81 / 98 ms (39 / 40 / 56 / 20
# it.), 2D Poisson 2.1e6 rows 103 / 106 / 113 / 122 ms, 3D Poisson 128^3 104 / 115 / 130 / 160 ms
# (25 / 25 / 34 / 11 it.); only 3D Poisson 100^3 preferred 8192 rows merged (72 against 85 ms).
DEVICE_CHOICES = {
    "reference": CycleChoice("w", 1, 64, 0, "no launches to save on the host: the W-cycle, which needs the fewest "
                                            "iterations"),
    "cpu": CycleChoice("w", 1, 64, 4096, "the W-cycle needs the fewest iterations; levels of up to 4096 rows cost "
                                         "more in launches than in work and run in one launch"),
    "gpu": CycleChoice("v", 2, 64, 2048, "launches bind the coarse levels: the V-cycle (a W-cycle multiplies "
                                          "their launches, or in one launch their serialized steps) with 2 sweeps "
                                          "(the second costs less than the 30% of iterations it saves), levels of "
                                          "up to 2048 rows in one launch (one work-group)"),
}


def device_kind(exec) -> str:
    """The kind of executor a CycleChoice is made for: "reference", "cpu" or "gpu"."""
    if not exec.asynchronous:
        return "reference"
    return "cpu" if exec.info.is_cpu else "gpu"
