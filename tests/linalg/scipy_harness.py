"""The shared harness of the modules that run SciPy's own test files against ``ginkpy.linalg``
(tests/linalg/test_scipy_suite.py, test_scipy_lgmres_gcrotmk.py, test_scipy_lsqr_lsmr.py,
test_scipy_lobpcg.py).

Each loads SciPy's test module under another name while the SciPy namespace it imports from
holds ginkpy.linalg's functions (``executor=`` set to the executor of the running test), then
restores SciPy's functions; an autouse fixture runs every test once per executor and skips the
cases that module lists as different, with their reason.
"""
from __future__ import annotations

import functools
import importlib.util
import sys
import warnings
from collections.abc import Callable, Iterable
from types import ModuleType

import numpy as np
import pytest

import ginkpy as gk
import ginkpy.linalg as gl


class Current:
    """The executor of the running test (set by the fixture of :func:`executor_fixture`)."""

    executor = None


def ginkpy_function(current: Current, name: str, like: Callable | None = None) -> Callable:
    """ginkpy.linalg's function ``name`` on ``current.executor``, named as ``like`` (default:
    ginkpy.linalg's function itself, which ``__wrapped__`` then is)."""
    solve = getattr(gl, name)

    @functools.wraps(like if like is not None else solve)
    def solver(*args, **kwargs):
        return solve(*args, executor=current.executor, **kwargs)
    return solver


def load_patched(path: str, spec_name: str, namespace, wrappers: dict[str, Callable],
                 seed: int | None = None, capabilities: bool = False) -> ModuleType:
    """The module at ``path`` (registered as ``spec_name``), loaded while ``namespace``'s
    attributes named in ``wrappers`` are those wrappers (SciPy's restored afterwards).

    ``seed``: NumPy's global seed while the module loads (the generator's state restored
    afterwards). ``capabilities``: register each wrapper in newer SciPy's capability table
    under its original's entry (SciPy marks its tests by the function under test's capabilities).
    """
    saved = {name: getattr(namespace, name) for name in wrappers}
    table = {}
    if capabilities:
        try:
            from scipy._lib._array_api import xp_capabilities_table as table
        except ImportError:
            table = {}
    random_state = np.random.get_state()
    if seed is not None:
        np.random.seed(seed)
    try:
        for name, wrapper in wrappers.items():
            setattr(namespace, name, wrapper)
            if saved[name] in table:
                table[wrapper] = table[saved[name]]
        spec = importlib.util.spec_from_file_location(spec_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        with warnings.catch_warnings():  # SciPy's own marks (fail_slow), unknown outside SciPy's test setup
            warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
            spec.loader.exec_module(module)
    finally:
        for name, fn in saved.items():
            setattr(namespace, name, fn)
        if seed is not None:
            np.random.set_state(random_state)
    return module


def export_tests(namespace: dict, modules: Iterable[ModuleType],
                 keep: Callable[[str, object], bool] | None = None) -> None:
    """Copy the tests (``test_*``, ``Test*``) of ``modules`` into ``namespace`` (a test module's
    globals, where pytest then collects them); ``keep(name, obj)`` also copies other names
    (fixtures) or, returning False, leaves a test out."""
    for module in modules:
        for name in dir(module):
            obj = getattr(module, name)
            is_test = name.startswith(("test_", "Test"))
            if (keep(name, obj) if keep is not None else is_test):
                namespace[name] = obj


def scipy_test_id(request) -> str:
    """The running test's id as pytest names it in SciPy's module (without the executor)."""
    name = request.node.nodeid.partition("::")[2]
    param = request.param
    return name.replace(f"-{param}]", "]").replace(f"[{param}-", "[").replace(f"[{param}]", "")


def make_executor(kind: str):
    """The executor ``kind`` ("reference" or "opencl"); the test skipped without an OpenCL device."""
    if kind == "reference":
        return gk.ReferenceExecutor()
    try:
        return gk.OpenCLExecutor()
    except Exception as err:
        pytest.skip(f"no OpenCL device: {err}")


def executor_fixture(current: Current, params, skip_reason: Callable[[object], str | None]):
    """The autouse fixture ``_executor``: every test once per executor of ``params``, skipped
    with ``skip_reason(request)`` where that is not None."""
    @pytest.fixture(autouse=True, params=params, name="_executor")
    def _executor(request):
        reason = skip_reason(request)
        if reason is not None:
            pytest.skip(reason)
        current.executor = make_executor(request.param)
        yield current.executor
        current.executor = None
    return _executor
