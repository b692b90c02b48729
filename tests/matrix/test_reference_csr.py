"""Reference tests of the Csr kernels: tiny matrices whose results are checked by hand."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk

#     [ 2  0  1 ]
# A = [ 0  0  0 ]   (an empty row)
#     [-1  3  0 ]
A_DENSE = np.array([[2.0, 0.0, 1.0], [0.0, 0.0, 0.0], [-1.0, 3.0, 0.0]])
B = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


@pytest.fixture(params=[np.float64, np.float32])
def dtype(request):
    return np.dtype(request.param)


def _csr(ref, dense, dtype=np.float64):
    return gk.matrix.Csr.from_scipy(ref, sp.csr_matrix(dense), dtype=dtype)


def test_spmv_by_hand(ref, dtype):
    A = _csr(ref, A_DENSE, dtype)
    x = gk.matrix.Dense.full(ref, (3, 2), np.nan, dtype)  # x is overwritten, never read
    A.apply(gk.matrix.Dense.from_numpy(ref, B, dtype), x)
    # row 0: 2*1 + 1*5 = 7, 2*2 + 1*6 = 10; row 1 empty; row 2: -1*1 + 3*3 = 8, -1*2 + 3*4 = 10
    np.testing.assert_array_equal(x.to_numpy(), [[7, 10], [0, 0], [8, 10]])
    assert x.dtype == dtype


def test_advanced_spmv_by_hand(ref, dtype):
    A = _csr(ref, A_DENSE, dtype)
    x = gk.matrix.Dense.from_numpy(ref, np.ones((3, 2)), dtype)
    alpha = gk.matrix.Dense.from_numpy(ref, [[2.0, -1.0]], dtype)  # one per column
    A.apply(alpha, gk.matrix.Dense.from_numpy(ref, B, dtype), 0.5, x)
    # x = alpha * [[7, 10], [0, 0], [8, 10]] + 0.5 * 1
    np.testing.assert_array_equal(x.to_numpy(), [[14.5, -9.5], [0.5, 0.5], [16.5, -9.5]])


def test_convert_to_dense_and_back(ref):
    A = _csr(ref, A_DENSE)
    np.testing.assert_array_equal(A.to_dense().to_numpy(), A_DENSE)
    assert A.nnz == 4


def test_extract_diagonal_with_missing_entries_and_rectangular(ref):
    # diagonal of A: 2, (missing) 0, (missing) 0
    np.testing.assert_array_equal(_csr(ref, A_DENSE).extract_diagonal().to_numpy(), [[2], [0], [0]])
    wide = np.array([[1.0, 0.0, 0.0, 4.0], [0.0, 5.0, 6.0, 0.0]])
    np.testing.assert_array_equal(_csr(ref, wide).extract_diagonal().to_numpy(), [[1], [5]])


def test_is_finite(ref):
    assert _csr(ref, A_DENSE).is_finite()
    bad = A_DENSE.copy()
    bad[2, 1] = np.inf
    assert not _csr(ref, bad).is_finite()
    bad[2, 1] = np.nan
    assert not _csr(ref, bad).is_finite()


def test_zero_size_matrices(ref):
    for n, m in ((0, 0), (0, 3), (3, 0)):
        A = gk.matrix.Csr.from_scipy(ref, sp.csr_matrix((n, m)))
        x = gk.matrix.Dense.full(ref, (n, 2), 7.0)
        A.apply(gk.matrix.Dense.zeros(ref, (m, 2)), x)
        np.testing.assert_array_equal(x.to_numpy(), np.zeros((n, 2)))
        assert A.to_dense().shape == (n, m)
        assert A.extract_diagonal().shape == (min(n, m), 1)
        assert A.is_finite()
