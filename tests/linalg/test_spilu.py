"""gk.linalg.spilu against SciPy's spilu on both executors: the factors and solves (the same
factorization, SuperLU's ILUTP, so agreement to rounding), trans='T'/'H', SciPy's keywords and
options, use as M (iterations as M="ilut"'s and as SciPy's with its spilu), bad input; splu's
trans."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import matrix_path


def _matrix(rng, n=240, dtype=np.float64):
    """A random nonsymmetric sparse matrix with a moderate diagonal (spilu drops and pivots)."""
    A = sp.random(n, n, density=0.03, format="csr", random_state=rng)
    if np.dtype(dtype).kind == "c":
        A = A + 1j * sp.random(n, n, density=0.03, format="csr", random_state=rng)
    return (A + sp.diags(rng.uniform(0.5, 2.0, n))).astype(dtype).tocsr()


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_spilu_matches_scipy(exec, rng, dtype):
    A = _matrix(rng, dtype=dtype)
    n = A.shape[0]
    ilu, expected = gk.linalg.spilu(A, executor=exec), spla.spilu(A.tocsc())
    assert ilu.shape == (n, n) and ilu.dtype == dtype
    np.testing.assert_array_equal(ilu.perm_r, expected.perm_r)
    np.testing.assert_array_equal(ilu.perm_c, expected.perm_c)
    for mine, theirs in ((ilu.L, expected.L), (ilu.U, expected.U)):
        assert sp.isspmatrix_csc(mine) and abs(mine - theirs).max() <= 1e-14 * abs(theirs).max()
    # nnz: the entries of L and U (SciPy's counts SuperLU's supernodal storage, a few more)
    assert ilu.nnz == ilu.L.nnz + ilu.U.nnz and 0.8 * expected.nnz <= ilu.nnz <= expected.nnz
    b = rng.standard_normal((n, 3)) + (1j * rng.standard_normal((n, 3)) if np.dtype(dtype).kind == "c" else 0)
    for trans in ("N", "T", "H"):
        for rhs in (b[:, 0], b):
            x = ilu.solve(rhs, trans=trans)
            assert x.shape == rhs.shape and x.dtype == dtype
            want = expected.solve(rhs, trans=trans)
            np.testing.assert_allclose(x, want, rtol=1e-10, atol=1e-10 * np.abs(want).max())


def test_spilu_keywords_and_options(exec, rng):
    """drop_tol, fill_factor, drop_rule, permc_spec, diag_pivot_thresh and options as SciPy's."""
    A = _matrix(rng)
    b = rng.standard_normal(A.shape[0])
    cases = [dict(drop_tol=1e-2), dict(fill_factor=2), dict(drop_rule="basic"), dict(permc_spec="NATURAL"),
             dict(permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=1.0), dict(drop_tol=0.0, drop_rule="basic,prows"),
             dict(options={"ILU_DropTol": 1e-1, "ColPerm": "NATURAL"})]
    for kwargs in cases:
        expected = spla.spilu(A.tocsc(), **kwargs)
        ilu = gk.linalg.spilu(A, executor=exec, **kwargs)
        assert ilu.L.nnz == expected.L.nnz and ilu.U.nnz == expected.U.nnz, kwargs
        np.testing.assert_allclose(ilu.solve(b), expected.solve(b), rtol=1e-10, atol=1e-10, err_msg=str(kwargs))
    # a bigger drop tolerance drops more
    assert gk.linalg.spilu(A, drop_tol=1e-1, executor=exec).nnz < gk.linalg.spilu(A, drop_tol=0.0, executor=exec).nnz


def test_spilu_input_forms(exec, rng):
    """CSC, dense, a ginkpy Csr and float32 A; A is not changed."""
    A = _matrix(rng, 101)
    b = rng.standard_normal(101)
    A_copy = A.copy()
    expected = spla.spilu(A.tocsc()).solve(b)
    for form in (A, A.tocsc(), A.toarray(), gk.matrix.Csr.from_scipy(exec, A)):
        np.testing.assert_allclose(gk.linalg.spilu(form, executor=exec).solve(b), expected, rtol=1e-10)
    ilu32 = gk.linalg.spilu(A.astype(np.float32), executor=exec)
    assert ilu32.dtype == np.float32 and ilu32.solve(b.astype(np.float32)).dtype == np.float32
    np.testing.assert_allclose(ilu32.solve(b), expected, rtol=1e-3, atol=1e-3 * np.abs(expected).max())
    assert (A != A_copy).nnz == 0


