"""Gmres's lagged second pass (issue 32): with ortho_method "mgs" the DGKS second pass that
orthogonalize asks for is made by the next multi_dot (or, at the end of a cycle, by givens)
instead of a launch of its own, which corrects w = A M v through the Arnoldi relation (H
unrotated, kept apart): orthogonalize writing raw H, multi_dot
and givens with the lagged pass against their reference twins (real and complex values, flagged
and clear columns, flexible GMRES's z), the reference against the same step without the lag, and
the basis of a cycle where the test asks in every step as orthogonal as CGS2's on both executors."""
import dataclasses

import attrs
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.log.logger import Logger
from ginkpy.core.solver.cb_gmres import storage_dtype
from ginkpy.opencl.device_choices import lagged_fits
import krylov_cases
from conftest import PARTIAL_GROUPS as G, Stop, assert_sums, assert_twins, random_partials, tol, twin
from test_gmres import (BREAKDOWN, M, MAX_ITERS, N, RUNNING, _assert_orthogonalize, _basis, _multi_dot_magnitude, _on,
                        _orthogonalize_args, _padded, _step, _storage_tol)

dtype = krylov_cases.dtype  # the kernel tests' fixture (float64, float32) where a test names no types
DTYPES = [np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.complex128)]


def _values(rng, shape, dtype):
    values = rng.standard_normal(shape)
    return (values + 1j * rng.standard_normal(shape) if dtype.kind == "c" else values).astype(dtype)


def _partials(rng, sums, length, dtype):
    """Partial sums (as a reduction kernel writes them) of ``sums`` at the row length ``length``:
    real and imaginary parts apart for complex values."""
    parts = random_partials(rng, sums.real.ravel(), np.float64)
    if dtype.kind == "c":
        parts = parts + 1j * random_partials(rng, sums.imag.ravel(), np.float64)
    return _padded(parts, length).astype(dtype)


def _lagged_inputs(rng, k, j, dtype):
    """(h2 summed (j, k), h2 partial sums in rows of (M + 1) k, reorth (even columns), ww (1, k))
    of step j - 1: small coefficients, so that ||w''||^2 = ||w'||^2 - ||h2||^2 stays positive."""
    h2 = _partials(rng, _values(rng, (j, k), dtype) * 0.1, (M + 1) * k, dtype)
    coef = h2.astype(np.complex128 if dtype.kind == "c" else np.float64).sum(axis=0)[:j * k].reshape(j, k)
    reorth = (np.arange(k) % 2 == 0).astype(np.uint8)
    return coef, h2, reorth, (rng.uniform(0.5, 2, k) ** 2)[None]


def _dot_partials(partials):
    """Partial sums as each executor takes them: one row (their sums) on the reference, the
    rows as given on the device (real or complex)."""
    summed = partials.astype(np.complex128 if partials.dtype.kind == "c" else np.float64).sum(axis=0, keepdims=True)
    return lambda exec: gk.matrix.Dense.from_numpy(exec, summed if exec.backend == "reference" else partials,
                                                   partials.dtype)


def _assert_sums(device, reference, magnitude, n, dtype, what):
    """assert_sums of real and (complex values) imaginary parts."""
    for part in (np.real, np.imag) if dtype.kind == "c" else (np.real,):
        assert_sums(part(device), part(reference), magnitude, n, dtype, what)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, j", [((N, 3), 3), ((5001, 1), 4), ((5001, 4), 0), ((7, 301), 2)], ids=str)
