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


# -- twins: a kernel on the reference executor and on the device, on the same inputs -------------

def _to_exec(exec, value, dtype):
    """A test input on ``exec``: float numpy arrays become Dense of ``dtype`` (1-D as n x 1),
    other numpy arrays (stop status, flags, indices) raw executor arrays, SciPy sparse
    matrices Csr; anything else is passed as it is."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            return gk.matrix.Dense.from_numpy(exec, value, dtype)
        return exec.from_host(value)
    if sp.issparse(value):
        return gk.matrix.Csr.from_scipy(exec, value, dtype)
    return value


def _to_host(exec, value):
    if isinstance(value, gk.matrix.Dense):
        return value.to_numpy()
    if isinstance(value, gk.matrix.Csr):
        return value.to_scipy().toarray()
    if isinstance(value, (np.ndarray,)) or type(value).__module__.startswith("pyopencl"):
        return exec.to_host(value)
    return value


def twin(ref, ocl, kernel: str, *args, dtype=np.float64):
    """Run ``exec.run(kernel, *args)`` on the reference executor and on the device, each on its
    own copy of the inputs (see :func:`_to_exec`). Returns, per executor, the host values of every
    argument after the call (numbers as they were) followed by the kernel's return value."""
    outs = []
    for exec in (ref, ocl):
        converted = [_to_exec(exec, a, dtype) for a in args]
        result = exec.run(kernel, *converted)
        outs.append([_to_host(exec, c) for c in converted] + [result])
    return outs


def assert_twins(outs, dtype, factor: float = 1.0, skip=()):
    """The device's values (outs[1]) match the reference's (outs[0]) within ``factor`` x 10
    machine epsilons of each entry, or of the largest entry of the array where terms cancel;
    integer arrays (status, counts) exactly. ``skip`` lists argument positions not compared."""
    reference, device = outs
    for i, (r, d) in enumerate(zip(reference, device)):
        if i in skip or r is None or isinstance(r, (int, float, str)):
            continue
        r, d = np.asarray(r), np.asarray(d)
        if r.dtype.kind in "iub":
            np.testing.assert_array_equal(d, r, err_msg=f"argument {i}")
        else:
            t = factor * tol(dtype)
            np.testing.assert_allclose(d, r, rtol=t, atol=t * np.abs(r).max(initial=0), err_msg=f"argument {i}")


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


def residual_rounding(A, x, b) -> np.ndarray:
    """Per column, how far two computations of ||b - A x|| may differ by rounding alone (rows
    summed in another order, with or without FMA, in ginkpy and in SciPy): each entry of
    b - A x is off by at most (longest row + 1) eps (|A| |x| + |b|), twice for two computations."""
    A = sp.csr_matrix(A)
    x = np.asarray(x, dtype=np.float64).reshape(A.shape[1], -1)
    b = np.asarray(b, dtype=np.float64).reshape(A.shape[0], -1)
    longest = int(np.diff(A.indptr).max(initial=0))
    eps = np.finfo(np.float64).eps
    return 2 * (longest + 1) * eps * np.linalg.norm(abs(A) @ np.abs(x) + np.abs(b), axis=0)


def reduction_tol(dtype, n: int) -> float:
    """Relative tolerance for a sum of n terms of one sign (a norm, b . b) computed in two orders:
    a sequential stretch of up to n terms (a CPU device's layout) gathers rounding errors like a
    random walk, about sqrt(n) eps; never below :func:`tol`."""
    return max(tol(dtype), 2 * np.sqrt(n) * np.finfo(dtype).eps)
