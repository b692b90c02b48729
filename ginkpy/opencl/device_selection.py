"""Which OpenCL device an executor runs on: the platforms found, the device a specification
names (:func:`select_device`), what kernels read of it (:class:`DeviceInfo`), and the errors
where there is none."""
from __future__ import annotations

import os
from typing import Any

import attrs

from ginkpy.opencl import shared_device as shared


class NoOpenCLDeviceError(RuntimeError):
    """No OpenCL platform or no matching device is available."""


class NoOpenCLPlatformError(NoOpenCLDeviceError):
    """No OpenCL platform (or device) at all: the only case where the default executor falls
    back to the reference executor. A requested device that does not exist is an error."""


_HOW_TO_GET_ONE = ('install a CPU device with  pip install "ginkpy[pocl]"  (PoCL), or a GPU driver '
                   'with OpenCL support; "python -m ginkpy devices" lists what is found')


LOCAL_MEM_VARIABLE = "GINKPY_OPENCL_LOCAL_MEM"


def local_mem_cap() -> int | None:
    """The local memory, in bytes, that ``GINKPY_OPENCL_LOCAL_MEM`` lets a device have at most
    (None where it is unset): a device with more is taken for one with this much, so that its
    layouts budget and its launches are checked as on a smaller device (49152 is an NVIDIA
    GPU's; the test suite sets it, so that a CPU device's large local memory cannot hide a
    launch a GPU refuses)."""
    text = os.environ.get(LOCAL_MEM_VARIABLE, "").strip()
    if not text:
        return None
    try:
        cap = int(text)
    except ValueError:
        cap = 0
    if cap <= 0:
        raise ValueError(f"{LOCAL_MEM_VARIABLE}={text!r}: give the local memory in bytes as a positive "
                         f"integer (49152 for an NVIDIA GPU's), or unset it")
    return cap


@attrs.frozen
class DeviceInfo:
    """What kernels need to know about the device, read once (its local memory at most
    :func:`local_mem_cap`)."""

    name: str
    platform: str
    is_cpu: bool
    is_gpu: bool
    fp64: bool
    max_work_group_size: int
    local_mem_size: int
    compute_units: int
    subgroups: bool  # sub-group functions (cl_khr_subgroups or cl_intel_subgroups)
    global_mem_size: int

    @classmethod
    def of(cls, device) -> "DeviceInfo":
        import pyopencl as cl
        ext = device.extensions.split()
        local, cap = int(device.local_mem_size), local_mem_cap()
        return cls(name=device.name.strip(), platform=device.platform.name.strip(),
                   is_cpu=bool(device.type & cl.device_type.CPU),
                   is_gpu=bool(device.type & cl.device_type.GPU),
                   fp64="cl_khr_fp64" in ext or device.double_fp_config != 0,
                   max_work_group_size=int(device.max_work_group_size),
                   local_mem_size=local if cap is None else min(local, cap),
                   compute_units=int(device.max_compute_units),
                   subgroups="cl_khr_subgroups" in ext or "cl_intel_subgroups" in ext,
                   global_mem_size=int(device.global_mem_size))


def _platforms():
    import pyopencl as cl
    shared.opencl_used = True  # from here on a forked child cannot use OpenCL (PoCL starts its threads)
    try:
        platforms = cl.get_platforms()
    except cl.Error:  # the ICD loader reports "no platform" as an error
        platforms = []
    if not platforms:
        raise NoOpenCLPlatformError(f"no OpenCL platform found: {_HOW_TO_GET_ONE}")
    return platforms


def select_device(spec: Any = None):
    """The OpenCL device for ``spec``: a pyopencl Device, ``"<platform>:<device>"`` indices, or a
    substring of the device or platform name. Without a spec: ``GINKPY_OPENCL_DEVICE``, then
    ``PYOPENCL_CTX``, then the first GPU, accelerator or CPU device, in that order."""
    import pyopencl as cl
    if isinstance(spec, cl.Device):
        return spec
    spec = spec or os.environ.get("GINKPY_OPENCL_DEVICE") or os.environ.get("PYOPENCL_CTX")
    platforms = _platforms()
    devices = [(i, j, d) for i, p in enumerate(platforms) for j, d in enumerate(p.get_devices())]
    if spec:
        spec = str(spec)
        parts = spec.split(":")
        if all(part.isdigit() for part in parts):
            p, d = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
            for i, j, dev in devices:
                if (i, j) == (p, d):
                    return dev
            raise NoOpenCLDeviceError(f"no OpenCL device {p}:{d}; the devices are: {_device_list(devices)} "
                                      f"(python -m ginkpy devices)")
        for _, _, dev in devices:
            if spec.lower() in dev.name.lower() or spec.lower() in dev.platform.name.lower():
                return dev
        raise NoOpenCLDeviceError(f"no OpenCL device matches {spec!r} (GINKPY_OPENCL_DEVICE, PYOPENCL_CTX or the "
                                  f"executor name); the devices are: {_device_list(devices)} "
                                  f"(python -m ginkpy devices)")
    for kind in (cl.device_type.GPU, cl.device_type.ACCELERATOR, cl.device_type.CPU):
        for _, _, dev in devices:
            if dev.type & kind:
                return dev
    if devices:
        return devices[0][2]
    raise NoOpenCLPlatformError(f"the OpenCL platforms have no device: {_HOW_TO_GET_ONE}")


def _device_list(devices) -> str:
    return "; ".join(f"{i}:{j} {dev.name.strip()} [{dev.platform.name.strip()}]" for i, j, dev in devices) or "none"
