"""The solvers' step kernels (Cg, Bicgstab, Gmres with its orthogonalization and Givens
rotations, the element-wise steps, Multigrid's) in complex values against their reference twins.

Complex twins as tests/complex_cases.py describes them.
"""
import os

import numpy as np
import pytest

from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.cb_gmres import storage_dtype

from complex_cases import (BREAKDOWN, CONVERGED, G, M, MAX_ITERS, RUNNING, assert_summed, complex_dtype,
                           complex_matrix, crandom, partials, real)
from conftest import Stop, assert_twins, tol, twin


dtype = complex_dtype  # complex128 and complex64


# -- solver steps ----------------------------------------------------------------------------------

def _hpd_sums(rng, k):
    """Partial sums with a real positive sum (p^H A p, ||r||^2) per column."""
    return rng.uniform(0.5, 2, k) + 0j


@pytest.mark.parametrize("mode", ["none", "jacobi", "operator"])
def test_cg_steps(ref, dev, rng, dtype, mode):
    n, k = 1237, 3
    r, p, q, x = (crandom(rng, (n, k), dtype) for _ in range(4))
    z = crandom(rng, (n, k), dtype) if mode == "operator" else None
    diag = crandom(rng, (n, 1), dtype) if mode == "jacobi" else None
    rz, rr = np.zeros((1, k)), np.zeros((1, k))
    out = twin(ref, dev, "solver.cg.prepare", r, z, diag, rz if mode != "none" else rr, rr, dtype=dtype)
    zz = r if mode == "none" else z if mode == "operator" else diag * r
    assert_summed(out[1][4], (r.conj() * r).sum(axis=0)[None], (np.abs(r) ** 2).sum(axis=0), n, dtype)
    if mode != "none":
        assert_summed(out[1][3], (r.conj() * zz).sum(axis=0)[None], (np.abs(r) * np.abs(zz)).sum(axis=0), n, dtype)
    # step_1: a column stops, one runs with prev_rho = 0 (beta 0), the others run
    rho, prev_rho = crandom(rng, (1, k), dtype), crandom(rng, (1, k), dtype)
    prev_rho[0, 1] = 0
    norms = np.array([2.0, 2.0, 0.1])
    stop = Stop([RUNNING] * k, np.ones(k), MAX_ITERS)
    rz_p = partials(rng, crandom(rng, k, np.complex128), dtype)
    out = twin(ref, dev, "solver.cg.step_1", p, r, z, diag, rz_p if mode != "none" else partials(rng, norms ** 2, dtype),
               partials(rng, norms ** 2, dtype), rho, prev_rho, stop, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G))
    assert list(out[1][8].status) == [RUNNING, RUNNING, CONVERGED]
    # step_2: p^H A p real positive runs, 0 is a breakdown, a stopped column untouched
    pq = partials(rng, np.array([1.5, 0.0, 2.0]) + 0j, dtype)
    out = twin(ref, dev, "solver.cg.step_2", x, r, p, q, diag, pq, rho, prev_rho, np.zeros((1, k)), np.zeros((1, k)),
               Stop([RUNNING, RUNNING, CONVERGED], np.ones(k), MAX_ITERS), dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(8, 9))
    assert list(out[1][10].status) == [RUNNING, BREAKDOWN, CONVERGED]
    r_new = out[0][1].astype(np.complex128)
    assert_summed(out[1][9], (r_new.conj() * r_new).sum(axis=0)[None], (np.abs(r_new) ** 2).sum(axis=0), n, dtype)


