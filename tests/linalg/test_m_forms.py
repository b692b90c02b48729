"""Every form of SciPy's M at gk.linalg's door against its string twin or SciPy's own solve: a
diagonal sparse M (scalar Jacobi, fused), another sparse M (Csr on the executor), a SuperLU from
splu/spilu or a LinearOperator around its solve (its factors on the executor), and host
LinearOperators (one host call per application)."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from ginkpy.core.factorization.factorization import Factorization
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.preconditioner.ilu import Ilu
from ginkpy.core.preconditioner.jacobi import Jacobi
from ginkpy.problems import convection_diffusion_2d, poisson_2d


def _counting():
    """A callback counting its calls (the iterations SciPy's callback(xk) sees)."""
    calls = []
    return calls, lambda xk: calls.append(1)


def _gmres_like_on_the_host_and_scipy(exec, A, b, M, host_m, scipy_m) -> list:
    """ginkpy's gmres with ``M`` and with ``host_m`` (the same M applied on the host), SciPy's with
    ``scipy_m``, to rtol 1e-10: all converge, M and host_m within one iteration, SciPy's (left-
    preconditioned where ginkpy's is right-preconditioned: iterations alike, not equal) at most
    1.1 times + 1 as many, the true residual within rtol. Returns the callback calls with M."""
    calls_g, cb_g = _counting()
    calls_h, cb_h = _counting()
    calls_s, cb_s = _counting()
    x, info = gk.linalg.gmres(A, b, rtol=1e-10, M=M, executor=exec, callback=cb_g, callback_type="legacy")
    xh, info_h = gk.linalg.gmres(A, b, rtol=1e-10, M=host_m, executor=exec, callback=cb_h, callback_type="legacy")
    xs, info_s = spla.gmres(A, b, rtol=1e-10, M=scipy_m, callback=cb_s, callback_type="legacy")
    assert info == info_h == info_s == 0
    assert abs(len(calls_g) - len(calls_h)) <= 1
    assert len(calls_g) <= 1.1 * len(calls_s) + 1
    assert np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b)
    return calls_g


def _varying_spd(n_side: int = 20) -> sp.csr_matrix:
    """2D Poisson with a varying positive diagonal shift: Jacobi differs from no preconditioner."""
    A = poisson_2d(n_side).tocsr()
    shift = np.linspace(0.0, 40.0, A.shape[0])
    return (A + sp.diags(shift)).tocsr()


def _preconditioner_of(A, M, exec, method="cg"):
    return gk.linalg.Solver(A, method, M=M, executor=exec).solver.preconditioner


@pytest.mark.parametrize("form", ["dia", "csr", "csc", "dok", "lil", "coo"])
def test_diagonal_sparse_m_is_fused_scalar_jacobi_like_the_string(exec, form):
    A = _varying_spd()
    b = np.random.default_rng(0).random(A.shape[0])
    M = sp.diags(1.0 / A.diagonal()).asformat(form)
    precond = _preconditioner_of(A, M, exec)
    assert isinstance(precond, Jacobi) and precond.inverse_diagonal is not None  # (fused in Cg's kernels)
    np.testing.assert_allclose(precond.inverse_diagonal.to_numpy()[:, 0], 1.0 / A.diagonal(), rtol=0, atol=0)
    calls_s, cb_s = _counting()
    calls_m, cb_m = _counting()
    x_s, info_s = gk.linalg.cg(A, b, rtol=1e-10, M="jacobi", executor=exec, callback=cb_s)
    x_m, info_m = gk.linalg.cg(A, b, rtol=1e-10, M=M, executor=exec, callback=cb_m)
    assert info_s == info_m == 0
    assert len(calls_m) == len(calls_s)
    np.testing.assert_allclose(x_m, x_s, rtol=1e-12, atol=1e-12 * np.abs(x_s).max())


