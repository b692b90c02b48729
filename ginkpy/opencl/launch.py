"""How ginkpy launches its OpenCL kernels.

A kernel lives in the ``.cl`` file beside the module that launches it (``exec.kernel(__file__,
dtype, name)``). Element-wise kernels run one work-item per entry in work-groups of
:data:`WORK_GROUP`, take the entry count (and the column count) first and skip the work-items
past the end; sizes 0 launch nothing. Kernels index with int32, so larger arrays are refused.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

from ginkpy.core.matrix.dense import Dense

WORK_GROUP = 256  # work-group size of the element-wise launches
INT32_MAX = np.iinfo(np.int32).max


def ceil_div(a: int, b: int) -> int:
    """a / b rounded up (a >= 0, b > 0)."""
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    """The smallest multiple of b that is >= a: a global size of whole work-groups of b."""
    return ceil_div(a, b) * b


def check_int32(size: int, what: str = "a Dense") -> None:
    """Refuse sizes that the kernels' int32 indices cannot address; ``what`` names the data."""
    if size > INT32_MAX:
        raise ValueError(f"{what} of {size} entries is too large for the OpenCL kernels, which index "
                         f"with int32 (at most {INT32_MAX} entries): split it into several matrices")




def launch_1d(exec, module_file: str, name: str, dtype: Any, work_items: int, *args: Any) -> None:
    """Run kernel ``name`` of the ``.cl`` beside ``module_file`` on ``work_items`` work-items,
    rounded up to whole work-groups of WORK_GROUP; nothing is launched for 0."""
    if work_items == 0:
        return
    check_int32(work_items)
    global_size = -(-work_items // WORK_GROUP) * WORK_GROUP
    exec.kernel(module_file, dtype, name)(exec.queue, (global_size,), (WORK_GROUP,), *args)


def kernel_arg(arg: Any) -> Any:
    """A kernel argument: the device buffer of a Dense or of a device array (the stop status);
    numbers (np.int32, the value type) as they are."""
    if isinstance(arg, Dense):
        return arg.values.data
    return arg.data if isinstance(arg, cla.Array) else arg


def launch(exec, module_file: str, name: str, dtype: Any, shape: tuple[int, int], *args: Any,
           work_items: int | None = None) -> None:
    """Kernel ``name`` of ``module_file``'s program with one work-item per entry of an n x k
    ``shape`` (or ``work_items`` of them: a kernel that also sets 1 x k scalars runs at least k,
    so that it does so when n is 0), given (n k, k, ``args``) with ``args`` converted by
    :func:`kernel_arg`."""
    size = shape[0] * shape[1]
    launch_1d(exec, module_file, name, dtype, size if work_items is None else work_items, np.int32(size),
              np.int32(shape[1]), *(kernel_arg(a) for a in args))


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
