"""Reference-vs-device tests of the OpenCL Dense kernels.

Sizes are larger than a work-group, with odd row and column counts. Sums (dot products,
matrix products) are compared relative to the sum of the magnitudes of their terms, the
scale their rounding errors have; everything else is compared entry by entry.
"""
import numpy as np
import pytest

import ginkpy as gk
from ginkpy.core.matrix.dense import Dense
from ginkpy.opencl import launch

from conftest import assert_twins, sum_tol, tol, twin


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def dtype(request):
    return np.dtype(request.param)


def both(ref, ocl, *arrays):
    """Each array as a Dense on the reference executor and on the device."""
    return [tuple(Dense.from_numpy(exec, a) for a in arrays) for exec in (ref, ocl)]


def random(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def assert_sums_close(device, expected, magnitude, dtype):
    """|device - expected| <= tol * magnitude, with magnitude the sum of |terms| of each result."""
    err = np.abs(device.astype(np.float64) - expected.astype(np.float64))
    assert (err <= tol(dtype) * magnitude).all(), f"max error {np.max(err / magnitude):.3g} of the magnitude"


# -- element-wise ------------------------------------------------------------------------------

def test_fill_and_copy(ref, ocl, dtype):
    x = Dense.empty(ocl, (1237, 3), dtype).fill(-2.5)
    assert np.array_equal(x.to_numpy(), np.full((1237, 3), -2.5, dtype))
    y = Dense.zeros(ocl, (1237, 3), dtype)
    y.copy_from(x)
    assert np.array_equal(y.to_numpy(), x.to_numpy())


@pytest.mark.parametrize("per_column", [False, True], ids=["shared", "per_column"])
def test_scale_add_sub_scaled(ref, ocl, rng, dtype, per_column):
    x0, b0 = random(rng, (1237, 3), dtype), random(rng, (1237, 3), dtype)
    alpha = random(rng, (1, 3) if per_column else (1, 1), dtype)
    out = []
    for x, b, a in both(ref, ocl, x0, b0, alpha):
        x.scale(a).add_scaled(a, b).sub_scaled(a, x.clone())
        out.append(x.to_numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=tol(dtype), atol=tol(dtype))


@pytest.mark.parametrize("to", [np.float32, np.float64])
def test_convert_precision(ref, ocl, rng, dtype, to):
    a = random(rng, (1237, 3), dtype)
    a[:4, 0] = [np.inf, -np.inf, np.nan, -0.0]
    if dtype == np.float64:
        a[4:6, 0] = [1e300, 1 + 2.0**-30]  # overflows, rounds in float32
    out = [x.astype(to).to_numpy() for (x,) in both(ref, ocl, a)]
    assert out[1].dtype == to
    np.testing.assert_array_equal(out[1], out[0])
    assert np.array_equal(np.signbit(out[1]), np.signbit(out[0]))


# -- reductions --------------------------------------------------------------------------------

# (n, k): one work-group per column block (one launch) and several (a second pass), whatever
# the device; n = 5001 needs several groups for one column on every device (checked below)
REDUCTION_SHAPES = [(1237, 3), (1237, 1), (5001, 1), (203, 301)]


@pytest.mark.parametrize("shape", REDUCTION_SHAPES, ids=str)
def test_compute_dot(ref, dev, rng, dtype, shape):
    a, b = random(rng, shape, dtype), random(rng, shape, dtype)
    out = [x.compute_dot(y).to_numpy() for x, y in both(ref, dev, a, b)]
    magnitude = np.abs(a.astype(np.float64) * b).sum(axis=0)
    assert_sums_close(out[1], out[0], magnitude, dtype)


@pytest.mark.parametrize("shape", REDUCTION_SHAPES, ids=str)
def test_compute_norm2(ref, dev, rng, dtype, shape):
    a = random(rng, shape, dtype)
    out = [x.compute_norm2().to_numpy() for (x,) in both(ref, dev, a)]
    np.testing.assert_allclose(out[1], out[0], rtol=tol(dtype))


def test_reduction_shapes_cover_one_and_several_groups(dev):
    assert launch.reduction_shape(dev.info, 5001, 1).groups > 1
    assert launch.reduction_shape(dev.info, 1237, 1).groups == 1


# columns: tiny entries (their squares underflow), huge ones (their squares overflow), both
# with ordinary ones (the tiny ones then vanish beside the others), zeros, ordinary ones
EXTREMES = {np.dtype(np.float64): (1e-300, 1e300), np.dtype(np.float32): (1e-30, 1e30)}


@pytest.mark.parametrize("n", [1237, 5001])
def test_compute_norm2_without_underflow_or_overflow(ref, dev, rng, dtype, n):
    tiny, huge = EXTREMES[dtype]
    a = rng.standard_normal((n, 5))
    a[:, 0] *= tiny
    a[:, 1] *= huge
    a[::3, 2] *= tiny
    a[1::3, 2] *= huge
    a[:, 3] = 0
    a = a.astype(dtype)
    out = [x.compute_norm2().to_numpy()[0] for (x,) in both(ref, dev, a)]
    # the exact norms: the columns scaled by powers of 2 (exact) into range, in float64
    exponent = np.floor(np.log2(np.abs(a.astype(np.float64)).max(axis=0, initial=0) + (a == 0).all(axis=0)))
    scaled = np.ldexp(a.astype(np.float64), -exponent.astype(int))
    exact = np.ldexp(np.linalg.norm(scaled, axis=0), exponent.astype(int))
    assert np.isfinite(exact).all() and exact[3] == 0 and (exact[[0, 1, 2, 4]] > 0).all()
    for result in out:
        np.testing.assert_allclose(result, exact, rtol=sum_tol(dtype, n), atol=0)
    np.testing.assert_allclose(out[1], out[0], rtol=sum_tol(dtype, n), atol=0)


@pytest.mark.parametrize("n", [1237, 5001])
def test_compute_norm2_of_nan_and_inf(ref, dev, rng, dtype, n):
    # a NaN anywhere makes the norm NaN, as numpy's (issue 23: a NaN in x0 passed the check on
    # OpenCL); an Inf makes it Inf (NaN on the reference); the other columns are untouched
    a = rng.standard_normal((n, 4)).astype(dtype)
    a[n // 2, 0] = np.nan
    a[n - 1, 1] = np.nan
    a[7, 2] = np.inf
    out = [x.compute_norm2().to_numpy()[0] for (x,) in both(ref, dev, a)]
    for result in out:
        assert np.isnan(result[:2]).all() and not np.isfinite(result[2]) and np.isfinite(result[3])
    np.testing.assert_allclose(out[1][3], out[0][3], rtol=sum_tol(dtype, n))


def test_norm2_into_existing_result_and_of_zero_vector(dev, dtype):
    result = Dense.full(dev, (1, 2), 99.0, dtype)
    Dense.zeros(dev, (777, 2), dtype).compute_norm2(result)
    assert np.array_equal(result.to_numpy(), np.zeros((1, 2), dtype))


def test_reductions_of_empty_columns(ocl, dtype):
    a = Dense.zeros(ocl, (0, 3), dtype)
    assert np.array_equal(a.compute_dot(a).to_numpy(), np.zeros((1, 3)))
    assert np.array_equal(a.compute_norm2().to_numpy(), np.zeros((1, 3)))
    assert Dense.zeros(ocl, (5, 0), dtype).compute_norm2().shape == (1, 0)


def test_is_finite(dev, rng, dtype):
    a = random(rng, (1237, 3), dtype)
    assert Dense.from_numpy(dev, a).is_finite()
    for bad in (np.nan, np.inf, -np.inf):
        b = a.copy()
        b[1236, 2] = bad
        assert not Dense.from_numpy(dev, b).is_finite()
    assert Dense.zeros(dev, (0, 3), dtype).is_finite()


@pytest.mark.parametrize("k", [1, 3, 5])
def test_copy_columns(ref, ocl, rng, dtype, k):
    # dst[:, j] = src[:, j] where mask[j]
    src, dst = random(rng, (1237, k), dtype), random(rng, (1237, k), dtype)
    mask = (np.arange(k) % 2 == 0).astype(np.uint8) * np.uint8(7)  # any nonzero value selects
    out = twin(ref, ocl, "matrix.dense.copy_columns", src, dst, mask, dtype=dtype)
    assert_twins(out, dtype, factor=0)
    np.testing.assert_array_equal(out[1][1], np.where(mask != 0, src, dst))


# -- transpose and products --------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1237, 3), (37, 53), (1, 1)], ids=str)
def test_transpose(ref, ocl, rng, dtype, shape):
    a = random(rng, shape, dtype)
    out = [x.transpose().to_numpy() for (x,) in both(ref, ocl, a)]
    np.testing.assert_array_equal(out[1], out[0])


# (n, m, k): matrix-vector, thin and wider than a 16-column tile, inner dimension not a
# multiple of the tile
# (the narrow kernel takes inner dimensions up to 32: block vectors times small matrices)
PRODUCT_SHAPES = [(1237, 263, 1), (301, 277, 3), (67, 45, 19), (5, 1, 2), (40003, 10, 10), (1237, 32, 7), (301, 33, 5)]


@pytest.mark.parametrize("nmk", PRODUCT_SHAPES, ids=str)
def test_simple_apply(ref, dev, rng, dtype, nmk):
    n, m, k = nmk
    a, b = random(rng, (n, m), dtype), random(rng, (m, k), dtype)
    out = []
    for A, B, X in both(ref, dev, a, b, np.full((n, k), np.nan, dtype)):
        A.apply(B, X)
        out.append(X.to_numpy())
    assert_sums_close(out[1], out[0], np.abs(a.astype(np.float64)) @ np.abs(b), dtype)


@pytest.mark.parametrize("nmk", PRODUCT_SHAPES, ids=str)
@pytest.mark.parametrize("per_column", [False, True], ids=["shared", "per_column"])
def test_apply(ref, dev, rng, dtype, nmk, per_column):
    n, m, k = nmk
    a, b, x = random(rng, (n, m), dtype), random(rng, (m, k), dtype), random(rng, (n, k), dtype)
    cols = k if per_column else 1
    alpha, beta = random(rng, (1, cols), dtype), random(rng, (1, cols), dtype)
    alpha[0, 0] = 0.0  # a zero factor must zero its part, not leave it
    out = []
    for A, B, X, al, be in both(ref, dev, a, b, x, alpha, beta):
        A.apply(al, B, be, X)
        out.append(X.to_numpy())
    magnitude = np.abs(alpha) * (np.abs(a.astype(np.float64)) @ np.abs(b)) + np.abs(beta * x)
    assert_sums_close(out[1], out[0], magnitude, dtype)


def test_apply_with_empty_inner_dimension(ref, dev, dtype):
    x = Dense.full(dev, (300, 3), 5.0, dtype)
    Dense.zeros(dev, (300, 0), dtype).apply(2.0, Dense.zeros(dev, (0, 3), dtype), 0.5, x)
    assert np.array_equal(x.to_numpy(), np.full((300, 3), 2.5, dtype))
    Dense.zeros(dev, (300, 0), dtype).apply(Dense.zeros(dev, (0, 3), dtype), x)
    assert np.array_equal(x.to_numpy(), np.zeros((300, 3), dtype))


def test_empty_products_launch_nothing(ocl, dtype):
    x = Dense.zeros(ocl, (0, 3), dtype)
    Dense.zeros(ocl, (0, 4), dtype).apply(Dense.zeros(ocl, (4, 3), dtype), x)
    assert x.to_numpy().shape == (0, 3)
    assert Dense.zeros(ocl, (0, 4), dtype).transpose().shape == (4, 0)


# -- conversion to CSR -------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1237, 3), (20001, 2), (45, 301)], ids=str)
def test_convert_to_csr(ref, dev, rng, dtype, shape):
    a = random(rng, shape, dtype)
    a[rng.random(shape) < 0.6] = 0.0
    a[shape[0] // 2] = 0.0  # an empty row
    a[0, 0] = np.nan  # a NaN is a stored entry, as in scipy
    out = [[np.asarray(v if exec is ref else v.get()) for v in exec.run("matrix.dense.convert_to_csr", x)]
           for exec, (x,) in zip((ref, dev), both(ref, dev, a))]
    for device, expected in zip(out[1], out[0]):
        assert device.dtype == expected.dtype
        np.testing.assert_array_equal(device, expected)


def test_convert_to_csr_scan_spans_several_groups(dev):
    assert launch.reduction_shape(dev.info, 20001 + 1, 1).groups > 1


def test_convert_to_csr_of_zero_and_empty_matrices(ocl, dtype):
    S = gk.matrix.Csr.from_dense(Dense.zeros(ocl, (700, 3), dtype))
    assert S.nnz == 0 and np.array_equal(S.to_scipy().indptr, np.zeros(701))
    S = gk.matrix.Csr.from_dense(Dense.zeros(ocl, (0, 3), dtype))
    assert S.shape == (0, 3) and np.array_equal(S.to_scipy().indptr, [0])


def test_too_large_for_int32_indices_is_a_clear_error():
    with pytest.raises(ValueError, match="int32"):
        launch.check_int32(2**31)


# -- block inner products (Gram matrices) --------------------------------------------------------

@pytest.mark.parametrize("complex_values", [False, True], ids=["real", "complex"])
# (b of more than 32 columns: the tiled kernel on a CPU device too)
@pytest.mark.parametrize("n, k, m", [(1, 1, 1), (37, 3, 5), (5001, 7, 9), (40003, 30, 30), (1237, 1, 17),
                                     (1237, 3, 40), (3001, 33, 33)])
def test_compute_gram(ref, ocl, rng, dtype, complex_values, n, k, m):
    """a^H b on the device against the reference, relative to |a|^T |b| (one row chunk, several,
    tiles wider than the block, and sizes not a multiple of the tile)."""
    dtype = np.result_type(dtype, np.complex64) if complex_values else dtype
    a, b = random(rng, (n, k), dtype), random(rng, (n, m), dtype)
    if complex_values:
        a, b = a + 1j * random(rng, (n, k), dtype), b - 2j * random(rng, (n, m), dtype)
    results = [Dense.from_numpy(exec, a).compute_gram(Dense.from_numpy(exec, b)) for exec in (ref, ocl)]
    expected, device = (r.to_numpy() for r in results)
    assert device.shape == (k, m) and device.dtype == dtype
    np.testing.assert_allclose(expected, a.conj().T @ b, rtol=tol(dtype), atol=0)
    magnitude = np.abs(a).T.astype(np.float64) @ np.abs(b).astype(np.float64)
    assert_sums_close(device.real, expected.real, magnitude, dtype)
    assert_sums_close(device.imag, expected.imag, magnitude, dtype)


def test_compute_gram_into_result_and_errors(ocl, rng, dtype):
    a, b = (Dense.from_numpy(ocl, random(rng, (100, c), dtype)) for c in (2, 3))
    out = Dense.zeros(ocl, (2, 3), dtype)
    assert a.compute_gram(b, out) is out
    np.testing.assert_allclose(out.to_numpy(), a.to_numpy().T @ b.to_numpy(), rtol=tol(dtype) * 100)
    empty = Dense.from_numpy(ocl, np.zeros((0, 2), dtype))
    np.testing.assert_array_equal(empty.compute_gram(Dense.from_numpy(ocl, np.zeros((0, 3), dtype)),
                                                     Dense.full(ocl, (2, 3), 7.0, dtype)).to_numpy(), 0)
    with pytest.raises(ValueError, match="same rows"):
        a.compute_gram(Dense.from_numpy(ocl, random(rng, (99, 3), dtype)))
    with pytest.raises(ValueError, match="result must be 2 x 3"):
        a.compute_gram(b, Dense.zeros(ocl, (3, 2), dtype))
