"""gk.linalg: SciPy's solver functions run by ginkpy (parity with SciPy, every input form of A
and M, the rtol/atol rule, info, callbacks, bad input) and gk.aslinearoperator."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from ginkpy.problems import convection_diffusion_2d, poisson_2d
from conftest import PROJECT, matrix_path
from ginkpy.linalg._interface import ScipyOperator


def _problem(kind, rng):
    A = poisson_2d(7) if kind == "spd" else convection_diffusion_2d(7)
    return A, rng.standard_normal(A.shape[0])


def _scalar_jacobi(A):
    """SciPy's form of scalar Jacobi: M r = r / diag(A)."""
    return spla.LinearOperator(A.shape, matvec=lambda r: r / A.diagonal(), dtype=A.dtype)


def _counting():
    calls = []
    return calls, lambda xk: calls.append(np.array(xk, copy=True))


def _residual(A, b, x):
    return np.linalg.norm(b - A @ x)


# -- parity with SciPy -------------------------------------------------------------------------

@pytest.mark.parametrize("name, kind, slack", [("cg", "spd", 0), ("bicgstab", "general", 1), ("cgs", "general", 1),
                                               ("bicg", "general", 1), ("gmres", "general", 0)])
@pytest.mark.parametrize("jacobi", [False, True])
def test_parity_with_scipy(ref, rng, name, kind, slack, jacobi):
    """Same solution, info and (up to SciPy's mid-iteration exits) the same number of callbacks."""
    A, b = _problem(kind, rng)
    extra = {"callback_type": "x"} if name == "gmres" else {}
    ours, theirs = _counting(), _counting()
    M = gk.preconditioner.Jacobi.build().with_max_block_size(1) if jacobi else None
    if jacobi and name == "bicg":  # Bicg needs M^T, which Jacobi does not provide: the same M as a matrix
        M = sp.diags(1.0 / A.diagonal())
    x, info = getattr(gk.linalg, name)(A, b, rtol=1e-10, M=M, callback=ours[1], executor=ref, **extra)
    xs, info_s = getattr(spla, name)(A, b, rtol=1e-10, M=sp.diags(1.0 / A.diagonal()) if jacobi else None,
                                      callback=theirs[1], **extra)
    assert info == info_s == 0
    assert x.shape == xs.shape == b.shape
    assert _residual(A, b, x) <= 1e-10 * np.linalg.norm(b)
    np.testing.assert_allclose(x, xs, rtol=1e-7, atol=1e-7 * np.abs(xs).max())
    assert abs(len(ours[0]) - len(theirs[0])) <= slack
    assert len(ours[0]) > 1


def test_cg_iterates_match_scipy_until_maxiter(ref, rng):
    """With the same algorithm, the iterates themselves agree; info is maxiter for both."""
    A, b = _problem("spd", rng)
    ours, theirs = _counting(), _counting()
    x, info = gk.linalg.cg(A, b, maxiter=6, callback=ours[1], executor=ref)
    xs, info_s = spla.cg(A, b, maxiter=6, callback=theirs[1])
    assert info == info_s == 6
    assert len(ours[0]) == len(theirs[0]) == 6
    for xk, xk_s in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(xk, xk_s, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x, xs, rtol=1e-10)


def test_callback_gets_the_live_x_as_its_docstring_says(exec, rng):
    """xk is a buffer the solve reuses (SciPy's live x), not a copy per call: the docstring
    says so and tells a callback that keeps xk to copy it."""
    A, b = _problem("spd", rng)
    kept, copies = [], []
    x, info = gk.linalg.cg(A, b, maxiter=6, callback=lambda xk: (kept.append(xk), copies.append(xk.copy())),
                           executor=exec)
    assert len(kept) == 6 and not all(np.array_equal(k, c) for k, c in zip(kept, copies))  # overwritten later
    assert any(np.shares_memory(kept[i], kept[j]) for i in range(6) for j in range(i))
    doc = " ".join(gk.linalg.cg.__doc__.split())
    assert "a copy of the current" not in doc and "``xk`` is the solver's live x, not a copy" in doc


