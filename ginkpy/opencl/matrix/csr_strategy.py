"""How the Csr SpMV of a matrix is launched on an OpenCL device: the strategy, chosen once per
matrix from its row lengths and the device (see csr_kernels.py for what each strategy does),
with the launch sizes and the host-side analysis it needs (merge-path bounds, long-row pieces,
the rows summed over several parts)."""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.opencl.launch import ceil_div, check_int32, pow2_at_most

STRATEGIES = ("classical", "vector", "long_rows", "merge_path", "row_blocks")
CACHE_KEY = "pattern.opencl.spmv_strategy"  # (pattern.: kept by a values update)

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
# classical: rows of at most 4 or 8 entries are summed in a loop unrolled to 4 or 8 turns (two
# compiled variants), all their loads in flight at once. H100, 2026-12-07, Cg's SpMV with its dots:
# 2D Poisson 1e6 rows 38.5 us plain, 37.1 unrolled to the longest row's 5 turns, 37.6 to 8 (4 rows
# at once); 3D Poisson 2.1e6 rows 82.2 plain and 80.4 unrolled to 7 turns (one row at once), 83.7
# and 83.9 unrolled to 7 and 8 turns with 4 rows at once: within the runs' spread there
CLASSICAL_MAX_ROWS = (4, 8)


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
    ``max_row``: classical, the least of CLASSICAL_MAX_ROWS at least the longest row's length (the
    kernels' MAX_ROW: each row's loop unrolled to that many turns, all its loads in flight at
    once), or 0 (longer rows: the plain loop).
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
    max_row: int = 0


def select_strategy(exec, a, name: str | None = None, work_group: int | None = None,
                    lanes: int | None = None, items: int | None = None,
                    max_row: int | None = None) -> SpmvStrategy:
    """The SpMV strategy of ``a`` on ``exec``, chosen from its row lengths at first use and kept
    in ``a.cache``. Giving ``name`` (and optionally the launch sizes, or classical's unrolled
    ``max_row``, at least the longest row's length; 0: the plain loop) forces a strategy, for
    tests and benchmarks; the forced choice replaces the cached one."""
    if name is None and work_group is None and lanes is None and items is None and max_row is None:
        cached = a.cache.get(CACHE_KEY)
        if cached is not None:
            return cached
    if name is not None and name not in STRATEGIES:
        raise ValueError(f"unknown SpMV strategy {name!r}: use one of {', '.join(STRATEGIES)}")
    n, nnz = a.shape[0], a.nnz
    with exec.cached_setup():  # (kept in a.cache: a capture around the first SpMV stays valid)
        row_ptrs = a.host_row_ptrs() if hasattr(a, "host_row_ptrs") else exec.to_host(a.row_ptrs)
    lengths = np.diff(row_ptrs)
    info = exec.info
    name = name or _choose(info, n, nnz, lengths)
    if work_group is None:
        work_group = 1 if name == "row_blocks" and info.is_cpu else default_work_group(exec)
    if not 1 <= work_group <= info.max_work_group_size:
        raise ValueError(f"work_group must be between 1 and the device's maximum "
                         f"{info.max_work_group_size}, got {work_group}")
    if items is not None and items < 1:
        raise ValueError(f"items (nonzeros or merge-path steps per work-item or block) must be "
                         f">= 1, got {items}")
    make = {"classical": _classical, "vector": _vector, "long_rows": _long_rows}.get(name, _merge_path)
    strategy = make(exec, a, name, work_group, lanes, items, max_row, row_ptrs, lengths)
    a.cache[CACHE_KEY] = strategy
    return strategy


# -- each strategy's launch sizes and pieces, checked (select_strategy's arguments) ---------------

def _classical(exec, a, name, work_group, lanes, items, max_row, row_ptrs, lengths) -> SpmvStrategy:
    """A work-item per row; the row loop unrolled to ``max_row`` (None: the least bound of
    CLASSICAL_MAX_ROWS at least the longest row, 0 beyond them: the plain loop)."""
    n = a.shape[0]
    longest = int(lengths.max()) if n else 0
    if max_row is None:
        max_row = next((bound for bound in CLASSICAL_MAX_ROWS if longest <= bound), 0)
    elif max_row and not longest <= max_row <= 64:
        raise ValueError(f"max_row (classical's unrolled row loop) must be 0 or between the longest "
                         f"row's length {longest} and 64, got {max_row}")
    return SpmvStrategy(name, work_group, max_row=max_row)


def _vector(exec, a, name, work_group, lanes, items, max_row, row_ptrs, lengths) -> SpmvStrategy:
    """``lanes`` work-items per row (None: from the mean row length)."""
    n, nnz = a.shape[0], a.nnz
    lanes = lanes or _lanes(nnz, n, work_group, 2)
    _check_lanes(lanes, work_group, 2)
    check_int32(n * lanes + work_group, "rows x lanes")
    return SpmvStrategy(name, work_group, lanes=lanes)