def test_diagonal_m_with_its_own_values_matches_scipy(exec):
    """The fused Jacobi's D^-1 is M's diagonal, not A's: an M other than diag(A)^-1 solves as SciPy's."""
    A = _varying_spd()
    b = np.random.default_rng(1).random(A.shape[0])
    d = np.random.default_rng(2).uniform(0.5, 2.0, A.shape[0])  # SPD, unrelated to A's diagonal
    M = sp.diags(d)
    calls_g, cb_g = _counting()
    calls_s, cb_s = _counting()
    x, info = gk.linalg.cg(A, b, rtol=1e-10, M=M, executor=exec, callback=cb_g)
    xs, info_s = spla.cg(A, b, rtol=1e-10, M=M, callback=cb_s)
    assert info == info_s == 0
    assert abs(len(calls_g) - len(calls_s)) <= 1
    np.testing.assert_allclose(x, xs, rtol=1e-7, atol=1e-9 * np.abs(xs).max())
    assert np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b)


def test_general_sparse_m_runs_on_the_executor_like_scipy(exec):
    A = convection_diffusion_2d(20).tocsr()
    b = np.random.default_rng(3).random(A.shape[0])
    # a sparse approximate inverse: the inverse of A's tridiagonal part, truncated to a band
    T = sp.diags([A.diagonal(-1), A.diagonal(), A.diagonal(1)], [-1, 0, 1]).tocsc()
    M = sp.csr_matrix(np.where(np.abs(np.subtract.outer(np.arange(A.shape[0]), np.arange(A.shape[0]))) <= 2,
                               spla.inv(T).toarray(), 0.0))
    precond = _preconditioner_of(A, M, exec, "gmres")
    assert isinstance(precond, Csr) and precond.executor is exec  # (uploaded once, applied by SpMV there)
    host_m = spla.LinearOperator(A.shape, matvec=lambda r: M @ r)  # the same M applied on the host
    _gmres_like_on_the_host_and_scipy(exec, A, b, M, host_m, M)


@pytest.mark.parametrize("factorize", ["splu", "spilu"])
@pytest.mark.parametrize("wrapped", [True, False], ids=["LinearOperator", "SuperLU"])
def test_superlu_m_uses_its_factors_on_the_executor(exec, factorize, wrapped):
    A = convection_diffusion_2d(20).tocsc()
    b = np.random.default_rng(4).random(A.shape[0])
    lu = spla.splu(A) if factorize == "splu" else spla.spilu(A, drop_tol=1e-2, fill_factor=2)
    M = spla.LinearOperator(A.shape, matvec=lu.solve) if wrapped else lu
    precond = _preconditioner_of(A, M, exec, "gmres")
    assert isinstance(precond, Ilu)  # (not a host operator)
    # the preconditioner's product is lu.solve's
    exe = precond.executor
    B = gk.matrix.Dense.from_numpy(exe, b.reshape(-1, 1))
    np.testing.assert_allclose(precond.apply(B, B.empty_like()).to_numpy()[:, 0], lu.solve(b), rtol=1e-10,
                               atol=1e-12 * np.abs(lu.solve(b)).max())
    # the same M applied on the host (a lambda hides the bound solve): the same iterations
    host_m = spla.LinearOperator(A.shape, matvec=lambda r: lu.solve(r))
    calls_g = _gmres_like_on_the_host_and_scipy(exec, A, b, M, host_m, host_m)
    if factorize == "splu":
        assert len(calls_g) <= 2  # an exact M solves in one step


def test_superlu_m_with_bicg_applies_the_transposed_factors(ref):
    """bicg needs M^H: SciPy's LinearOperator(matvec=lu.solve) has none, its factors do."""
    A = convection_diffusion_2d(15).tocsc()
    b = np.random.default_rng(5).random(A.shape[0])
    lu = spla.spilu(A, drop_tol=1e-3)
    x, info = gk.linalg.bicg(A, b, rtol=1e-10, M=spla.LinearOperator(A.shape, matvec=lu.solve), executor=ref)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b)


def test_host_linear_operator_is_called_once_per_application(exec):
    """Any other LinearOperator runs on the host: one matvec per application of M, as in SciPy."""
    A = _varying_spd()
    b = np.random.default_rng(6).random(A.shape[0])
    d = 1.0 / A.diagonal()
    ours, theirs = [], []
    M_g = spla.LinearOperator(A.shape, matvec=lambda r: (ours.append(1), d * r)[1], dtype=float)
    M_s = spla.LinearOperator(A.shape, matvec=lambda r: (theirs.append(1), d * r)[1], dtype=float)
    calls, cb = _counting()
    x, info = gk.linalg.cg(A, b, rtol=1e-10, M=M_g, executor=exec, callback=cb)
    xs, info_s = spla.cg(A, b, rtol=1e-10, M=M_s)
    assert info == info_s == 0
    # one application per iteration plus the start's (z0 = M r0); SciPy's count alike
    assert len(ours) <= len(calls) + 2
    assert abs(len(ours) - len(theirs)) <= 2
    np.testing.assert_allclose(x, xs, rtol=1e-7, atol=1e-9 * np.abs(xs).max())


