"""Lsqr (gk.solver.Lsqr, gk.linalg.lsqr): against SciPy's lsqr on over- and underdetermined,
damped and complex systems (x, istop, itn and the estimates), several right-hand sides,
x0, the stopping reasons, calc_var, the forms of A, bad input, the iteration captured (no host
read in it), and each OpenCL kernel against its reference twin. The tests both least-squares
methods share run here for each (Lsmr's own: test_lsmr.py)."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import assert_twins, random_values, twin
from ginkpy.core.base.types import real_dtype
from ginkpy.core.solver.lsqr import LSQR_ROWS

METHODS = ["lsqr", "lsmr"]
LIMIT = {"lsqr": "iter_lim", "lsmr": "maxiter"}
# where each method's x, ||r|| and ||x|| sit in its result tuple
R_NORM, X_NORM = {"lsqr": 3, "lsmr": 3}, {"lsqr": 8, "lsmr": 7}


def system(m, n, dtype=np.float64, seed=0, consistent=False):
    """A well-conditioned m x n sparse A (singular values near 3) and b: b in A's range where
    ``consistent``, else random (a nonzero least-squares residual where m > n)."""
    rng = np.random.default_rng(seed)
    A = sp.eye(m, n, format="csr") * 3 + sp.random(m, n, density=0.05, random_state=seed, format="csr")
    if np.dtype(dtype).kind == "c":
        A = A + 1j * sp.random(m, n, density=0.05, random_state=seed + 1, format="csr")
    A = A.astype(dtype).tocsr()
    b = A @ random_values(rng, n, dtype) if consistent else random_values(rng, m, dtype)
    return A, b


CASES = {  # name -> (m, n, value type, damp, consistent)
    "overdetermined": (300, 120, np.float64, 0.0, False),
    "underdetermined": (120, 300, np.float64, 0.0, True),
    "damped": (300, 120, np.float64, 0.7, False),
    "complex": (200, 90, np.complex128, 0.0, False),
    "complex_underdetermined_damped": (90, 200, np.complex128, 0.3, True),
}


def _compare(method, ours, theirs, itn_slack=2):
    """x within 1e-7 of SciPy's (relative), the same istop, itn within ``itn_slack``, the norm
    estimates within 1e-6 (their rounding differs with the order of the sums)."""
    x, istop, itn = ours[:3]
    assert istop == theirs[1], (istop, theirs[1])
    assert abs(itn - theirs[2]) <= itn_slack, (itn, theirs[2])
    assert np.linalg.norm(x - theirs[0]) <= 1e-7 * np.linalg.norm(theirs[0])
    assert x.dtype == theirs[0].dtype
    np.testing.assert_allclose(ours[X_NORM[method]], theirs[X_NORM[method]], rtol=1e-6)
    np.testing.assert_allclose(ours[R_NORM[method]], theirs[R_NORM[method]], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", list(CASES))
def test_as_scipy(exec, method, case):
    m, n, dtype, damp, consistent = CASES[case]
    A, b = system(m, n, dtype, consistent=consistent)
    kwargs = dict(damp=damp, atol=1e-10, btol=1e-10)
    ours = getattr(gk.linalg, method)(A, b, executor=exec, **kwargs)
    theirs = getattr(spla, method)(A, b, **kwargs)
    _compare(method, ours, theirs)
    assert ours[1] == (1 if consistent and damp == 0 else 2)
    if method == "lsqr":  # anorm and acond as SciPy's: sums of the alpha and beta, which drift with the
        # rounding of the products once the bidiagonalization loses orthogonality (5e-6 seen)
        np.testing.assert_allclose(ours[5:7], theirs[5:7], rtol=1e-4)
        if ours[1] == 2:  # SciPy's test of istop 2: ||A^H r|| <= atol ||A|| ||r||
            assert ours[7] <= 1e-10 * ours[5] * ours[4]


@pytest.mark.parametrize("method", METHODS)
def test_x0_as_scipy(exec, method):
    A, b = system(200, 80, seed=2)
    x0 = np.random.default_rng(5).standard_normal(80)
    ours = getattr(gk.linalg, method)(A, b, x0=x0, atol=1e-10, btol=1e-10, executor=exec)
    _compare(method, ours, getattr(spla, method)(A, b, x0=x0, atol=1e-10, btol=1e-10))


@pytest.mark.parametrize("method", METHODS)
def test_iteration_limit_and_conlim(exec, method):
    A, b = system(200, 80, seed=3)
    ours = getattr(gk.linalg, method)(A, b, executor=exec, **{LIMIT[method]: 5})
    theirs = getattr(spla, method)(A, b, **{LIMIT[method]: 5})
    assert ours[1:3] == (7, 5) == theirs[1:3]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-9, atol=1e-12)
    # a conlim below the condition estimate: istop 3 as SciPy's
    ours = getattr(gk.linalg, method)(A, b, conlim=1.5, executor=exec)
    theirs = getattr(spla, method)(A, b, conlim=1.5)
    assert ours[1] == 3 == theirs[1] and ours[2] == theirs[2]
    # no iteration: x = x0
    assert getattr(gk.linalg, method)(A, b, executor=exec, **{LIMIT[method]: 0})[1:3] == (0, 0)


@pytest.mark.parametrize("method", METHODS)
def test_zero_rhs_is_exact_at_once(exec, method):
    A, _ = system(50, 20)
    out = getattr(gk.linalg, method)(A, np.zeros(50), executor=exec)
    assert out[1:3] == (0, 0)
    np.testing.assert_array_equal(out[0], 0.0)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_several_right_hand_sides_through_the_builder(exec, method, dtype):
    """Each column of b solved as alone, a zero column stopping at once (istop 0, x = 0)."""
    A, _ = system(150, 60, dtype, seed=4)
    B = random_values(np.random.default_rng(6), (150, 3), dtype)
    B[:, 1] = 0
    Ad = gk.matrix.Csr.from_scipy(exec, A)
    solver = getattr(gk.solver, method.capitalize()).build().with_atol(1e-10).with_btol(1e-10).on(exec).generate(Ad)
    assert solver.shape == (60, 150)
    X = gk.matrix.Dense.zeros(exec, (60, 3), dtype)
    solver.apply(gk.matrix.Dense.from_numpy(exec, B), X)
    X, result = X.to_numpy(), solver.result()
    assert result["istop"][1] == 0 and result["itn"][1] == 0
    np.testing.assert_array_equal(X[:, 1], 0)
    for c in (0, 2):
        alone = getattr(gk.linalg, method)(A, B[:, c], atol=1e-10, btol=1e-10, executor=exec)
        np.testing.assert_allclose(X[:, c], alone[0], rtol=1e-10, atol=1e-13)
        assert (result["istop"][c], result["itn"][c]) == alone[1:3]


@pytest.mark.parametrize("method", METHODS)
def test_forms_of_A(exec, method):
    A, b = system(120, 50, seed=7)
    solve = getattr(gk.linalg, method)
    want = solve(A, b, executor=exec)[0]
    for form in (A.toarray(), spla.aslinearoperator(A), gk.matrix.Csr.from_scipy(exec, A)):
        np.testing.assert_allclose(solve(form, b, executor=exec)[0], want, rtol=1e-9, atol=1e-12)
    no_adjoint = spla.LinearOperator(A.shape, matvec=lambda v: A @ v, dtype=np.float64)
    with pytest.raises(NotImplementedError, match="rmatvec"):
        solve(no_adjoint, b, executor=exec)


@pytest.mark.parametrize("method", METHODS)
def test_float32(exec, method):
    A, b = system(200, 80, np.float32, seed=8)
    x = getattr(gk.linalg, method)(A, b, atol=1e-5, btol=1e-5, executor=exec)[0]
    assert x.dtype == np.float32
    want = spla.lsqr(A.astype(np.float64), b.astype(np.float64), atol=1e-12, btol=1e-12)[0]
    assert np.linalg.norm(x - want) <= 1e-4 * np.linalg.norm(want)


@pytest.mark.parametrize("method", METHODS)
def test_bad_input(exec, method):
    A, b = system(30, 10)
    solve = getattr(gk.linalg, method)
    with pytest.raises(ValueError, match="b must have m = 30 entries"):
        solve(A, b[:10], executor=exec)
    with pytest.raises(ValueError, match="x0 must have n = 10 entries"):
        solve(A, b, x0=np.zeros(30), executor=exec)
    with pytest.raises(ValueError, match="expected 2-D"):
        solve(np.zeros((3, 3, 3)), b, executor=exec)
    with pytest.raises(ValueError, match="NaN or Inf"):
        solve(A, np.full(30, np.nan), executor=exec)
    with pytest.raises(TypeError, match="complex"):
        solve(gk.matrix.Csr.from_scipy(exec, A), b + 1j, executor=exec)
    Solver = getattr(gk.solver, method.capitalize())
    with pytest.raises(ValueError, match="damp must be"):
        Solver.build().with_damp(-1.0)
    with pytest.raises(ValueError, match="with_atol, with_btol"):
        Solver.build().with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(
            gk.matrix.Csr.from_scipy(exec, A))
    solver = Solver.build().on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))
    with pytest.raises(ValueError, match="dimension mismatch"):
        solver.apply(gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.zeros(exec, (30, 1)))
    with pytest.raises(TypeError, match="conj_transpose"):
        Solver.build().on(exec).generate(gk.solver.Cg.build().on(exec).generate(gk.matrix.Csr.from_scipy(
            exec, sp.eye(4, format="csr"))))


@pytest.mark.parametrize("method", METHODS)
def test_iteration_limit_through_criteria_and_captured_iteration(exec, method):
    A, b = system(100, 40, seed=9)
    Ad = gk.matrix.Csr.from_scipy(exec, A)
    solver = getattr(gk.solver, method.capitalize()).build().with_max_iters(50) \
        .with_criteria(gk.stop.Iteration.build().with_max_iters(4)).on(exec).generate(Ad)
    x = gk.matrix.Dense.zeros(exec, (40, 1))
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), x)
    assert list(solver.result()["istop"]) == [7] and list(solver.result()["itn"]) == [4]
    # the iteration was captured: no host read in it (a read would make it uncapturable)
    replay, _ = solver._workspace.items["replays"].entries["body"]
    assert replay is not None
    # a second apply replays it and gives the same x
    first = x.to_numpy()
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), x.fill(0.0))
    np.testing.assert_array_equal(x.to_numpy(), first)


def test_calc_var_as_scipy(exec):
    A, b = system(150, 40, seed=10)
    ours = gk.linalg.lsqr(A, b, damp=0.5, calc_var=True, atol=1e-12, btol=1e-12, executor=exec)
    theirs = spla.lsqr(A, b, damp=0.5, calc_var=True, atol=1e-12, btol=1e-12)
    np.testing.assert_allclose(ours[9], theirs[9], rtol=1e-6)
    assert not gk.linalg.lsqr(A, b, executor=exec)[9].any()


def test_show(exec, capsys):
    A, b = system(60, 20, seed=11)
    gk.linalg.lsqr(A, b, show=True, executor=exec)
    out = capsys.readouterr().out
    assert "The matrix A has 60 rows and 20 columns" in out and "LSQR finished" in out and "istop =" in out


def _state(rng, dtype, k, itn, rows):
    """A random real state (rows x k, positive entries), itn per column."""
    real = real_dtype(dtype).type
    state = np.abs(rng.standard_normal((len(rows), k))).astype(real) + real(0.5)
    state[rows.index("itn")] = itn
    state[rows.index("istop")] = 0
    return state


def _on(array, dtype):
    """The real state as a Dense of the real type on the twin's executor."""
    return lambda exec: gk.matrix.Dense.from_numpy(exec, array, real_dtype(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_kernels_against_their_reference_twins(ref, ocl, dtype):
    """Random data larger than a work-group, odd sizes; per column k = 5: running, running
    with beta = 0 (u . u = 0), running with alpha = 0 (v . v = 0), stopped, running at its
    iteration limit."""
    rng = np.random.default_rng(12)
    m, n, k = 1237, 611, 5
    status = np.array([0, 0, 0, 1, 0], np.uint8)
    state = _state(rng, dtype, k, [3, 3, 3, 3, 9], list(LSQR_ROWS))
    uu = np.abs(random_values(rng, (1, k), dtype)) + 0.5
    vv = np.abs(random_values(rng, (1, k), dtype)) + 0.5
    uu[0, 1], vv[0, 2] = 0, 0
    ww = np.abs(random_values(rng, (1, k), dtype)) + 0.5
    vec = lambda rows: random_values(rng, (rows, k), dtype)  # noqa: E731
    out = twin(ref, ocl, "components.golub_kahan.bidiagonalize_u", vec(m), vec(m), _on(state, dtype), status,
               dtype=dtype)
    assert_twins(out, dtype)
    out = twin(ref, ocl, "components.golub_kahan.bidiagonalize_v", vec(m), vec(n), vec(n), uu.astype(dtype),
               status, dtype=dtype)
    assert_twins(out, dtype)
    out = twin(ref, ocl, "solver.lsqr.initialize", vec(n), vec(n), uu, uu, vv, _on(state, dtype), status.copy(),
               dtype=dtype)
    assert_twins(out, dtype)
    for damp in (0.0, 0.3):
        out = twin(ref, ocl, "solver.lsqr.step", uu, vv, ww, _on(state, dtype), status.copy(), damp, 1e-6, 1e-6,
                   1e-8, 10, dtype=dtype)
        assert_twins(out, dtype, factor=20)
        # the stopped column stays so; the column at its limit stops (istop 7)
        assert out[1][4][3] == 1 and out[1][4][4] == 1
        assert out[1][3][LSQR_ROWS.index("istop"), 4] == 7
    stepped = out[0][3]
    assert list(stepped[LSQR_ROWS.index("active")]) == [1, 1, 1, 0, 1]
    for var in (None, np.abs(vec(n))):
        inputs = [vec(n), vec(n), vec(n), var]
        out = twin(ref, ocl, "solver.lsqr.update", *inputs, _on(stepped, dtype), dtype=dtype)
        assert_twins(out, dtype, factor=4)
        for before, after in zip(inputs, out[1]):  # the stopped column (not active) is untouched
            if before is not None:
                np.testing.assert_array_equal(after[:, 3], before[:, 3])
