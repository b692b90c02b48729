"""Reference Dense kernels on tiny matrices whose results can be checked by hand."""
import numpy as np
import pytest

import ginkpy as gk
from ginkpy.core.matrix.dense import Dense

A = np.array([[1.0, 2.0, 0.0],
              [0.0, -3.0, 4.0]])


def dense(ref, array):
    return Dense.from_numpy(ref, np.array(array, dtype=float))


def test_fill_and_copy(ref):
    x = Dense.empty(ref, (2, 3)).fill(7.0)
    assert np.array_equal(x.to_numpy(), np.full((2, 3), 7.0))
    x.copy_from(dense(ref, A))
    assert np.array_equal(x.to_numpy(), A)


def test_scale_per_column_and_shared(ref):
    x = dense(ref, A).scale(dense(ref, [[2.0, -1.0, 0.5]]))
    assert np.array_equal(x.to_numpy(), [[2.0, -2.0, 0.0], [0.0, 3.0, 2.0]])
    assert np.array_equal(dense(ref, A).scale(3.0).to_numpy(), [[3.0, 6.0, 0.0], [0.0, -9.0, 12.0]])


def test_add_and_sub_scaled(ref):
    b = dense(ref, [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    x = dense(ref, A).add_scaled(dense(ref, [[1.0, 0.0, -1.0]]), b)
    assert np.array_equal(x.to_numpy(), [[2.0, 2.0, -1.0], [2.0, -3.0, 2.0]])
    x = dense(ref, A).sub_scaled(2.0, b)
    assert np.array_equal(x.to_numpy(), [[-1.0, 0.0, -2.0], [-4.0, -7.0, 0.0]])


def test_convert_precision_rounds_to_nearest(ref):
    x = dense(ref, [[1.0 + 2.0**-30, 1e300, -0.0]]).astype(np.float32)
    assert x.dtype == np.float32
    assert np.array_equal(x.to_numpy(), np.array([[1.0, np.inf, -0.0]], np.float32))
    assert np.signbit(x.to_numpy()[0, 2])
    assert np.array_equal(x.astype(np.float64).to_numpy(), [[1.0, np.inf, 0.0]])


def test_dot_and_norm_per_column(ref):
    a = dense(ref, [[3.0, 1.0], [4.0, -1.0]])
    b = dense(ref, [[1.0, 2.0], [2.0, 2.0]])
    assert np.array_equal(a.compute_dot(b).to_numpy(), [[11.0, 0.0]])
    assert np.array_equal(a.compute_norm2().to_numpy(), [[5.0, np.sqrt(2.0)]])


def test_dot_and_norm_of_empty_columns_are_zero(ref):
    a = Dense.zeros(ref, (0, 2))
    assert np.array_equal(a.compute_dot(a).to_numpy(), [[0.0, 0.0]])
    assert np.array_equal(a.compute_norm2().to_numpy(), [[0.0, 0.0]])


def test_dot_needs_equal_shapes(ref):
    with pytest.raises(ValueError, match="shapes"):
        dense(ref, A).compute_dot(dense(ref, A.T))


def test_transpose(ref):
    assert np.array_equal(dense(ref, A).transpose().to_numpy(), [[1.0, 0.0], [2.0, -3.0], [0.0, 4.0]])


def test_is_finite(ref):
    assert dense(ref, A).is_finite()
    assert not dense(ref, [[1.0, np.nan]]).is_finite()
    assert not dense(ref, [[-np.inf], [0.0]]).is_finite()
    assert Dense.zeros(ref, (0, 3)).is_finite()


def test_simple_and_advanced_apply(ref):
    b = dense(ref, [[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    x = Dense.zeros(ref, (2, 2))
    dense(ref, A).apply(b, x)
    assert np.array_equal(x.to_numpy(), [[3.0, 2.0], [1.0, 5.0]])
    # x = alpha A b + beta x with per-column alpha and a shared beta
    dense(ref, A).apply(dense(ref, [[2.0, -1.0]]), b, dense(ref, [[10.0]]), x)
    assert np.array_equal(x.to_numpy(), [[36.0, 18.0], [12.0, 45.0]])


def test_apply_with_empty_inner_dimension_gives_zeros(ref):
    x = Dense.full(ref, (2, 2), 5.0)
    Dense.zeros(ref, (2, 0)).apply(Dense.zeros(ref, (0, 2)), x)
    assert np.array_equal(x.to_numpy(), np.zeros((2, 2)))


def test_convert_to_csr(ref):
    S = gk.matrix.Csr.from_dense(dense(ref, A)).to_scipy()
    assert np.array_equal(S.indptr, [0, 2, 4])
    assert np.array_equal(S.indices, [0, 1, 1, 2])
    assert np.array_equal(S.data, [1.0, 2.0, -3.0, 4.0])
    empty = gk.matrix.Csr.from_dense(Dense.zeros(ref, (3, 2)))
    assert empty.nnz == 0 and np.array_equal(empty.to_scipy().indptr, [0, 0, 0, 0])
