"""The declared kernel interface: what the core calls exists in every backend, the same.

A core algorithm names a kernel (``exec.run("solver.cg.step_1", ...)``) and each backend
implements it in ``ginkpy/<backend>/solver/cg_kernels.py``. This test is the declaration, as
Ginkgo's ``cg_kernels.hpp``: every kernel name written in ``ginkpy/`` resolves on every backend
(``exec.host.run`` names only on the reference backend, where host setup runs), both backends
give each kernel the same parameters, and a backend module holds no public function that is
not a kernel (helpers are private, ``_name``).
"""
from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest
from conftest import PROJECT

ROOT = PROJECT / "ginkpy"
BACKENDS = ("reference", "opencl")
CALL = re.compile(r"(\bhost\s*\.\s*)?\brun\(\s*\"([a-z_0-9.]+)\"")


def _calls() -> dict[str, bool]:
    """Every kernel name passed as a literal to ``run(...)`` in ginkpy/, mapped to True when
    some call runs it on the device (not only through ``exec.host``)."""
    names: dict[str, bool] = {}
    for path in ROOT.rglob("*.py"):
        for host, name in CALL.findall(path.read_text()):
            names[name] = names.get(name, False) or not host
    return names


def _module(backend: str, kernel: str):
    path, _, _ = kernel.rpartition(".")
    try:
        return importlib.import_module(f"ginkpy.{backend}.{path}_kernels")
    except ModuleNotFoundError:
        return None


def _kernels(module) -> dict[str, tuple[str, ...]]:
    """Public functions defined in a kernel module, with their parameter names."""
    return {name: tuple(inspect.signature(fn).parameters) for name, fn in vars(module).items()
            if inspect.isfunction(fn) and fn.__module__ == module.__name__ and not name.startswith("_")}


def _backend_modules(backend: str) -> dict[str, object]:
    if backend == "opencl":
        pytest.importorskip("pyopencl")
    out = {}
    for path in (ROOT / backend).rglob("*_kernels.py"):
        dotted = ".".join(path.relative_to(ROOT / backend).with_suffix("").parts)
        out[dotted[: -len("_kernels")]] = importlib.import_module(f"ginkpy.{backend}.{dotted}")
    return out


CALLS = _calls()


def test_calls_are_found():
    assert "solver.cg.step_1" in CALLS and "matrix.dense.fill" in CALLS


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_called_kernel_exists(backend):
    missing = []
    for name, on_device in sorted(CALLS.items()):
        if backend != "reference" and not on_device:
            continue
        module = _module(backend, name)
        if module is None or name.rpartition(".")[2] not in _kernels(module):
            missing.append(name)
    assert not missing, f"kernels called but missing on the {backend} backend: {missing}"



def test_both_backends_declare_the_same_parameters():
    ref, ocl = _backend_modules("reference"), _backend_modules("opencl")
    differ = []
    for path, module in ocl.items():
        ocl_kernels = _kernels(module)
        ref_kernels = _kernels(ref[path]) if path in ref else {}
        for name, params in ocl_kernels.items():
            if ref_kernels.get(name) != params:
                differ.append(f"{path}.{name}: opencl {params}, reference {ref_kernels.get(name)}")
    assert not differ, "kernels that differ between the backends:\n" + "\n".join(differ)



@pytest.mark.parametrize("backend", BACKENDS)
def test_no_public_helpers(backend):
    """Every public function of a backend's kernel module is a kernel the core calls."""
    extra = [f"{path}.{name}" for path, module in _backend_modules(backend).items()
             for name in _kernels(module) if f"{path}.{name}" not in CALLS]
    assert not extra, (f"public functions of {backend} kernel modules that no core code calls "
                       f"(make helpers private, _name): {extra}")
