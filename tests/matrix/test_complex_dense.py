"""Dense's kernels (ginkpy/*/matrix/dense_kernels.py) in complex values against their reference twins.

Complex twins as tests/complex_cases.py describes them.
"""
import numpy as np
import pytest

import ginkpy as gk
from ginkpy.core.base.types import real_dtype

from complex_cases import SHAPES, complex_dtype, crandom, real
from conftest import assert_twins, sum_tol, twin


dtype = complex_dtype  # complex128 and complex64


# -- Dense -------------------------------------------------------------------------------------

@pytest.mark.parametrize("conj", [False, True], ids=["dot", "conj_dot"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_dense_dots(ref, dev, rng, dtype, shape, conj):
    a, b = crandom(rng, shape, dtype), crandom(rng, shape, dtype)
    kernel = "matrix.dense.compute_conj_dot" if conj else "matrix.dense.compute_dot"
    out = twin(ref, dev, kernel, a, b, np.zeros((1, shape[1]), dtype), dtype=dtype)
    a64 = a.astype(np.complex128)
    expected = ((a64.conj() if conj else a64) * b).sum(axis=0)
    magnitude = (np.abs(a64) * np.abs(b)).sum(axis=0)
    for result in (out[0][2], out[1][2]):
        assert (np.abs(result[0] - expected) <= 2 * sum_tol(dtype, shape[0]) * magnitude).all()


@pytest.mark.parametrize("scale", [1.0, 1e-160, 1e150], ids=["1", "tiny", "huge"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_dense_norm2_is_real_and_robust(ref, dev, rng, dtype, shape, scale):
    if dtype == np.complex64:
        scale = {1.0: 1.0, 1e-160: 1e-30, 1e150: 1e30}[scale]
    a = (crandom(rng, shape, np.complex128) * scale).astype(dtype)
    out = twin(ref, dev, "matrix.dense.compute_norm2", a, real(np.zeros((1, shape[1])), dtype), dtype=dtype)
    expected = np.linalg.norm(a.astype(np.complex128) / scale, axis=0) * scale  # numpy's own underflows
    for result in (out[0][1], out[1][1]):
        assert result.dtype == real_dtype(dtype)
        np.testing.assert_allclose(result[0], expected, rtol=2 * sum_tol(dtype, shape[0]))


def test_dense_element_wise_and_transposes(ref, dev, rng, dtype):
    n, k = 1237, 3
    x, b = crandom(rng, (n, k), dtype), crandom(rng, (n, k), dtype)
    alpha = crandom(rng, (1, k), dtype)
    for kernel in ("matrix.dense.scale", "matrix.dense.add_scaled", "matrix.dense.sub_scaled"):
        args = (alpha, x) if kernel.endswith("scale") else (alpha, b, x)
        assert_twins(twin(ref, dev, kernel, *args, dtype=dtype), dtype, factor=2)
    for kernel, expected in (("matrix.dense.transpose", x.T), ("matrix.dense.conj_transpose", x.T.conj())):
        out = twin(ref, dev, kernel, x, np.zeros((k, n), dtype), dtype=dtype)
        np.testing.assert_array_equal(out[0][1], expected)
        np.testing.assert_array_equal(out[1][1], expected)


@pytest.mark.parametrize("k", [1, 3])
def test_dense_products(ref, dev, rng, dtype, k):
    n, m = 301, 203
    a, b, x = crandom(rng, (n, m), dtype), crandom(rng, (m, k), dtype), crandom(rng, (n, k), dtype)
    alpha, beta = crandom(rng, (1, k), dtype), crandom(rng, (1, k), dtype)
    out = twin(ref, dev, "matrix.dense.simple_apply", a, b, x, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(m))
    out = twin(ref, dev, "matrix.dense.apply", alpha, a, b, beta, x, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(m))


def test_dense_conversions_and_checks(ref, ocl, rng, dtype):
    other = np.complex64 if dtype == np.complex128 else np.complex128
    if other == np.complex128 and not ocl.info.fp64:
        pytest.skip("complex128 needs fp64")
    z = crandom(rng, (1237, 3), dtype)
    for exec in (ref, ocl):
        d = gk.matrix.Dense.from_numpy(exec, z)
        np.testing.assert_array_equal(d.astype(other).to_numpy(), z.astype(other))
        real_part = gk.matrix.Dense.from_numpy(exec, z.real.astype(real_dtype(dtype)))
        np.testing.assert_array_equal(real_part.astype(dtype).to_numpy(), z.real.astype(dtype))
        assert d.is_finite()
        for bad in (complex(1, np.nan), complex(np.inf, 0)):
            w = z.copy()
            w[1000, 2] = bad
            assert not gk.matrix.Dense.from_numpy(exec, w).is_finite()
        # a purely imaginary entry is a nonzero of the Csr
        s = np.zeros((9, 7), dtype)
        s[2, 3], s[8, 0], s[4, 4] = 1j, 2 - 1j, 3
        csr = gk.matrix.Csr.from_dense(gk.matrix.Dense.from_numpy(exec, s))
        assert csr.nnz == 3 and csr.dtype == dtype
        np.testing.assert_array_equal(csr.to_scipy().toarray(), s)