def _long_rows(exec, a, name, work_group, lanes, items, max_row, row_ptrs, lengths) -> SpmvStrategy:
    """Short rows by ``lanes`` work-items each, the long ones cut into pieces of
    ``work_group`` x ``items`` nonzeros, their partial sums added by the fix-up."""
    n, nnz = a.shape[0], a.nnz
    long_min = _long_min(n, nnz)
    short = lengths <= long_min
    lanes = lanes or _lanes(int(lengths[short].sum()), int(short.sum()), work_group, 1)
    _check_lanes(lanes, work_group, 1)
    items = LONG_ROW_ITEMS if items is None else items
    check_int32(n * lanes + work_group + nnz + work_group * items, "rows x lanes + nonzeros")
    bounds, runs = _long_row_pieces(row_ptrs, np.flatnonzero(~short), work_group * items)
    return SpmvStrategy(name, work_group, lanes=lanes, items=items, long_min=long_min, parts=bounds.size // 2,
                        bounds=_device(exec, bounds), **_fixup(exec, runs))


def _merge_path(exec, a, name, work_group, lanes, items, max_row, row_ptrs, lengths) -> SpmvStrategy:
    """merge_path (a GPU's: ``items`` steps per work-item, staged in local memory) or
    row_blocks (a CPU's: a few blocks per compute unit): the merged rows and nonzeros cut into
    equal parts."""
    n, nnz, info = a.shape[0], a.nnz, exec.info
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
        part = items = items or max(CPU_MIN_ITEMS, ceil_div(n + nnz, blocks))
    check_int32(n + nnz + part, "rows + nonzeros")
    bounds, runs = _merge_path_bounds(row_ptrs, part, align=name == "row_blocks")
    return SpmvStrategy(name, work_group, items=items, parts=bounds.size // 2 - 1, bounds=_device(exec, bounds),
                        **_fixup(exec, runs))


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
    """``host`` (made here: no one changes it) on the device, the copy not waited for (a
    strategy chosen beside A's upload does not wait for it); None where it is empty."""
    if not host.size:
        return None
    out = exec.alloc(host.shape, host.dtype)
    exec.write_async(out, host)
    return out


def _fixup_wg(exec) -> int:
    return min(FIXUP_WORK_GROUP, default_work_group(exec))


def _fixup(exec, runs: np.ndarray) -> dict:
    """The fix-up of these runs (first part, number of parts, row; flat): the runs on the
    device, those of more than FIXUP_PARTS_PER_LANE parts first, how many those are, and the
    work-items for each of them: a power of two, so that each sums at most about
    FIXUP_PARTS_PER_LANE parts of the run of most parts."""
    runs = runs.reshape(-1, 3)
    long = runs[:, 1] > FIXUP_PARTS_PER_LANE
    most = int(runs[:, 1].max()) if long.any() else 1
    lanes = 1 << (ceil_div(most, FIXUP_PARTS_PER_LANE) - 1).bit_length()
    return dict(runs=_device(exec, np.concatenate([runs[long], runs[~long]]).ravel()),
                fixup_long=int(long.sum()), fixup_lanes=min(MAX_LANES, _fixup_wg(exec), lanes))


def _long_row_pieces(row_ptrs: np.ndarray, rows: np.ndarray,
                     piece: int) -> tuple[np.ndarray, np.ndarray]:
    """(first, end) nonzero of each piece of the given rows, cut into ``piece`` nonzeros, as one
    flat int32 array; and (first piece, number of pieces, row) of each of the rows, flat int32."""
    begins, ends = row_ptrs[rows].astype(np.int64), row_ptrs[rows + 1].astype(np.int64)
    counts = ceil_div(ends - begins, piece)
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
    diagonals = np.minimum(np.arange(max(1, ceil_div(path, part)) + 1, dtype=np.int64) * part, path)
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


def default_work_group(exec) -> int:
    """The default work-group size: GPU_WORK_GROUP or the largest power of two the device allows."""
    return min(GPU_WORK_GROUP, pow2_at_most(exec.info.max_work_group_size))


def describe(strategy: SpmvStrategy) -> str:
    """A line on the SpMV strategy a matrix got, for ``ginkpy info`` and the profiler."""
    unrolled = f", each row's loop unrolled to {strategy.max_row} turns" if strategy.max_row else ""
    why = {"classical": f"one work-item per row (short, regular rows){unrolled}",
           "vector": f"{strategy.lanes} work-items per row (long, regular rows)",
           "long_rows": f"rows longer than {strategy.long_min} cut into {strategy.parts} pieces of "
                        f"{strategy.work_group * strategy.items} entries, the others {strategy.lanes} "
                        f"work-items per row (a few very long rows)",
           "merge_path": f"merge-path load balancing, {strategy.parts} parts of "
                         f"{strategy.work_group * strategy.items} steps (irregular rows)",
           "row_blocks": f"{strategy.parts} blocks of about {strategy.items} merge-path steps (rows + entries) "
                         f"each (a CPU)"}
    return f"{strategy.name}: {why[strategy.name]}, work-group {strategy.work_group}"
