"""OpenCL kernels of Csr (sources in csr_kernels.cl).

SpMV has five launch strategies, chosen once per matrix from its row lengths and the device
by :func:`select_strategy` and kept in ``A.cache``:

- ``classical``: one work-item per row; the lean path for short rows of similar length.
- ``vector``: a power-of-two number of work-items per row, reduced in local memory, for longer rows.
- ``long_rows``: rows of similar length as classical or vector, plus a few much longer rows
  (an arrow matrix) cut into pieces of one work-group each, in the same launch.
- ``merge_path``: for rows of any lengths (power law): the rows plus nonzeros are cut into equal
  parts, two per work-group (the second loads while the first is summed); a part is staged in
  local memory (the matrix is read contiguously) and every work-item takes an equal share of it.
- ``row_blocks``: one work-item per contiguous, nonzero-balanced block of rows (the same
  partition of the merge path, with its bounds moved to row ends where that is near); what a
  CPU runs best, so CPUs always use it.

The last three sum a row split over several parts (pieces, work-groups or blocks) in a second,
small launch, the fix-up. The launches of a strategy are made once per column count with all
their arguments but the operands (:func:`_launches`): building them per call cost more host
time than a small SpMV takes on a GPU.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.matrix.dense import Dense
from ginkpy.opencl.launch import MAX_PARTIALS, check_int32, local_buffer, pow2_at_most, resize, scalar_arg

STRATEGIES = ("classical", "vector", "long_rows", "merge_path", "row_blocks")
CACHE_KEY = "opencl.spmv_strategy"

GPU_WORK_GROUP = 256
GPU_ITEMS = 4           # merge-path steps (row ends + nonzeros) per work-item and part on a GPU
GPU_PARTS = 2           # merge-path parts per work-group (the next one loads while one is summed)
LONG_ROW_ITEMS = 16     # nonzeros per work-item of a long row's piece
FIXUP_WORK_GROUP = 256  # the fix-up packs the rows summed over several parts into work-groups,
FIXUP_PARTS_PER_LANE = 8  # with enough work-items per row that each adds at most this many parts
CPU_BLOCKS_PER_UNIT = 8  # row blocks per compute unit on a CPU (balance against overhead)
CPU_MIN_ITEMS = 4096     # a CPU block is at least this many steps: small matrices use fewer blocks
VECTOR_MIN_MEAN = 12     # mean row length from which the vector strategy is used
MAX_LANES = 64
DOTS_GROUPS_PER_UNIT = 4  # work-groups per compute unit of an SpMV with dot products (its partial sums)


@attrs.frozen
class SpmvStrategy:
    """How the SpMV of one matrix is launched.

    ``lanes``: work-items per row (vector, the short rows of long_rows). ``items``: nonzeros per
    work-item of a long row's piece (long_rows), merge-path steps per work-item (merge_path) or
    per block (row_blocks). ``long_min``: long_rows cuts the rows longer than this into pieces.
    ``parts``: pieces (long_rows) or parts of the merge path, with their ``bounds`` on the
    device: (first, end) nonzero of each piece, or (diagonal, row) where each part of the path
    begins, then its end. ``runs``: device array of (first part, number of parts, row) of each
    row summed over several parts, added by the fix-up, or None: the first ``fixup_long`` of
    them (those of many parts) by ``fixup_lanes`` work-items each, the others by one each.
    ``launches``: per column count, the launches with their arguments (the sums of the parts
    among them, reused by every call: the executor's queue runs kernels in order).
    """

    name: str
    work_group: int
    lanes: int = 1
    items: int = 0
    long_min: int = 0
    parts: int = 0
    fixup_long: int = 0
    fixup_lanes: int = 1
    bounds: Any = attrs.field(default=None, repr=False, eq=False)
    runs: Any = attrs.field(default=None, repr=False, eq=False)
    launches: dict = attrs.field(factory=dict, repr=False, eq=False)


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
    lengths = np.diff(row_ptrs)
    info = exec.info
    name = name or _choose(info, n, nnz, lengths)
    if work_group is None:
        work_group = 1 if name == "row_blocks" and info.is_cpu else _work_group(exec)
    if not 1 <= work_group <= info.max_work_group_size:
        raise ValueError(f"work_group must be between 1 and the device's maximum "
                         f"{info.max_work_group_size}, got {work_group}")
    if items is not None and items < 1:
        raise ValueError(f"items (nonzeros or merge-path steps per work-item or block) must be "
                         f">= 1, got {items}")
    if name == "classical":
        strategy = SpmvStrategy(name, work_group)
    elif name == "vector":
        lanes = lanes or _lanes(nnz, n, work_group, 2)
        _check_lanes(lanes, work_group, 2)
        check_int32(n * lanes + work_group, "rows x lanes")
        strategy = SpmvStrategy(name, work_group, lanes=lanes)
    elif name == "long_rows":
        long_min = _long_min(n, nnz)
        short = lengths <= long_min
        lanes = lanes or _lanes(int(lengths[short].sum()), int(short.sum()), work_group, 1)
        _check_lanes(lanes, work_group, 1)
        items = LONG_ROW_ITEMS if items is None else items
        check_int32(n * lanes + work_group + nnz + work_group * items, "rows x lanes + nonzeros")
        bounds, runs = _long_row_pieces(row_ptrs, np.flatnonzero(~short), work_group * items)
        strategy = SpmvStrategy(name, work_group, lanes=lanes, items=items, long_min=long_min,
                                parts=bounds.size // 2, bounds=_device(exec, bounds),
                                **_fixup(exec, runs))
    else:
        if name == "merge_path":
            # the staged part: one row end, one product and one row sum per step in local memory
            per_step = 4 + 2 * a.dtype.itemsize
            most = info.local_mem_size // (work_group * per_step)
            items = min(GPU_ITEMS, most) if items is None else items
            if not 2 <= items <= most:  # and the scan needs 2 values per work-item
                raise ValueError(f"merge_path needs 2 <= items <= {most}: items x work_group "
                                 f"steps of {per_step} bytes must fit the device's "
                                 f"{info.local_mem_size} bytes of local memory; got items "
                                 f"{items} with work_group {work_group}")
            part = work_group * items
        else:  # a few blocks per compute unit, at least CPU_MIN_ITEMS steps each
            blocks = CPU_BLOCKS_PER_UNIT * info.compute_units
            part = items = items or max(CPU_MIN_ITEMS, -(-(n + nnz) // blocks))
        check_int32(n + nnz + part, "rows + nonzeros")
        bounds, runs = _merge_path_bounds(row_ptrs, part, align=name == "row_blocks")
        strategy = SpmvStrategy(name, work_group, items=items, parts=bounds.size // 2 - 1,
                                bounds=_device(exec, bounds), **_fixup(exec, runs))
    a.cache[CACHE_KEY] = strategy
    return strategy


def _choose(info, n: int, nnz: int, lengths: np.ndarray) -> str:
    """The strategy for a matrix with these row lengths: row_blocks on CPUs. On GPUs, for
    irregular rows (the longest row much longer than the mean: it would hold up its whole
    work-group), long_rows where the other rows are regular, else merge_path; for regular rows
    vector where they are long, classical where they are short."""
    if info.is_cpu:
        return "row_blocks"
    if n == 0 or nnz == 0:
        return "classical"
    if not _irregular(lengths, nnz, n):
        return "vector" if nnz / n >= VECTOR_MIN_MEAN else "classical"
    short = lengths[lengths <= _long_min(n, nnz)]
    return "merge_path" if _irregular(short, int(short.sum()), short.size) else "long_rows"


def _long_min(n: int, nnz: int) -> int:
    """Rows longer than this hold up the work-group of a classical or vector launch."""
    return int(8 * nnz / max(n, 1)) + 64


def _irregular(lengths: np.ndarray, nnz: int, n: int) -> bool:
    return lengths.size > 0 and lengths.max() > _long_min(n, nnz)


def _lanes(nnz: int, n: int, work_group: int, least: int) -> int:
    """Work-items per row for rows of nnz / n entries on average: the largest power of two at
    most that (about one entry per lane), at least ``least``; one below VECTOR_MIN_MEAN."""
    if least == 1 and nnz < VECTOR_MIN_MEAN * n:
        return 1
    return min(MAX_LANES, work_group, max(least, pow2_at_most(nnz // max(n, 1))))


def _check_lanes(lanes: int, work_group: int, least: int) -> None:
    if lanes < least or lanes & (lanes - 1) or work_group % lanes:
        raise ValueError(f"lanes must be a power of two >= {least} dividing the work-group size "
                         f"{work_group}, got {lanes}")


def _device(exec, host: np.ndarray):
    """``host`` on the device, or None where it is empty."""
    return exec.from_host(host) if host.size else None


def _fixup_wg(exec) -> int:
    return min(FIXUP_WORK_GROUP, _work_group(exec))


def _fixup(exec, runs: np.ndarray) -> dict:
    """The fix-up of these runs (first part, number of parts, row; flat): the runs on the
    device, those of more than FIXUP_PARTS_PER_LANE parts first, how many those are, and the
    work-items for each of them: a power of two, so that each sums at most about
    FIXUP_PARTS_PER_LANE parts of the run of most parts."""
    runs = runs.reshape(-1, 3)
    long = runs[:, 1] > FIXUP_PARTS_PER_LANE
    most = int(runs[:, 1].max()) if long.any() else 1
    lanes = 1 << (-(-most // FIXUP_PARTS_PER_LANE) - 1).bit_length()
    return dict(runs=_device(exec, np.concatenate([runs[long], runs[~long]]).ravel()),
                fixup_long=int(long.sum()), fixup_lanes=min(MAX_LANES, _fixup_wg(exec), lanes))


def _long_row_pieces(row_ptrs: np.ndarray, rows: np.ndarray,
                     piece: int) -> tuple[np.ndarray, np.ndarray]:
    """(first, end) nonzero of each piece of the given rows, cut into ``piece`` nonzeros, as one
    flat int32 array; and (first piece, number of pieces, row) of each of the rows, flat int32."""
    begins, ends = row_ptrs[rows].astype(np.int64), row_ptrs[rows + 1].astype(np.int64)
    counts = -(-(ends - begins) // piece)
    firsts = np.cumsum(counts) - counts
    offsets = (np.arange(counts.sum()) - np.repeat(firsts, counts)) * piece
    starts = np.repeat(begins, counts) + offsets
    bounds = np.stack([starts, np.minimum(starts + piece, np.repeat(ends, counts))], axis=1)
    runs = np.stack([firsts, counts, rows], axis=1)
    return bounds.astype(np.int32).ravel(), runs.astype(np.int32).ravel()


def _merge_path_bounds(row_ptrs: np.ndarray, part: int,
                       align: bool) -> tuple[np.ndarray, np.ndarray]:
    """(diagonal, row) where each part of the merge path begins, then the end, as one flat
    int32 array; and (first part, number of parts, row) of each row whose carries leave their
    parts, flat int32 (empty if none).

    Row end i sits at path position row_ptrs[i + 1] + i, so diagonal d is in row
    #{i : row_ptrs[i + 1] + i < d}. Parts are ``part`` steps long; with ``align`` each inner
    bound moves to the nearer row end when that is at most half a part away, so that carries
    only leave a part where a row is longer than that."""
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
    # part g carries into row rows[g + 1] where it ends after that row's first nonzero
    carry_rows = rows[1:-1]
    crossing = np.flatnonzero(diagonals[1:-1] - carry_rows > row_ptrs[carry_rows])
    # the parts carrying into one row are consecutive (those between lie inside the row)
    firsts = np.flatnonzero(np.diff(carry_rows[crossing], prepend=-1))
    starts = crossing[firsts]
    runs = np.stack([starts, np.diff(firsts, append=crossing.size), carry_rows[starts]], axis=1)
    return (np.stack([diagonals, rows], axis=1).astype(np.int32).ravel(),
            runs.astype(np.int32).ravel())


def _kernel(exec, a, name: str):
    return exec.kernel(__file__, a.dtype, name)


def _work_group(exec) -> int:
    """The default work-group size: GPU_WORK_GROUP or the largest power of two the device allows."""
    return min(GPU_WORK_GROUP, pow2_at_most(exec.info.max_work_group_size))


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
    check_int32(max(n, b.shape[0]) * k, "entries of b or x")
    x_buf = x.values.data
    if alpha is None:  # plain SpMV never reads alpha and beta: x's buffer stands in for them
        operands = (b.values.data, x_buf, _FALSE, x_buf, _ZERO, x_buf, _ZERO)
    else:
        operands = (b.values.data, x_buf, _TRUE, *scalar_arg(alpha), *scalar_arg(beta))
    queue = exec.queue
    for launch in _launches(exec, a, k):
        launch.kernel(queue, launch.global_size, launch.local_size, *launch.head,
                      *(operands[1:5] if launch.fixup else operands), *launch.tail)


_FALSE = _ZERO = np.int32(0)
_TRUE = np.int32(1)


@attrs.frozen
class _Launch:
    """One kernel launch of an SpMV with all but its operands fixed: the kernel takes
    (*head, b, x, advanced, alpha, alpha stride, beta, beta stride, *tail), the fix-up
    (*head, x, advanced, alpha, alpha stride, *tail)."""

    kernel: Any
    global_size: tuple[int, int]
    local_size: tuple[int, int]
    head: tuple
    tail: tuple = ()
    fixup: bool = False


def _launches(exec, a, k: int) -> tuple[_Launch, ...]:
    """The launches of the SpMV of ``a`` with ``k`` columns, made once per strategy and column
    count (a call then only passes its operands: building the arguments cost more host time
    than a small SpMV takes on a GPU), again if the matrix's arrays were replaced."""
    strategy = select_strategy(exec, a)
    matrix = (a.row_ptrs, a.col_idxs, a.values)
    made = strategy.launches.get(k)
    if made is not None and all(p is q for p, q in zip(made[0], matrix)):
        return made[1]
    n = a.shape[0]
    wg, lanes, parts = strategy.work_group, strategy.lanes, strategy.parts
    # the sums of the parts; a stand-in where there are none (never written then)
    carries = (exec.alloc((parts, k), a.dtype) if parts else a.values).data
    head = (np.int32(n), np.int32(k), a.row_ptrs.data, a.col_idxs.data, a.values.data)

    def launch(name, size, tail=(), head=head, work_group=wg, defines=None, fixup=False):
        return _Launch(exec.kernel(__file__, a.dtype, name, **(defines or {})), (size, k),
                       (work_group, 1), head, tail, fixup)

    if strategy.name == "classical":
        launches = [launch("spmv_classical", _round_up(n, wg))]
    elif strategy.name == "vector":
        launches = [launch("spmv_vector", _round_up(n * lanes, wg),
                           (np.int32(lanes), local_buffer(wg, a.dtype)))]
    elif strategy.name == "long_rows":
        bounds = strategy.bounds if parts else a.row_ptrs  # a stand-in where there are no pieces
        launches = [launch("spmv_long_rows", (parts + -(-n * lanes // wg)) * wg,
                           (np.int32(lanes), np.int32(strategy.long_min), np.int32(parts),
                            bounds.data, carries, local_buffer(wg, a.dtype)))]
    elif strategy.name == "merge_path":
        launches = [launch("spmv_merge_path", -(-parts // GPU_PARTS) * wg,
                           (np.int32(parts), strategy.bounds.data, carries),
                           defines=dict(MERGE_PATH_WORK_GROUP=wg, MERGE_PATH_ITEMS=strategy.items,
                                        MERGE_PATH_PARTS=GPU_PARTS))]
    else:
        launches = [launch("spmv_row_blocks", _round_up(parts, wg),
                           (np.int32(parts), strategy.bounds.data, carries))]
    if strategy.runs is not None:
        # the rows summed over several parts
        count, fixup_wg = strategy.runs.shape[0] // 3, _fixup_wg(exec)
        long, fixup_lanes = strategy.fixup_long, strategy.fixup_lanes
        size = _round_up(long * fixup_lanes, fixup_wg) + _round_up(count - long, fixup_wg)
        launches.append(launch("spmv_merge_path_fixup", size, (local_buffer(fixup_wg, a.dtype),),
                               head=(np.int32(k), np.int32(count), np.int32(long),
                                     np.int32(fixup_lanes), strategy.runs.data, carries),
                               work_group=fixup_wg, fixup=True))
    strategy.launches[k] = (matrix, tuple(launches))
    return strategy.launches[k][1]


def spmv_dots(exec, a, b, x, u, w, partials) -> None:
    """x = A b and the partial sums of u . x (and w . x unless w is None) per column: in the
    same pass for the classical and vector strategies and for row blocks that split no row;
    else the SpMV, then ``components.reduction.dots``."""
    n, k = x.shape
    strategy = select_strategy(exec, a)
    fused = strategy.name in ("classical", "vector") or (strategy.name == "row_blocks" and strategy.runs is None)
    if not fused or n == 0 or k == 0:
        _spmv(exec, a, b, x, None, None)
        exec.run("components.reduction.dots", x, u, w, partials)
        return
    check_int32(max(n, b.shape[0]) * k, "entries of b or x")
    count = (1 if w is None else 2) * k
    defines = dict(TWO=int(w is not None), W_IS_Y=int(w is x))
    operands = (np.int32(n), np.int32(k), a.row_ptrs.data, a.col_idxs.data, a.values.data, b.values.data,
                x.values.data, u.values.data, (w or u).values.data)
    if strategy.name == "row_blocks":
        parts = strategy.parts
        resize(exec, partials, (parts, count))
        wg = strategy.work_group
        exec.kernel(__file__, a.dtype, "spmv_row_blocks_dots", **defines)(
            exec.queue, (_round_up(parts, wg), k), (wg, 1), *operands, partials.values.data,
            np.int32(parts), strategy.bounds.data)
        return
    wg = strategy.work_group
    rows_per_group = wg // strategy.lanes
    groups = max(1, min(-(-n // rows_per_group), DOTS_GROUPS_PER_UNIT * exec.info.compute_units,
                        MAX_PARTIALS // count))
    resize(exec, partials, (groups, count))
    if strategy.name == "classical":
        exec.kernel(__file__, a.dtype, "spmv_classical_dots", **defines)(
            exec.queue, (groups * wg, k), (wg, 1), *operands, partials.values.data, local_buffer(wg, a.dtype))
    else:
        exec.kernel(__file__, a.dtype, "spmv_vector_dots", **defines)(
            exec.queue, (groups * wg, k), (wg, 1), *operands, partials.values.data, np.int32(strategy.lanes),
            local_buffer(wg, a.dtype))


def scale_columns(exec, a, diag, out) -> None:
    """out (the values of A D) = A's values times diag at their columns."""
    nnz = a.nnz
    if nnz == 0:
        return
    wg = _work_group(exec)
    _kernel(exec, a, "scale_columns")(exec.queue, (_round_up(nnz, wg),), (wg,), np.int32(nnz), a.col_idxs.data,
                                      a.values.data, diag.values.data, out.data)


def convert_to_dense(exec, a, out) -> None:
    n, m = a.shape
    if n == 0 or m == 0:
        return
    check_int32(n * m, "entries of the dense matrix")
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
    host = exec.host
    return tuple(exec.from_host(v) for v in host.run("matrix.csr.transpose", a.clone(host)))