@pytest.mark.parametrize("callback_type", ["pr_norm", "legacy"])
def test_gmres_residual_callbacks_match_scipy(ref, rng, callback_type):
    A, b = _problem("general", rng)
    ours, theirs = [], []
    x, info = gk.linalg.gmres(A, b, restart=10, callback=ours.append, callback_type=callback_type, executor=ref)
    xs, info_s = spla.gmres(A, b, restart=10, callback=theirs.append, callback_type=callback_type)
    assert info == info_s == 0
    assert len(ours) == len(theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("callback_type", ["x", "legacy"])
def test_gmres_maxiter_counts_restart_cycles_or_inner_iterations(ref, rng, callback_type):
    """maxiter=2 is two restart cycles of 5 (x after each), or two inner iterations (legacy)."""
    A, b = _problem("general", rng)
    (ours, ours_cb), (theirs, theirs_cb) = _counting(), _counting()  # SciPy passes x itself: copy it
    x, info = gk.linalg.gmres(A, b, rtol=1e-12, restart=5, maxiter=2, callback=ours_cb,
                              callback_type=callback_type, executor=ref)
    xs, info_s = spla.gmres(A, b, rtol=1e-12, restart=5, maxiter=2, callback=theirs_cb,
                            callback_type=callback_type)
    assert info == info_s == 2
    assert len(ours) == len(theirs) == 2
    np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(x, xs, rtol=1e-8)


@pytest.mark.parametrize("name", ["fcg", "idr", "ir"])
def test_solvers_scipy_lacks(ref, rng, name):
    A, b = _problem("spd", rng)
    calls = _counting()
    x, info = getattr(gk.linalg, name)(A, b, rtol=1e-8, M="jacobi", callback=calls[1], executor=ref)
    assert info == 0
    assert _residual(A, b, x) <= 1e-8 * np.linalg.norm(b)
    assert len(calls[0]) >= 1
    np.testing.assert_allclose(calls[0][-1], x)


def test_real_matrix_like_scipy(ref):
    A = gk.read(matrix_path("gr_900_900_crg.mtx"), ref).to_scipy()
    b = A @ np.ones(A.shape[0])
    ours, theirs = _counting(), _counting()
    x, info = gk.linalg.cg(A, b, rtol=1e-8, callback=ours[1], executor=ref)
    xs, info_s = spla.cg(A, b, rtol=1e-8, callback=theirs[1])
    assert info == info_s == 0
    assert len(ours[0]) == len(theirs[0])
    np.testing.assert_allclose(x, np.ones(A.shape[0]), rtol=1e-6)


def test_device_agrees_with_reference(exec, ref, rng):
    A, b = _problem("general", rng)
    for name in ("bicgstab", "gmres"):
        x, info = getattr(gk.linalg, name)(A, b, rtol=1e-8, M=gk.preconditioner.Jacobi.build(), executor=exec)
        x_ref, info_ref = getattr(gk.linalg, name)(A, b, rtol=1e-8, M=gk.preconditioner.Jacobi.build(), executor=ref)
        assert info == info_ref == 0
        assert _residual(A, b, x) <= 1e-8 * np.linalg.norm(b)
        np.testing.assert_allclose(x, x_ref, rtol=1e-6, atol=1e-6 * np.abs(x_ref).max())


# -- the stopping rule, x0 and info --------------------------------------------------------------

@pytest.mark.parametrize("rtol, atol", [(1e-6, 0.0), (1e-12, 1e-3), (0.0, 1e-5)])
def test_stops_at_first_iterate_meeting_max_of_rtol_and_atol(ref, rng, rtol, atol):
    A, b = _problem("spd", rng)
    threshold = max(rtol * np.linalg.norm(b), atol)
    calls = _counting()
    x, info = gk.linalg.cg(A, b, rtol=rtol, atol=atol, callback=calls[1], executor=ref)
    norms = [_residual(A, b, xk) for xk in calls[0]]
    assert info == 0
    assert norms[-1] <= threshold * (1 + 1e-8)
    assert all(r > threshold * (1 - 1e-8) for r in norms[:-1])


def test_initial_guess(ref, rng):
    A, b = _problem("spd", rng)
    exact = spla.spsolve(A.tocsc(), b)
    calls = _counting()
    x, info = gk.linalg.cg(A, b, x0=exact[:, None], callback=calls[1], executor=ref)
    assert info == 0 and calls[0] == []
    np.testing.assert_allclose(x, exact)
    # from a nearby guess, fewer iterations than from 0
    near, far = _counting(), _counting()
    gk.linalg.cg(A, b, x0=exact + 1e-3, callback=near[1], executor=ref)
    gk.linalg.cg(A, b, callback=far[1], executor=ref)
    assert len(near[0]) < len(far[0])


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_initial_guess_mb_as_scipy(exec, rng, name):
    """x0="Mb" starts from M b (the solver's preconditioner, also a name), as SciPy does."""
    A, b = _problem("spd", rng)
    x, info = getattr(gk.linalg, name)(A, b, x0="Mb", M=_scalar_jacobi(A), rtol=1e-10, executor=exec)
    xs, info_s = getattr(spla, name)(A, b, x0="Mb", M=_scalar_jacobi(A), rtol=1e-10)
    assert info == info_s == 0
    np.testing.assert_allclose(x, xs, rtol=1e-7)
    # with an infinite tolerance nothing is solved: x = M b itself
    x, info = getattr(gk.linalg, name)(A, b, x0="Mb", M="jacobi", rtol=np.inf, executor=exec)
    assert info == 0
    np.testing.assert_allclose(x, b / A.diagonal(), rtol=1e-14)
    with pytest.raises(ValueError, match="'Mb'"):
        getattr(gk.linalg, name)(A, b, x0="M b", executor=exec)


@pytest.mark.parametrize("rtol, atol", [(np.inf, 0.0), (0.0, np.inf), (np.inf, np.inf), (1e-8, np.inf)])
def test_infinite_tolerances_converge_at_once(ref, rng, rtol, atol):
    A, b = _problem("spd", rng)
    calls = _counting()
    x0 = rng.standard_normal(b.shape)
    for guess, expected in ((None, 0 * b), (x0, x0)):
        x, info = gk.linalg.cg(A, b, x0=guess, rtol=rtol, atol=atol, callback=calls[1], executor=ref)
        xs, info_s = spla.cg(A, b, x0=guess, rtol=rtol, atol=atol)
        assert info == info_s == 0 and calls[0] == []
        np.testing.assert_array_equal(x, expected)
        np.testing.assert_array_equal(xs, expected)


def test_a_zero_initial_guess_costs_no_product(ref):
    """x0 = 0 given explicitly starts as x0=None does, without the product A x0 (as SciPy)."""
    S = poisson_2d(4).toarray()
    calls = []
    A = spla.LinearOperator(S.shape, matvec=lambda v: (calls.append(1), S @ v)[1], dtype=float)
    gk.linalg.cg(A, np.ones(16), x0=np.zeros(16), maxiter=1, executor=ref)
    gk.linalg.cg(A, np.ones(16), maxiter=1, executor=ref)
    assert len(calls) % 2 == 0 and len(calls[:len(calls) // 2]) == len(calls) // 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gmres_callback_types_as_scipy(ref, rng, dtype):
    """A callback without callback_type warns as SciPy does and is "legacy": the relative
    residual norm as a NumPy float64 scalar (x.ndim == 0), maxiter counting inner
    iterations."""
    A, b = _problem("general", rng)
    A, b = A.astype(dtype), b.astype(dtype)
    ours, theirs = [], []
    with pytest.warns(DeprecationWarning, match="called without specifying `callback_type`"):
        x, info = gk.linalg.gmres(A, b, maxiter=3, callback=ours.append, executor=ref)
    with pytest.warns(DeprecationWarning, match="called without specifying `callback_type`"):
        xs, info_s = spla.gmres(A, b, maxiter=3, callback=theirs.append)
    assert info == info_s == 3 and len(ours) == len(theirs) == 3
    assert all(type(r) is type(s) is np.float64 and np.ndim(r) == 0 for r, s in zip(ours, theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-4 if dtype == np.float32 else 1e-8)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning with callback_type given, or without callback
        gk.linalg.gmres(A, b, maxiter=3, callback=ours.append, callback_type="pr_norm", executor=ref)
        gk.linalg.gmres(A, b, maxiter=3, callback_type="x", executor=ref)


def test_zero_rhs_gives_zero_solution(ref, rng):
    A, _ = _problem("spd", rng)
    x, info = gk.linalg.cg(A, np.zeros(A.shape[0]), x0=np.ones(A.shape[0]), executor=ref)
    assert info == 0 and not x.any()


def test_breakdown_gives_negative_info(ref):
    # p^T A p = 0 in the first step: CG cannot continue on this indefinite matrix
    A = sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
    x, info = gk.linalg.cg(A, np.array([1.0, 0.0]), executor=ref)
    assert info == -1
    assert np.isfinite(x).all()


@pytest.mark.parametrize("name", ["cg", "ir"])
def test_a_linear_operator_returning_nan_is_named(ref, name):
    """An operator that turns NaN mid-solve is an error that names it, not a wrong answer."""
    calls = []

    def matvec(v):
        calls.append(1)
        return v * (np.nan if len(calls) > 1 else 2.0)

    A = spla.LinearOperator((5, 5), matvec=matvec, dtype=np.float64)
    with pytest.raises(ValueError, match="LinearOperator A .* returned NaN or Inf"):
        getattr(gk.linalg, name)(A, np.ones(5), rtol=1e-12, executor=ref)


def test_a_linear_operator_returning_the_wrong_length_is_named(ref):
    A = spla.LinearOperator((5, 5), matvec=lambda v: np.ones(4), dtype=np.float64)
    with pytest.raises(ValueError, match="LinearOperator A"):
        gk.linalg.cg(A, np.ones(5), executor=ref)


def test_a_callback_writing_into_xk_leaves_the_solve_alone(ref, rng):
    A, b = _problem("spd", rng)
    x_plain, _ = gk.linalg.cg(A, b, executor=ref)
    x, _ = gk.linalg.cg(A, b, callback=lambda xk: xk.fill(1e6), executor=ref)
    np.testing.assert_array_equal(x, x_plain)


def test_value_types(ref, rng):
    A, b = _problem("spd", rng)
    x32, info32 = gk.linalg.cg(A.astype(np.float32), b.astype(np.float32), rtol=1e-4, executor=ref)
    assert x32.dtype == np.float32 and info32 == 0
    x, info = gk.linalg.cg(A.astype(np.float32), b, executor=ref)
    assert x.dtype == np.float64
    x, info = gk.linalg.cg(A.astype(np.int64), b.astype(np.int64), executor=ref)
    assert x.dtype == np.float64 and info == 0


# -- every accepted form of A and M ------------------------------------------------------------

def _forms_of_a(A, ref):
    csr = gk.matrix.Csr.from_scipy(ref, A)
    return {
        "csr_matrix": A, "csr_array": sp.csr_array(A), "coo_matrix": A.tocoo(), "ndarray": A.toarray(),
        "np.matrix": np.asmatrix(A.toarray()), "aslinearoperator": spla.aslinearoperator(A),
        "LinearOperator(matvec)": spla.LinearOperator(A.shape, matvec=lambda v: A @ v, dtype=A.dtype),
        "ginkpy Csr": csr, "gk.aslinearoperator(Csr)": gk.aslinearoperator(csr),
    }


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_every_form_of_a(ref, rng):
    A, b = _problem("spd", rng)
    x_ref, _ = spla.cg(A, b, rtol=1e-10)
    for form, A_form in _forms_of_a(A, ref).items():
        x, info = gk.linalg.cg(A_form, b, rtol=1e-10, executor=ref)
        assert info == 0, form
        np.testing.assert_allclose(x, x_ref, rtol=1e-7, atol=1e-9, err_msg=form)


def test_ginkpy_linop_runs_on_its_executor_by_default(ref, rng):
    A, b = _problem("spd", rng)
    x, info = gk.linalg.cg(gk.matrix.Csr.from_scipy(ref, A), b)
    assert info == 0 and _residual(A, b, x) <= 1e-5 * np.linalg.norm(b)


def test_every_form_of_m(ref, rng):
    A, b = _problem("spd", rng)
    inv_diag = 1.0 / A.diagonal()
    jacobi = gk.preconditioner.Jacobi.build().with_max_block_size(1)
    A_ref = gk.matrix.Csr.from_scipy(ref, A)
    scalar_jacobi = {  # the same operator in every form: the iteration counts agree
        "parameters": jacobi, "factory": jacobi.on(ref), "LinOp": jacobi.on(ref).generate(A_ref),
        "LinearOperator": _scalar_jacobi(A), "sparse": sp.diags(inv_diag), "ndarray": np.diag(inv_diag),
        "gk.aslinearoperator(LinOp)": gk.aslinearoperator(jacobi.on(ref).generate(A_ref)),
    }
    counts = {}
    for form, M in scalar_jacobi.items():
        calls = _counting()
        x, info = gk.linalg.cg(A, b, rtol=1e-10, M=M, callback=calls[1], executor=ref)
        assert info == 0, form
        assert _residual(A, b, x) <= 1e-10 * np.linalg.norm(b), form
        counts[form] = len(calls[0])
    assert len(set(counts.values())) == 1, counts
    for name in ("jacobi", "ILU", "ic", "none", None):
        x, info = gk.linalg.cg(A, b, rtol=1e-10, M=name, executor=ref)
        assert info == 0, name
        assert _residual(A, b, x) <= 1e-10 * np.linalg.norm(b), name


def test_ir_takes_m_as_its_inner_solver(ref, rng):
    A, b = _problem("spd", rng)
    calls = _counting()
    x, info = gk.linalg.ir(A, b, rtol=1e-3, M="jacobi", relaxation_factor=0.9, maxiter=2000, callback=calls[1],
                           executor=ref)
    assert info == 0 and _residual(A, b, x) <= 1e-3 * np.linalg.norm(b)
    x, info = gk.linalg.ir(A, b, rtol=1e-3, maxiter=3, executor=ref)
    assert info == 3


def test_bicg_with_linear_operators_uses_rmatvec(ref, rng):
    A, b = _problem("general", rng)
    M = sp.diags(1.0 / A.diagonal())
    x, info = gk.linalg.bicg(spla.aslinearoperator(A), b, rtol=1e-8, M=spla.aslinearoperator(M), executor=ref)
    xs, info_s = spla.bicg(A, b, rtol=1e-8, M=M)
    assert info == info_s == 0
    np.testing.assert_allclose(x, xs, rtol=1e-5, atol=1e-6)


def test_bicg_with_a_linear_operator_without_rmatvec_says_so(ref, rng):
    A, b = _problem("general", rng)
    no_adjoint = spla.LinearOperator(A.shape, matvec=lambda v: v / A.diagonal(), dtype=A.dtype)
    for kwargs, name in (({"M": no_adjoint}, "M"), ({}, "A")):
        operator = A if name == "M" else spla.LinearOperator(A.shape, matvec=lambda v: A @ v, dtype=A.dtype)
        with pytest.raises(NotImplementedError, match=f"the LinearOperator {name} has no rmatvec.*bicgstab"):
            gk.linalg.bicg(operator, b, executor=ref, **kwargs)


# -- bad input -----------------------------------------------------------------------------------

def test_bad_input_raises_clear_errors(ref, rng):
    A, b = _problem("spd", rng)
    n = A.shape[0]
    cases = [
        (ValueError, "square", lambda: gk.linalg.cg(sp.random(n, n + 1, format="csr"), b, executor=ref)),
        (ValueError, r"b has shape \(5,\)", lambda: gk.linalg.cg(A, np.ones(5), executor=ref)),
        (ValueError, "b has shape", lambda: gk.linalg.cg(A, np.ones((n, 2)), executor=ref)),
        (ValueError, "x0 has shape", lambda: gk.linalg.cg(A, b, x0=np.ones(n + 1), executor=ref)),
        (ValueError, "b contains NaN", lambda: gk.linalg.cg(A, np.full(n, np.nan), executor=ref)),
        (ValueError, "x0 contains NaN", lambda: gk.linalg.cg(A, b, x0=np.full(n, np.inf), executor=ref)),
        (ValueError, "NaN", lambda: gk.linalg.cg(A.multiply(np.nan).tocsr(), b, executor=ref)),
        (TypeError, "complex", lambda: gk.linalg.cg(gk.matrix.Csr.from_scipy(ref, A), b + 1j, executor=ref)),
        (TypeError, "float16", lambda: gk.linalg.cg(A, b.astype(np.float16), executor=ref)),
        (ValueError, "expected 2-D", lambda: gk.linalg.cg(np.ones((2, 2, 2)), np.ones(2), executor=ref)),
        (TypeError, "LinearOperator", lambda: gk.linalg.cg("A.mtx", b, executor=ref)),
        (ValueError, "rtol", lambda: gk.linalg.cg(A, b, rtol=-1.0, executor=ref)),
        (ValueError, "rtol", lambda: gk.linalg.cg(A, b, rtol=np.nan, executor=ref)),
        (ValueError, "atol", lambda: gk.linalg.cg(A, b, atol=None, executor=ref)),
        (ValueError, "maxiter", lambda: gk.linalg.cg(A, b, maxiter=0, executor=ref)),
        (ValueError, "maxiter", lambda: gk.linalg.cg(A, b, maxiter=2.5, executor=ref)),
        (TypeError, "callable", lambda: gk.linalg.cg(A, b, callback=5, executor=ref)),
        (ValueError, "jacobi", lambda: gk.linalg.cg(A, b, M="jacobee", executor=ref)),
        (ValueError, "same shape", lambda: gk.linalg.cg(A, b, M=sp.eye(n + 1), executor=ref)),
        (ValueError, "M contains NaN", lambda: gk.linalg.cg(A, b, M=sp.diags(np.full(n, np.nan)), executor=ref)),
        (ValueError, "LinearOperator", lambda: gk.linalg.cg(spla.aslinearoperator(A), b, M="ilu", executor=ref)),
        (TypeError, "executor", lambda: gk.linalg.cg(A, b, executor=3)),
        (ValueError, "unknown executor", lambda: gk.linalg.cg(A, b, executor="cuda")),
        (ValueError, "callback_type", lambda: gk.linalg.gmres(A, b, callback_type="xk", executor=ref)),
        (ValueError, "restart", lambda: gk.linalg.gmres(A, b, restart=0, executor=ref)),
    ]
    for error, message, call in cases:
        with pytest.raises(error, match=message):
            call()


def test_linear_operator_returning_wrong_shape(ref):
    A = spla.LinearOperator((4, 4), matvec=lambda v: np.ones(3), dtype=float)
    with pytest.raises(ValueError, match="shape"):
        gk.linalg.cg(A, np.ones(4), executor=ref)
    several = ScipyOperator(ref, spla.LinearOperator((4, 4), matvec=lambda v: v, matmat=lambda X: X[:3]), np.float64)
    with pytest.raises(ValueError, match=r"shape \(3, 2\) for an operand of shape \(4, 2\)"):
        several.apply(gk.matrix.Dense.zeros(ref, (4, 2)), gk.matrix.Dense.zeros(ref, (4, 2)))


# -- gk.aslinearoperator -------------------------------------------------------------------------

def test_aslinearoperator_of_matrices(ref, rng):
    A, b = _problem("general", rng)
    op = gk.aslinearoperator(gk.matrix.Csr.from_scipy(ref, A))
    assert isinstance(op, spla.LinearOperator) and op.shape == A.shape and op.dtype == np.float64
    X = rng.standard_normal((A.shape[0], 3))
    np.testing.assert_allclose(op @ b, A @ b)
    np.testing.assert_allclose(op.matmat(X), A @ X)
    np.testing.assert_allclose(op.rmatvec(b), A.T @ b)
    dense = gk.aslinearoperator(gk.matrix.Dense.from_numpy(ref, A.toarray()))
    np.testing.assert_allclose(dense.H @ b, A.T @ b)
    assert gk.aslinearoperator(A).shape == A.shape  # not ginkpy: SciPy's aslinearoperator


def test_aslinearoperator_of_solvers_inside_scipy(ref, rng):
    A, b = _problem("spd", rng)
    A_ref = gk.matrix.Csr.from_scipy(ref, A)
    jacobi = gk.aslinearoperator(gk.preconditioner.Jacobi.build().with_max_block_size(1).on(ref).generate(A_ref))
    ours, theirs = _counting(), _counting()
    x, info = spla.cg(gk.aslinearoperator(A_ref), b, rtol=1e-10, M=jacobi, callback=ours[1])
    xs, info_s = spla.cg(A, b, rtol=1e-10, M=_scalar_jacobi(A), callback=theirs[1])
    assert info == info_s == 0 and len(ours[0]) == len(theirs[0])
    np.testing.assert_allclose(x, xs, rtol=1e-8)
    # a whole ginkpy solver as SciPy's operator: op @ b solves A x = b
    solver = gk.solver.Cg.build().with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-12)) \
        .on(ref).generate(A_ref)
    np.testing.assert_allclose(gk.aslinearoperator(solver) @ b, xs, rtol=1e-7, atol=1e-9)


def test_aslinearoperator_without_transpose():
    class Scale(gk.LinOp):
        def _apply_impl(self, b, x):
            x.copy_from(b)
            x.scale(2.0)

    op = gk.aslinearoperator(Scale(gk.ReferenceExecutor(), (3, 3), np.float64))
    np.testing.assert_allclose(op @ np.ones(3), 2.0)
    with pytest.raises(NotImplementedError, match="no conj_transpose"):
        op.rmatvec(np.ones(3))


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_an_exact_preconditioner_needs_few_products(exec, name):
    # as SciPy's test_iterative (at most 3 products with A): no product for the initial residual
    # of x0 = 0, one per iteration, one for the true residual that confirms convergence, and
    # none for info (the solver's confirmed verdict)
    S = poisson_2d(5).toarray()
    inverse = np.linalg.inv(S)
    calls = []
    A = spla.LinearOperator(S.shape, matvec=lambda v: (calls.append(1), S @ v)[1], dtype=float)
    M = spla.LinearOperator(S.shape, matvec=lambda v: inverse @ v, dtype=float)
    x, info = getattr(gk.linalg, name)(A, np.ones(25), rtol=1e-8, M=M, executor=exec)
    assert info == 0
    assert len(calls) <= 3, len(calls)


def test_a_solve_imports_only_what_it_needs():
    """A fresh process's first gk.linalg solve on a SciPy matrix imports neither
    scipy.sparse.linalg nor the batched and direct solvers (their imports would make most of
    a first call's setup)."""
    import subprocess
    import sys
    from pathlib import Path
    code = ("import sys, numpy as np, ginkpy as gk; from ginkpy.problems import poisson_2d; S = poisson_2d(8).tocsr(); "
            "gk.linalg.cg(S, np.ones(64), executor='reference'); gk.linalg.minres(S, np.ones(64), executor='reference'); "
            "print([m for m in ('scipy.sparse.linalg', 'ginkpy.linalg._batch', 'ginkpy.linalg._dsolve') if m in sys.modules])")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=PROJECT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", run.stdout


@pytest.mark.parametrize("name", ["cg", "gmres", "bicgstab", "minres"])
def test_an_empty_system_is_solved_as_scipy_solves_it(exec, name):
    """A 0 x 0 system: an empty x and info 0, as SciPy answers (it raised an AttributeError)."""
    A = sp.csr_matrix((0, 0))
    x, info = getattr(gk.linalg, name)(A, np.zeros(0), executor=exec)
    expected, scipy_info = getattr(spla, name)(A, np.zeros(0))
    assert info == scipy_info == 0 and x.shape == expected.shape == (0,)


# -- defaults that guide: a nonsymmetric M or A under CG (issue 34) ------------------------------------

@pytest.mark.parametrize("M, instead", [("ilut", "'ic'"), ("gauss_seidel", "'symmetric_gauss_seidel'"),
                                        ("gaussseidel", "'symmetric_gauss_seidel'"), ("sor", "'ssor'"),
                                        (("sor", {"symmetric": False}), "'ssor'"), ("isai", "'spdisai'"),
                                        ("generalisai", "'spdisai'"), ("lowerisai", "'spdisai'")])
def test_cg_refuses_a_nonsymmetric_preconditioner_by_name_at_once(exec, M, instead):
    # cg(M="ilut") and cg(M="gauss_seidel") ran to the iteration limit for a minute, silently
    A = poisson_2d(12)
    b = A @ np.ones(A.shape[0])
    for solve in (lambda: gk.linalg.cg(A, b, M=M, executor=exec),
                  lambda: gk.linalg.minres(A, b, M=M, executor=exec),
                  lambda: gk.linalg.Solver(A, "pipecg", M=M, executor=exec)):
        with pytest.raises(ValueError, match=f"needs a symmetric positive definite M, and M={M!r} is not symmetric "
                                             .replace("(", r"\(").replace(")", r"\)").replace("{", r"\{")
                                             .replace("}", r"\}") + rf".*use M={instead}.*gmres or bicgstab"):
            solve()
    x, info = gk.linalg.gmres(A, b, M=M, maxiter=10, executor=exec)  # methods that take any M still do
    assert info == 0 or M in ("lowerisai",)


def test_cg_takes_the_symmetric_preconditioners(exec):
    A = poisson_2d(12)
    b = A @ np.ones(A.shape[0])
    for M in ("ic", "ssor", "symmetric_gauss_seidel", ("sor", {"symmetric": True}), "jacobi", "block_jacobi",
              "spdisai", "amg", "ilu", "ilu0_exact"):  # (ILU(0) of a symmetric A is L D L^T: symmetric)
        x, info = gk.linalg.cg(A, b, rtol=1e-8, M=M, executor=exec)
        assert info == 0, M
    x, info = gk.linalg.fcg(A, b, rtol=1e-8, M="gauss_seidel", executor=exec)  # flexible CG takes any M
    assert info == 0


def test_cg_warns_once_on_a_matrix_seen_to_be_nonsymmetric(exec, monkeypatch):
    import warnings
    C, A = convection_diffusion_2d(8), poisson_2d(8)
    c, b = C @ np.ones(C.shape[0]), A @ np.ones(A.shape[0])
    with pytest.warns(UserWarning, match=r"cg: A is not symmetric: max \|A - A\^T\| = .*use gmres or bicgstab") as seen:
        gk.linalg.cg(C, c, maxiter=5, executor=exec)
        gk.linalg.cg(C, c, maxiter=5, executor=exec)  # the kept solver: no second warning
        gk.linalg.cg(C, c, maxiter=5, M="amg", executor=exec)
    # (only the symmetry warnings: a device may add its own, e.g. a compiler's notes on a first build)
    ours = [w for w in seen if "is not symmetric" in str(w.message)]
    assert len(ours) == 2 and {w.filename for w in ours} == {__file__}, [str(w.message) for w in seen]
    for solve in (lambda: gk.linalg.cg(C.toarray(), c, maxiter=5, executor=exec),
                  lambda: gk.linalg.Solver(C.tocoo(), "cg", executor=exec),
                  lambda: gk.linalg.minres(C, c, maxiter=5, executor=exec)):
        with pytest.warns(UserWarning, match="use gmres or bicgstab"):
            solve()
    H = (A + 1j * sp.triu(A, 1) - 1j * sp.tril(A, -1)).tocsr()  # Hermitian; 1j * A is complex symmetric
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # (but not a device compiler's notes on a program's first build: pyopencl's CompilerWarning,
        # which NVIDIA's OpenCL gives where PoCL gives none; seen in the H100 run of 2026-12-06)
        warnings.filterwarnings("ignore", message="Non-empty compiler output")
        for S, v in ((A, b), (H, H @ np.ones(H.shape[0])), (C, c)):
            if S is C:  # too large to check cheaply: not checked
                monkeypatch.setattr("ginkpy.linalg._spd.SYMMETRY_CHECK_NNZ", C.nnz - 1)
            gk.linalg.cg(S.copy(), v, maxiter=5, executor=exec)
            gk.linalg.bicgstab(C.copy(), c, maxiter=5, executor=exec)  # bicgstab: no warning
    monkeypatch.undo()
    with pytest.warns(UserWarning, match=r"cg: A is not Hermitian \(A = A\^H\)"):
        gk.linalg.cg((A + 1j * A).tocsr(), b.astype(complex), maxiter=5, executor=exec)
