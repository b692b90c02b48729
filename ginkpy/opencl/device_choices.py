"""An OpenCL device's answer to ``exec.device_choices()`` (see
``ginkpy/core/base/device_choices.py``): the choices of a CPU device and of a GPU, measured.

Multigrid (``python benchmarks/bench_amg.py --tune``: AMG-CG whole solves of 2D and 3D Poisson
for each cycle, sweep count and merge size; see docs/multigrid.md and docs/performance.md). The GPU's, on
an H100 (V-cycle, 2 sweeps, <= 2048 rows merged / 2 sweeps, 8192 / 1 sweep, 8192, the previous
choice / the best W-cycle): 2D Poisson 1000^2 72 / 78 / 81 / 98 ms (39 / 40 / 56 / 20 it.), 2D
Poisson 2.1e6 rows 103 / 106 / 113 / 122 ms, 3D Poisson 128^3 104 / 115 / 130 / 160 ms (25 / 25 /
34 / 11 it.); only 3D Poisson 100^3 preferred 8192 rows merged (72 against 85 ms).

Smoothed aggregation as the default multigrid's levels (``CycleChoice.prolongation_relax``, 0:
off): measured on PoCL (2 cores, loaded; ``python benchmarks/bench_amg.py --sizes 160000
--problems poisson_2d --methods ginkpy-amg ginkpy-amg-sa-default ginkpy-amg-sa-default-host
--reps 3``): 12 against 19 iterations, but its setup (P, R and R A P by the device SpGEMM) is
3.4x that of the default PGM and the whole solve 1.96x as long: off on a CPU. On an H100
(2026-12-07, the same command with ``--sizes 1000000 --problems poisson_2d poisson_3d``): 12 and 11
iterations against 40 and 23, but a setup 6.1x (2D) and 14.5x (3D) the default's (the coarse
levels' rows grow dense) and the whole solve 3.4x and 8.0x as long: off on a GPU too.

On PoCL taking a GPU's choices (2026-12-06, load average 8-13 from other work; ``python
benchmarks/bench_amg.py --choices gpu --methods ginkpy-amg ginkpy-amg-v ...`` and
``bench_sa_setup.py --choices gpu``), AMG-CG iterations to 1e-8, V-cycle (this choice) / W-cycle
with 2 sweeps / smoothed aggregation on every level / on the finest only: 2D Poisson 700^2
35 / 15 / 11 / 25, 1000^2 40 / 15 / - / 28, 3D Poisson 100^3 23 / 11 / 11 / 13. The W-cycle's
whole solve took 0.57x (2D) and 0.79x (3D) the V-cycle's there, but it takes 83 and 171
launches a cycle (2D 1000^2, 3D 128^3) against 21 and 26, which bind on a GPU: measure it on
one before choosing it. Smoothed aggregation's solve took 0.39x the V-cycle's, its setup 20x.

The batch of one: ``small_systems.py`` beside this module.
"""
from __future__ import annotations

import dataclasses
import functools
import os
from functools import partial

import numpy as np

from ginkpy.core.base.device_choices import CycleChoice, DeviceChoices
from ginkpy.opencl.components.krylov_basis import dot_scratch, dot_shape
from ginkpy.opencl.small_systems import small_system_rows

SMOOTHED_RELAX = 4 / 3  # smoothed aggregation's w where a device's choice turns it on (PyAMG's)
# a GPU's split_restrict_rows: levels of at least this many rows restrict the residual in two
# launches (the residual, then its sums per aggregate). On an H100 (2026-12-07,
# GINKPY_OPENCL_PROFILE=1 python bench_amg.py --profile, 3D Poisson 100^3) the one launch, a
# work-item per aggregate walking its rows' entries scattered, took 10.1 of 22.6 ms of the
# cycles' kernels in 22 iterations (2D 1000^2: 9.9 of 28.6 ms). Split from 8192 rows (H100,
# 2026-12-07, python bench_amg.py --tune --problems poisson_2d poisson_3d --sizes 1000000 --cycles v
# --sweeps 2 --merged 2048 --split-restrict 0 8192 32768, medians of 3): the solve 33 -> 26 ms
# (3D, 23 -> 22 iterations) and 65 -> 58 ms (2D, 41 -> 40); from 32768 rows 26 and 61 ms. At 128^3
# the two launches take 1.1 + 1.1 ms plus the residual's 4.5 in 25 iterations (--profile)
SPLIT_RESTRICT_ROWS = 8192

CPU_CHOICES = DeviceChoices(
    kind="cpu",
    multigrid=CycleChoice("w", 1, 64, 4096, "the W-cycle needs the fewest iterations; levels of up to 4096 rows cost "
                                           "more in launches than in work and run in one launch",
                          # smoothed aggregation off: its setup costs more than its iterations save here
                          prolongation_relax=0.0),
    approximate_triangular_solves=False,
    polls_waits=False,
    small_system_rows=partial(small_system_rows, "cpu"),
    checks_values_on_host=True)