def test_bicgstab_steps(ref, dev, rng, dtype):
    n, k = 1237, 3
    r, r_hat, p, v, s, t, x = (crandom(rng, (n, k), dtype) for _ in range(7))
    rho, prev_rho, alpha, omega = (crandom(rng, (1, k), dtype) for _ in range(4))
    omega[0, 1] = 0  # a breakdown (no restart)
    rhat_sq = (rng.uniform(1, 2, (1, k)) + 0j).astype(dtype)
    rr_sums = np.array([4.0, 4.0, 4.0]) + 0j
    rho_sums = np.array([1 + 1j, 0.5 - 2j, 1e-30])  # column 2: r_hat orthogonal to r, a restart
    stop = Stop([RUNNING] * k, np.full(k, 0.1), MAX_ITERS)
    out = twin(ref, dev, "solver.bicgstab.step_1", r, r_hat, p, v, partials(rng, rho_sums, dtype),
               partials(rng, rr_sums, dtype), rho, prev_rho, alpha, omega, rhat_sq, 100 * np.finfo(dtype).eps,
               np.zeros(k, np.uint8), stop, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G))
    assert list(out[1][13].status) == [RUNNING, BREAKDOWN, RUNNING] and list(out[1][12]) == [0, 0, 1]
    rv = partials(rng, np.array([2 - 1j, 0, 1j]), dtype)
    status = np.zeros(k, np.uint8)
    out = twin(ref, dev, "solver.bicgstab.step_2", r, s, v, rv, rho, prev_rho, alpha, rhat_sq,
               np.array([0, 0, 1], np.uint8), status, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G))
    assert list(out[1][9]) == [RUNNING, BREAKDOWN, RUNNING]
    st = partials(rng, np.concatenate([crandom(rng, k, np.complex128), [2.0, 0.0, 1.0]]), dtype)
    for diag in (None, crandom(rng, (n, 1), dtype)):
        out = twin(ref, dev, "solver.bicgstab.step_3", x, r, r_hat, s, t, p, v, diag, st, alpha, omega,
                   np.zeros((1, k)), np.zeros((1, k)), np.array([0, 0, 4], np.uint8), dtype=dtype)
        assert_twins(out, dtype, factor=np.sqrt(G), skip=(11, 12))
        r_new = out[0][1].astype(np.complex128)
        assert_summed(out[1][11], (r_hat.conj() * r_new).sum(axis=0)[None],
                      (np.abs(r_hat) * np.abs(r_new)).sum(axis=0), n, dtype)


def _basis(rng, n, k, storage):
    """A random complex basis of M + 1 vectors in its storage type (complex float16: pairs of
    float16) as a raw array made on each executor by ``twin``, and its values (complex128)."""
    values = crandom(rng, ((M + 1) * n, k), np.complex128) * np.sqrt(1 / n)
    stored = np.stack([values.real, values.imag], axis=-1) if storage == np.float16 else values
    stored = stored.astype(storage)
    loaded = stored[..., 0] + 1j * stored[..., 1] if storage == np.float16 else stored
    return (lambda exec: exec.from_host(stored)), loaded.astype(np.complex128)


@pytest.mark.parametrize("precision", ["keep", "reduce1", "reduce2"])
def test_gmres_steps(ref, dev, rng, dtype, precision):
    n, k, j = 1237, 3, 3
    storage = storage_dtype(dtype, precision)
    w, r, v = (crandom(rng, (n, k), dtype) for _ in range(3))
    basis, values = _basis(rng, n, k, storage)
    hessenberg, g = crandom(rng, (M + 1, M * k), dtype), crandom(rng, (M + 1, k), dtype)
    cos, sin = crandom(rng, (M, k), dtype), crandom(rng, (M, k), dtype)
    inner = np.full(k, j, np.int32)
    norms = rng.uniform(1, 2, k)
    out = twin(ref, dev, "solver.gmres.restart", r, partials(rng, norms ** 2, dtype), v, g,
               inner, np.array([4, 4], np.int32), Stop([RUNNING] * k, 0.5 * norms, MAX_ITERS), dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(1,))
    np.testing.assert_allclose(out[1][3][0], norms, rtol=np.sqrt(G) * tol(dtype))
    # ||v||^2 as one partial sum: v_j = v / ||v|| is stored the same on both executors (complex
    # float16: real and imaginary parts rounded as numpy rounds them)
    # (flexible GMRES: z_j = z / ||v|| into zbasis too)
    z, zbasis = crandom(rng, (n, k), dtype), crandom(rng, ((M + 1) * n, k), dtype)
    out = twin(ref, dev, "solver.gmres.multi_dot", np.array([j, 0], np.int32), 0, True, v, basis, z,
               lambda exec: exec.from_host(zbasis), w, (norms ** 2)[None].astype(dtype), np.zeros((1, k)),
               np.zeros((1, k)), hessenberg, g, cos, sin, inner, Stop([RUNNING] * k, np.full(k, 1e-9), MAX_ITERS),
               dtype=dtype)
    np.testing.assert_allclose(out[1][6][j * n:(j + 1) * n], z / norms, rtol=10 * tol(dtype))
    out = [o[:5] + o[7:] for o in out]  # as without z and zbasis
    assert_twins(out, dtype, factor=10 * np.sqrt(G), skip=(4, 8))
    stored = out[1][4]
    v_j = stored[j * n:(j + 1) * n]
    expected = v / np.sqrt(norms ** 2).astype(dtype)
    if storage == np.float16:
        v_j = v_j[..., 0] + 1j * v_j[..., 1].astype(np.complex128)
        storage_eps = np.finfo(np.float16).eps
    else:
        storage_eps = np.finfo(storage).eps
    np.testing.assert_allclose(v_j, expected, rtol=max(10 * storage_eps, tol(dtype)), atol=2 * storage_eps)
    if dtype == np.complex128:
        np.testing.assert_array_equal(stored, out[0][4])
    vectors = values.reshape(M + 1, n, k)[: j + 1].copy()
    vectors[j] = expected
    dots = np.concatenate([np.einsum("inc,nc->ic", vectors.conj(), w).ravel(), (np.abs(w) ** 2).sum(axis=0)])
    magnitude = np.concatenate([np.einsum("inc,nc->ic", np.abs(vectors), np.abs(w)).ravel(),
                                (np.abs(w) ** 2).sum(axis=0)])
    assert_summed(out[1][8][:, :dots.size], dots[None], magnitude, n, dtype,
                  factor=1 + 2000 * storage_eps / tol(dtype))
    # the rotated column: H[0:j+2, j-1] triangular (below its diagonal 0), |g| preserved
    h_dev = out[1][9][:, (j - 1) * k:j * k]
    assert (h_dev[j] == 0).all() and (np.abs(h_dev[j - 1].imag) == 0).all()


