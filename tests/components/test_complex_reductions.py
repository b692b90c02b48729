"""The reductions and the stopping check (ginkpy/*/components/) in complex values against their
reference twins.

Complex twins as tests/complex_cases.py describes them.
"""
import numpy as np

from ginkpy.core.base.types import real_dtype

from complex_cases import (BREAKDOWN, CONVERGED, DIVERGED, G, LIMIT, M, MAX_ITERS, RUNNING, complex_dtype, crandom,
                           partials)
from conftest import Stop, assert_stop_twins, sum_tol, twin


dtype = complex_dtype  # complex128 and complex64


# -- reductions and the stopping check -----------------------------------------------------------

# the dots in complex values: test_components.py::test_dots (every value type)


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
