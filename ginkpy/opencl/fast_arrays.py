"""New ``pyopencl.array.Array`` objects at a fraction of the constructor's host cost
(``OpenCLExecutor.alloc``). The constructor checks and derives the shape, size and strides
anew for every array (about 20 us on PoCL's host, for a 0.5 us pool allocation); an AMG setup
makes hundreds. Here they are derived once per (shape, dtype), checked the same way, and the
array is made through pyopencl's own fast path (``_fast=True``, which ``Array._new_with_changes``
uses)."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

MAX_LAYOUTS = 4096  # (shape, dtype) layouts kept; the table starts over beyond


def _layout(shape: Any, dtype: Any) -> tuple[tuple[int, ...], np.dtype, int, tuple[int, ...]]:
    """(shape, dtype, size, C-contiguous strides) of a new array, checked: an int or a sequence
    of non-negative integers (numpy's included), as pyopencl requires."""
    dtype = np.dtype(dtype)
    if dtype == object:
        raise TypeError("object arrays on the compute device are not allowed")
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    dims = tuple(operator.index(s) for s in dims)  # a TypeError for floats, as numpy
    if any(s < 0 for s in dims):
        raise ValueError(f"negative dimensions are not allowed: {dims}")
    size = int(np.prod(dims, dtype=np.int64)) if dims else 1
    strides, step = [], dtype.itemsize
    for s in reversed(dims):  # (pyopencl's: a dimension of 0 counts as 1)
        strides.append(step)
        step *= max(1, s)
    return dims, dtype, size, tuple(reversed(strides))


_layouts: dict = {}


def empty(context: Any, queue: Any, allocator: Any, shape: Any, dtype: Any):
    """``pyopencl.array.empty(queue, shape, dtype, allocator=allocator)``, its layout from the
    table (the caller holds the device's lock: the allocator may create a buffer)."""
    import pyopencl.array as cla
    try:
        layout = _layouts[shape, dtype]
    except (KeyError, TypeError):  # (TypeError: a list as the shape)
        layout = _layout(shape, dtype)
        try:
            if len(_layouts) >= MAX_LAYOUTS:
                _layouts.clear()
            _layouts[shape, dtype] = layout
        except TypeError:
            pass
    dims, dt, size, strides = layout
    if _fast_path[0]:
        try:
            return cla.Array(None, dims, dt, allocator=allocator, strides=strides, _fast=True, _size=size,
                             _context=context, _queue=queue)
        except TypeError:  # a pyopencl whose private constructor arguments changed: its public one
            _fast_path[0] = False
    return cla.empty(queue, dims, dt, allocator=allocator)


_fast_path = [True]  # pyopencl's private fast constructor still takes the arguments above
