"""Coo, Ell, Sellp and Hybrid: hand-checked storage of a 4 x 4 matrix, round trips through Csr,
SpMV of reference and device against SciPy, and Cg with each format as the system matrix."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from conftest import matrix_path, tol
from numpy.testing import assert_array_equal

import ginkpy as gk
from ginkpy.core.matrix.hybrid import ell_width
from ginkpy.problems import poisson_2d

Coo, Csr, Dense, Ell, Hybrid, Sellp = (gk.matrix.Coo, gk.matrix.Csr, gk.matrix.Dense, gk.matrix.Ell,
                                       gk.matrix.Hybrid, gk.matrix.Sellp)
FORMATS = [Coo, Ell, Sellp, Hybrid]

# row 1 empty, row 2 the longest (3 entries)
TINY = np.array([[1, 0, 2, 0],
                 [0, 0, 0, 0],
                 [3, 4, 5, 0],
                 [0, 0, 0, 6]], dtype=float)


def host(exec, *arrays):
    return exec.to_host(*arrays)


# -- storage of a hand-checked example ---------------------------------------------------------------

def test_coo_storage(exec):
    a = Coo.from_scipy(exec, TINY)
    rows, cols, values = host(exec, a.row_idxs, a.col_idxs, a.values)
    assert_array_equal(rows, [0, 0, 2, 2, 2, 3])
    assert_array_equal(cols, [0, 2, 0, 1, 2, 3])
    assert_array_equal(values, [1, 2, 3, 4, 5, 6])
    assert rows.dtype == cols.dtype == np.int32
    assert a.nnz == 6


def test_ell_storage(exec):
    a = Ell.from_scipy(exec, TINY)
    assert (a.stride, a.num_stored_elements_per_row, a.nnz) == (4, 3, 6)
    cols, values = host(exec, a.col_idxs, a.values)
    # column-major: slot 0 of rows 0..3, then slot 1, then slot 2; padding is column -1, value 0
    assert_array_equal(cols, [0, -1, 0, 3, 2, -1, 1, -1, -1, -1, 2, -1])
    assert_array_equal(values, [1, 0, 3, 6, 2, 0, 4, 0, 0, 0, 5, 0])
    wide = Ell.from_scipy(exec, TINY, num_stored_elements_per_row=4)
    assert_array_equal(host(exec, wide.col_idxs)[12:], [-1, -1, -1, -1])


def test_sellp_storage(exec):
    a = Sellp.from_scipy(exec, TINY, slice_size=2)
    sets, lengths, cols, values = host(exec, a.slice_sets, a.slice_lengths, a.col_idxs, a.values)
    # slice 0 = rows 0, 1 (longest 2), slice 1 = rows 2, 3 (longest 3); column-major in a slice
    assert_array_equal(lengths, [2, 3])
    assert_array_equal(sets, [0, 2, 5])
    assert_array_equal(cols, [0, -1, 2, -1, 0, 3, 1, -1, 2, -1])
    assert_array_equal(values, [1, 0, 2, 0, 3, 6, 4, 0, 5, 0])
    assert a.nnz == 6
    # stride_factor 2 rounds the slice lengths up to even numbers
    b = Sellp.from_scipy(exec, TINY, slice_size=2, stride_factor=2)
    sets, lengths, cols = host(exec, b.slice_sets, b.slice_lengths, b.col_idxs)
    assert_array_equal(lengths, [2, 4])
    assert_array_equal(sets, [0, 2, 6])
    assert_array_equal(cols, [0, -1, 2, -1, 0, 3, 1, -1, 2, -1, -1, -1])
    # the default slice of 64 rows holds all four rows and 60 rows of padding
    c = Sellp.from_scipy(exec, TINY)
    assert (c.slice_size, c.stride_factor, c.num_slices) == (64, 1, 1)
    assert_array_equal(host(exec, c.slice_lengths), [3])
    assert c.col_idxs.shape == (3 * 64,)


def test_hybrid_storage(exec):
    # row lengths 2, 0, 3, 1 sorted: 0 1 2 3; the 0.5 quantile is the third: Ell width 2
    a = Hybrid.from_scipy(exec, TINY, imbalance_limit=0.5)
    assert a.ell.num_stored_elements_per_row == 2
    assert_array_equal(host(exec, a.ell.col_idxs), [0, -1, 0, 3, 2, -1, 1, -1])
    assert_array_equal(host(exec, a.ell.values), [1, 0, 3, 6, 2, 0, 4, 0])
    rows, cols, values = host(exec, a.coo.row_idxs, a.coo.col_idxs, a.coo.values)
    assert (rows.tolist(), cols.tolist(), values.tolist()) == ([2], [2], [5])
    assert a.nnz == 6
    everything_in_ell = Hybrid.from_scipy(exec, TINY, imbalance_limit=1.0)
    assert (everything_in_ell.ell.num_stored_elements_per_row, everything_in_ell.coo.nnz) == (3, 0)
    everything_in_coo = Hybrid.from_scipy(exec, TINY, imbalance_limit=0.0)
    assert (everything_in_coo.ell.num_stored_elements_per_row, everything_in_coo.coo.nnz) == (0, 6)


def test_ell_width_is_the_quantile_row_length():
    lengths = np.array([5, 1, 1, 2, 1, 1, 1, 1, 1, 100])
    # sorted: 1 (7 times), 2, 5, 100; 0.8 of 10 rows is position 8, 0.7 position 7
    assert ell_width(lengths, 0.8) == 5
    assert ell_width(lengths, 0.7) == 2
    assert ell_width(lengths, 1.0) == 100
    assert ell_width(lengths, 0.0) == 1
    assert ell_width(np.array([], dtype=int), 0.8) == 0


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
def test_tiny_spmv_exact(exec, fmt):
    a = fmt.from_scipy(exec, TINY)
    b = Dense.from_numpy(exec, np.array([[1, -1], [2, 0], [3, 1], [4, 2]]))
    x = Dense.full(exec, (4, 2), 1.0)
    a.apply(b, x)
    assert_array_equal(x.to_numpy(), [[7, 1], [0, 0], [26, 2], [24, 12]])
    # x = alpha A b + beta x with alpha = 2, beta = (-1, 0.5) per column
    a.apply(2.0, b, np.array([-1.0, 0.5]), x)
    assert_array_equal(x.to_numpy(), [[7, 2.5], [0, 0], [26, 5], [24, 30]])


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
def test_padding_adds_nothing_even_against_inf(exec, fmt):
    # padding reads b[0]; rows 1 (empty) and 3 (column 3 only) must not see its Inf
    a = fmt.from_scipy(exec, TINY, **({"imbalance_limit": 0.5} if fmt is Hybrid else {}))
    x = Dense.zeros(exec, (4, 1))
    a.apply(Dense.from_numpy(exec, np.array([np.inf, 1, 1, 1])), x)
    assert_array_equal(x.to_numpy()[[1, 3], 0], [0, 6])


# -- conversions -----------------------------------------------------------------------------------

def random_matrix(rng, n=517, m=701, dtype=np.float64):
    """n x m with empty rows (first, last and a block), explicit zeros, and one full row
    longer than two work-groups (it spans several Coo chunks)."""
    lengths = rng.integers(0, 13, n)
    lengths[[0, n - 1]] = 0
    lengths[40:47] = 0
    rows = np.repeat(np.arange(n), lengths)
    cols = rng.integers(0, m, rows.size)
    s = sp.csr_matrix((rng.standard_normal(rows.size), (rows, cols)), shape=(n, m))
    s.sum_duplicates()
    dense_row = sp.csr_matrix((rng.standard_normal(m), (np.full(m, 5), np.arange(m))), shape=(n, m))
    s = (s + dense_row).tocsr().astype(dtype)
    s.data[::17] = 0.0  # explicit zeros stay stored
    s.sort_indices()
    return s


def assert_same_csr(actual, expected):
    assert actual.shape == expected.shape
    assert_array_equal(actual.indptr, expected.indptr)
    assert_array_equal(actual.indices, expected.indices)
    assert_array_equal(actual.data, expected.data)
    assert actual.dtype == expected.dtype


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
def test_round_trip_through_csr(exec, fmt, rng):
    s = random_matrix(rng, dtype=np.float32)
    assert (s.data == 0).any() and (np.diff(s.indptr) == 0).any()
    csr = Csr.from_scipy(exec, s)
    a = fmt.from_csr(csr)
    assert a.executor is exec and a.dtype == np.float32 and a.shape == s.shape
    assert a.nnz == csr.nnz == s.nnz  # explicit zeros count, padding does not
    back = a.to_csr()
    assert isinstance(back, Csr) and back.executor is exec
    assert_same_csr(back.to_scipy(), s)
    assert_same_csr(a.to_scipy(), s)


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
def test_clone_and_to_executor(ref, ocl, fmt, rng):
    s = random_matrix(rng, n=67, m=45)
    a = fmt.from_scipy(ref, s)
    on_device = a.to_executor(ocl)
    assert isinstance(on_device, fmt) and on_device.executor is ocl
    assert on_device.to_executor(ocl) is on_device
    copy = on_device.clone()
    assert copy is not on_device and copy.executor is ocl
    assert_same_csr(copy.clone(ref).to_scipy(), s)
    assert_same_csr(on_device.to_scipy(), s)


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(0, 0), (5, 0), (0, 3), (6, 4)])
def test_empty_matrices(exec, fmt, shape):
    a = fmt.from_scipy(exec, sp.csr_matrix(shape))
    assert a.nnz == 0 and a.is_finite()
    assert_same_csr(a.to_scipy(), sp.csr_matrix(shape))
    x = Dense.full(exec, (shape[0], 2), 3.0)
    a.apply(Dense.full(exec, (shape[1], 2), 1.0), x)
    assert_array_equal(x.to_numpy(), np.zeros((shape[0], 2)))


def test_bad_parameters(ref):
    csr = Csr.from_scipy(ref, TINY)
    for bad in (0, -64, 2.5, True):
        with pytest.raises(ValueError, match="slice_size must be a positive integer"):
            Sellp.from_csr(csr, slice_size=bad)
    with pytest.raises(ValueError, match="stride_factor must be a positive integer"):
        Sellp.from_csr(csr, stride_factor=0)
    with pytest.raises(ValueError, match=r"imbalance_limit .* in \[0, 1\]"):
        Hybrid.from_csr(csr, imbalance_limit=1.5)
    with pytest.raises(ValueError, match="less than the longest row"):
        Ell.from_csr(csr, num_stored_elements_per_row=2)
    for fmt in FORMATS:
        with pytest.raises(TypeError, match=f"{fmt.__name__}.from_csr needs a gk.matrix.Csr"):
            fmt.from_csr(TINY)
    with pytest.raises(ValueError, match="same shape"):
        Hybrid(Ell.from_csr(csr), Coo.from_scipy(ref, np.eye(3)))
    with pytest.raises(TypeError, match="an Ell and a Coo"):
        Hybrid(Coo.from_csr(csr), Coo.from_csr(csr))


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
def test_is_finite(exec, fmt):
    # a Hybrid with imbalance limit 0.5 keeps (2, 2) in its Coo part, (0, 0) in its Ell part
    kwargs = {"imbalance_limit": 0.5} if fmt is Hybrid else {}
    assert fmt.from_scipy(exec, TINY, **kwargs).is_finite()
    for bad in (np.nan, np.inf, -np.inf):
        for where in ((2, 2), (0, 0)):
            values = TINY.copy()
            values[where] = bad
            assert not fmt.from_scipy(exec, values, **kwargs).is_finite()


# -- SpMV: reference and device against SciPy ------------------------------------------------------

def assert_spmv_close(actual, expected, bound, dtype):
    """|actual - expected| <= tol(dtype) * (|alpha| |A| |b| + |beta| |x|), entry by entry."""
    assert actual.dtype == dtype
    err = np.abs(actual.astype(np.float64) - expected)
    worst = np.max(err - tol(dtype) * bound, initial=-1.0)
    assert worst <= 0, f"error exceeds {tol(dtype):.1e} * |A||b| by {worst:.2e}"


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [1, 3])
def test_spmv_reference_vs_device(ref, ocl, fmt, dtype, k, rng):
    s = random_matrix(rng, dtype=dtype)
    b_np = rng.standard_normal((s.shape[1], k)).astype(dtype)
    x_np = rng.standard_normal((s.shape[0], k)).astype(dtype)
    alphas = [np.array([0.5]), rng.standard_normal(k)]  # 1 x 1 and 1 x k
    betas = [np.array([-2.0]), rng.standard_normal(k)]
    s64, b64, x64 = s.astype(np.float64), b_np.astype(np.float64), x_np.astype(np.float64)
    product, bound = s64 @ b64, abs(s64) @ abs(b64)
    results = {}
    for exec in (ref, ocl):
        a = fmt.from_scipy(exec, s)
        b = Dense.from_numpy(exec, b_np)
        x = Dense.from_numpy(exec, x_np)  # overwritten by apply
        a.apply(b, x)
        results[exec, "apply"] = x.to_numpy()
        for i, (alpha, beta) in enumerate(zip(alphas, betas)):
            x = Dense.from_numpy(exec, x_np)
            a.apply(alpha.astype(dtype), b, beta.astype(dtype), x)
            results[exec, i] = x.to_numpy()
    for exec in (ref, ocl):
        assert_spmv_close(results[exec, "apply"], product, bound, dtype)
        for i, (alpha, beta) in enumerate(zip(alphas, betas)):
            alpha, beta = alpha.astype(dtype).astype(np.float64), beta.astype(dtype).astype(np.float64)
            assert_spmv_close(results[exec, i], alpha * product + beta * x64,
                              abs(alpha) * bound + abs(beta) * abs(x64), dtype)
    assert_array_equal(results[ocl, "apply"][[0, 40, 46, -1]], 0)  # empty rows


@pytest.mark.parametrize("tile", [(5, 3), (256, 8)], ids=["tiny-tiles", "gpu-tiles"])
def test_coo_spmv_tile_shapes(ocl, tile, rng, monkeypatch):
    # tiny tiles: the long row fills whole tiles (one row per tile), rows cross tiles everywhere;
    # the GPU's shape runs here on the CPU device too
    from ginkpy.opencl.matrix import coo_kernels
    monkeypatch.setattr(coo_kernels, "_tile_shape", lambda info: tile)
    s = random_matrix(rng)
    b_np = rng.standard_normal((s.shape[1], 3))
    x_np = rng.standard_normal((s.shape[0], 3))
    alpha, beta = rng.standard_normal(3), np.array([0.0])
    a = Coo.from_scipy(ocl, s)
    x = Dense.from_numpy(ocl, x_np)
    a.apply(Dense.from_numpy(ocl, b_np), x)
    assert_spmv_close(x.to_numpy(), s @ b_np, abs(s) @ abs(b_np), np.float64)
    x = Dense.from_numpy(ocl, x_np)
    a.apply(alpha, Dense.from_numpy(ocl, b_np), beta, x)
    assert_spmv_close(x.to_numpy(), alpha * (s @ b_np), abs(alpha) * (abs(s) @ abs(b_np)), np.float64)


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
def test_spmv_real_matrix(exec, fmt):
    # add32: explicit zeros (4036 of 23884 entries), rows of 2 to 32 entries
    s = scipy.io.mmread(matrix_path("add32.mtx")).tocsr()
    a = fmt.from_scipy(exec, s)
    assert a.nnz == s.nnz
    b = np.random.default_rng(0).standard_normal((s.shape[0], 2))
    x = Dense.zeros(exec, (s.shape[0], 2))
    a.apply(Dense.from_numpy(exec, b), x)
    assert_spmv_close(x.to_numpy(), s @ b, abs(s) @ abs(b), np.float64)


# -- solvers ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
def test_cg_with_each_format(exec, fmt):
    if exec.backend == "opencl":
        pytest.importorskip("ginkpy.opencl.solver.cg_kernels", reason="Cg has no OpenCL kernels yet")
    s = poisson_2d(9)
    b_np = np.ones((s.shape[0], 2))
    b_np[:, 1] = np.arange(s.shape[0])
    solver = (gk.solver.Cg.build()
              .with_criteria(gk.stop.Iteration.build().with_max_iters(200),
                             gk.stop.ResidualNorm.build().with_reduction_factor(1e-10))
              .on(exec).generate(fmt.from_scipy(exec, s)))
    assert isinstance(solver.system_matrix, fmt)
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    x = solver.apply(Dense.from_numpy(exec, b_np), Dense.zeros(exec, b_np.shape))
    assert np.all(logger.has_converged)
    expected = sp.linalg.spsolve(s.tocsc(), b_np)
    np.testing.assert_allclose(x.to_numpy(), expected, rtol=1e-8, atol=1e-8 * np.abs(expected).max())


def test_solver_rejects_non_finite_format(ref):
    values = poisson_2d(3).toarray()
    values[4, 4] = np.nan
    crit = gk.stop.Iteration.build().with_max_iters(5)
    for fmt in FORMATS:
        with pytest.raises(ValueError, match="NaN"):
            gk.solver.Cg.build().with_criteria(crit).on(ref).generate(fmt.from_scipy(ref, values))


def test_csr_transpose(exec):
    # rectangular, with empty rows and columns and an explicitly stored zero
    S = sp.random(37, 23, density=0.15, format="lil", random_state=np.random.default_rng(3))
    S[4, :] = 0
    S[:, 7] = 0
    S = S.tocsr()
    S.data[0] = 0.0  # stored
    A = gk.matrix.Csr.from_scipy(exec, S)
    T = A.transpose()
    assert T.shape == (23, 37) and T.nnz == A.nnz and T.executor is exec
    t = T.to_scipy()
    assert t.has_sorted_indices
    np.testing.assert_array_equal(t.toarray(), S.toarray().T)
    np.testing.assert_array_equal(T.transpose().to_scipy().indices, A.to_scipy().indices)
