"""How ginkpy launches its OpenCL kernels.

A kernel lives in the ``.cl`` file beside the module that launches it (``exec.kernel(__file__,
dtype, name)``). Element-wise kernels run one work-item per entry in work-groups of
:data:`WORK_GROUP`, take the entry count (and the column count) first and skip the work-items
past the end; sizes 0 launch nothing. Kernels index with int32, so larger arrays are refused.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from ginkpy.core.matrix.dense import Dense

WORK_GROUP = 256  # work-group size of the element-wise launches
INT32_MAX = np.iinfo(np.int32).max


def ceil_div(a: int, b: int) -> int:
    """a / b rounded up (a >= 0, b > 0; numpy integer arrays too)."""
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    """The smallest multiple of b that is >= a: a global size of whole work-groups of b."""
    return ceil_div(a, b) * b


def check_int32(size: int, what: str = "a Dense") -> None:
    """Refuse sizes that the kernels' int32 indices cannot address; ``what`` names the data."""
    if size > INT32_MAX:
        raise ValueError(f"{what} of {size} entries is too large for the OpenCL kernels, which index "
                         f"with int32 (at most {INT32_MAX} entries): split it into several matrices")




def launch_1d(exec, module_file: str, name: str, dtype: Any, work_items: int, *args: Any,
              defines: dict | None = None) -> None:
    """Run kernel ``name`` of the ``.cl`` beside ``module_file`` (compiled with ``defines``) on
    ``work_items`` work-items, rounded up to whole work-groups of WORK_GROUP; nothing is
    launched for 0."""
    if work_items == 0:
        return
    check_int32(work_items)
    global_size = round_up(work_items, WORK_GROUP)
    exec.kernel(module_file, dtype, name, **(defines or {}))(exec.queue, (global_size,), (WORK_GROUP,), *args)


CPU_ITEMS_PER_UNIT = 16  # work-items (of one each in a group) per compute unit of a chunked launch on a CPU


def launch_chunks(exec, module_file: str, name: str, dtype: Any, items: int, first: int, *args: Any,
                  min_chunk: int, defines: dict | None = None) -> None:
    """Run kernel ``name`` over ``items`` items (rows, aggregates, ...): a GPU one item per
    work-item in work-groups of WORK_GROUP, a CPU a few work-groups of one work-item, each a
    contiguous chunk of at least ``min_chunk`` items (``FOR_ITEMS`` in common.cl). The kernel takes
    (``first``: an int32 it reads as its item count, the chunk, ``args``); nothing is launched
    for 0 items."""
    if items == 0:
        return
    if exec.info.is_cpu:
        chunk = max(min_chunk, ceil_div(items, CPU_ITEMS_PER_UNIT * exec.info.compute_units))
        global_size, local_size = ceil_div(items, chunk), 1
    else:
        chunk, local_size = 1, WORK_GROUP
        global_size = round_up(items, WORK_GROUP)
    exec.kernel(module_file, dtype, name, **(defines or {}))(exec.queue, (global_size,), (local_size,),
                                                             np.int32(first), np.int32(chunk), *args)


def launch_rows(exec, kernel, num_rows: int, k: int, *args: Any) -> None:
    """Run ``kernel(num_rows, k, *args)`` on a (rows, k) range of WORK_GROUP x 1 groups; nothing for size 0."""
    if num_rows == 0 or k == 0:
        return
    kernel(exec.queue, (round_up(num_rows, WORK_GROUP), k), (WORK_GROUP, 1), np.int32(num_rows), np.int32(k), *args)


def kernel_arg(arg: Any) -> Any:
    """A kernel argument: the device buffer of a Dense or of a device array (the stop status);
    numbers (np.int32, the value type) as they are."""
    if isinstance(arg, Dense):
        return arg.values.data
    return arg.data if isinstance(arg, cla.Array) else arg


def launch(exec, module_file: str, name: str, dtype: Any, shape: tuple[int, int], *args: Any,
           work_items: int | None = None, defines: dict | None = None) -> None:
    """Kernel ``name`` of ``module_file``'s program (compiled with ``defines``) with one
    work-item per entry of an n x k ``shape`` (or ``work_items`` of them: a kernel that also sets
    1 x k scalars runs at least k, so that it does so when n is 0), given (n k, k, ``args``)
    with ``args`` converted by :func:`kernel_arg`."""
    size = shape[0] * shape[1]
    launch_1d(exec, module_file, name, dtype, size if work_items is None else work_items, np.int32(size),
              np.int32(shape[1]), *(kernel_arg(a) for a in args), defines=defines)


def scalar_arg(alpha: Dense) -> tuple[Any, np.int32]:
    """Buffer and column stride of a 1 x 1 or 1 x k scalar: kernels read column j's value at
    ``alpha[j * stride]`` (stride 0: one value shared by all columns)."""
    return alpha.values.data, np.int32(0 if alpha.shape[1] == 1 else 1)


def local_buffer(count: int, dtype: Any) -> cl.LocalMemory:
    """A ``__local`` kernel argument of ``count`` entries of ``dtype``."""
    return cl.LocalMemory(count * np.dtype(dtype).itemsize)


def pow2_at_most(value: int) -> int:
    """The largest power of two <= value (1 for value < 2): work-group sizes of tree reductions."""
    return 1 << (max(int(value), 1).bit_length() - 1)


# -- reductions: per-column sums over the rows, one partial sum per work-group ------------------

