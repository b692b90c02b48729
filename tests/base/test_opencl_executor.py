"""The OpenCL executor: device selection, errors without a device or without fp64, memory."""
import os

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



def test_page_locked_arrays_are_reused_only_when_free(ocl):
    """A page-locked host array goes back to its device once nothing derived from it is left (a
    slice, a read in flight): only then does a later request of the same size get its memory.
    None is ever freed (no unmap from a garbage collection)."""
    device = ocl._device
    before = len(device.pinned)
    shape = (97, 3)  # a size no solver here uses
    a = ocl.host_array(shape, np.float64)
    b = ocl.host_array(shape, np.float64)
    assert not np.shares_memory(a, b) and len(device.pinned) == before + 2
    column = a[:, 1]
    del a
    c = ocl.host_array(shape, np.float64)  # a's memory is still seen through its column
    assert not np.shares_memory(c, column) and not np.shares_memory(c, b) and len(device.pinned) == before + 3
    del column
    d = ocl.host_array(shape, np.float64)
    assert len(device.pinned) == before + 3  # a's memory again
    X = gk.matrix.Dense.from_numpy(ocl, np.arange(291.0).reshape(shape))
    event = ocl.read_async([X.values], [d])  # the read in flight holds d until it is complete
    event.wait()
    np.testing.assert_array_equal(d, np.arange(291.0).reshape(shape))
    del b, c, d, event
    assert len(device.pinned) == before + 3


def test_reads_and_writes_wait_for_their_own_copies(ocl, rng):
    """to_host waits for its reads (the queue is in order: what came before is done too);
    writes inside a capture copy from a buffer of their own, replayed without a host wait."""
    values = rng.standard_normal((1000, 2))
    X = gk.matrix.Dense.from_numpy(ocl, values)
    np.testing.assert_array_equal(ocl.to_host(X.values), values)
    Y = gk.matrix.Dense.zeros(ocl, (1000, 2))
    replay = ocl.capture(lambda: ocl.write(Y.values, 2.0 * values))
    np.testing.assert_array_equal(Y.to_numpy(), 2.0 * values)
    Y.fill(0.0)
    replay()
    np.testing.assert_array_equal(Y.to_numpy(), 2.0 * values)


def test_uploads_through_the_staging_array(ocl, monkeypatch):
    """The GPU's upload path on any device (its info says GPU): page-locked staging grown to the
    largest upload, each upload waiting for the previous copy to leave it; every array arrives."""
    device = ocl._device
    gpu = attrs.evolve(device.info, is_cpu=False, is_gpu=True)
    monkeypatch.setattr(device, "info", gpu)
    monkeypatch.setattr(ocl, "info", gpu)
    monkeypatch.setattr(device, "staging", None)
    uploads = []
    for n in (10, 1000, 50, 5000, 7):
        data = np.arange(n, dtype=np.float64) * 0.5
        uploads.append((data, ocl.upload((n,), np.float64, lambda host, data=data: host.__setitem__(Ellipsis, data))))
    for data, out in uploads:
        np.testing.assert_array_equal(ocl.to_host(out), data)
    assert device.staging[0].nbytes == 5000 * 8


def test_a_requested_device_that_does_not_exist_is_an_error(ocl, monkeypatch):
    monkeypatch.setenv("GINKPY_OPENCL_DEVICE", "no such device 1234")
    for make in (lambda: gk.executor("opencl"), gk.default_executor, lambda: gk.executor("default")):
        with pytest.raises(RuntimeError, match="no OpenCL device matches .*the devices are"):
            make()
    with pytest.raises(RuntimeError, match="no OpenCL device 9:9.*the devices are"):
        gk.executor("opencl:9:9")


def test_a_launch_needing_more_local_memory_than_the_device_has_is_an_error(ocl):
    # (Gmres with many right-hand sides and a large krylov_dim on a GPU's 48 KiB, for example)
    import pyopencl as cl
    from ginkpy.opencl.components import reduction_kernels
    kernel = ocl.kernel(reduction_kernels.__file__, np.float64, "sum_rows", TWO=0)
    too_much = cl.LocalMemory(ocl.info.local_mem_size + 8)
    partial, result = ocl.alloc((4, 1), np.float64), ocl.alloc((1,), np.float64)
    with pytest.raises(ValueError, match="local memory"):
        kernel(ocl.queue, (64,), (64,), np.int32(4), np.int32(1), partial.data, result.data, too_much)


def test_local_memory_is_taken_as_at_most_the_cap(ocl, monkeypatch):
    """GINKPY_OPENCL_LOCAL_MEM (the suite sets 49152, a GPU's) caps what every layout budgets
    and what a launch is checked against; an unreadable value says how to set it."""
    from ginkpy.opencl.device_selection import DeviceInfo, LOCAL_MEM_VARIABLE
    device = ocl.device
    assert ocl.info.local_mem_size <= int(os.environ.get(LOCAL_MEM_VARIABLE) or ocl.info.local_mem_size)
    monkeypatch.setenv(LOCAL_MEM_VARIABLE, "1024")
    assert DeviceInfo.of(device).local_mem_size == min(1024, int(device.local_mem_size))
    monkeypatch.setenv(LOCAL_MEM_VARIABLE, "")
    assert DeviceInfo.of(device).local_mem_size == int(device.local_mem_size)
    for bad in ("48k", "-1", "0"):
        monkeypatch.setenv(LOCAL_MEM_VARIABLE, bad)
        with pytest.raises(ValueError, match="GINKPY_OPENCL_LOCAL_MEM.*bytes as a positive integer"):
            DeviceInfo.of(device)
