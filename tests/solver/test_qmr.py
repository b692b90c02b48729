"""Qmr (gk.solver.Qmr, gk.linalg.qmr): the split preconditioner (M1, M2) with a callback
against SciPy's, and each OpenCL kernel against its reference twin. What it shares with Tfqmr
(SciPy's iterations and info on generated and real matrices, complex systems, several
right-hand sides, breakdowns without NaN, the configuration and the command line) runs in
test_tfqmr.py for both."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import as_scipy, assert_twins, random_values, twin
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason
from ginkpy.problems import convection_diffusion_2d

RUNNING, CONVERGED, BREAKDOWN = StopReason.RUNNING, StopReason.CONVERGED, StopReason.BREAKDOWN


@pytest.mark.parametrize("side", ["M1", "M2"])
def test_linalg_with_a_jacobi_preconditioner_and_a_callback(exec, side):
    # a varying diagonal, so that Jacobi is not a multiple of the identity
    A = (convection_diffusion_2d(12) + sp.diags(np.linspace(0.0, 20.0, 144))).tocsr()
    b = np.random.default_rng(6).standard_normal(144)
    # (SciPy's qmr takes both preconditioners or neither)
    D = spla.aslinearoperator(sp.diags(1 / A.diagonal()))
    identity = spla.aslinearoperator(sp.identity(144))
    x, calls = as_scipy(exec, "qmr", A, b, 1e-9, scipy_kwargs={"M1": identity, "M2": identity, side: D},
                        **{side: "jacobi"})
    assert len(calls) < len(as_scipy(exec, "qmr", A, b, 1e-9)[1])
    assert all(c.shape == (144,) for c in calls)
    np.testing.assert_allclose(calls[-1], x)
    x, info = gk.linalg.qmr(A, b, rtol=1e-12, maxiter=5, executor=exec, M1="jacobi", M2="jacobi")
    assert info == 5


# -- the kernels --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_kernels_against_their_reference_twins(ref, ocl, dtype):
    """Random data larger than a work-group, odd sizes; k = 5 columns, one stopped (3) and
    divisors below SciPy's threshold in others: each a breakdown, its kind numbered as SciPy's
    qmr (kind starts at 99 to tell written from left)."""
    rng = np.random.default_rng(7)
    n, k = 1237, 5
    vec = lambda: random_values(rng, (n, k), dtype)  # noqa: E731
    sca = lambda: random_values(rng, (1, k), dtype)  # noqa: E731
    positive = lambda: (np.abs(rng.standard_normal((1, k))) + 0.5).astype(dtype)  # noqa: E731
    status = np.array([RUNNING, RUNNING, RUNNING, CONVERGED, RUNNING], STATUS_DTYPE)
    kind = lambda: np.full(k, 99, np.uint8)  # noqa: E731

    def tiny(a, *columns):
        a = a.copy()
        a[0, list(columns)] = 1e-30
        return a

    def check(out, statuses, kinds):
        assert list(out[1][-3]) == statuses and list(out[1][-2]) == kinds

    mask = np.array([1, 0, 1, 1, 0], np.uint8)
    out = twin(ref, ocl, "solver.qmr.initialize", vec(), vec(), vec(), vec(), positive(), positive(), sca(), sca(),
               sca(), sca(), sca(), sca(), kind(), mask, dtype=dtype)
    assert_twins(out, dtype)
    assert list(out[1][-3]) == [0, 99, 0, 0, 99]
    # rho tiny in columns 1 and 4, xi tiny in column 4 too: rho first (10), as SciPy's order
    out = twin(ref, ocl, "solver.qmr.step_1", vec(), vec(), vec(), vec(), vec(), vec(), vec(), vec(),
               tiny(positive(), 1, 4), tiny(positive(), 2), status.copy(), kind(), dtype=dtype)
    assert_twins(out, dtype)
    check(out, [RUNNING, BREAKDOWN, BREAKDOWN, CONVERGED, BREAKDOWN], [99, 10, 15, 99, 10])
    out = twin(ref, ocl, "solver.qmr.step_2", vec(), vec(), vec(), vec(), tiny(sca(), 2), sca(), positive(),
               positive(), status.copy(), kind(), dtype=dtype)
    assert_twins(out, dtype, factor=4)
    check(out, [RUNNING, RUNNING, BREAKDOWN, CONVERGED, RUNNING], [99, 99, 13, 99, 99])
    eps_new = tiny(sca(), 0)
    delta = sca()
    delta[0, 4] = 1e20  # beta = eps_new / delta below eps
    out = twin(ref, ocl, "solver.qmr.step_3", vec(), vec(), vec(), vec(), vec(), eps_new, delta, sca(),
               status.copy(), kind(), dtype=dtype)
    assert_twins(out, dtype, factor=4)
    check(out, [BREAKDOWN, RUNNING, RUNNING, CONVERGED, BREAKDOWN], [14, 99, 99, 99, 11])
    beta = sca()
    beta[0, 2] = 1e-30  # theta huge: gamma below eps
    out = twin(ref, ocl, "solver.qmr.step_4", positive(), positive(), beta, sca(), positive(), positive(),
               positive(), sca(), positive(), sca(), sca(), status.copy(), kind(), dtype=dtype)
    assert_twins(out, dtype, factor=4)
    check(out, [RUNNING, RUNNING, BREAKDOWN, CONVERGED, RUNNING], [99, 99, 12, 99, 99])
    x = vec()
    out = twin(ref, ocl, "solver.qmr.step_5", vec(), vec(), vec(), vec(), x, vec(), sca(), sca(), status.copy(),
               dtype=dtype)
    assert_twins(out, dtype, factor=4)
    np.testing.assert_array_equal(out[1][4][:, 3], x[:, 3])


def test_new_values_are_followed_by_the_preconditioners_and_transposes(exec):
    # Solver.update: A^H, M1 and M2 (and their adjoints) follow the new values, the answer
    # that of a solver built on them
    S = (convection_diffusion_2d(10) + sp.diags(np.linspace(0.0, 20.0, 100))).tocsr()
    b = np.random.default_rng(9).standard_normal(100)
    solver = gk.linalg.Solver(S, "qmr", M="jacobi", left_preconditioner="jacobi", rtol=1e-10, executor=exec)
    solver.solve(b)
    S2 = S.copy()
    S2.data = S2.data * np.random.default_rng(10).uniform(1.0, 2.0, S2.nnz)
    solver.update(S2)
    x, info = solver.solve(b)
    fresh = gk.linalg.Solver(S2, "qmr", M="jacobi", left_preconditioner="jacobi", rtol=1e-10, executor=exec)
    x_fresh, info_fresh = fresh.solve(b)
    assert info == info_fresh == 0
    assert solver.result.num_iterations == fresh.result.num_iterations
    np.testing.assert_allclose(x, x_fresh, rtol=1e-12, atol=1e-14)