def test_opencl_multi_dot_lagged(ref, dev, rng, dtype, shape, j):
    # where reorth is set (j > 0): v'' = v - V h2, z'' = z - Z h2 (k = 3: flexible), ||v''|| =
    # sqrt(||v||^2 - ||h2||^2), w'' = w - V c - h2_{j-1} v'' with c = H h2 (H: column j - 1 raw's
    # + h2, the columns before final's, up to their subdiagonal), H[0:j, j - 1] += h2 before its
    # Givens step; then v_j = v'' / ||v''||, the dot products with w''; final[:, j - 1] = (raw +
    # h2, ||v''||) in every column; elsewhere as without
    n, k = shape
    coef, h2, reorth, ww = _lagged_inputs(rng, k, j, dtype)
    basis = _basis(rng, n, k, dtype)
    if dtype.kind == "c":
        basis = basis + 1j * _basis(rng, n, k, dtype)
    v, w = _values(rng, (n, k), dtype), _values(rng, (n, k), dtype)
    z, zbasis = (_values(rng, (n, k), dtype), _values(rng, ((M + 1) * n, k), dtype)) if k == 3 else (None, None)
    hessenberg, g, cos, sin, raw, final = (_values(rng, s, dtype) for s in ((M + 1, M * k), (M + 1, k), (M, k), (M, k),
                                                                            (M + 1, M * k), (M + 1, M * k)))
    args = [_step(j, 1), 1, True, v, _on(basis), z, zbasis if zbasis is None else _on(zbasis), w, ww.astype(dtype),
            np.zeros((1, k)), np.zeros((1, k)), hessenberg, g, cos, sin, np.full(k, j, np.int32),
            Stop([RUNNING] * k, np.full(k, 1e-30), MAX_ITERS), raw, final, _dot_partials(h2), reorth]
    if not lagged_fits(dev.info, n, k, M, dtype):  # (NVIDIA's 48 KiB: Gmres keeps the second pass's launch)
        with pytest.raises(ValueError, match="bytes of local memory"):
            twin(ref, dev, "solver.gmres.multi_dot", *args, dtype=dtype)
        return
    out = twin(ref, dev, "solver.gmres.multi_dot", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(10, 19))
    again = (reorth != 0) & (j > 0)
    nrm = np.sqrt(ww[0] - np.where(again, (np.abs(coef) ** 2).sum(axis=0), 0)) if j > 0 else np.ones(k)
    V = basis.reshape(-1, n, k)[:j]
    arnoldi = np.zeros((j, j, k), dtype)  # H[0:j, 0:j] after both passes
    for col in range(j):
        arnoldi[:col + 2, col] = final[:col + 2, col * k:(col + 1) * k][:j] if col < j - 1 else \
            raw[:j, col * k:(col + 1) * k] + coef
    c = np.einsum("ilc,lc->ic", arnoldi, coef * again)
    v2 = v - np.einsum("ic,inc->nc", coef * again, V)
    w2 = w - np.einsum("ic,inc->nc", c, V) - (coef[-1] * again if j > 0 else 0) * v2
    t = 10 * np.sqrt(G) * tol(dtype)
    np.testing.assert_allclose(out[1][9][0].real, nrm, rtol=t)
    np.testing.assert_allclose(out[1][4][j * n:(j + 1) * n], v2 / nrm, rtol=t, atol=t)
    np.testing.assert_allclose(out[1][7], w2, rtol=t, atol=t * np.abs(w2).max())
    if z is not None:
        z2 = z - np.einsum("ic,inc->nc", coef * again, zbasis.reshape(-1, n, k)[:j])
        np.testing.assert_allclose(out[1][6][j * n:(j + 1) * n], z2 / nrm, rtol=t, atol=t)
    if j > 0:
        written = final.copy()
        written[:j, (j - 1) * k:j * k] = raw[:j, (j - 1) * k:j * k] + coef * again
        written[j, (j - 1) * k:j * k] = nrm
        np.testing.assert_allclose(out[1][18], written, rtol=t, atol=t)
    used = (j + 2) * k
    _assert_sums(out[1][10][:, :used], out[0][10][:, :used],
                 _multi_dot_magnitude(np.abs(out[0][4]), np.abs(out[0][7]), j + 1), n, dtype, "V^H w'', w'' . w''")
    if j > 0:  # the reference's rotation: the step without the lag on H + h2 and ||w''||
        plain = _plain_rotation(ref, j - 1, ww, coef, again, hessenberg, g, cos, sin, k, dtype)
        for got, expected in zip(out[0][11:16] + [out[0][16].status], plain):
            np.testing.assert_allclose(got, expected, rtol=t, atol=t * np.abs(expected).max())


