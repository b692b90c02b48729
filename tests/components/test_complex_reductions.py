"""The reductions and the stopping check (ginkpy/*/components/) in complex values against their
reference twins.

Complex twins as tests/complex_cases.py describes them.
"""
import numpy as np
import pytest

from ginkpy.core.base.types import real_dtype

from complex_cases import (BREAKDOWN, CONVERGED, DIVERGED, G, LIMIT, M, MAX_ITERS, RUNNING, SHAPES,
                           assert_summed, complex_dtype, crandom, partials)
from conftest import Stop, assert_stop_twins, assert_twins, sum_tol, twin


dtype = complex_dtype  # complex128 and complex64


# -- reductions and the stopping check -----------------------------------------------------------

@pytest.mark.parametrize("two", [False, True], ids=["one", "two"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_dots(ref, dev, rng, dtype, shape, two):
    n, k = shape
    x, u, w = (crandom(rng, shape, dtype) for _ in range(3))
    out = twin(ref, dev, "components.reduction.dots", x, u, w if two else None, np.zeros((1, k)), dtype=dtype)
    assert_twins(out, dtype, skip=(3,))
    # u^H x (and w^H x): conjugated
    x64 = x.astype(np.complex128)
    expected = [(u.conj() * x64).sum(axis=0)] + ([(w.conj() * x64).sum(axis=0)] if two else [])
    magnitude = np.concatenate([(np.abs(v) * np.abs(x64)).sum(axis=0) for v in ([u, w] if two else [u])])
    assert_summed(out[1][3], np.concatenate(expected)[None], magnitude, n, dtype)
    assert_summed(out[0][3], np.concatenate(expected)[None], magnitude, n, dtype)


def test_multi_dot(ref, dev, rng, dtype):
    n, k, num = 1237, 3, 4
    basis, w = crandom(rng, ((M + 1) * n, k), dtype), crandom(rng, (n, k), dtype)
    h = crandom(rng, (M + 1, k), dtype)
    out = twin(ref, dev, "components.reduction.multi_dot", basis, w, num, h, dtype=dtype)
    v = basis.reshape(M + 1, n, k)[:num].astype(np.complex128)
    expected = np.einsum("inc,nc->ic", v.conj(), w)
    magnitude = np.einsum("inc,nc->ic", np.abs(v), np.abs(w))
    for result in (out[0][3], out[1][3]):
        assert (np.abs(result[:num] - expected) <= 2 * sum_tol(dtype, n) * magnitude).all()
        np.testing.assert_array_equal(result[num:], h[num:])


def test_stop_check_on_complex_partials(ref, ocl, rng, dtype):
    # partial sums of ||r||^2 held as complex values (imaginary parts 0): the norm is real
    norms = np.array([2.0, 0.5, np.nan, 3.0, 0.1])
    status = [RUNNING] * 4 + [BREAKDOWN]
    stop = Stop(status, np.ones(5), MAX_ITERS, [0, 3, 4, MAX_ITERS, 2])
    out = twin(ref, ocl, "components.stop.check", partials(rng, norms ** 2, dtype), stop, dtype=dtype)
    assert_stop_twins(out[1][1], out[0][1], real_dtype(dtype), factor=np.sqrt(G))
    assert list(out[1][1].status) == [RUNNING, CONVERGED, DIVERGED, LIMIT, BREAKDOWN]
