"""gk.linalg.spsolve_triangular and gk.linalg.factorized against SciPy's functions of those names,
on both executors: random triangles (one or several right-hand sides, unit diagonal, upper and
lower, complex), SciPy's errors, and factorized on a real and a generated matrix."""
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from ginkpy.problems import convection_diffusion_2d
from conftest import matrix_path


def _matrix(rng, n, dtype=np.float64, density=0.02, lower=True):
    """A random sparse lower (upper) triangular n x n matrix with a strong diagonal."""
    A = sp.random(n, n, density=density, format="csr", random_state=rng)
    if np.dtype(dtype).kind == "c":
        A = A + 1j * sp.random(n, n, density=density, format="csr", random_state=rng)
    A = (sp.tril(A, -1) if lower else sp.triu(A, 1)) + sp.diags(np.full(n, 4.0 + (1j if np.dtype(dtype).kind == "c" else 0)))
    return A.astype(dtype).tocsr()


def _scipy(A, b, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sp.SparseEfficiencyWarning)
        return spla.spsolve_triangular(A, b, **kwargs)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit_diagonal", [False, True])
@pytest.mark.parametrize("k", [None, 3])
def test_spsolve_triangular_matches_scipy(exec, rng, lower, unit_diagonal, k):
    n = 301
    A = _matrix(rng, n, lower=lower)
    b = rng.standard_normal(n if k is None else (n, k))
    x = gk.linalg.spsolve_triangular(A, b, lower=lower, unit_diagonal=unit_diagonal, executor=exec)
    expected = _scipy(A, b, lower=lower, unit_diagonal=unit_diagonal)
    assert x.shape == b.shape and x.dtype == np.float64
    np.testing.assert_allclose(x, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lower", [True, False])
def test_spsolve_triangular_complex(exec, rng, lower):
    n = 257
    A = _matrix(rng, n, np.complex128, lower=lower)
    b = rng.standard_normal((n, 2)) + 1j * rng.standard_normal((n, 2))
    x = gk.linalg.spsolve_triangular(A, b, lower=lower, executor=exec)
    assert x.dtype == np.complex128
    np.testing.assert_allclose(x, _scipy(A, b, lower=lower), rtol=1e-12, atol=1e-12)
    # a real triangle with a complex b: complex solve, as SciPy's
    R = _matrix(rng, n, lower=lower)
    np.testing.assert_allclose(gk.linalg.spsolve_triangular(R, b[:, 0], lower=lower, executor=exec),
                               _scipy(R, b[:, 0], lower=lower), rtol=1e-12, atol=1e-12)


def test_spsolve_triangular_input_forms(exec, rng):
    """CSC, dense and float32 A, integer b; A and b are not changed."""
    n = 101
    A = _matrix(rng, n)
    b = rng.integers(-5, 5, n)
    A_copy, b_copy = A.copy(), b.copy()
    expected = _scipy(A, b)
    for form in (A, A.tocsc(), A.toarray(), gk.matrix.Csr.from_scipy(exec, A)):
        np.testing.assert_allclose(gk.linalg.spsolve_triangular(form, b, executor=exec), expected, rtol=1e-12)
    x32 = gk.linalg.spsolve_triangular(A.astype(np.float32), b.astype(np.float32), executor=exec)
    assert x32.dtype == np.float32
    np.testing.assert_allclose(x32, expected, rtol=1e-4)
    assert (A != A_copy).nnz == 0 and np.array_equal(b, b_copy)


def test_spsolve_triangular_errors(exec, rng):
    n = 31
    A = _matrix(rng, n)
    b = rng.standard_normal(n)
    with pytest.raises(ValueError, match="square"):
        gk.linalg.spsolve_triangular(A[:, :-1], b, executor=exec)
    with pytest.raises(ValueError, match="shape of b"):
        gk.linalg.spsolve_triangular(A, b[:-1], executor=exec)
    with pytest.raises(ValueError, match="dims"):
        gk.linalg.spsolve_triangular(A, np.ones((n, 2, 2)), executor=exec)
    singular = A.tolil()
    singular[5, 5] = 0
    singular = singular.tocsr()
    with pytest.raises(np.linalg.LinAlgError, match="zero entry on diagonal") as ours:
        gk.linalg.spsolve_triangular(singular, b, executor=exec)
    with pytest.raises(np.linalg.LinAlgError) as theirs:
        _scipy(singular, b)
    assert type(ours.value) is type(theirs.value)
    # the missing diagonal entry is no error with unit_diagonal (it is not read)
    np.testing.assert_allclose(gk.linalg.spsolve_triangular(singular, b, unit_diagonal=True, executor=exec),
                               _scipy(singular, b, unit_diagonal=True), rtol=1e-12, atol=1e-12)
    bad_b = b.copy()
    bad_b[3] = np.nan
    with pytest.raises(ValueError, match="NaN or Inf"):
        gk.linalg.spsolve_triangular(A, bad_b, executor=exec)
    bad_A = A.copy()
    bad_A.data[0] = np.inf
    with pytest.raises(ValueError, match="NaN or Inf"):
        gk.linalg.spsolve_triangular(bad_A, b, executor=exec)


def test_spsolve_triangular_reads_its_triangle(exec, rng):
    """Entries outside the named triangle are not read (SciPy asks for a triangular A)."""
    n = 99
    L, U = _matrix(rng, n), _matrix(rng, n, lower=False)
    full = (L + sp.triu(U, 1)).tocsr()  # its triangles: L and U
    b = rng.standard_normal(n)
    np.testing.assert_allclose(gk.linalg.spsolve_triangular(full, b, executor=exec), _scipy(L, b), rtol=1e-12)
    np.testing.assert_allclose(gk.linalg.spsolve_triangular(full, b, lower=False, executor=exec),
                               _scipy(U, b, lower=False), rtol=1e-12)


def _check_factorized(A, exec, rng, rtol):
    solve = gk.linalg.factorized(A, executor=exec)
    expected_solve = spla.factorized(A.tocsc())
    b = rng.standard_normal(A.shape[0])
    np.testing.assert_allclose(solve(b), expected_solve(b), rtol=rtol, atol=rtol * np.abs(expected_solve(b)).max())
    B = rng.standard_normal((A.shape[0], 2))
    X = solve(B)
    assert X.shape == B.shape
    np.testing.assert_allclose(A @ X, B, atol=rtol * np.abs(B).max() * 1e2)
    return solve


def test_factorized_convection_diffusion(exec, rng):
    _check_factorized(convection_diffusion_2d(17), exec, rng, 1e-10)


def test_factorized_pde900(exec, rng):
    A = scipy.io.mmread(matrix_path("pde900.mtx")).tocsr()
    solve = _check_factorized(A, exec, rng, 1e-8)
    with pytest.raises(ValueError, match="shape"):
        solve(np.ones(A.shape[0] + 1))


def test_factorized_errors(exec):
    with pytest.raises(ValueError, match="square"):
        gk.linalg.factorized(sp.random(5, 4, density=0.5, format="csr"), executor=exec)