@pytest.mark.parametrize("precision", ["reduce1", "reduce2"])
@pytest.mark.parametrize("shape", [(N, 3), (5001, 1)], ids=str)
def test_opencl_multi_dot_lagged_stored_basis(ref, dev, rng, precision, shape):
    # CbGmres's lagged pass: V read from its storage type (float32, float16) for v'' = v - V h2
    # and w'' = w - V c - h2_{j-1} v'' (arithmetic in float64), v_j = v'' / ||v''|| rounded to it;
    # the twins agree to the storage's rounding where it enters (v_j and the dots with it), to
    # float64's elsewhere, and w'' is the formula's on the stored V
    n, k = shape
    dtype, j = np.dtype(np.float64), 3
    storage = storage_dtype(dtype, precision)
    coef, h2, reorth, ww = _lagged_inputs(rng, k, j, dtype)
    basis = _basis(rng, n, k, storage)
    v, w = _values(rng, (n, k), dtype), _values(rng, (n, k), dtype)
    hessenberg, g, cos, sin, raw, final = (_values(rng, s, dtype) for s in ((M + 1, M * k), (M + 1, k), (M, k), (M, k),
                                                                            (M + 1, M * k), (M + 1, M * k)))
    args = [_step(j, 1), 1, True, v, _on(basis), None, None, w, ww.astype(dtype), np.zeros((1, k)), np.zeros((1, k)),
            hessenberg, g, cos, sin, np.full(k, j, np.int32), Stop([RUNNING] * k, np.full(k, 1e-30), MAX_ITERS),
            raw, final, _dot_partials(h2), reorth]
    out = twin(ref, dev, "solver.gmres.multi_dot", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(4, 10, 19))
    st = _storage_tol(storage, dtype)
    np.testing.assert_allclose(out[1][4].astype(np.float64), out[0][4].astype(np.float64), rtol=st,
                               atol=st * np.abs(out[0][4]).max())
    again = reorth != 0
    V = basis.astype(dtype).reshape(-1, n, k)[:j]
    arnoldi = np.zeros((j, j, k), dtype)
    for col in range(j):
        arnoldi[:col + 2, col] = final[:col + 2, col * k:(col + 1) * k][:j] if col < j - 1 else \
            raw[:j, col * k:(col + 1) * k] + coef
    v2 = v - np.einsum("ic,inc->nc", coef * again, V)
    w2 = w - np.einsum("ic,inc->nc", np.einsum("ilc,lc->ic", arnoldi, coef * again), V) - coef[-1] * again * v2
    t = 10 * np.sqrt(G) * tol(dtype)
    np.testing.assert_allclose(out[1][7], w2, rtol=t, atol=t * np.abs(w2).max())
    used = (j + 2) * k
    magnitude = _multi_dot_magnitude(np.abs(out[0][4]).astype(np.float64), np.abs(out[0][7]), j + 1)
    assert_sums(out[1][10][:, :used], out[0][10][:, :used], magnitude, n, dtype, "V^T w'', w'' . w''",
                factor=st / tol(dtype))


@pytest.mark.parametrize("j", [0, 3])
def test_opencl_orthogonalize_keeps_raw_columns(ref, dev, rng, dtype, j):
    # with raw (the lagged pass's H unrotated): H[0:j+1, j] = h into raw as into hessenberg, in
    # running columns (column 1 stopped: untouched); everything else as without
    k = 3
    args = _orthogonalize_args(rng, N, k, j, dtype, dtype, [1.5, 0.7, 1.2], [RUNNING, BREAKDOWN, RUNNING])
    raw = rng.standard_normal((M + 1, M * k)).astype(dtype)
    out = twin(ref, dev, "solver.gmres.orthogonalize", *args, raw, dtype=dtype)
    _assert_orthogonalize([o[:13] for o in out], N, j, dtype)
    for o in out:
        written = raw.copy()
        for c in (0, 2):
            written[:j + 1, j * k + c] = o[6][:j + 1, j * k + c]
        np.testing.assert_array_equal(o[13], written)


