"""gk.linalg.lobpcg on both executors: the extreme eigenpairs of 2D Poisson (known
eigenvalues) and of a generalized problem with B, with M="jacobi" and "amg", against SciPy's
lobpcg and eigh; constraints Y; SciPy's return forms; bad input. SciPy's own test_lobpcg.py
runs in tests/linalg/test_scipy_lobpcg.py."""
import warnings

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from ginkpy.core.eigensolver.lobpcg import Lobpcg
from ginkpy.core.matrix.dense import Dense


def _poisson(m):
    """2D Poisson on an m x m grid and its eigenvalues, ascending."""
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    A = (sp.kron(T, sp.eye(m)) + sp.kron(sp.eye(m), T)).tocsr()
    t = 4 * np.sin(np.arange(1, m + 1) * np.pi / (2 * (m + 1))) ** 2
    return A, np.sort(np.add.outer(t, t).ravel())


def _check_pairs(A, B, w, v, tol):
    """Residuals ||A v - w B v|| and B-orthonormality."""
    Bv = v if B is None else B @ v
    assert np.abs(v.conj().T @ Bv - np.eye(v.shape[1])).max() <= 1e-8
    assert np.linalg.norm(A @ v - Bv * w, axis=0).max() <= tol


@pytest.mark.parametrize("M", [None, "jacobi", "amg"])
def test_poisson_smallest(exec, M):
    A, exact = _poisson(24)
    X = np.random.default_rng(0).standard_normal((A.shape[0], 4))
    w, v, history = gk.linalg.lobpcg(A, X, M=M, tol=1e-6, maxiter=400, largest=False, executor=exec,
                                     retResidualNormsHistory=True)
    assert w.shape == (4,) and v.shape == (A.shape[0], 4) and v.dtype == np.float64
    np.testing.assert_allclose(w, exact[:4], rtol=1e-9)
    _check_pairs(A, None, w, v, 1e-6)
    # SciPy's lobpcg without a preconditioner: the same iterations (its history has as many entries)
    if M is None:
        scipy_history = spla.lobpcg(A, X, tol=1e-6, maxiter=400, largest=False, retResidualNormsHistory=True)[2]
        assert abs(len(history) - len(scipy_history)) <= 0.1 * len(scipy_history) + 2
    else:  # AMG needs far fewer than none
        assert len(history) < (80 if M == "amg" else 400)


def test_poisson_largest(exec):
    A, exact = _poisson(20)
    X = np.random.default_rng(1).standard_normal((A.shape[0], 3))
    w, v = gk.linalg.lobpcg(A, X, tol=1e-6, maxiter=400, executor=exec)
    np.testing.assert_allclose(w, exact[::-1][:3], rtol=1e-9)
    _check_pairs(A, None, w, v, 1e-6)


@pytest.mark.parametrize("M", [None, "jacobi"])
def test_generalized(exec, M):
    """A x = lambda B x with B a positive diagonal (a lumped mass matrix), against eigh."""
    A, _ = _poisson(16)
    n = A.shape[0]
    B = sp.diags(np.random.default_rng(2).uniform(1.0, 3.0, n)).tocsr()
    exact = sla.eigh(A.toarray(), B.toarray(), eigvals_only=True)
    X = np.random.default_rng(3).standard_normal((n, 3))
    for largest, want in ((False, exact[:3]), (True, exact[::-1][:3])):
        w, v = gk.linalg.lobpcg(A, X, B=B, M=M, tol=1e-7, maxiter=500, largest=largest, executor=exec)
        np.testing.assert_allclose(w, want, rtol=1e-8)
        _check_pairs(A, B, w, v, 1e-6)


def test_complex_hermitian_and_float32(exec):
    rng = np.random.default_rng(4)
    n = 200
    H = sp.random(n, n, density=0.03, random_state=rng) * (1 + 1j)
    A = (H + H.conj().T + sp.diags(np.arange(1.0, n + 1))).tocsr()
    exact = np.linalg.eigvalsh(A.toarray())
    X = rng.standard_normal((n, 2))
    w, v = gk.linalg.lobpcg(A, X, tol=1e-6, maxiter=300, largest=False, executor=exec)
    assert v.dtype == np.complex128
    np.testing.assert_allclose(w, exact[:2], rtol=1e-8)
    D = sp.diags(np.r_[np.arange(1.0, n - 1), 2.0 * n, 3.0 * n]).astype(np.float32)
    w32, v32 = gk.linalg.lobpcg(D, X.astype(np.float32), tol=1e-2, maxiter=100, executor=exec)
    assert v32.dtype == np.float32
    np.testing.assert_allclose(w32, [3 * n, 2 * n], rtol=1e-5)