@attrs.frozen
class ReductionShape:
    """How a kernel that sums over the n rows of n x k vectors is launched: ``groups``
    work-groups along the rows (each writes one partial sum per column), each ``width``
    columns by ``lanes`` work-items that take rows begin + y, begin + y + lanes, ... of its
    ``rows`` rows. On a CPU device width = lanes = 1: one work-item sums a long contiguous
    stretch (3-6x faster on PoCL than interleaved lanes)."""

    groups: int
    width: int
    lanes: int
    rows: int

    def global_size(self, k: int) -> tuple[int, int]:
        return (round_up(k, self.width) * self.lanes, self.groups)

    @property
    def local_size(self) -> tuple[int, int]:
        return (self.width * self.lanes, 1)

    def args(self) -> tuple[np.int32, np.int32]:
        """The kernel arguments (width, rows per group) of REDUCTION_PARAMS in common.cl."""
        return np.int32(self.width), np.int32(self.rows)


CPU_ROWS_PER_ITEM = 4096  # rows a CPU work-item sums at least before the work is split further
MAX_PARTIALS = 4096       # partial sums (groups x columns) a consumer adds up in every work-group
GPU_GROUPS_PER_UNIT = 4   # work-groups of a reduction launch per compute unit of a GPU
GPU_ROWS_PER_ITEM = 8     # rows a GPU work-item of a reduction launch adds at least
# rows a GPU work-item of a streaming kernel in the reduction layout loads before it stores. On an
# H100 (2026-12-07, Jacobi-CG, 500 fixed iterations, GINKPY_OPENCL_PROFILE=1) one row after the
# other left each work-item one row's loads in flight: Cg's step_2 took 26.6 us at 1e6 rows
# (2D Poisson) and 53.0 us at 2.1e6 (3D), step_1 15.0 / 40.9 us; 4 rows at once 23.7 / 46.6 and
# 15.4 / 35.5 us (2 rows: 24.1 / 47.7, 38.2; 8: 23.1 / 46.3, 31.4 but the SpMV's dots 39.9 / 90.0
# against 37.1 / 83.7). More work-groups (8 or 16 a compute unit) or fewer rows per work-item
# (GPU_ROWS_PER_ITEM 1-4) gained less, and each work-group of the next kernel sums more partials
GPU_ROWS_AT_ONCE = 4


def rows_at_once(info) -> int:
    """ROWS_AT_ONCE of the streaming kernels in the reduction layout (Cg's steps): the rows a
    work-item loads before it computes and stores them, so that their loads are in flight
    together (1 on a CPU, whose work-item walks a contiguous stretch)."""
    return 1 if info.is_cpu else GPU_ROWS_AT_ONCE


def reduction_shape(info, n: int, k: int = 1, count: int | None = None) -> ReductionShape:
    """The reduction launch for n rows and k columns on the device ``info``, writing ``count``
    partial sums per work-group (default k: one per column).

    GPU: 256 work-items per group, each adding at least 8 rows, up to 4 groups per compute
    unit, and at most MAX_PARTIALS partial sums in all (the kernel that consumes them sums them
    in each of its work-groups). CPU: one work-item per group, each adding at least
    CPU_ROWS_PER_ITEM contiguous rows, up to 4 per core.
    """
    count = max(k if count is None else count, 1)
    if info.is_cpu:
        groups = max(1, min(4 * info.compute_units, ceil_div(n, CPU_ROWS_PER_ITEM), MAX_PARTIALS // count))
        return ReductionShape(groups, 1, 1, ceil_div(n, groups))
    size = min(256, pow2_at_most(info.max_work_group_size))
    width = pow2_at_most(min(max(k, 1), size))
    lanes = size // width
    groups = max(1, min(GPU_GROUPS_PER_UNIT * info.compute_units, ceil_div(n, lanes * GPU_ROWS_PER_ITEM),
                        MAX_PARTIALS // count))
    return ReductionShape(groups, width, lanes, ceil_div(n, groups))


def consumer_buffers(dtype: Any, count: int, group_size: int = WORK_GROUP) -> tuple:
    """The local buffers of a kernel that sums ``count`` columns of partial sums
    (``sum_partials`` in common.cl): the sums and the scratch of its work-group."""
    return local_buffer(max(count, 1), dtype), local_buffer(group_size, dtype)


def resize(exec, dense: Dense, shape: tuple[int, int]) -> None:
    """Give ``dense`` new values of ``shape`` unless it has that shape: the partial sums of a
    reduction take the shape of the launch that produces them, found at its first run. The
    values are a view of the largest storage ``dense`` needed so far (the steps of Gmres take
    other shapes each: after the first solve none allocates)."""
    if dense.values.shape != shape:
        size = shape[0] * shape[1]
        storage = getattr(dense, "_storage", None)
        if storage is None or storage.size < size:
            storage = dense._storage = exec.alloc((size,), dense.dtype)
        dense.values = storage[:size].reshape(shape)
        dense.shape = shape


def stop_args(stop) -> tuple:
    """The kernel arguments of STOP_PARAMS (common.cl) for a StopState."""
    return (stop.status.data, stop.checks.data, stop.history.values.data, np.int32(stop.history_rows),
            stop.threshold.values.data, np.int32(stop.max_iters))


# the module beside which reduction_kernels.cl lies, named by its path: that module builds on this one
REDUCTION_KERNELS = str(Path(__file__).parent / "components" / "reduction_kernels.py")


def sum_rows(exec, partial, result) -> None:
    """result[j] = sum over g of partial[g, j] (device arrays of parts x count and count entries):
    the second pass of a reduction whose partial sums the host or a plain kernel needs summed;
    one work-group per column (``sum_rows`` in components/reduction_kernels.cl)."""
    parts, count = partial.shape
    group = min(pow2_at_most(exec.info.max_work_group_size), 256, 1 << max(parts - 1, 0).bit_length())
    exec.kernel(REDUCTION_KERNELS, partial.dtype, "sum_rows", TWO=0)(
        exec.queue, (count * group,), (group,), np.int32(parts), np.int32(count), partial.data,
        result.data, local_buffer(group, partial.dtype))