def _plain_rotation(ref, jj, ww, coef, again, hessenberg, g, cos, sin, k, dtype):
    """The reference's Givens step of column jj without the lag, on H[0:jj+1, jj] + h2 and
    ||w''||^2 = ||w'||^2 - ||h2||^2 where ``again``: hessenberg, g, cos, sin, inner, status."""
    hess = hessenberg.copy()
    hess[:jj + 1, jj * k:(jj + 1) * k] += (coef * again).astype(dtype)
    norms2 = ww - np.where(again, (np.abs(coef) ** 2).sum(axis=0), 0)
    out = twin(ref, ref, "solver.gmres.givens", jj, norms2.astype(dtype), hess, g, cos, sin, np.full(k, jj, np.int32),
               Stop([RUNNING] * k, np.full(k, 1e-30), MAX_ITERS), dtype=dtype)[0]
    return out[2:7] + [out[7].status]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("k", [1, 5])
def test_opencl_givens_lagged(ref, ocl, rng, dtype, k):
    # the end of a cycle: the Givens step of column jj with its lagged second pass (H[0:jj+1, jj]
    # += h2, h_{jj+1,jj} = ||w''||) where reorth is set; the same as the step without the lag
    jj = 3
    coef, h2, reorth, ww = _lagged_inputs(rng, k, jj + 1, dtype)
    hessenberg, g, cos, sin = (_values(rng, s, dtype) for s in ((M + 1, M * k), (M + 1, k), (M, k), (M, k)))
    args = [jj, ww.astype(dtype), hessenberg, g, cos, sin, np.full(k, jj, np.int32),
            Stop([RUNNING] * k, np.full(k, 1e-30), MAX_ITERS), _dot_partials(h2), reorth]
    out = twin(ref, ocl, "solver.gmres.givens", *args, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(8,))
    again = reorth != 0
    plain = _plain_rotation(ref, jj, ww, coef, again, hessenberg, g, cos, sin, k, dtype)
    t = 10 * np.sqrt(G) * tol(dtype)
    for got, expected in zip(out[1][2:7] + [out[1][7].status], plain):
        np.testing.assert_allclose(got, expected, rtol=t, atol=t * np.abs(expected).max())


class _EveryIteration(Logger):
    """Needs the live solution after every iteration: the solve reads its state after each one
    (the Givens step apart from the next step's multi_dot: ``givens`` takes the lagged pass)."""

    needs_solution = True


def _cycle_orthogonality(exec, S, b, method, m, loggers, precision=None):
    """max |V^H V - I| of the basis of one GMRES(m) cycle of m steps (iteration limit m): Gmres's,
    or CbGmres's with its basis stored in ``precision``."""
    A = gk.matrix.Csr.from_scipy(exec, S)
    params = (gk.solver.Gmres.build() if precision is None else
              gk.solver.CbGmres.build().with_storage_precision(precision))
    solver = (params.with_krylov_dim(m).with_ortho_method(method)
              .with_criteria(gk.stop.Iteration.build().with_max_iters(m)).on(exec).generate(A))
    log = gk.log.Convergence()
    for logger in [log] + loggers:
        solver.add_logger(logger)
    x = gk.matrix.Dense.zeros(exec, b.shape)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), x)
    n, k = b.shape
    assert log.num_iterations == m
    V = exec.to_host(solver._workspace.items["basis"]).reshape(m + 1, n, k)[:m].astype(np.float64)
    return max(np.abs(V[:, :, c] @ V[:, :, c].T - np.eye(m)).max() for c in range(k))


def _every_step_asks():
    """A = I + E, ||E|| = 0.1 (400 rows), and b (two columns): each w loses 99% of its norm to
    the basis, so that the DGKS test asks for the second pass in every step."""
    n = 400
    E = sp.random(n, n, density=0.02, random_state=1)
    S = (sp.identity(n) + 0.1 * E / np.linalg.norm(E.toarray(), 2)).tocsr()
    return S, np.random.default_rng(0).standard_normal((n, 2))


@pytest.mark.parametrize("reads", ["asynchronous", "every_iteration"])
def test_lagged_second_pass_keeps_the_basis_orthogonal(ref, ocl, reads):
    # the test asks in every step; one pass alone ("cgs") loses orthogonality once the residual
    # reaches rounding, "mgs" (lagged into the next kernels) keeps it as "cgs2" (its own launch)
    m = 20
    S, b = _every_step_asks()
    for exec in (ref, ocl):
        lost = {method: _cycle_orthogonality(exec, S, b, method, m, [_EveryIteration()] if reads != "asynchronous"
                                             else []) for method in ("cgs", "mgs", "cgs2")}
        assert lost["cgs"] > 1e-3 and lost["mgs"] <= 1e-13 and lost["cgs2"] <= 1e-13, lost


