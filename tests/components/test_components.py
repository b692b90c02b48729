"""The shared kernels of components/ (reductions into partial sums, the device stopping check)
on the device against their reference twins.

Partial sums are compared by their sums over the rows (the device writes one row per
work-group, the reference one row), relative to the sum of the magnitudes of their terms.
"""
import numpy as np
import pytest

import ginkpy as gk
from ginkpy.core.base.types import real_dtype
from ginkpy.core.stop.stop_state import StopState
from ginkpy.core.stop.stopping_status import StopReason

from complex_cases import assert_summed
from conftest import (PARTIAL_GROUPS as G, Stop, assert_stop_twins, assert_twins, random_partials, sum_tol,
                      tol, twin)

RUNNING, CONVERGED, LIMIT, TIME, BREAKDOWN, DIVERGED, PENDING = (
    StopReason.RUNNING, StopReason.CONVERGED, StopReason.ITERATION_LIMIT, StopReason.TIME_LIMIT,
    StopReason.BREAKDOWN, StopReason.DIVERGED, StopReason.PENDING)

# (n, k): one work-group and several per column on every device (in both launch layouts), odd
# column counts, more columns than a work-group
SHAPES = [(1237, 3), (5001, 1), (5001, 5), (7, 301)]
DTYPES = [np.float64, np.float32]


@pytest.fixture(params=DTYPES, ids=["float64", "float32"])
def dtype(request):
    return np.dtype(request.param)


def _random(rng, shape, dtype):
    values = rng.standard_normal(shape)
    return (values + 1j * rng.standard_normal(shape) if np.dtype(dtype).kind == "c" else values).astype(dtype)


# -- reductions --------------------------------------------------------------------------------

@pytest.mark.parametrize("two", [False, True], ids=["one", "two"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64],
                         ids=["float64", "float32", "complex128", "complex64"])
def test_dots(ref, dev, rng, dtype, shape, two):
    n, k = shape
    x, u, w = (_random(rng, shape, dtype) for _ in range(3))
    out = twin(ref, dev, "components.reduction.dots", x, u, w if two else None, np.zeros((1, k)), dtype=dtype)
    assert_twins(out, dtype, skip=(3,))
    # u^H x (and w^H x): conjugated in complex values
    x64 = x.astype(np.complex128)
    expected = np.concatenate([(v.conj() * x64).sum(axis=0) for v in ([u, w] if two else [u])])
    magnitude = np.concatenate([(np.abs(v) * np.abs(x64)).sum(axis=0) for v in ([u, w] if two else [u])])
    for partial_sums in (out[1][3], out[0][3]):
        assert_summed(partial_sums, expected[None], magnitude, n, dtype)
    if n == 5001:
        assert out[1][3].shape[0] > 1  # several work-groups: the consumer adds their partial sums


@pytest.mark.parametrize("n, k, num", [(1237, 3, 4), (5001, 1, 1), (5001, 5, 2)])
def test_multi_dot(ref, dev, rng, dtype, n, k, num):
    m = 5
    basis, w = _random(rng, ((m + 1) * n, k), dtype), _random(rng, (n, k), dtype)
    h = _random(rng, (m + 1, k), dtype)
    out = twin(ref, dev, "components.reduction.multi_dot", basis, w, num, h, dtype=dtype)
    h_ref, h_dev = out[0][3], out[1][3]
    # h[i] = v_i . w: sums of n products, within their rounding; the rows past num untouched
    magnitude = np.einsum("inc,nc->ic", np.abs(basis.reshape(m + 1, n, k)[:num]).astype(np.float64), np.abs(w))
    err = np.abs(h_dev[:num].astype(np.float64) - h_ref[:num])
    assert (err <= sum_tol(dtype, n) * magnitude).all()
    np.testing.assert_array_equal(h_dev[num:], h[num:])
    np.testing.assert_array_equal(h_ref[num:], h[num:])


# -- the stopping check on the device ----------------------------------------------------------

MAX_ITERS = 300



