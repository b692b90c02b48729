"""Lsmr (gk.solver.Lsmr, gk.linalg.lsmr): its estimates against SciPy's lsmr, SciPy's answer
x = 0 for b = 0 with a nonzero x0, show, and each OpenCL kernel of Lsmr against its reference
twin. The tests Lsqr and Lsmr share (SciPy's x, istop and itn on over- and underdetermined,
damped and complex systems, several right-hand sides, bad input...) run for both in
test_lsqr.py."""
import numpy as np
import pytest
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import assert_twins, random_values, twin
from ginkpy.core.solver.lsmr import LSMR_ROWS
from test_lsqr import _on, _state, system


@pytest.mark.parametrize("damp", [0.0, 0.5])
def test_estimates_as_scipy(exec, damp):
    """||r||, ||A^H r||, ||A||, ||x|| as SciPy's; cond(A) within 2 %: a ratio of the extremes of
    the rotations' rhobar, which the rounding of the products moves (PoCL's sums: up to 0.9 %
    seen here, 3 % against SciPy's once the iterations reach n)."""
    A, b = system(400, 150, seed=20)
    ours = gk.linalg.lsmr(A, b, damp=damp, atol=1e-9, btol=1e-9, executor=exec)
    theirs = spla.lsmr(A, b, damp=damp, atol=1e-9, btol=1e-9)
    assert ours[1] == theirs[1] == 2 and abs(ours[2] - theirs[2]) <= 1 and ours[2] < 150
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose([ours[3], ours[5], ours[7]], [theirs[3], theirs[5], theirs[7]], rtol=1e-4)
    np.testing.assert_allclose(ours[6], theirs[6], rtol=2e-2)
    assert ours[4] <= 1e-9 * ours[5] * ours[3] * 1.0001  # SciPy's test of istop 2


def test_zero_rhs_with_x0_gives_zero_as_scipy(exec):
    A, _ = system(40, 15, seed=21)
    x0 = np.ones(15)
    ours = gk.linalg.lsmr(A, np.zeros(40), x0=x0, executor=exec)
    theirs = spla.lsmr(A, np.zeros(40), x0=x0)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1:3] == theirs[1:3] == (0, 0)


def test_show(exec, capsys):
    A, b = system(60, 20, seed=22)
    gk.linalg.lsmr(A, b, show=True, executor=exec)
    out = capsys.readouterr().out
    assert "LSMR" in out and "LSMR finished" in out and "normr =" in out


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_kernels_against_their_reference_twins(ref, ocl, dtype):
    """Random data larger than a work-group, odd sizes; per column k = 5: running, running
    with beta = 0 (u . u = 0), running with alpha = 0 (v . v = 0), stopped, running at its
    iteration limit (and, at initialize, column 2 with ||b|| = 0)."""
    rng = np.random.default_rng(23)
    n, k = 611, 5
    status = np.array([0, 0, 0, 1, 0], np.uint8)
    rows = list(LSMR_ROWS)
    state = _state(rng, dtype, k, [3, 3, 3, 3, 9], rows)
    uu = np.abs(random_values(rng, (1, k), dtype)) + 0.5
    vv = np.abs(random_values(rng, (1, k), dtype)) + 0.5
    uu[0, 1], vv[0, 2] = 0, 0
    bb = uu.copy()
    bb[0, 2] = 0
    vec = lambda: random_values(rng, (n, k), dtype)  # noqa: E731
    out = twin(ref, ocl, "solver.lsmr.initialize", vec(), vec(), vec(), vec(), bb, uu, vv, _on(state, dtype),
               status.copy(), dtype=dtype)
    assert_twins(out, dtype)
    for damp in (0.0, 0.3):
        out = twin(ref, ocl, "solver.lsmr.step_1", uu, vv, _on(state, dtype), status, damp, dtype=dtype)
        assert_twins(out, dtype, factor=20)
    stepped = out[0][2]
    inputs = [vec(), vec(), vec(), vec()]
    out = twin(ref, ocl, "solver.lsmr.update", *inputs, _on(stepped, dtype), status, dtype=dtype)
    assert_twins(out, dtype, factor=4)
    for before, after in zip(inputs, out[1]):  # the stopped column is untouched
        np.testing.assert_array_equal(after[:, 3], before[:, 3])
    xx = np.abs(random_values(rng, (1, k), dtype)) + 0.5
    out = twin(ref, ocl, "solver.lsmr.step_2", xx, _on(stepped, dtype), status.copy(), 1e-6, 1e-6, 1e-8, 10,
               dtype=dtype)
    assert_twins(out, dtype, factor=20)
    assert out[1][2][3] == 1 and out[1][2][4] == 1  # stopped stays; at its limit stops (istop 7)
    assert out[1][1][rows.index("istop"), 4] == 7
