"""``OpenCLExecutor.alloc`` makes its arrays through pyopencl's fast constructor with layouts
kept per (shape, dtype) (``opencl/fast_arrays.py``): the same arrays as ``pyopencl.array.empty``."""
import numpy as np
import pyopencl.array as cla
import pytest

from ginkpy.opencl import fast_arrays

SHAPES = [7, (1000,), (10, 3), (0,), (3, 0, 2), (), [4, 5], (np.int32(6), np.int64(2)), (1, 1)]
ATTRIBUTES = ("shape", "strides", "size", "nbytes", "dtype", "offset", "context", "queue", "allocator")


@pytest.mark.parametrize("dtype", [np.float64, np.dtype(np.complex64), np.int32, "uint8"])
def test_alloc_makes_the_arrays_pyopencl_makes(ocl, dtype):
    for _ in range(2):  # made, then from the table
        for shape in SHAPES:
            a = ocl.alloc(shape, dtype)
            b = cla.empty(ocl.queue, shape, dtype, allocator=ocl.pool)
            for name in ATTRIBUTES:
                assert getattr(a, name) == getattr(b, name), (shape, name)
            assert (a.flags.c_contiguous, a.flags.f_contiguous) == (b.flags.c_contiguous, b.flags.f_contiguous)
            assert (a.base_data is None) == (b.base_data is None) and a.events == []


def test_alloc_arrays_hold_data(ocl, rng):
    values = rng.standard_normal((33, 5))
    a = ocl.alloc((33, 5), np.float64)
    a.set(values)
    np.testing.assert_array_equal(ocl.to_host(a), values)
    np.testing.assert_array_equal((2 * a).get(), 2 * values)  # pyopencl's own operations on it


def test_bad_shapes_are_errors_as_in_pyopencl(ocl):
    for shape, error in (((-1,), ValueError), ((2.5,), TypeError), ((3, -2), ValueError)):
        with pytest.raises(error):
            ocl.alloc(shape, np.float64)
    with pytest.raises(TypeError):
        ocl.alloc((3,), object)


def test_the_table_starts_over_when_full(ocl, monkeypatch):
    monkeypatch.setattr(fast_arrays, "_layouts", {})
    monkeypatch.setattr(fast_arrays, "MAX_LAYOUTS", 4)
    for n in range(10):
        assert ocl.alloc((n + 1, 2), np.float32).shape == (n + 1, 2)
    assert 0 < len(fast_arrays._layouts) <= 4


def test_a_pyopencl_without_the_fast_constructor_gets_the_public_one(ocl, monkeypatch):
    # a later pyopencl whose private constructor arguments changed: alloc still makes the array
    original = cla.Array

    def array(*args, **kwargs):
        if "_fast" in kwargs:
            raise TypeError("unexpected keyword argument '_fast'")
        return original(*args, **kwargs)
    monkeypatch.setattr(cla, "Array", array)
    monkeypatch.setattr(fast_arrays, "_fast_path", [True])
    a = ocl.alloc((10, 3), np.float64)
    b = cla.empty(ocl.queue, (10, 3), np.float64, allocator=ocl.pool)
    for name in ATTRIBUTES:
        assert getattr(a, name) == getattr(b, name), name
    assert fast_arrays._fast_path == [False]
    assert ocl.alloc((4,), np.int32).shape == (4,)
