"""Csr.from_scipy of a CSR matrix whose canonical form SciPy has not checked yet: the check runs in
a thread beside the upload of its arrays, and an unsorted or duplicated matrix is sent again,
sorted and summed (the caller's matrix unchanged)."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.problems import poisson_2d
from ginkpy.core.matrix import csr as csr_module


@pytest.fixture
def threaded(monkeypatch):
    """Every matrix checked in the thread, however small."""
    monkeypatch.setattr(csr_module._CanonicalCheck, "THREAD_NNZ", 0)


def _unchecked(data, indices, indptr, shape):
    """A CSR matrix made from its arrays: SciPy has not looked at their order yet."""
    m = sp.csr_matrix((np.array(data, float), np.array(indices, np.int32), np.array(indptr, np.int32)), shape=shape)
    assert not hasattr(m, "_has_canonical_format")  # (what _CanonicalCheck.start reads)
    return m


def test_a_canonical_matrix_is_checked_beside_its_upload(exec, threaded):
    m = _unchecked([2.0, 1.0, 3.0, -1.0], [0, 2, 1, 2], [0, 2, 3, 4], (3, 3))
    assert isinstance(csr_module._CanonicalCheck.start(m), csr_module._CanonicalCheck)
    A = gk.matrix.Csr.from_scipy(exec, m)
    assert m.has_canonical_format  # (the thread's answer, kept by SciPy)
    np.testing.assert_array_equal(A.to_scipy().toarray(), m.toarray())


def test_an_unsorted_duplicated_matrix_is_sent_again_sorted(exec, threaded):
    # row 0: columns 2, 0 (unsorted); row 1: column 1 twice (summed); row 2: empty
    data, indices, indptr = [1.0, 2.0, 3.0, 4.0], [2, 0, 1, 1], [0, 2, 4, 4]
    m = _unchecked(data, indices, indptr, (3, 3))
    A = gk.matrix.Csr.from_scipy(exec, m)
    got = A.to_scipy()
    np.testing.assert_array_equal(got.indptr, [0, 2, 3, 3])
    np.testing.assert_array_equal(got.indices, [0, 2, 1])
    np.testing.assert_array_equal(got.data, [2.0, 1.0, 7.0])
    # the caller's arrays as they were
    np.testing.assert_array_equal(m.indices, indices)
    np.testing.assert_array_equal(m.data, data)


def test_a_known_answer_starts_no_thread(threaded):
    m = _unchecked([1.0, 2.0], [0, 1], [0, 1, 2], (2, 2))
    m.has_canonical_format  # noqa: B018 - asked once: SciPy keeps it
    assert csr_module._CanonicalCheck.start(m) is None


def test_linalg_solves_an_unsorted_matrix(exec, threaded):
    S = poisson_2d(12).tocsr()
    order = np.arange(S.nnz)
    for r in range(S.shape[0]):  # each row's entries reversed
        order[S.indptr[r]:S.indptr[r + 1]] = order[S.indptr[r]:S.indptr[r + 1]][::-1]
    m = _unchecked(S.data[order], S.indices[order], S.indptr, S.shape)
    b = np.ones(S.shape[0])
    x, info = gk.linalg.cg(m, b, rtol=1e-10, M="jacobi", executor=exec)
    gk.linalg.clear_cache()
    assert info == 0
    np.testing.assert_allclose(S @ x, b, atol=1e-8 * np.sqrt(S.shape[0]))
