"""The executor of ``ginkpy solve --executor`` and ``ginkpy devices``, the list of OpenCL
devices."""
from __future__ import annotations

import argparse
import os

from ginkpy.core.base.executor import Executor, executor


def device_name(exec: Executor) -> str:
    info = getattr(exec, "info", None)
    return f"{info.name} [{info.platform}]" if info is not None else "host (numpy/scipy)"


def open_executor(name: str, profile: bool = False) -> Executor:
    """``executor(name)``; when the OpenCL device asked for does not exist but others do, the
    error lists them (the executor's own message advises installing a device). ``profile``:
    the device's queue records profiling events (the kernels' device times of --profile),
    where this process opens the device first."""
    previous = os.environ.get("GINKPY_OPENCL_PROFILE")
    if profile:
        os.environ["GINKPY_OPENCL_PROFILE"] = "1"
    try:
        return executor(name)
    except RuntimeError as err:
        from ginkpy.opencl.executor import NoOpenCLDeviceError
        if not isinstance(err, NoOpenCLDeviceError):
            raise
        from ginkpy.opencl.devices import describe_devices
        listing = describe_devices()
        if "opencl:" not in listing:  # no device at all: the advice to install one stands
            raise
        raise ValueError(f"{str(err).split(';')[0]}; the OpenCL devices here are:\n{listing}") from None
    finally:
        if previous is None:
            os.environ.pop("GINKPY_OPENCL_PROFILE", None)
        else:
            os.environ["GINKPY_OPENCL_PROFILE"] = previous


def devices(args: argparse.Namespace) -> int:
    """``ginkpy devices``: list the OpenCL platforms and devices."""
    from ginkpy.opencl.devices import describe_devices
    print(describe_devices())
    return 0