@pytest.mark.parametrize("precision", ["keep", "reduce2"])
def test_gmres_orthogonalize(ref, dev, ocl, rng, dtype, precision):
    """The Gram-Schmidt passes and the update, on a well-conditioned Hessenberg matrix."""
    if dev.info.is_gpu and ocl.info.is_cpu and "-cl-opt-disable" not in os.environ.get("POCL_EXTRA_BUILD_FLAGS", ""):
        pytest.skip("PoCL's optimized code generation for orthogonalize with complex values in a 256-wide "
                    "work-group takes half a minute (LLVM register allocation; the suite's default "
                    "-cl-opt-disable, tests/conftest.py, takes seconds)")
    n, k, j = 1237, 3, 3
    basis, values = _basis(rng, n, k, storage_dtype(dtype, precision))
    w, v = crandom(rng, (n, k), dtype), crandom(rng, (n, k), dtype)
    g = crandom(rng, (M + 1, k), dtype)
    hessenberg = crandom(rng, (M + 1, M * k), dtype)
    dots = crandom(rng, (j + 1, k), np.complex128)
    # columns 0 and 2 keep most of their norm (one pass), column 1 loses nearly all (a second)
    before = np.array([50.0, 1.01, 50.0]) * (np.abs(dots) ** 2).sum(axis=0)
    h = np.pad(partials(rng, np.concatenate([dots.ravel(), before]), dtype), [(0, 0), (0, (M - j) * k)])
    out = twin(ref, dev, "solver.gmres.orthogonalize", np.array([j, 0], np.int32), 0, basis, w,
               rng.uniform(1, 2, (1, k)), h, hessenberg, np.zeros((n, k)), np.zeros((1, k)),
               np.zeros((1, (M + 1) * k)), np.zeros(k, np.uint8), 0.05, Stop([RUNNING] * k, np.ones(k), MAX_ITERS),
               dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(5, 8, 9))
    assert list(out[1][10]) == [0, 1, 0]
    v_new = out[0][7].astype(np.complex128)
    assert_summed(out[1][8], (np.abs(v_new) ** 2).sum(axis=0)[None], (np.abs(v_new) ** 2).sum(axis=0), n, dtype,
                  factor=np.sqrt(G))
    vectors = values.reshape(M + 1, n, k)[: j + 1]
    h2 = np.einsum("inc,nc->ic", vectors.conj(), v_new)[:, 1]
    assert_summed(out[1][9][:, 1:(j + 1) * k:k], h2[None],
                  np.einsum("inc,nc->ic", np.abs(vectors), np.abs(v_new))[:, 1], n, dtype, factor=np.sqrt(G))
    flagged = np.array([1, 0, 1], np.uint8)
    # orthogonalize's partial sums of ||v||^2, in the device's layout (reorthogonalize rewrites those of 0 and 2)
    from ginkpy.opencl.launch import reduction_shape
    ww = partials(rng, rng.uniform(1, 2, k), dtype, groups=reduction_shape(dev.info, n, k).groups)
    h2 = np.pad(partials(rng, crandom(rng, (j + 1) * k, complex), dtype), [(0, 0), (0, (M - j) * k)])
    out = twin(ref, dev, "solver.gmres.reorthogonalize", np.array([j, 0], np.int32), 0, basis, v, h2, hessenberg,
               flagged, lambda exec: Dense.from_numpy(exec, ww if exec.backend != "reference"
                                                      else ww.sum(axis=0)[None]),
               Stop([RUNNING] * k, np.ones(k), MAX_ITERS), dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(4, 7))
    v_new = out[0][3].astype(np.complex128)
    norms = (np.abs(v_new) ** 2).sum(axis=0)
    assert_summed(out[1][7][:, [0, 2]], norms[None, [0, 2]], norms[[0, 2]], n, dtype, factor=np.sqrt(G))
    np.testing.assert_array_equal(out[1][7][:, 1], ww[:, 1])
    triangle = crandom(rng, (M + 1, M * k), np.complex128)
    for i in range(M):
        triangle[i, i * k:(i + 1) * k] += 4
    for diag in (None, crandom(rng, (n, 1), dtype)):
        out = twin(ref, dev, "solver.gmres.update", basis, triangle, g, np.array([0, 2, M], np.int32), diag, w,
                   dtype=dtype)
        assert_twins(out, dtype, factor=M)
        np.testing.assert_array_equal(out[1][5][:, 0], w[:, 0])  # no step taken: x as it was