@pytest.mark.parametrize("precision", ["reduce1", "reduce2"])
def test_lagged_second_pass_keeps_a_stored_basis_orthogonal(ref, ocl, precision):
    # CbGmres lags the pass too (its Arnoldi relation holds to the storage's rounding): its basis,
    # stored in float32 or float16, stays orthogonal to a few of the storage's epsilons, as with
    # "cgs2", where one pass alone loses it
    m = 20
    S, b = _every_step_asks()
    eps = np.finfo(storage_dtype(np.float64, precision)).eps
    for exec in (ref, ocl):
        lost = {method: _cycle_orthogonality(exec, S, b, method, m, [], precision) for method in ("cgs", "mgs", "cgs2")}
        assert lost["cgs"] > 0.5 and lost["mgs"] <= 2 * eps and lost["cgs2"] <= 2 * eps, lost


def test_lagged_fits_a_devices_local_memory(ocl):
    # the lagged multi_dot keeps 2 m + 1 coefficients per column in local memory: NVIDIA's 48 KiB
    # (beside 16 KiB of scratch) hold them for 32 complex128 columns with krylov_dim 30, not 64 or 301
    nvidia = attrs.evolve(ocl.info, is_cpu=False, is_gpu=True, local_mem_size=48 << 10)
    assert lagged_fits(nvidia, 10000, 4, 30, np.float64) and lagged_fits(nvidia, 10000, 32, 30, np.complex128)
    assert not lagged_fits(nvidia, 7, 301, 6, np.complex128) and not lagged_fits(nvidia, 10000, 64, 30, np.complex128)


@pytest.mark.parametrize("name, params, rtol", [("Gmres", {}, 1e-8), ("CbGmres", {"storage_precision": "reduce1"}, 1e-6),
                                                 ("CbGmres", {"storage_precision": "reduce2"}, 1e-6)], ids=str)
def test_gmres_keeps_the_second_pass_launch_where_the_lag_does_not_fit(ocl, monkeypatch, name, params, rtol):
    # a device whose local memory does not hold the lagged pass's coefficients (many complex
    # columns on a GPU): "mgs" runs its second pass in a launch of its own, the same solve
    # (CbGmres's too, to its basis's rounding: the lag is no longer Gmres's alone)
    S = sp.diags([-1.2, 2.5, -1.0], [-1, 0, 1], shape=(200, 200)).tocsr()
    b = np.random.default_rng(3).standard_normal((S.shape[0], 2))

    def solve(exec):
        A = gk.matrix.Csr.from_scipy(exec, S)
        p = getattr(gk.solver, name).build()
        for key, value in params.items():
            getattr(p, f"with_{key}")(value)
        solver = (p.with_krylov_dim(10).with_ortho_method("mgs")
                  .with_criteria(gk.stop.Iteration.build().with_max_iters(60),
                                 gk.stop.ResidualNorm.build().with_reduction_factor(1e-10))
                  .on(exec).generate(A))
        x = gk.matrix.Dense.zeros(exec, b.shape)
        names, run = [], exec.run
        exec.run = lambda name, *a, **k: (names.append(name), run(name, *a, **k))[1]
        solver.apply(gk.matrix.Dense.from_numpy(exec, b), x)
        del exec.run
        return x.to_numpy(), names

    x_lagged, lagged = solve(gk.OpenCLExecutor(ocl.device))
    unlagged_exec = gk.OpenCLExecutor(ocl.device)
    no_lag = dataclasses.replace(unlagged_exec.device_choices(), lagged_second_pass=lambda *args: False)
    monkeypatch.setattr(unlagged_exec, "device_choices", lambda: no_lag)
    x_own, own = solve(unlagged_exec)
    assert "solver.gmres.reorthogonalize" not in lagged and "solver.gmres.reorthogonalize" in own
    np.testing.assert_allclose(x_own, x_lagged, rtol=rtol, atol=rtol * np.abs(x_lagged).max())