GPU_CHOICES = DeviceChoices(
    kind="gpu",
    multigrid=CycleChoice("v", 2, 64, 2048, "launches bind the coarse levels: the V-cycle (a W-cycle multiplies "
                                            "their launches, or in one launch their serialized steps) with 2 sweeps "
                                            "(the second costs less than the 30% of iterations it saves), levels of "
                                            "up to 2048 rows in one launch (one work-group)",
                          # smoothed aggregation (SMOOTHED_RELAX) off: on an H100 (2026-12-07, 1e6 rows)
                          # its setup took 6.1x (2D) and 14.5x (3D) the default's, the whole solve
                          # 3.4x and 8.0x, for 12 and 11 iterations against 40 and 23
                          prolongation_relax=0.0, smoothed_levels=None,
                          split_restrict_rows=SPLIT_RESTRICT_ROWS),
    approximate_triangular_solves=True,
    polls_waits=True,
    small_system_rows=partial(small_system_rows, "gpu"),
    # A's upload through page-locked chunks from 1 MiB (H100, 2026-12-07: Csr.from_scipy of 3D
    # Poisson 100^3, 84 MB, took 27.0 ms straight from pageable memory: 3 GB/s)
    staged_upload_bytes=1 << 20,
    # reads back of 1 MiB and more through the ring too (H100 host, 2026-12-07, bench_whole.py's
    # header, a 64 MiB read: 3.4 GB/s into pageable memory, 5.5 GB/s through the ring; the bound
    # is the upload's, smaller reads were not measured)
    staged_download_bytes=1 << 20,
    # gk.linalg's kept solvers: A's snapshot read back from the device at the next call on A (H100
    # host, 2026-12-07, cg(A, b, M="amg") on 3D Poisson 128^3 with the cache cleared: 117 ms
    # without a host snapshot against 152 with one taken after the solve, 159 beside it; the
    # host copy alone takes 13.5 ms)
    snapshots_from_device=True)


# a device neither CPU nor GPU (an accelerator): the GPU's launch-bound choices, but exact
# triangular solves and blocking waits
OTHER_CHOICES = dataclasses.replace(GPU_CHOICES, approximate_triangular_solves=False, polls_waits=False)


def lagged_fits(info, rows: int, columns: int, krylov_dim: int, dtype) -> bool:
    """The choice ``lagged_second_pass``: whether Gmres' ``multi_dot`` (solver/gmres_kernels.py)
    with the lagged second pass (2 krylov_dim + 1 coefficients per column in local memory,
    beside its scratch) fits the local memory of the device ``info`` describes, for a system of
    ``rows`` rows and ``columns`` right-hand sides: NVIDIA's 48 KiB hold, beside 16 KiB of
    scratch, 32 complex128 columns with krylov_dim 30."""
    itemsize = np.dtype(dtype).itemsize
    size = dot_shape(info, rows, columns, dtype).local_size[0]
    return max(columns, 1) * (2 * krylov_dim + 1) * itemsize + dot_scratch(dtype, size).size <= info.local_mem_size


# rows per turn of a work-item's loop in Gmres' update w' = w / ||v|| - V h (``orthogonalize``,
# solver/gmres_kernels.cl) in the GPU layout: two rows' basis loads in flight at once, as its dot
# products' (krylov_basis.DOT_ROWS); a CPU device's layout (one work-item over a contiguous
# stretch, cpu_basis_update) has no such loop: 1. Measured on an H100 (2026-12-07, GMRES(30) on 2D
# Poisson 1000^2, 300 inner iterations, UPDATE_ROWS / DOT_ROWS: wall per inner iteration): 2 / 2
# 189 us, 1 / 2 197, 4 / 2 191, 2 / 1 194, 2 / 4 206, 4 / 4 202 (orthogonalize 60.6 us with 2
# rows, 67.8 with 1)
UPDATE_ROWS = {"cpu": 1, "gpu": 2}


def update_rows(info) -> int:
    """UPDATE_ROWS of the device ``info`` describes (a device neither CPU nor GPU: the GPU's),
    for Gmres' ``orthogonalize``: the same values to the last bit whatever it is."""
    return UPDATE_ROWS["cpu" if info.is_cpu else "gpu"]


# host threads that copy a chunk into the page-locked staging ring (staging.py: copy_staged) and
# out of it (read_staged), at most the host's cores. On the 2-core PoCL machine two threads copy
# 8 MiB chunks at 15.5 GB/s against one's 10.5 (three: 12.0), but a CPU device stages nothing
# (``staged_upload_bytes`` 0). On an H100's host the copy from page-locked memory runs at 55 GB/s
# (PCIe 5 x16), from pageable memory at 6-7, and the host memcpy into page-locked memory binds the
# ring: 8.4-9.7 GB/s with one thread, 30.5 with eight. Csr.from_scipy of 3D Poisson 128^3 (175 MiB;
# 2026-12-07, two machines, `python benchmarks/bench_transfer.py --threads 1 4 8`) took 29.8 /
# 38.0 ms with one thread, 15.3 with four, 15.2 / 16.4 with eight in 8 MiB chunks, and 10.6 with
# eight in the ring's 16 MiB chunks (``--rings 4x16x8``)
STAGING_THREADS = {"cpu": 1, "gpu": 8}


def staging_threads(info) -> int:
    """STAGING_THREADS of the device ``info`` describes (a device neither CPU nor GPU: the
    GPU's), at most the host's cores."""
    return max(1, min(STAGING_THREADS["cpu" if info.is_cpu else "gpu"], os.cpu_count() or 1))


@functools.lru_cache(maxsize=None)
def device_choices(info) -> DeviceChoices:
    """The choices for the device ``info`` describes (an ``OpenCLExecutor.info``): those of its
    kind, and what its local memory holds (Gmres' lagged second pass)."""
    choices = CPU_CHOICES if info.is_cpu else GPU_CHOICES if info.is_gpu else OTHER_CHOICES
    return dataclasses.replace(choices, lagged_second_pass=partial(lagged_fits, info))