def test_gmres_givens_is_a_complex_rotation(ref, ocl, rng, dtype):
    # one column at a time: the rotation takes (h_jj, ||w||) to (d, 0) with d real and g's
    # magnitude preserved (|g_j|^2 + |g_{j+1}|^2 before = after)
    k, jj = 5, 3
    hessenberg = crandom(rng, (M + 1, M * k), dtype)
    g = crandom(rng, (M + 1, k), dtype)
    angles = rng.uniform(0, 2 * np.pi, (M, k))
    cos = (np.cos(angles) * np.exp(1j * rng.uniform(0, 6, (M, k)))).astype(dtype)
    sin = (np.sin(angles) * np.exp(1j * rng.uniform(0, 6, (M, k)))).astype(dtype)
    ww = partials(rng, rng.uniform(0.5, 2, k), dtype)
    status = [RUNNING, RUNNING, BREAKDOWN, RUNNING, RUNNING]
    out = twin(ref, ocl, "solver.gmres.givens", jj, ww, hessenberg, g, cos, sin, np.full(k, jj, np.int32),
               Stop(status, np.full(k, 1e-3), MAX_ITERS), dtype=dtype)
    assert_twins(out, dtype, factor=10 * np.sqrt(G), skip=(1,))
    h_new, g_new = out[1][2], out[1][3]
    for c in (0, 1, 3, 4):
        column = h_new[:, jj * k + c]
        assert column[jj + 1] == 0 and column[jj].imag == 0 and column[jj].real > 0
        before = abs(g[jj, c]) ** 2
        after = abs(g_new[jj, c]) ** 2 + abs(g_new[jj + 1, c]) ** 2
        np.testing.assert_allclose(after, before, rtol=100 * tol(dtype))
    np.testing.assert_array_equal(h_new[:, jj * k + 2], hessenberg[:, jj * k + 2])


