"""Shared fixtures: the executors under test and the real matrices of ../shared/matrices."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk

# The real matrices live beside the checkout; GINKPY_MATRICES points elsewhere (e.g. on another machine).
MATRICES = Path(os.environ.get("GINKPY_MATRICES") or Path(__file__).resolve().parents[2] / "shared" / "matrices")


def _opencl():
    try:
        return gk.OpenCLExecutor()
    except Exception as err:  # no pyopencl platform on this machine
        pytest.skip(f"no OpenCL device: {err}")


@pytest.fixture(scope="session")
def ref():
    return gk.ReferenceExecutor()


@pytest.fixture(scope="session")
def ocl():
    """The OpenCL executor (PoCL in CI, the GPU where there is one); skips without a device."""
    return _opencl()


@pytest.fixture(scope="session", params=["reference", "opencl"])
def exec(request):
    """Each executor in turn, for tests that must pass on both."""
    return gk.ReferenceExecutor() if request.param == "reference" else _opencl()


@pytest.fixture
def rng():
    return np.random.default_rng(42)


def matrix_path(name: str) -> Path:
    """Path of a real matrix in ../shared/matrices; skips the test when it is absent."""
    path = MATRICES / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    return path


def tol(dtype) -> float:
    """About 10 machine epsilons of ``dtype``: the reference-vs-device tolerance."""
    return 10 * np.finfo(dtype).eps


def criteria(max_iters: int = 300, reduction: float | None = 1e-12) -> list:
    """Iteration(max_iters) and, unless ``reduction`` is None, ResidualNorm(reduction)."""
    crit = [gk.stop.Iteration.build().with_max_iters(max_iters)]
    if reduction is not None:
        crit.append(gk.stop.ResidualNorm.build().with_reduction_factor(reduction))
    return crit


def solver_params(name: str, criteria_=None, **params):
    """gk.solver.<name> parameters with ``criteria_`` (default :func:`criteria`) and each
    ``key=value`` of ``params`` set through ``with_<key>``."""
    p = getattr(gk.solver, name).build().with_criteria(*(criteria_ or criteria()))
    for key, value in params.items():
        getattr(p, f"with_{key}")(value)
    return p


def solve(exec, name: str, A, b, x0=None, criteria=None, dtype=np.float64, **params):
    """Solve A x = b (scipy/numpy A and b, x0 default 0) with gk.solver.<name> on ``exec``;
    returns x as a numpy array and the Convergence logger."""
    A = gk.matrix.Csr.from_scipy(exec, sp.csr_matrix(A), dtype)
    b = gk.matrix.Dense.from_numpy(exec, b, dtype)
    x = gk.matrix.Dense.from_numpy(exec, np.zeros(b.shape) if x0 is None else x0, dtype)
    solver = solver_params(name, criteria, **params).on(exec).generate(A)
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    solver.apply(b, x)
    return x.to_numpy(), logger
