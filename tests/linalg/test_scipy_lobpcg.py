"""SciPy's own tests of lobpcg (``scipy/sparse/linalg/_eigen/lobpcg/tests/test_lobpcg.py``, installed
with SciPy) run against ``ginkpy.linalg.lobpcg`` on each executor.

The only change to SciPy's module is that its ``lobpcg`` is ginkpy.linalg's, with ``executor=``
set to the executor under test: SciPy's module is loaded under another name while
``scipy.sparse.linalg._eigen.lobpcg`` holds the ginkpy function. The cases that differ on
purpose are listed in DIFFERENT and skipped by name with the reason; nothing else is skipped
here (SciPy's own marks, ``xslow`` and its platform xfails, stay as SciPy sets them).
"""
from __future__ import annotations

import sys

import pytest

from scipy_harness import Current, executor_fixture, export_tests, ginkpy_function, load_patched, scipy_test_id

pytest.importorskip("scipy.sparse.linalg._eigen.lobpcg")
# the package (its attribute ``lobpcg``, the function, shadows it on scipy.sparse.linalg._eigen)
scipy_lobpcg = sys.modules["scipy.sparse.linalg._eigen.lobpcg"]
# SciPy's tests on the OpenCL executor are a slow test: the fast tier runs them on the reference
EXECUTORS = ("reference", pytest.param("opencl", marks=pytest.mark.slow))
_current = Current()

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


def _load():
    wrapper = ginkpy_function(_current, "lobpcg", like=scipy_lobpcg.lobpcg)
    module = load_patched(f"{scipy_lobpcg.__path__[0]}/tests/test_lobpcg.py", "ginkpy_scipy_test_lobpcg",
                          scipy_lobpcg, {"lobpcg": wrapper})
    assert module.lobpcg is wrapper
    return module


def _skip_reason(request) -> str | None:
    """Why the running test is skipped (DIFFERENT, EXTENDED), or None."""
    name = scipy_test_id(request)
    if name in DIFFERENT or name.partition("[")[0] in DIFFERENT:
        return DIFFERENT.get(name) or DIFFERENT[name.partition("[")[0]]
    if any(part in EXTENDED for part in name.partition("[")[2].rstrip("]").split("-")):
        return WHY_EXTENDED
    return None


_scipy = _load()
export_tests(globals(), (_scipy,), lambda name, obj: name.startswith(("test_", "Test")) and name not in PRIVATE)
# every SciPy test once per executor; the deliberate differences skipped with their reason
_executor = executor_fixture(_current, EXECUTORS, _skip_reason)
