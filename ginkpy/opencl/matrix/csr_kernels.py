"""OpenCL kernels of Csr (sources in csr_kernels.cl).

SpMV has three launch strategies, chosen once per matrix from its row lengths and the device
by :func:`select_strategy` and kept in ``A.cache``:

- ``classical``: one work-item per row; the lean path for short rows of similar length.
- ``vector``: a power-of-two number of work-items per row, reduced in local memory, for longer rows.
- ``merge_path``: every work-item takes an equal share of rows plus nonzeros, so a few very long
  rows (power-law, arrow matrices) are shared out instead of serialising the kernel. On a CPU
  device with one work-item per work-group this is a contiguous, nonzero-balanced block of rows
  per work-item, which is what a CPU runs best, so CPUs always use it.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.matrix.dense import Dense
from ginkpy.opencl.matrix.dense_kernels import _local, _pow2_at_most, _scalar

STRATEGIES = ("classical", "vector", "merge_path")
CACHE_KEY = "opencl.spmv_strategy"
INT_MAX = np.iinfo(np.int32).max

GPU_WORK_GROUP = 256
GPU_ITEMS = 16          # merge-path steps (row ends + nonzeros) per work-item on a GPU
CPU_BLOCKS_PER_UNIT = 8  # merge-path blocks per compute unit on a CPU (balance against overhead)
CPU_MIN_ITEMS = 4096     # a CPU block is at least this many steps: small matrices use fewer blocks
VECTOR_MIN_MEAN = 12     # mean row length from which the vector strategy is used
MAX_LANES = 64


@attrs.frozen
class SpmvStrategy:
    """How the SpMV of one matrix is launched.

    ``lanes``: work-items per row (vector). ``items``: merge-path steps per work-item;
    ``bounds``: device array of (diagonal, row) where each work-group's part of the path begins,
    and the end; ``fixup``: whether some part ends inside a row, so that carries must be added
    after the main kernel; ``carries``: the carry buffers per column count, reused by every call
    (the executor's queue runs kernels in order).
    """

    name: str
    work_group: int
    lanes: int = 1
    items: int = 0
    bounds: Any = attrs.field(default=None, repr=False, eq=False)
    fixup: bool = False
    carries: dict = attrs.field(factory=dict, repr=False, eq=False)

    @property
    def groups(self) -> int:
        """Number of work-groups of a merge_path launch."""
        return 0 if self.bounds is None else self.bounds.shape[0] // 2 - 1


def select_strategy(exec, a, name: str | None = None, work_group: int | None = None,
                    lanes: int | None = None, items: int | None = None) -> SpmvStrategy:
    """The SpMV strategy of ``a`` on ``exec``, chosen from its row lengths at first use and kept
    in ``a.cache``. Giving ``name`` (and optionally the launch sizes) forces a strategy, for
    tests and benchmarks; the forced choice replaces the cached one."""
    if name is None and work_group is None and lanes is None and items is None:
        cached = a.cache.get(CACHE_KEY)
        if cached is not None:
            return cached
    if name is not None and name not in STRATEGIES:
        raise ValueError(f"unknown SpMV strategy {name!r}: use one of {', '.join(STRATEGIES)}")
    n, nnz = a.shape[0], a.nnz
    row_ptrs = exec.to_host(a.row_ptrs)
    info = exec.info
    name = name or _choose(info, n, nnz, np.diff(row_ptrs))
    if work_group is None:
        work_group = 1 if info.is_cpu and name == "merge_path" else _work_group(exec)
    if not 1 <= work_group <= info.max_work_group_size:
        raise ValueError(f"work_group must be between 1 and the device's maximum "
                         f"{info.max_work_group_size}, got {work_group}")
    if name == "classical":
        strategy = SpmvStrategy(name, work_group)
    elif name == "vector":
        # about one entry per lane: the largest power of two <= the mean row length
        lanes = lanes or min(MAX_LANES, work_group, max(2, _pow2_at_most(nnz // max(n, 1))))
        if lanes < 2 or lanes & (lanes - 1) or work_group % lanes:
            raise ValueError(f"lanes must be a power of two >= 2 dividing the work-group size "
                             f"{work_group}, got {lanes}")
        _check_int32(n * lanes + work_group, "rows x lanes")
        strategy = SpmvStrategy(name, work_group, lanes=lanes)
    else:
        if items is None:  # one work-item per group: CPU blocks; else short GPU pieces
            items = GPU_ITEMS if work_group > 1 else max(
                CPU_MIN_ITEMS, -(-(n + nnz) // (CPU_BLOCKS_PER_UNIT * info.compute_units)))
        if items < 1:
            raise ValueError(f"items (merge-path steps per work-item) must be >= 1, got {items}")
        _check_int32(n + nnz + work_group * items, "rows + nonzeros")
        bounds, fixup = _merge_path_bounds(row_ptrs, work_group * items, align=work_group == 1)
        strategy = SpmvStrategy(name, work_group, items=items, bounds=exec.from_host(bounds), fixup=fixup)
    a.cache[CACHE_KEY] = strategy
    return strategy


def _choose(info, n: int, nnz: int, lengths: np.ndarray) -> str:
    """The strategy for a matrix with these row lengths: merge_path on CPUs and for irregular
    rows (the longest row much longer than the mean: it would hold up its whole work-group),
    vector for long rows, classical for short ones."""
    if info.is_cpu:
        return "merge_path"
    if n == 0 or nnz == 0:
        return "classical"
    mean = nnz / n
    if lengths.max() > 8 * mean + 64:
        return "merge_path"
    return "vector" if mean >= VECTOR_MIN_MEAN else "classical"


def _merge_path_bounds(row_ptrs: np.ndarray, part: int, align: bool) -> tuple[np.ndarray, bool]:
    """(diagonal, row) where each work-group's part of the merge path begins, then the end, as
    one flat int32 array; and whether a part ends inside a row (its carry crosses groups).

    Row end i sits at path position row_ptrs[i + 1] + i, so diagonal d is in row
    #{i : row_ptrs[i + 1] + i < d}. Parts are ``part`` steps long; with ``align`` (one
    work-item per group) each inner bound moves to the nearer row end when that is at most
    half a part away, so that carries only cross groups where a row is longer than that."""
    n = row_ptrs.shape[0] - 1
    path = n + int(row_ptrs[-1])
    ends = row_ptrs[1:].astype(np.int64) + np.arange(n)
    diagonals = np.minimum(np.arange(max(1, -(-path // part)) + 1, dtype=np.int64) * part, path)
    if align and diagonals.shape[0] > 2:
        inner = diagonals[1:-1]
        row = np.searchsorted(ends, inner)  # < n: an inner bound is before the last row end
        before = np.where(row > 0, ends[row - 1] + 1, 0)
        after = ends[row] + 1
        nearer = np.where(inner - before <= after - inner, before, after)
        inner = np.where(np.abs(nearer - inner) <= part // 2, nearer, inner)
        diagonals = np.unique(np.concatenate([[0], inner, [path]]))
    rows = np.searchsorted(ends, diagonals)
    inner_rows = rows[1:-1]
    fixup = bool((diagonals[1:-1] - inner_rows > row_ptrs[inner_rows]).any())
    return np.stack([diagonals, rows], axis=1).astype(np.int32).ravel(), fixup


def _check_int32(size: int, what: str) -> None:
    if size > INT_MAX:
        raise ValueError(f"{what}: {size} is beyond the int32 index range of the OpenCL kernels; "
                         f"split the problem or use the reference executor")


def _kernel(exec, a, name: str):
    return exec.kernel(__file__, a.dtype, name)


def _work_group(exec) -> int:
    """The default work-group size: GPU_WORK_GROUP or the largest power of two the device allows."""
    return min(GPU_WORK_GROUP, _pow2_at_most(exec.info.max_work_group_size))


def _round_up(size: int, multiple: int) -> int:
    return -(-size // multiple) * multiple


def spmv(exec, a, b, x) -> None:
    # x = A b
    _spmv(exec, a, b, x, None, None)


def advanced_spmv(exec, alpha, a, b, beta, x) -> None:
    # x = alpha A b + beta x
    _spmv(exec, a, b, x, alpha, beta)


def _spmv(exec, a, b, x, alpha, beta) -> None:
    n, k = x.shape
    if n == 0 or k == 0:
        return
    _check_int32(max(n, b.shape[0]) * k, "entries of b or x")
    strategy = select_strategy(exec, a)
    advanced = alpha is not None
    # plain SpMV never reads alpha and beta: x's buffer stands in for them
    unused = (x.values.data, np.int32(0))
    scalars = (np.int32(advanced), *(_scalar(alpha) if advanced else unused),
               *(_scalar(beta) if advanced else unused))
    args = (np.int32(n), np.int32(k), a.row_ptrs.data, a.col_idxs.data, a.values.data,
            b.values.data, x.values.data, *scalars)
    wg = strategy.work_group
    if strategy.name == "classical":
        _kernel(exec, a, "spmv_classical")(exec.queue, (_round_up(n, wg), k), (wg, 1), *args)
    elif strategy.name == "vector":
        lanes = strategy.lanes
        _kernel(exec, a, "spmv_vector")(exec.queue, (_round_up(n * lanes, wg), k), (wg, 1), *args,
                                        np.int32(lanes), _local(exec, wg, a.dtype))
    else:
        _merge_path(exec, strategy, a, x, args, scalars)


def _merge_path(exec, strategy, a, x, args, scalars) -> None:
    n, k = x.shape
    wg, groups = strategy.work_group, strategy.groups
    if k not in strategy.carries:
        strategy.carries[k] = (exec.alloc((groups,), np.int32), exec.alloc((groups, k), a.dtype))
    carry_rows, carry_vals = strategy.carries[k]
    _kernel(exec, a, "spmv_merge_path")(
        exec.queue, (groups * wg, k), (wg, 1), *args, strategy.bounds.data, carry_rows.data,
        carry_vals.data, _local(exec, wg, np.int32), _local(exec, wg, a.dtype))
    if strategy.fixup:
        fixup_wg = _work_group(exec)
        _kernel(exec, a, "spmv_merge_path_fixup")(
            exec.queue, (_round_up(groups, fixup_wg), k), (fixup_wg, 1), np.int32(n), np.int32(k),
            np.int32(groups), carry_rows.data, carry_vals.data, x.values.data, *scalars[:3])


def convert_to_dense(exec, a, out) -> None:
    n, m = a.shape
    if n == 0 or m == 0:
        return
    _check_int32(n * m, "entries of the dense matrix")
    exec.run("matrix.dense.fill", out, 0.0)
    wg = _work_group(exec)
    _kernel(exec, a, "scatter_to_dense")(
        exec.queue, (_round_up(n, wg),), (wg,), np.int32(n), np.int32(m), a.row_ptrs.data,
        a.col_idxs.data, a.values.data, out.values.data)


def extract_diagonal(exec, a, out) -> None:
    size = min(a.shape)
    if size == 0:
        return
    wg = _work_group(exec)
    _kernel(exec, a, "extract_diagonal")(
        exec.queue, (_round_up(size, wg),), (wg,), np.int32(size), a.row_ptrs.data,
        a.col_idxs.data, a.values.data, out.values.data)


def is_finite(exec, a) -> bool:
    # the stored values as an nnz x 1 Dense view: Dense's reduction does the work
    return exec.run("matrix.dense.is_finite", Dense(exec, a.values.reshape(a.nnz, 1)))


def transpose(exec, a):
    """Row pointers, column indices (sorted) and values of A^T, computed on the host with the
    reference kernel: it runs once per solver (Bicg forms A^T at generate time), where a device
    counting sort would save one copy of the matrix each way, not time per iteration."""
    from ginkpy.reference.executor import ReferenceExecutor
    host = ReferenceExecutor()
    return tuple(exec.from_host(v) for v in host.run("matrix.csr.transpose", a.clone(host)))
