"""The sparse product C = A B of Csr matrices (``Csr.multiply``, ``matrix.spgemm`` kernels) and
the transpose with its entry map: by hand on the reference executor (structural zeros kept),
the device against its reference twin (random rectangular factors with empty rows, rows far
longer than a work-group, every value type; the CPU and GPU launch layouts), the value-only
update into the same arrays, and the errors."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.matrix.spgemm import transpose_values, transpose_with_source

from conftest import sum_tol

Csr = gk.matrix.Csr


@pytest.fixture(params=["dense", "merge", "hash", "dense_counted", "merge_counted"])
def device(request, dev, monkeypatch):
    """The device executor (CPU and GPU launch layouts) with each way to make a row of C: the
    dense accumulator where its markers fit (else the device's own), the merge everywhere (no
    markers, no hash), or the hash beside the merge (rows of 5 to 64 products hashed, also on a
    CPU; the rest merged, short and long). Without the hash the rows are written once at bounds
    of their lengths and compacted; "_counted": counted first instead (the one pass's scratch
    over its cap)."""
    from ginkpy.opencl.matrix import spgemm_kernels
    if request.param.endswith("_counted"):
        monkeypatch.setattr(spgemm_kernels, "SINGLE_PASS_SHARE", 1 << 62)  # (a cap of 0 bytes)
    if not request.param.startswith("dense"):
        monkeypatch.setattr(spgemm_kernels, "DENSE_MARKER_BYTES", 0)
        monkeypatch.setattr(spgemm_kernels, "GPU_DENSE_BYTES", 0)
    if request.param.startswith("merge"):
        monkeypatch.setattr(spgemm_kernels, "HASH_LIMIT", 0)
    if request.param == "hash":
        monkeypatch.setattr(spgemm_kernels, "HASH_ON_CPU", True)
        monkeypatch.setattr(spgemm_kernels, "HASH_FROM", 4)
        monkeypatch.setattr(spgemm_kernels, "HASH_LIMIT", 100)  # (taken as 64: a power of two)
    return dev
DTYPES = [np.float64, np.float32, np.complex128, np.complex64]


def _random(rng, n, m, dtype, per_row=6, empty=0.2, long_rows=0, long_length=0):
    """n x m with 0 to 2 per_row entries per row (a fraction ``empty`` of the rows empty) and
    ``long_rows`` rows of ``long_length`` entries."""
    lengths = rng.integers(0, 2 * per_row + 1, n)
    lengths[rng.random(n) < empty] = 0
    long = rng.choice(n, long_rows, replace=False) if long_rows else []
    lengths[long] = min(long_length, m)
    lengths = np.minimum(lengths, m)
    rows = np.repeat(np.arange(n), lengths)
    cols = np.concatenate([rng.choice(m, k, replace=False) for k in lengths]) if n else np.zeros(0, int)
    values = rng.standard_normal(rows.size)
    if np.issubdtype(dtype, np.complexfloating):
        values = values + 1j * rng.standard_normal(rows.size)
    return sp.csr_matrix((values.astype(dtype), (rows, cols)), shape=(n, m))


def _check_canonical(C):
    """Columns ascending and distinct in every row."""
    ptrs, cols = C.indptr, C.indices
    rows = np.repeat(np.arange(C.shape[0]), np.diff(ptrs))
    inside = rows[1:] == rows[:-1]
    assert np.all(cols[1:][inside] > cols[:-1][inside])


def _assert_product(C, A, B, dtype):
    """C (SciPy) is the structural product A B: every (i, j) with a_ik b_kj stored, its sum."""
    _check_canonical(C)
    magnitude = (abs(A).astype(np.float64) @ abs(B).astype(np.float64)).toarray()  # > 0 where structural
    stored = np.zeros(C.shape, bool)
    stored[np.repeat(np.arange(C.shape[0]), np.diff(C.indptr)), C.indices] = True
    np.testing.assert_array_equal(stored, magnitude > 0)
    # |c_ij - sum_k a_ik b_kj| within rounding of a sum of |a_ik b_kj|
    terms = max(1, int(np.diff(A.indptr).max(initial=1)))
    error = np.abs(C.toarray() - (A @ B).toarray())
    assert np.all(error <= sum_tol(dtype, terms) * magnitude)


# -- by hand -----------------------------------------------------------------------------------

def test_a_product_by_hand_keeps_the_entries_that_cancel(ref):
    A = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 2.0, 3.0]]))
    B = sp.csr_matrix(np.array([[1.0, 2.0], [-1.0, 0.0], [0.0, 4.0]]))
    C = Csr.from_scipy(ref, A).multiply(Csr.from_scipy(ref, B)).to_scipy()
    # row 0: (1 - 1, 2) = (0, 2), the 0 stored; row 1 empty; row 2: (-2, 12)
    np.testing.assert_array_equal(C.indptr, [0, 2, 2, 4])
    np.testing.assert_array_equal(C.indices, [0, 1, 0, 1])
    np.testing.assert_array_equal(C.data, [0.0, 2.0, -2.0, 12.0])


# -- the device against its twin --------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_rectangular_product_against_the_reference(ref, device, rng, dtype):
    # A 700 x 300 times B 300 x 500: more rows than a work-group, a fifth of them empty
    A, B = _random(rng, 700, 300, dtype), _random(rng, 300, 500, dtype)
    device = Csr.from_scipy(device, A).multiply(Csr.from_scipy(device, B)).to_scipy()
    host = Csr.from_scipy(ref, A).multiply(Csr.from_scipy(ref, B)).to_scipy()
    assert device.shape == (700, 500) and device.dtype == dtype
    np.testing.assert_array_equal(device.indptr, host.indptr)
    np.testing.assert_array_equal(device.indices, host.indices)
    _assert_product(device, A, B, dtype)
    _assert_product(host, A, B, dtype)


def test_long_rows(ref, device, rng):
    # rows of A of 2500 entries (each merging 2500 rows of B: far beyond any work-group's local
    # memory) and rows of B of 1500, beside short ones
    A = _random(rng, 400, 3000, np.float64, per_row=3, long_rows=3, long_length=2500)
    B = _random(rng, 3000, 2000, np.float64, per_row=3, long_rows=4, long_length=1500)
    device = Csr.from_scipy(device, A).multiply(Csr.from_scipy(device, B)).to_scipy()
    host = Csr.from_scipy(ref, A).multiply(Csr.from_scipy(ref, B)).to_scipy()
    np.testing.assert_array_equal(device.indptr, host.indptr)
    np.testing.assert_array_equal(device.indices, host.indices)
    _assert_product(device, A, B, np.float64)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_written_once_or_counted_first_alike(dev, rng, dtype, monkeypatch):
    # the one pass (rows at bounds of their lengths, compacted) gives the arrays of counting
    # first, to the bit: the same rows merged or accumulated in the same order; empty rows, rows
    # of A longer than PRIVATE_LISTS, both ways of a device (dense where the markers fit)
    from ginkpy.opencl.matrix import spgemm_kernels
    A = _random(rng, 500, 400, dtype, long_rows=3, long_length=150)
    B = _random(rng, 400, 300, dtype, long_rows=2, long_length=120)
    a, b = Csr.from_scipy(dev, A), Csr.from_scipy(dev, B)
    for dense in (spgemm_kernels.GPU_DENSE_BYTES, 0):
        monkeypatch.setattr(spgemm_kernels, "GPU_DENSE_BYTES", dense)
        monkeypatch.setattr(spgemm_kernels, "DENSE_MARKER_BYTES", dense and 256 << 20)
        made = []
        for one_pass in (True, False):
            monkeypatch.setattr(spgemm_kernels, "ONE_PASS", one_pass)
            reads = dev.counters["reads"]
            made.append(a.multiply(b).to_scipy())
            assert dev.counters["reads"] - reads == (3 if one_pass else 2)  # (sizes; to_scipy's one)
        once, counted = made
        for x, y in ((once.indptr, counted.indptr), (once.indices, counted.indices), (once.data, counted.data)):
            np.testing.assert_array_equal(x, y)
        _assert_product(once, A, B, dtype)


@pytest.mark.parametrize("shape", [(0, 5, 3), (4, 0, 3), (4, 5, 0), (6, 5, 4)], ids=str)
def test_empty_factors(exec, shape):
    n, k, m = shape
    A, B = sp.csr_matrix((n, k)), sp.csr_matrix((k, m))
    C = Csr.from_scipy(exec, A).multiply(Csr.from_scipy(exec, B))
    assert C.shape == (n, m) and C.nnz == 0
    np.testing.assert_array_equal(C.to_scipy().indptr, np.zeros(n + 1))


def test_the_galerkin_product_of_a_poisson_matrix(ref, device):
    # R A P with a smoothed prolongation's pattern: what Pgm's smoothed aggregation computes
    from ginkpy.problems import poisson_2d
    S = poisson_2d(30).tocsr()
    agg = np.arange(900) // 5
    P = (sp.identity(900) - 0.2 * S) @ sp.csr_matrix((np.ones(900), (np.arange(900), agg)))
    P = P.tocsr()
    for exec in (ref, device):
        A, Pd = Csr.from_scipy(exec, S), Csr.from_scipy(exec, P)
        R, _ = transpose_with_source(Pd)
        C = R.multiply(A.multiply(Pd)).to_scipy()
        np.testing.assert_allclose(C.toarray(), (P.T @ S @ P).toarray(), rtol=1e-13, atol=1e-13)


# -- new values on the same patterns -----------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.complex64], ids=lambda d: np.dtype(d).name)
def test_values_update_into_the_same_arrays(exec, rng, dtype):
    A, B = _random(rng, 300, 200, dtype), _random(rng, 200, 250, dtype)
    a, b = Csr.from_scipy(exec, A), Csr.from_scipy(exec, B)
    C = a.multiply(b)
    arrays = (C.row_ptrs, C.col_idxs, C.values)
    A2, B2 = A.copy(), B.copy()
    A2.data = (A.data * rng.uniform(0.5, 2.0, A.nnz)).astype(dtype)
    B2.data = (B.data - rng.uniform(0.0, 1.0, B.nnz)).astype(dtype)
    a.update_values(A2.data)
    b.update_values(B2.data)
    C.cache["values.stand-in"], C.cache["pattern.stand-in"] = 1, 2  # what a backend derived
    reads = exec.counters["reads"]
    assert a.multiply(b, out=C) is C
    assert "values.stand-in" not in C.cache and C.cache["pattern.stand-in"] == 2  # (old values' facts dropped)
    assert exec.counters["reads"] == reads  # (the structure is known: no size read)
    assert all(x is y for x, y in zip((C.row_ptrs, C.col_idxs, C.values), arrays))
    _assert_product(C.to_scipy(), A2, B2, dtype)
    # the same pattern as a product made anew
    fresh = a.multiply(b).to_scipy()
    np.testing.assert_array_equal(C.to_scipy().indices, fresh.indices)


def test_values_update_on_every_path(ref, device, rng):
    # each way to make a row (the device fixture's) computes new values on its own pattern, the
    # hash's rows among them (rows of 0 to 700 products: merged short, hashed, merged long)
    A = _random(rng, 400, 300, np.float64, long_rows=3, long_length=120)
    B = _random(rng, 300, 350, np.float64, long_rows=2, long_length=200)
    a, b = Csr.from_scipy(device, A), Csr.from_scipy(device, B)
    C = a.multiply(b)
    A2 = A.copy()
    A2.data = A.data * rng.uniform(0.5, 2.0, A.nnz)
    a.update_values(A2.data)
    a.multiply(b, out=C)
    host = Csr.from_scipy(ref, A2).multiply(Csr.from_scipy(ref, B)).to_scipy()
    np.testing.assert_array_equal(C.to_scipy().indices, host.indices)
    _assert_product(C.to_scipy(), A2, B, np.float64)


# -- the transpose with its entry map ----------------------------------------------------------

@pytest.mark.parametrize("conjugate", [False, True])
def test_transpose_with_source(ref, device, rng, conjugate):
    A = _random(rng, 500, 320, np.complex128, long_rows=2, long_length=300)
    for exec in (ref, device):
        a = Csr.from_scipy(exec, A)
        T, source = transpose_with_source(a, conjugate)
        expected = (A.conj() if conjugate else A).T.tocsr()
        got = T.to_scipy()
        assert got.shape == (320, 500)
        _check_canonical(got)
        np.testing.assert_array_equal(got.indptr, expected.indptr)
        np.testing.assert_array_equal(got.indices, expected.indices)
        np.testing.assert_array_equal(got.data, expected.data)
        np.testing.assert_array_equal(A.data[exec.to_host(source)], (got.data.conj() if conjugate else got.data))
        # new values of A: one gather
        a.update_values(2 * A.data)
        transpose_values(a, T, source, conjugate)
        np.testing.assert_array_equal(T.to_scipy().data, 2 * expected.data)


# -- errors ------------------------------------------------------------------------------------

def test_errors_say_what_is_wrong(ref):
    A = Csr.from_scipy(ref, sp.random(4, 5, density=0.5, random_state=0))
    with pytest.raises(ValueError, match="as many rows as A has columns"):
        A.multiply(Csr.from_scipy(ref, sp.random(4, 3, density=0.5, random_state=1)))
    with pytest.raises(TypeError, match="astype"):
        A.multiply(Csr.from_scipy(ref, sp.random(5, 3, density=0.5, random_state=1), np.float32))
    with pytest.raises(TypeError, match="gk.matrix.Csr"):
        A.multiply(gk.matrix.Dense.from_numpy(ref, np.ones((5, 3))))
    B = Csr.from_scipy(ref, sp.random(5, 3, density=0.5, random_state=1))
    with pytest.raises(ValueError, match="earlier"):
        A.multiply(B, out=A)


def test_a_factor_on_another_executor_is_copied(ref, ocl):
    A, B = sp.random(30, 20, density=0.2, random_state=0, format="csr"), sp.random(20, 10, density=0.2,
                                                                                    random_state=1, format="csr")
    C = Csr.from_scipy(ocl, A).multiply(Csr.from_scipy(ref, B))
    assert C.executor is ocl
    np.testing.assert_allclose(C.to_scipy().toarray(), (A @ B).toarray(), rtol=1e-14, atol=1e-15)