def test_constraints(exec):
    """Y = the two smallest eigenvectors: lobpcg finds the next two."""
    A, exact = _poisson(16)
    n = A.shape[0]
    _, vectors = sla.eigh(A.toarray())
    X = np.random.default_rng(5).standard_normal((n, 2))
    w, v = gk.linalg.lobpcg(A, X, Y=vectors[:, :2], tol=1e-6, maxiter=300, largest=False, executor=exec)
    np.testing.assert_allclose(w, exact[2:4], rtol=1e-8)
    assert np.abs(vectors[:, :2].T @ v).max() <= 1e-10


def test_operator_forms(exec):
    """A as a LinearOperator, a callable and a ginkpy Csr; M as a SciPy matrix and a callable: the same pairs."""
    A, exact = _poisson(12)
    n = A.shape[0]
    X = np.random.default_rng(6).standard_normal((n, 2))
    inverse_diagonal = sp.diags(1 / A.diagonal())
    forms = [dict(A=spla.aslinearoperator(A)), dict(A=lambda v: A @ v), dict(A=gk.matrix.Csr.from_scipy(
        gk.executor(exec) if isinstance(exec, str) else exec, A)), dict(A=A, M=inverse_diagonal),
        dict(A=A, M=lambda v: inverse_diagonal @ v)]
    for form in forms:
        w, _ = gk.linalg.lobpcg(X=X, tol=1e-7, maxiter=300, largest=False, executor=exec, **form)
        np.testing.assert_allclose(w, exact[:2], rtol=1e-9, err_msg=str(form))


def test_histories_and_core(exec):
    A, exact = _poisson(10)
    X = np.random.default_rng(7).standard_normal((A.shape[0], 2))
    w, v, lam_hist, res_hist = gk.linalg.lobpcg(A, X, tol=1e-8, maxiter=200, largest=False, executor=exec,
                                                retLambdaHistory=True, retResidualNormsHistory=True)
    assert len(lam_hist) == len(res_hist) and lam_hist[0].shape == (2,)
    np.testing.assert_allclose(lam_hist[-1], w)
    assert res_hist[-1].max() <= 1e-8 < res_hist[0].max()
    # the core solver (gk's API): Dense in and out, on the executor
    op = gk.matrix.Csr.from_scipy(exec, A)
    result = Lobpcg(op, tol=1e-8, maxiter=200, largest=False).solve(Dense.from_numpy(exec, X))
    assert result.converged and isinstance(result.X, Dense) and result.X.executor is exec
    np.testing.assert_allclose(result.eigenvalues, exact[:2], rtol=1e-10)


def test_small_problem_uses_dense_solver(exec):
    A, exact = _poisson(3)
    with pytest.warns(UserWarning, match="too small relative to the block size"):
        w, v = gk.linalg.lobpcg(A, np.eye(9, 2), largest=False, executor=exec)
    np.testing.assert_allclose(w, exact[:2], rtol=1e-12)


def test_errors(exec):
    A, _ = _poisson(8)
    n = A.shape[0]
    X = np.random.default_rng(8).standard_normal((n, 2))
    with pytest.raises(ValueError, match="X cannot be None"):
        gk.linalg.lobpcg(A, None, executor=exec)
    with pytest.raises(ValueError, match="rank-2"):
        gk.linalg.lobpcg(A, X[:, 0], executor=exec)
    with pytest.raises(ValueError, match="A has shape"):
        gk.linalg.lobpcg(A[:, :-1], X, executor=exec)
    with pytest.raises(ValueError, match="Linearly dependent initial"):
        gk.linalg.lobpcg(A, np.ones((n, 2)), executor=exec)
    with pytest.raises(ValueError, match="Linearly dependent constraints"):
        gk.linalg.lobpcg(A, X, Y=np.ones((n, 2)), executor=exec)
    with pytest.raises(ValueError, match="unknown preconditioner"):
        gk.linalg.lobpcg(A, X, M="nonsense", executor=exec)
    with pytest.raises(ValueError, match="LinearOperator does not"):
        gk.linalg.lobpcg(spla.aslinearoperator(A), X, M="jacobi", executor=exec)
    with pytest.raises(TypeError, match="float128|longdouble"):
        gk.linalg.lobpcg(A.astype(np.longdouble), X, executor=exec)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message="Non-empty compiler output")  # (NVIDIA's notes on a build)
        with pytest.raises(UserWarning, match="not reaching the requested tolerance"):
            gk.linalg.lobpcg(A, X, tol=1e-14, maxiter=2, executor=exec)