def test_pyamg_aspreconditioner_still_works(exec):
    pyamg = pytest.importorskip("pyamg")
    A = poisson_2d(30).tocsr()
    b = np.random.default_rng(7).random(A.shape[0])
    M = pyamg.smoothed_aggregation_solver(A).aspreconditioner()
    calls_g, cb_g = _counting()
    calls_s, cb_s = _counting()
    x, info = gk.linalg.cg(A, b, rtol=1e-10, M=M, executor=exec, callback=cb_g)
    xs, info_s = spla.cg(A, b, rtol=1e-10, M=M, callback=cb_s)
    assert info == info_s == 0 and abs(len(calls_g) - len(calls_s)) <= 1


def test_kept_solver_follows_a_sparse_m_changed_in_place(ref):
    """A sparse M is kept with A's solver by identity and compared with its snapshot at each call."""
    A = _varying_spd()
    b = np.random.default_rng(8).random(A.shape[0])
    gk.linalg.clear_cache()
    M = sp.diags(1.0 / A.diagonal()).tocsr()
    first, cb1 = _counting()
    gk.linalg.cg(A, b, rtol=1e-10, M=M, executor=ref, callback=cb1)
    again, cb2 = _counting()
    gk.linalg.cg(A, b, rtol=1e-10, M=M, executor=ref, callback=cb2)
    assert len(first) == len(again)
    M.data[:] = 1.0  # now no preconditioning: more iterations on this matrix
    plain, cb3 = _counting()
    none, cb4 = _counting()
    gk.linalg.cg(A, b, rtol=1e-10, M=M, executor=ref, callback=cb3)
    gk.linalg.cg(A, b, rtol=1e-10, executor=ref, callback=cb4)
    assert len(plain) == len(none) > len(first)
    gk.linalg.clear_cache()


def test_m_errors_name_the_problem(ref):
    A = poisson_2d(5).tocsr()
    b = np.ones(A.shape[0])
    with pytest.raises(ValueError, match="M contains NaN"):
        gk.linalg.cg(A, b, M=sp.diags(np.full(A.shape[0], np.inf)), executor=ref)
    with pytest.raises(ValueError, match="same shape"):
        gk.linalg.cg(A, b, M=spla.splu(sp.eye(A.shape[0] + 1, format="csc")), executor=ref)
    with pytest.raises(TypeError, match="complex"):
        gk.linalg.cg(A, b, M=sp.diags(np.full(A.shape[0], 1j)), executor=ref)


def test_jacobi_from_inverse_diagonal_applies_it(exec, rng):
    exe = exec
    d = rng.random(37) + 0.1
    M = Jacobi.from_inverse_diagonal(exe, d)
    B = gk.matrix.Dense.from_numpy(exe, rng.random((37, 2)))
    np.testing.assert_allclose(M.apply(B, B.empty_like()).to_numpy(), d[:, None] * B.to_numpy(), rtol=1e-15)
    with pytest.raises(NotImplementedError, match="given diagonal"):
        M.update()
    with pytest.raises(ValueError, match="NaN or Inf"):
        Jacobi.from_inverse_diagonal(exe, np.array([1.0, np.nan]))


def test_factorization_from_factors_needs_both_permutations(ref):
    L = Csr.from_scipy(ref, sp.eye(3, format="csr"))
    P = gk.matrix.Permutation.from_numpy(ref, [2, 0, 1])
    with pytest.raises(ValueError, match="both permutations"):
        Factorization.from_factors(L, L, P, None)
    fact = Factorization.from_factors(L, L, P, P)
    b = gk.matrix.Dense.from_numpy(ref, np.array([1.0, 2.0, 3.0]))
    # x = R^T L U C b = b for L = U = I, C = R
    np.testing.assert_allclose(fact.apply(b, b.empty_like()).to_numpy()[:, 0], [1.0, 2.0, 3.0])
