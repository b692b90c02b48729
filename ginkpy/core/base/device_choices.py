"""What core leaves to the device: the one query ``exec.device_choices()`` and the value it
answers with. Core asks it where a measured, per-device choice decides (the Multigrid cycle,
whether ILU tries approximate triangular solves, whether a collective wait polls, where a small
system runs as a batch of one); each backend answers from its own tables
(``ginkpy/reference/device_choices.py``, ``ginkpy/opencl/device_choices.py``), so no device
table lives in core.

Plain frozen dataclasses rather than attrs classes: ``import ginkpy`` loads this module, and
attrs, which every solver's parameters use, need not load before the first solver does."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable


@dataclasses.dataclass(frozen=True)
class CycleChoice:
    """What Multigrid does where its parameters leave it open, per kind of executor."""

    cycle: str           # "v", "w" or "f"
    smoother_iters: int  # Jacobi sweeps before and after the coarse correction
    min_coarse_rows: int
    merged_rows: int     # levels of at most this many rows cycled through in one launch (0: none)
    why: str
    # the default mg_level's Pgm prolongation_relax: w > 0 smoothed aggregation (P = (I - w / rho
    # D^-1 A) P_t), 0 piecewise constant aggregation; on the smoothed_levels finest levels (None:
    # every level), the levels below piecewise constant
    prolongation_relax: float = 0.0
    smoothed_levels: int | None = None
    # levels of piecewise constant aggregation with at least this many rows restrict the residual
    # in two launches, the residual row by row and then its sums per aggregate, instead of one
    # work-item per aggregate computing its rows' residuals (0: always the one launch)
    split_restrict_rows: int = 0


def _never_small(method: str, dtype: Any) -> int:
    return 0


def _always_lagged(rows: int, columns: int, krylov_dim: int, dtype: Any) -> bool:
    return True


@dataclasses.dataclass(frozen=True)
class DeviceChoices:
    """The choices of one kind of executor (``exec.device_choices()``).

    Parameters
    ----------
    kind : str
        The kind the choices are made for, as printed: "reference", "cpu" or "gpu".
    multigrid : CycleChoice
        Multigrid's cycle, sweeps, coarsest size and merged levels.
    approximate_triangular_solves : bool
        Whether Ilu's default tries approximate triangular solves (ISAI, Jacobi sweeps) before
        exact substitution (where launches and substitution levels cost most: a GPU).
    polls_waits : bool
        Whether a wait for a read in a collective polls the event (the host spins, a GPU)
        rather than blocks (a CPU device, whose threads the polling would take).
    small_system_rows : callable, default never
        ``(method, dtype) -> rows``: the most rows a system solved by ``method`` ("cg",
        "bicgstab", "gmres") may have to run as a batch of one (0: never).
    lagged_second_pass : callable, default always
        ``(rows, columns, krylov_dim, dtype) -> bool``: whether Gmres' "mgs" may lag its DGKS
        second pass into the next inner iteration's dot products for a system of ``rows`` rows
        and ``columns`` right-hand sides (that launch keeps 2 krylov_dim + 1 coefficients per
        column in a work-group's local memory; else the pass keeps a launch of its own).
    checks_values_on_host : bool, default False
        Whether a batch built on the host (``core/batch/matrix/batch_pattern.py``) has its
        values checked to be finite on the host, a chunk at a time while the gather holds it in
        cache (the reference and a CPU device, whose memory is the host's: a kernel would read
        every value again), rather than by one kernel after the upload (a GPU: a pass at device
        bandwidth that costs the host nothing).
    staged_upload_bytes : int, default 0
        A host array of at least this many bytes that ``exec.from_host`` / ``from_host_async``
        (``Csr.from_scipy``) copies to the device goes through page-locked staging chunks, the
        host's memcpy of one chunk overlapping the transfer of the last (a GPU, where a copy
        from pageable memory runs at a fraction of the bandwidth); 0: never (the host itself, a
        CPU device: one direct copy).
    staged_download_bytes : int, default 0
        A read (``exec.to_host``) of device arrays of which one has at least this many bytes
        comes back through the same page-locked chunks, the memcpy of one chunk out of its slot
        overlapping the transfer of the next; 0: never (every device, until measured on a GPU:
        ``python benchmarks/bench_whole.py`` prints both read speeds).
    snapshots_from_device : bool, default False
        Whether ``gk.linalg``'s solver cache, which keeps a SciPy matrix's solvers while the
        matrix holds what it held, reads what it compares a later call's matrix with from the
        device's copy at that later call (where the upload took the matrix's arrays as they
        are: a GPU, where a host copy beside the first call slowed it by more than the copy
        costs) rather than copying the matrix's arrays on the host at the first call; the read
        is compared as it arrives (``Executor.to_host_compared``).
    """

    kind: str
    multigrid: CycleChoice
    approximate_triangular_solves: bool = False
    polls_waits: bool = False
    small_system_rows: Callable[[str, Any], int] = _never_small
    lagged_second_pass: Callable[[int, int, int, Any], bool] = _always_lagged
    checks_values_on_host: bool = False
    staged_upload_bytes: int = 0
    staged_download_bytes: int = 0
    snapshots_from_device: bool = False