def test_elementwise_solver_steps(ref, dev, rng, dtype):
    """Bicg, Cgs, Fcg, Ir and Idr: their vector kernels (a zero divisor a breakdown, a stopped
    column untouched, the shadow updates of Bicg with the conjugate scalars)."""
    n, k = 1237, 3
    vec = lambda: crandom(rng, (n, k), dtype)  # noqa: E731
    sca = lambda: crandom(rng, (1, k), dtype)  # noqa: E731
    status = np.array([RUNNING, RUNNING, CONVERGED], np.uint8)
    zero_middle = lambda a: np.where(np.arange(k) == 1, 0, a).astype(dtype)  # noqa: E731
    cases = [
        ("solver.bicg.step_1", [vec(), vec(), vec(), vec(), sca(), zero_middle(sca()), status]),
        ("solver.bicg.step_2", [vec(), vec(), vec(), vec(), vec(), vec(), zero_middle(sca()), sca(), sca(), status]),
        ("solver.cgs.step_1", [vec(), vec(), vec(), vec(), zero_middle(sca()), sca(), status]),
        ("solver.cgs.step_2", [vec(), vec(), vec(), vec(), sca(), sca(), zero_middle(sca()), status]),
        ("solver.cgs.step_3", [vec(), vec(), sca(), sca(), sca(), status]),
        ("solver.fcg.step_1", [vec(), vec(), sca(), zero_middle(sca()), status]),
        ("solver.fcg.step_2", [vec(), vec(), vec(), vec(), vec(), (np.array([[2, 0, 1]]) + 0.5j).astype(dtype),
                               sca(), sca(), status]),
        ("solver.ir.update", [crandom(rng, (1, 1), dtype), vec(), vec(), status]),
        ("solver.ir.prepare", [vec(), vec(), status]),
    ]
    for kernel, args in cases:
        before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        out = twin(ref, dev, kernel, *args, dtype=dtype)
        assert_twins(out, dtype, factor=4)
        if kernel not in ("solver.ir.prepare",):
            for i, a in enumerate(before):  # the stopped column untouched
                if isinstance(a, np.ndarray) and a.dtype == dtype and a.shape[0] == n:
                    np.testing.assert_array_equal(out[1][i][:, 2], a[:, 2], err_msg=kernel)
    # Idr's steps (s = 2): the small triangular solves and the vector updates
    s = 2
    m = crandom(rng, (s, s * k), dtype) + 3
    args = [1, m, crandom(rng, (s, k), dtype), vec(), crandom(rng, (s * n, k), dtype), np.zeros((s, k), dtype), vec(),
            status.copy()]
    assert_twins(twin(ref, dev, "solver.idr.step_1", *args, dtype=dtype), dtype, factor=4)
    args = [1, sca(), vec(), crandom(rng, (s, k), dtype), crandom(rng, (s * n, k), dtype), vec(), status.copy()]
    assert_twins(twin(ref, dev, "solver.idr.step_2", *args, dtype=dtype), dtype, factor=4)
    args = [1, crandom(rng, (s, k), dtype), m, crandom(rng, (s, k), dtype), np.zeros((s, k), dtype), vec(), vec(),
            crandom(rng, (s * n, k), dtype), crandom(rng, (s * n, k), dtype), vec(), vec(), status.copy()]
    assert_twins(twin(ref, dev, "solver.idr.step_3", *args, dtype=dtype), dtype, factor=8)
    # step_4: omega from tr / tt, enlarged where the angle is wide (column 1), r_norm real
    tr = np.array([[1 + 1j, 1e-3 + 1e-3j, 2]], dtype)
    tt = np.array([[2, 2, 1]], dtype)
    out = twin(ref, dev, "solver.idr.step_4", 0.7, tr, tt, real([[1.0, 1.0, 1.0]], dtype), sca(), vec(), vec(), vec(),
                vec(),
                status.copy(), dtype=dtype)
    assert_twins(out, dtype, factor=4)
    omega = out[1][4][0]
    np.testing.assert_allclose(omega[0], (1 + 1j) / 2, rtol=tol(dtype))
    np.testing.assert_allclose(abs(omega[1]), 0.7 / np.sqrt(2), rtol=10 * tol(dtype))
    np.testing.assert_allclose(omega[1] / abs(omega[1]), (1 + 1j) / np.sqrt(2), rtol=10 * tol(dtype))


def test_multigrid_kernels(ref, ocl, rng, dtype):
    n, m, k = 1237, 301, 3
    agg = rng.integers(0, m, n).astype(np.int32)
    agg[:m] = np.arange(m)
    S = complex_matrix(rng, n, n)
    inv_diag = (1 / S.diagonal())[:, None].astype(dtype)
    coarse_x, b, x = crandom(rng, (m, k), dtype), crandom(rng, (n, k), dtype), crandom(rng, (n, k), dtype)
    out = twin(ref, ocl, "solver.multigrid.prolong_relax", 0.7, S, inv_diag, agg, coarse_x, b, x,
               np.zeros((n, k), dtype), dtype=dtype)
    assert_twins(out, dtype, factor=4)
    out = twin(ref, ocl, "solver.multigrid.prolong", agg, coarse_x, x, dtype=dtype)
    assert_twins(out, dtype)
