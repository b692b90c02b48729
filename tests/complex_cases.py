"""Shared pieces of the complex kernels' twin tests (tests/matrix/test_complex_dense.py,
test_complex_formats.py, tests/components/test_complex_reductions.py, test_complex_relaxation.py,
test_complex_batch_solver.py, tests/solver/test_complex_solver_kernels.py): random complex data,
partial sums, the complex value types.

Complex values (complex64, complex128) in the kernels, as every complex twin test: random
complex data larger than a work-group, odd sizes and column counts, stopped columns and zero
divisors where the kernel has them; dot products conjugate their first argument, norms are real.
"""
import numpy as np
import pytest
import scipy.sparse as sp

from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.stop.stopping_status import StopReason

from conftest import sum_tol

RUNNING, CONVERGED, LIMIT, BREAKDOWN, DIVERGED, PENDING = (
    StopReason.RUNNING, StopReason.CONVERGED, StopReason.ITERATION_LIMIT, StopReason.BREAKDOWN,
    StopReason.DIVERGED, StopReason.PENDING)
SHAPES = [(1237, 3), (5001, 1)]  # several work-groups (both layouts), odd column counts
G = 7  # rows of the partial sums given to consumer kernels
M = 5  # Gmres' Krylov dimension here
MAX_ITERS = 300


COMPLEX = dict(params=[np.complex128, np.complex64], ids=["complex128", "complex64"])


@pytest.fixture(**COMPLEX)
def complex_dtype(request, ocl):
    """The complex value type of a twin test: each test file takes it as its ``dtype`` fixture
    (``dtype = complex_dtype``); complex128 skips on a device without fp64."""
    if request.param == np.complex128 and not ocl.info.fp64:
        pytest.skip("complex128 needs fp64")
    return np.dtype(request.param)


def crandom(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def partials(rng, sums, dtype, groups: int = G):
    """``groups`` rows of partial sums adding up to ``sums`` (complex: random shares)."""
    sums = np.asarray(sums, np.complex128).ravel()
    weights = rng.uniform(0.5, 1.5, (groups, sums.size))
    return (weights / weights.sum(axis=0) * sums).astype(dtype)


def real(values, dtype):
    """A Dense of the real type of ``dtype`` (norms), made on each executor (for ``twins``)."""
    values = np.asarray(values, np.float64)
    return lambda exec: Dense.from_numpy(exec, values, real_dtype(dtype))


def assert_summed(dev, ref_, magnitude, terms, dtype, factor=1.0):
    """Partial sums (rows) whose column sums agree within sum_tol of ``magnitude`` (the sum of
    the magnitudes of their terms)."""
    err = np.abs(np.asarray(dev, np.complex128).sum(axis=0) - np.asarray(ref_, np.complex128).sum(axis=0))
    bound = factor * sum_tol(dtype, terms) * np.asarray(magnitude, np.float64)
    assert (err <= bound).all(), f"error {err.max():.3g} > {bound[np.argmax(err - bound)]:.3g}"


def complex_matrix(rng, n, m, density=0.01):
    S = sp.random(n, m, density=density, random_state=int(rng.integers(1 << 30)), format="csr")
    S.data = S.data + 1j * rng.standard_normal(S.nnz)
    return S + sp.eye(n, m, format="csr") * (2 - 1j)
