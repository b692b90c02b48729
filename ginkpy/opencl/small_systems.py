"""Where a single small system runs as a batch of one on an OpenCL device: the crossovers of
the device kind, method and value kind (``exec.device_choices().small_system_rows``, see
``device_choices.py``).

Below these sizes the normal loop is bound by its launches and its per-solve costs (the
capture of its launches). GINKPY_SMALL_SYSTEMS=0 turns the batch of one off.
`python benchmarks/bench_small.py` measures the per-iteration crossover (2026-11-23): on the
H100 the loop's iteration is faster from about 6000 rows for Cg and Bicgstab (3000 in
complex128), but whole solves of a few dozen iterations still favour the batch of one up to
16384 rows (bench_solve: 3D Poisson 22^3 8.4 ms as a batch of one, 51 ms through the loop);
Gmres's long solves favour the loop from about 10^4 rows in complex128. On PoCL the batch of
one wins to 32768 rows in real types, but its complex kernels vectorize poorly there (5x the
real time at 10^4 rows), so complex Cg and Bicgstab take it only to 2048.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

# (device kind, "gmres" or "short" for the other methods, complex values) -> rows at most
SMALL_SYSTEM_ROWS = {("gpu", "short", False): 16384, ("gpu", "short", True): 16384,
                     ("gpu", "gmres", False): 16384, ("gpu", "gmres", True): 8192,
                     ("cpu", "short", False): 32768, ("cpu", "short", True): 2048,
                     ("cpu", "gmres", False): 32768, ("cpu", "gmres", True): 16384}


def small_system_rows(kind: str, method: str, dtype: Any) -> int:
    """The most rows a system solved by ``method`` ("cg", "bicgstab", "gmres") in value type
    ``dtype`` may have to run as a batch of one on a device of ``kind`` ("cpu" or "gpu"); 0
    when GINKPY_SMALL_SYSTEMS=0."""
    if os.environ.get("GINKPY_SMALL_SYSTEMS") == "0":
        return 0
    key = (kind, "gmres" if method == "gmres" else "short", np.dtype(dtype).kind == "c")
    return SMALL_SYSTEM_ROWS[key]
