"""The OpenCL executor: device selection, errors without a device or without fp64, memory."""
import attrs
import numpy as np
import pytest

import ginkpy as gk
from ginkpy.opencl import executor as ocl_executor


def test_device_by_index_and_name(ocl, monkeypatch):
    name = ocl.info.name
    assert gk.executor("opencl:0:0").info.platform  # indices
    assert gk.OpenCLExecutor(name[:4]).info.name.startswith(name[:4])  # a name substring
    monkeypatch.setenv("GINKPY_OPENCL_DEVICE", name)
    assert gk.OpenCLExecutor().device == ocl.device


def test_executors_of_one_device_share_memory(ocl):
    other = gk.OpenCLExecutor(ocl.device)
    assert other.same_memory(ocl) and other.context == ocl.context
    x = gk.matrix.Dense.from_numpy(ocl, np.arange(3.0))
    assert x.to_executor(other) is x
    assert not ocl.same_memory(gk.ReferenceExecutor())


def test_unknown_device_is_a_clear_error(ocl):
    with pytest.raises(ocl_executor.NoOpenCLDeviceError, match="no OpenCL device 7:7; the devices are: 0:0"):
        gk.executor("opencl:7:7")
    with pytest.raises(ocl_executor.NoOpenCLDeviceError, match="no OpenCL device matches 'no-such-gpu'"):
        gk.OpenCLExecutor("no-such-gpu")


def test_no_platform_is_a_clear_error(monkeypatch):
    import pyopencl as cl
    monkeypatch.setattr(cl, "get_platforms", lambda: [])
    with pytest.raises(ocl_executor.NoOpenCLDeviceError, match=r'no OpenCL platform found.*ginkpy\[pocl\]'):
        gk.OpenCLExecutor()
    with pytest.warns(RuntimeWarning, match="using the reference executor"):
        assert isinstance(gk.default_executor(), gk.ReferenceExecutor)


def test_float64_without_fp64_is_a_clear_error(ocl, monkeypatch):
    exe = gk.OpenCLExecutor(ocl.device)
    monkeypatch.setattr(exe, "info", attrs.evolve(ocl.info, fp64=False))
    with pytest.raises(TypeError, match="no float64 .*fp64.* support: use dtype=numpy.float32"):
        gk.matrix.Dense.from_numpy(exe, np.ones(3))
    assert gk.matrix.Dense.from_numpy(exe, np.ones(3), dtype=np.float32).dtype == np.float32


def test_memory_round_trips(ocl, rng):
    a = rng.standard_normal((37, 3))
    arr = ocl.from_host(a)
    np.testing.assert_array_equal(ocl.to_host(arr), a)
    copy = ocl.copy(arr)
    ocl.write(arr, np.zeros_like(a))
    np.testing.assert_array_equal(ocl.to_host(copy), a)
    assert ocl.to_host(ocl.alloc((0, 2), np.float64)).shape == (0, 2)
    x = gk.matrix.Dense.from_numpy(ocl, a)
    np.testing.assert_array_equal(x.clone(gk.ReferenceExecutor()).to_numpy(), a)


def test_operands_on_another_executor_are_copied(ocl, ref):
    from ginkpy.problems import poisson_2d
    S = poisson_2d(4)
    A = gk.matrix.Csr.from_scipy(ocl, S)
    b = gk.matrix.Dense.from_numpy(ref, np.arange(16.0))
    x = gk.matrix.Dense.zeros(ref, (16, 1))
    A.apply(b, x)  # A on the device, b and x on the host: x receives the result on the host
    np.testing.assert_allclose(x.to_numpy()[:, 0], S @ np.arange(16.0), rtol=1e-14)

