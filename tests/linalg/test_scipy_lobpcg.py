"""SciPy's own tests of lobpcg (``scipy/sparse/linalg/_eigen/lobpcg/tests/test_lobpcg.py``, installed
with SciPy) run against ``ginkpy.linalg.lobpcg`` on each executor.

The only change to SciPy's module is that its ``lobpcg`` is ginkpy.linalg's, with ``executor=``
set to the executor under test: SciPy's module is loaded under another name while
``scipy.sparse.linalg._eigen.lobpcg`` holds the ginkpy function. The cases that differ on
purpose are listed in DIFFERENT and skipped by name with the reason; nothing else is skipped
here (SciPy's own marks, ``xslow`` and its platform xfails, stay as SciPy sets them).
"""
from __future__ import annotations

import functools
import importlib.util
import sys
import warnings

import pytest

import ginkpy as gk
import ginkpy.linalg as gl

pytest.importorskip("scipy.sparse.linalg._eigen.lobpcg")
# the package (its attribute ``lobpcg``, the function, shadows it on scipy.sparse.linalg._eigen)
scipy_lobpcg = sys.modules["scipy.sparse.linalg._eigen.lobpcg"]
# SciPy's tests on the OpenCL executor are a slow test: the fast tier runs them on the reference
EXECUTORS = ("reference", pytest.param("opencl", marks=pytest.mark.slow))
_current = {"executor": None}

# test ids (without the executor) -> why they differ
DIFFERENT: dict[str, str] = {
    "test_inplace_warning": "SciPy warns that it cannot update X in place (X real, A complex: its in-place "
                            "matmul fails); ginkpy computes in the promoted type (complex128) from the start, so "
                            "there is no in-place update to fail and nothing to warn",
}
# test ids with one of these parameters -> why
EXTENDED = ("longdouble", "clongdouble")
WHY_EXTENDED = ("extended precision (long double, np.float128 / np.complex256) is refused with a TypeError, as "
                "everywhere in ginkpy (its executors compute in float32, float64, complex64 and complex128)")
# SciPy's tests of its private helper _b_orthonormalize (not of lobpcg): ginkpy orthonormalizes
# through device Gram matrices inside its core solver and has no such function
PRIVATE = ("test_b_orthonormalize",)


def _ginkpy_lobpcg(*args, **kwargs):
    return gl.lobpcg(*args, executor=_current["executor"], **kwargs)


def _load():
    path = f"{scipy_lobpcg.__path__[0]}/tests/test_lobpcg.py"
    saved = scipy_lobpcg.lobpcg
    wrapper = functools.wraps(saved)(_ginkpy_lobpcg)
    try:
        scipy_lobpcg.lobpcg = wrapper
        spec = importlib.util.spec_from_file_location("ginkpy_scipy_test_lobpcg", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
            spec.loader.exec_module(module)
    finally:
        scipy_lobpcg.lobpcg = saved
    assert module.lobpcg is wrapper
    return module


_scipy = _load()
for _name in dir(_scipy):
    if _name.startswith(("test_", "Test")) and _name not in PRIVATE:
        globals()[_name] = getattr(_scipy, _name)


@pytest.fixture(autouse=True, params=EXECUTORS)
def _executor(request):
    """Every SciPy test once per executor; the deliberate differences skipped with their reason."""
    name = request.node.nodeid.partition("::")[2]
    name = name.replace(f"-{request.param}]", "]").replace(f"[{request.param}-", "[").replace(f"[{request.param}]", "")
    if name in DIFFERENT or name.partition("[")[0] in DIFFERENT:
        pytest.skip(DIFFERENT.get(name) or DIFFERENT[name.partition("[")[0]])
    if any(part in EXTENDED for part in name.partition("[")[2].rstrip("]").split("-")):
        pytest.skip(WHY_EXTENDED)
    if request.param == "reference":
        exec = gk.ReferenceExecutor()
    else:
        try:
            exec = gk.OpenCLExecutor()
        except Exception as err:
            pytest.skip(f"no OpenCL device: {err}")
    _current["executor"] = exec
    yield exec
    _current["executor"] = None