def _iterations(method, A, b, M, exec):
    count = [0]
    kwargs = dict(callback_type="pr_norm", restart=30) if method is gk.linalg.gmres or method is spla.gmres else {}
    x, info = method(A, b, M=M, rtol=1e-8, maxiter=2000, callback=lambda _: count.__setitem__(0, count[0] + 1),
                     **({"executor": exec} if exec is not None else {}), **kwargs)
    assert info == 0 and np.linalg.norm(A @ x - b) <= 1.01e-8 * np.linalg.norm(b)
    return count[0]


@pytest.mark.parametrize("name", ["orsirr_1", "pde900"])
@pytest.mark.parametrize("method", ["gmres", "bicgstab"])
def test_spilu_as_M(exec, name, method):
    """spilu(A) as M: the same preconditioner as M="ilut" (so about its iterations; exact
    triangular solves where M="ilut" may use approximate ones on a GPU), and within 1.5x of
    SciPy's solver with SciPy's spilu wrapped in a LinearOperator."""
    A = scipy.io.mmread(matrix_path(name + ".mtx")).tocsr()
    b = A @ np.ones(A.shape[0])
    ours = getattr(gk.linalg, method)
    ilu = gk.linalg.spilu(A, drop_tol=1e-3, executor=exec)
    with_spilu = _iterations(ours, A, b, ilu, exec)
    with_ilut = _iterations(ours, A, b, ("ilut", {"drop_tol": 1e-3}), exec)
    assert with_spilu <= 1.1 * with_ilut + 2
    host = spla.spilu(A.tocsc(), drop_tol=1e-3)
    scipys = _iterations(getattr(spla, method), A, b, spla.LinearOperator(A.shape, host.solve), None)
    assert with_spilu <= 1.5 * scipys + 2


def test_spilu_as_M_is_used_as_it_is(exec):
    """ginkpy's spilu (and a LinearOperator around its solve) is M itself on its own executor:
    no second copy of its factors; the solve is that of M="ilut" with the same drop_tol."""
    from ginkpy.linalg._preconditioner import device_form
    from ginkpy.problems import convection_diffusion_2d
    A = convection_diffusion_2d(12).tocsc()
    ilu = gk.linalg.spilu(A, drop_tol=1e-3, executor=exec)
    assert device_form(ilu, exec, np.dtype(np.float64)) is ilu
    assert device_form(spla.LinearOperator(A.shape, ilu.solve), exec, np.dtype(np.float64)) is ilu
    b = np.ones(A.shape[0])
    x, info = gk.linalg.gmres(A, b, M=ilu, rtol=1e-10, executor=exec)
    gk.linalg.clear_cache()
    assert info == 0 and np.linalg.norm(A @ x - b) <= 1e-9 * np.linalg.norm(b)


def test_spilu_errors(exec, rng):
    A = _matrix(rng, 50)
    with pytest.raises(ValueError, match="square"):
        gk.linalg.spilu(A[:, :-1], executor=exec)
    with pytest.raises(ValueError, match="2-D"):
        gk.linalg.spilu(np.ones(5), executor=exec)
    singular = A.tolil()
    singular[7, :] = 0
    with pytest.raises(ValueError, match="spilu: .*singular"):
        gk.linalg.spilu(singular.tocsr(), executor=exec)
    with pytest.raises(ValueError, match="drop_rule must be"):
        gk.linalg.spilu(A, drop_rule="bogus", executor=exec)
    with pytest.raises(ValueError, match="ordering must be one of"):
        gk.linalg.spilu(A, permc_spec="bogus", executor=exec)
    with pytest.raises(TypeError, match="options must be a dict"):
        gk.linalg.spilu(A, options=[1], executor=exec)
    ilu = gk.linalg.spilu(A, executor=exec)
    with pytest.raises(ValueError, match="trans must be"):
        ilu.solve(np.ones(50), trans="X")
    with pytest.raises(ValueError, match="rhs has shape"):
        ilu.solve(np.ones(49))
    with pytest.raises(TypeError, match="rhs is complex"):
        ilu.solve(np.ones(50) * 1j)


@pytest.mark.parametrize("trans", ["T", "H"])
def test_splu_trans(exec, rng, trans):
    A = _matrix(rng, 150, np.complex128)
    b = rng.standard_normal((150, 2))
    lu = gk.linalg.splu(A, executor=exec)
    np.testing.assert_allclose(lu.solve(b, trans=trans), spla.splu(A.tocsc()).solve(b, trans=trans), rtol=1e-10,
                               atol=1e-12)
    op = A.T if trans == "T" else A.conj().T
    np.testing.assert_allclose(op @ lu.solve(b[:, 0], trans=trans), b[:, 0], atol=1e-10)
