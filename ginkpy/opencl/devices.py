"""List the OpenCL platforms and devices (``python -m ginkpy devices``)."""
from __future__ import annotations

from ginkpy.opencl.device_selection import DeviceInfo, NoOpenCLDeviceError, _platforms, select_device


def describe_devices() -> str:
    """One line per OpenCL device: its ``<platform>:<device>`` index, name, type and fp64 support."""
    try:
        platforms = _platforms()
    except NoOpenCLDeviceError as err:
        return str(err)
    default = select_device()
    lines = []
    for i, p in enumerate(platforms):
        for j, d in enumerate(p.get_devices()):
            info = DeviceInfo.of(d)
            kind = "GPU" if info.is_gpu else "CPU" if info.is_cpu else "other"
            mark = "*" if d == default else " "
            lines.append(f"{mark} opencl:{i}:{j}  {info.name} [{info.platform}]  {kind}, "
                         f"fp64 {'yes' if info.fp64 else 'no'}, {info.compute_units} compute units, "
                         f"{info.global_mem_size / 2**30:.1f} GiB")
    lines.append("* = the default device (set GINKPY_OPENCL_DEVICE to '<platform>:<device>' or a name to choose)")
    return "\n".join(lines)


def gpu_specs() -> list[str]:
    """The ``<platform>:<device>`` index of every OpenCL GPU (none without a platform)."""
    import pyopencl as cl
    try:
        platforms = _platforms()
    except NoOpenCLDeviceError:
        return []
    return [f"{i}:{j}" for i, p in enumerate(platforms) for j, d in enumerate(p.get_devices())
            if d.type & cl.device_type.GPU]