@pytest.mark.parametrize("m, k, seed, tol", [(20, 10, 1, 1e-5), (30, 6, 0, 1e-5), (20, 10, 2, 1e-6)])
def test_column_back_from_the_lock_converges(exec, m, k, seed, tol):
    """A converged (soft-locked) column whose residual the others' Rayleigh-Ritz steps carry back
    above tol re-enters the basis: in the first two SciPy's sticky lock (ginkpy's before) ended
    the iteration (at iteration 72 and 91) with that column's residual above tol. In the third
    the last Rayleigh-Ritz rotation of the converged block lifted a residual to 1.004e-6 (here,
    PoCL and numpy): the converged columns are kept instead."""
    A, exact = _poisson(m)
    X = np.random.default_rng(seed).standard_normal((A.shape[0], k))
    op = gk.matrix.Csr.from_scipy(exec, A)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message="Non-empty compiler output")  # (NVIDIA's notes on a build)
        result = Lobpcg(op, tol=tol, maxiter=400, largest=False).solve(Dense.from_numpy(exec, X))
    assert result.converged and result.iterations < 400
    w, v = result.eigenvalues, result.X.to_numpy()
    np.testing.assert_allclose(w, exact[:k], rtol=1e-6)
    _check_pairs(A, None, w, v, tol)


def _amg_as_scipy_operator(exec, A):
    """The preconditioner gk.linalg.lobpcg builds for M="amg", as a SciPy LinearOperator."""
    from ginkpy.core.base.factory import as_factory
    from ginkpy.linalg._lobpcg import _eigen_amg
    from ginkpy.linalg._preconditioner import named_preconditioner
    op = gk.matrix.Csr.from_scipy(exec, A)
    M = as_factory(_eigen_amg(named_preconditioner("amg", {}, op), op, op.executor), op.executor).generate(op)

    def apply(r):
        b = Dense.from_numpy(op.executor, np.asarray(r).reshape(A.shape[0], -1))
        x = b.empty_like()
        x.fill(0.0)
        return M.apply(b, x).to_numpy()
    return spla.LinearOperator(A.shape, matvec=apply, matmat=apply, dtype=A.dtype)


def test_amg_iterations_against_scipy(exec):
    """M="amg" (smoothed aggregation): as many iterations as SciPy's lobpcg with the same M (the
    same algorithm), and within 1.5x of SciPy's with PyAMG's smoothed aggregation."""
    A, exact = _poisson(48)
    X = np.random.default_rng(9).standard_normal((A.shape[0], 6))
    kwargs = dict(tol=1e-6, maxiter=200, largest=False, retResidualNormsHistory=True)
    w, v, history = gk.linalg.lobpcg(A, X, M="amg", executor=exec, **kwargs)
    np.testing.assert_allclose(w, exact[:6], rtol=1e-8)
    _check_pairs(A, None, w, v, 1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        same_m = spla.lobpcg(A, X, M=_amg_as_scipy_operator(exec, A), **kwargs)[2]
        assert abs(len(history) - len(same_m)) <= 0.1 * len(same_m) + 2
        pyamg = pytest.importorskip("pyamg")
        with_pyamg = spla.lobpcg(A, X, M=pyamg.smoothed_aggregation_solver(A).aspreconditioner(), **kwargs)[2]
    assert len(history) <= 1.5 * len(with_pyamg) + 2, (len(history), len(with_pyamg))


def test_amg_choice(exec):
    """M="amg": smoothed aggregation levels and a V-cycle, unless the options name them; other
    preconditioners unchanged."""
    from ginkpy.linalg._lobpcg import EIGEN_PROLONGATION_RELAX, _eigen_amg
    from ginkpy.linalg._preconditioner import named_preconditioner
    A, _ = _poisson(8)
    op = gk.matrix.Csr.from_scipy(exec, A)
    M = _eigen_amg(named_preconditioner("amg", {}, op), op, op.executor)
    assert M.cycle == "v" and len(M.mg_level) == 1
    assert M.mg_level[0].parameters.prolongation_relax == EIGEN_PROLONGATION_RELAX
    assert _eigen_amg(named_preconditioner("amg", {"cycle": "w"}, op), op, op.executor).cycle == "w"
    levels = named_preconditioner("amg", {}, op).with_mg_level(gk.multigrid.Pgm.build())
    assert _eigen_amg(levels, op, op.executor).mg_level[0].prolongation_relax == 0
    jacobi = named_preconditioner("jacobi", {}, op)
    assert _eigen_amg(jacobi, op, op.executor) is jacobi
