"""SciPy's own tests of lgmres and gcrotmk (``scipy/sparse/linalg/_isolve/tests/test_lgmres.py``
and ``test_gcrotmk.py``, installed with SciPy) run against ``ginkpy.linalg`` on each executor,
as tests/linalg/test_scipy_suite.py runs ``test_iterative.py``.

The only change to SciPy's modules is that lgmres, gcrotmk and gmres are ginkpy.linalg's, with
``executor=`` set to the executor under test (SciPy's modules are loaded under another name
while ``scipy.sparse.linalg._isolve`` holds the ginkpy solvers). The cases that differ on
purpose are listed in DELIBERATE with the reason (ginkpy.linalg's docstring, difference 5, or
a count of products by A) and skipped by name; nothing else is skipped here.
"""
from __future__ import annotations

import sys

import pytest

import ginkpy.linalg as gl
from scipy_harness import Current, executor_fixture, ginkpy_function, load_patched, scipy_test_id

scipy_isolve = pytest.importorskip("scipy.sparse.linalg._isolve")
SOLVERS = ("gcrotmk", "gmres", "lgmres")
EXECUTORS = ("reference", "opencl")
_current = Current()  # the executor of the running test

_NANS = ("A with a NaN entry: ginkpy refuses it before solving (ValueError 'the system matrix contains NaN or "
         "Inf values', as every ginkpy.linalg function), where SciPy runs a cycle and returns info 1")
_DENORMALS = ("A scaled by 100 times the smallest denormal: the products with A underflow, the solve breaks down or "
              "diverges, and ginkpy.linalg then raises a ValueError that says how to scale A and b exactly "
              "(ginkpy/linalg/_info.py's check_magnitude, for every method), where SciPy returns an info")
# test ids (as pytest names them in SciPy's module, without the executor) -> why they differ
DELIBERATE: dict[str, str] = {
    "TestLGMRES::test_outer_v": "counts products by A: outer_v is honoured (filled, then the solve with the "
                                "prepended vectors converges in its first cycle to the same x), but that solve "
                                "makes 3 products where SciPy's makes 2 (4 and 3 without store_outer_Av): the first "
                                "Krylov step, which the host enqueues before it reads that the augmentation steps "
                                "converged, the correction's product A dx (SciPy combines it from its basis) and "
                                "the true residual at the cycle's end",
    "TestLGMRES::test_nans": _NANS,
    "TestLGMRES::test_denormals": _DENORMALS,
    "TestGCROTMK::test_denormals": _DENORMALS,
    "TestGCROTMK::test_nans": _NANS,
    "TestGCROTMK::test_CU": "counts products by A: CU is honoured (the second solve converges at once, x equal), "
                            "but that solve makes 5 products where SciPy's makes 3 (4 with discard_C): A u for "
                            "both pairs where one c is missing (the (None, x) entry), a first step the host "
                            "enqueues before it reads that the start converged, the correction's product and the "
                            "true residual at the cycle's end; the test wants at most half the first solve's 8",
}


def _load_scipy_tests(module_name: str):
    """SciPy's test module ``module_name``, built with ginkpy's solvers in place of SciPy's."""
    import scipy.sparse.linalg._isolve.tests as tests
    return load_patched(f"{tests.__path__[0]}/{module_name}.py", f"ginkpy_scipy_{module_name}", scipy_isolve,
                        {name: ginkpy_function(_current, name) for name in SOLVERS})


TestLGMRES = _load_scipy_tests("test_lgmres").TestLGMRES
TestGCROTMK = _load_scipy_tests("test_gcrotmk").TestGCROTMK
# every SciPy test once per executor; the deliberate differences skipped with their reason
_executor = executor_fixture(_current, EXECUTORS, lambda request: DELIBERATE.get(scipy_test_id(request)))


def test_the_solvers_under_test_are_ginkpys():
    # (a guard: SciPy's modules must have been built with ginkpy's functions)
    module = sys.modules["ginkpy_scipy_test_lgmres"]
    assert module.lgmres.__wrapped__ is gl.lgmres and module.gmres.__wrapped__ is gl.gmres
    assert sys.modules["ginkpy_scipy_test_gcrotmk"].gcrotmk.__wrapped__ is gl.gcrotmk