def test_check_every_case(ref, ocl, rng, dtype):
    # columns: runs (first check), converges, diverges (NaN), diverges (inf), reaches its limit,
    # converges at its limit (convergence wins), was stopped (breakdown), pending (estimate,
    # untouched), runs with no norm criterion and a zero residual, runs with the history ring
    # wrapped (check 299 of a ring of 256 rows), runs one check before its limit
    norms = np.array([2.0, 0.5, np.nan, np.inf, 3.0, 0.1, 1.0, 1.0, 0.0, 4.0, 5.0])
    threshold = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 1.0, 1.0]
    checks = [0, 5, 7, 7, MAX_ITERS, MAX_ITERS, 3, 4, 9, 299, MAX_ITERS - 1]
    status = [RUNNING] * 6 + [BREAKDOWN, PENDING] + [RUNNING] * 3
    stop = Stop(status, threshold, MAX_ITERS, checks)
    out = twin(ref, ocl, "components.stop.check", random_partials(rng, norms ** 2, dtype), stop, dtype=dtype)
    assert_stop_twins(out[1][1], out[0][1], dtype, factor=np.sqrt(G))
    state = out[1][1]
    assert list(state.status) == [RUNNING, CONVERGED, DIVERGED, DIVERGED, LIMIT, CONVERGED, BREAKDOWN, PENDING,
                                  RUNNING, RUNNING, RUNNING]
    assert list(state.checks) == [c + (s == RUNNING) for c, s in zip(checks, status)]
    # the norm of each check in row (check % 256) of its column; nothing else written
    rows = np.array(checks) % state.history.shape[0]
    written = np.array(status) == RUNNING
    for c in np.flatnonzero(written):
        np.testing.assert_allclose(state.history[rows[c], c], norms[c], rtol=10 * sum_tol(dtype, G))
    assert (state.history != -1).sum() == written.sum()


@pytest.mark.parametrize("k", [5, 301])  # one column per work-item and several (301 > 256)
def test_check_random_columns(ref, ocl, rng, dtype, k):
    norms = rng.uniform(0.5, 2, k)
    # thresholds well below or above the norm (no verdict that rounding could tip), some
    # columns diverged, stopped or at their limit
    threshold = norms * np.where(rng.random(k) < 0.5, 0.5, 2.0)
    norms[rng.random(k) < 0.1] = np.nan
    status = np.where(rng.random(k) < 0.3, rng.choice([CONVERGED, LIMIT, BREAKDOWN, PENDING], k), RUNNING)
    checks = rng.integers(0, MAX_ITERS + 1, k)
    stop = Stop(status, threshold, MAX_ITERS, checks)
    out = twin(ref, ocl, "components.stop.check", random_partials(rng, norms ** 2, dtype), stop, dtype=dtype)
    assert_stop_twins(out[1][1], out[0][1], dtype, factor=np.sqrt(G))
    assert (out[1][1].status != RUNNING).sum() > (status != RUNNING).sum()  # some columns stopped here


@pytest.mark.parametrize("reason", [LIMIT, TIME])
@pytest.mark.parametrize("k", [5, 301])
def test_stop_running(ref, ocl, rng, reason, k):
    status = rng.choice([RUNNING, RUNNING, CONVERGED, LIMIT, BREAKDOWN, DIVERGED, PENDING], k)
    status[0] = RUNNING
    stop = Stop(status, np.ones(k), MAX_ITERS, rng.integers(0, 9, k))
    out = twin(ref, ocl, "components.stop.stop_running", stop, int(reason))
    assert_stop_twins(out[1][0], out[0][0], np.float64)
    np.testing.assert_array_equal(out[1][0].status, np.where(status == RUNNING, reason, status))
    np.testing.assert_array_equal(out[1][0].checks, stop.checks)
    assert (out[1][0].history == -1).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_keep_best(ref, ocl, rng, dtype):
    # columns: running with a new best (copied), with a worse norm (kept), with an equal one
    # (copied), with a NaN norm (kept), with no check yet (kept), with the history ring wrapped
    # (check 300 of 256 rows: a new best), stopped (converged, breakdown: kept); n > a work-group
    n, k = 301, 8
    last = np.array([0.5, 3.0, 2.0, np.nan, 0.1, 0.25, 0.1, 0.1])
    best = np.array([1.0, 2.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0])
    checks = np.array([5, 5, 5, 5, 0, 300, 5, 5], np.int32)
    status = np.array([RUNNING] * 6 + [CONVERGED, BREAKDOWN])

    real = real_dtype(dtype)

    def best_norms(exec):  # real, also for complex values
        return gk.matrix.Dense.from_numpy(exec, best[None, :], real)

    def stop_state(exec):
        stop = StopState(exec, k, dtype)
        stop.reset(status, np.ones(k), MAX_ITERS)
        exec.write(stop.checks, checks)
        history = np.full(stop.history.shape, 7.0)
        history[(checks - 1) % history.shape[0], np.arange(k)] = last
        exec.write(stop.history.values, history.astype(real))
        return stop

    def random(shape):
        values = rng.standard_normal(shape)
        return values + 1j * rng.standard_normal(shape) if np.dtype(dtype).kind == "c" else values

    x, x_best = random((n, k)), random((n, k))
    out = twin(ref, ocl, "components.stop.keep_best", x, x_best, best_norms, stop_state, dtype=dtype)
    assert_twins(out, dtype)
    taken = np.array([True, False, True, False, False, True, False, False])
    np.testing.assert_array_equal(out[1][1][:, taken], x.astype(dtype)[:, taken])
    np.testing.assert_array_equal(out[1][1][:, ~taken], x_best.astype(dtype)[:, ~taken])
    np.testing.assert_allclose(out[1][2][0], np.where(taken, last, best), rtol=tol(real))
