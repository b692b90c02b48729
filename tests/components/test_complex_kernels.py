"""Complex values (complex64, complex128) in the kernels: every OpenCL kernel a complex solve runs
against its reference twin, on random complex data larger than a work-group, odd sizes and
column counts, stopped columns and zero divisors where the kernel has them. Dot products
conjugate their first argument, norms are real (in the real type of the value type).

Partial sums given to a consumer kernel are the same rows on both executors (each sums them);
partial sums a kernel writes are compared by their sums over the rows.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.cb_gmres import storage_dtype
from ginkpy.core.stop.stopping_status import StopReason

from conftest import Stop, assert_stop_twins, assert_twins, sum_tol, tol, twin

RUNNING, CONVERGED, LIMIT, BREAKDOWN, DIVERGED, PENDING = (
    StopReason.RUNNING, StopReason.CONVERGED, StopReason.ITERATION_LIMIT, StopReason.BREAKDOWN,
    StopReason.DIVERGED, StopReason.PENDING)
SHAPES = [(1237, 3), (5001, 1)]  # several work-groups (both layouts), odd column counts
G = 7  # rows of the partial sums given to consumer kernels
M = 5  # Gmres' Krylov dimension here
MAX_ITERS = 300


@pytest.fixture(params=[np.complex128, np.complex64], ids=["complex128", "complex64"])
def dtype(request, ocl):
    if request.param == np.complex128 and not ocl.info.fp64:
        pytest.skip("complex128 needs fp64")
    return np.dtype(request.param)


def crandom(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def partials(rng, sums, dtype, groups: int = G):
    """``groups`` rows of partial sums adding up to ``sums`` (complex: random shares)."""
    sums = np.asarray(sums, np.complex128).ravel()
    weights = rng.uniform(0.5, 1.5, (groups, sums.size))
    return (weights / weights.sum(axis=0) * sums).astype(dtype)


def real(values, dtype):
    """A Dense of the real type of ``dtype`` (norms), made on each executor (for ``twins``)."""
    values = np.asarray(values, np.float64)
    return lambda exec: Dense.from_numpy(exec, values, real_dtype(dtype))


def assert_summed(dev, ref_, magnitude, terms, dtype, factor=1.0):
    """Partial sums (rows) whose column sums agree within sum_tol of ``magnitude`` (the sum of
    the magnitudes of their terms)."""
    err = np.abs(np.asarray(dev, np.complex128).sum(axis=0) - np.asarray(ref_, np.complex128).sum(axis=0))
    bound = factor * sum_tol(dtype, terms) * np.asarray(magnitude, np.float64)
    assert (err <= bound).all(), f"error {err.max():.3g} > {bound[np.argmax(err - bound)]:.3g}"


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


# -- matrices ----------------------------------------------------------------------------------

def _complex_matrix(rng, n, m, density=0.01):
    S = sp.random(n, m, density=density, random_state=int(rng.integers(1 << 30)), format="csr")
    S.data = S.data + 1j * rng.standard_normal(S.nnz)
    return S + sp.eye(n, m, format="csr") * (2 - 1j)


@pytest.mark.parametrize("strategy", ["classical", "vector", "long_rows", "merge_path", "row_blocks"])
def test_csr_spmv_every_strategy(ref, ocl, rng, dtype, strategy):
    from ginkpy.opencl.matrix import csr_strategy
    S = _complex_matrix(rng, 1237, 1301)
    S[5, :] = 1j  # a long row
    S = S.tocsr()
    b, x = crandom(rng, (1301, 3), dtype), crandom(rng, (1237, 3), dtype)
    alpha, beta = crandom(rng, (1, 3), dtype), crandom(rng, (1, 3), dtype)
    results = []
    for exec in (ref, ocl):
        A = gk.matrix.Csr.from_scipy(exec, S, dtype)
        if exec is ocl:
            csr_strategy.select_strategy(ocl, A, name=strategy)
        B, X = gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.from_numpy(exec, x)
        A.apply(B, X)
        plain = X.to_numpy()
        X = gk.matrix.Dense.from_numpy(exec, x)
        A.apply(gk.matrix.Dense.from_numpy(exec, alpha), B, gk.matrix.Dense.from_numpy(exec, beta), X)
        results.append((plain, X.to_numpy()))
    expected = S.astype(np.complex128) @ b
    magnitude = abs(S) @ np.abs(b)
    for plain, advanced in results:
        assert (np.abs(plain - expected) <= 2 * sum_tol(dtype, 1301) * magnitude).all()
        assert (np.abs(advanced - (alpha * expected + beta * x))
                <= 2 * sum_tol(dtype, 1301) * (np.abs(alpha) * magnitude + np.abs(beta * x))).all()


@pytest.mark.parametrize("second", ["none", "other", "y"])
def test_csr_spmv_dots(ref, dev, rng, dtype, second):
    S = _complex_matrix(rng, 1237, 1237)
    b, u, w = (crandom(rng, (1237, 3), dtype) for _ in range(3))
    x = np.zeros((1237, 3), dtype)
    args = [S, b, x, u, {"none": None, "other": w}.get(second), np.zeros((1, 3))]
    if second == "y":
        from conftest import Same
        args[4] = Same(2)
    out = twin(ref, dev, "matrix.csr.spmv_dots", *args, dtype=dtype)
    assert_twins(out, dtype, factor=4, skip=(0, 5))
    y = out[0][2].astype(np.complex128)
    dots = [(u.conj() * y).sum(axis=0)]
    if second != "none":
        dots.append(((w if second == "other" else y).conj() * y).sum(axis=0))
    magnitude = np.concatenate([(np.abs(u) * np.abs(y)).sum(axis=0)] * len(dots))
    assert_summed(out[1][5], np.concatenate(dots)[None], magnitude, 1237, dtype, factor=4)


def test_csr_helpers(ref, ocl, rng, dtype):
    S = _complex_matrix(rng, 301, 301)
    diag = crandom(rng, (301, 1), dtype)
    out = twin(ref, ocl, "matrix.csr.extract_diagonal", S, np.zeros((301, 1), dtype), dtype=dtype)
    np.testing.assert_array_equal(out[1][1][:, 0], S.diagonal().astype(dtype))
    for exec in (ref, ocl):
        A = gk.matrix.Csr.from_scipy(exec, S, dtype)
        scaled = A.scale_columns(gk.matrix.Dense.from_numpy(exec, diag)).to_scipy()
        np.testing.assert_allclose(scaled.toarray(), (S @ sp.diags(diag[:, 0])).toarray(), rtol=tol(dtype))
        np.testing.assert_array_equal(A.conj_transpose().to_scipy().toarray(), S.conj().T.toarray().astype(dtype))
        np.testing.assert_array_equal(A.transpose().to_scipy().toarray(), S.T.toarray().astype(dtype))
        assert A.is_finite()


@pytest.mark.parametrize("fmt", ["Coo", "Ell", "Sellp", "Hybrid", "Dense"])
def test_other_formats_apply(ref, ocl, rng, dtype, fmt):
    S = _complex_matrix(rng, 1237, 1237, density=0.005)
    b, x = crandom(rng, (1237, 3), dtype), crandom(rng, (1237, 3), dtype)
    alpha, beta = crandom(rng, (1, 3), dtype), crandom(rng, (1, 3), dtype)
    expected = S.astype(np.complex128) @ b
    magnitude = abs(S) @ np.abs(b)
    for exec in (ref, ocl):
        if fmt == "Dense":
            A = gk.matrix.Dense.from_numpy(exec, S.toarray(), dtype)
        else:
            A = getattr(gk.matrix, fmt).from_scipy(exec, S, dtype)
        assert A.dtype == dtype
        X = gk.matrix.Dense.from_numpy(exec, x)
        A.apply(gk.matrix.Dense.from_numpy(exec, b), X)
        assert (np.abs(X.to_numpy() - expected) <= 2 * sum_tol(dtype, 1237) * magnitude).all()
        X = gk.matrix.Dense.from_numpy(exec, x)
        A.apply(gk.matrix.Dense.from_numpy(exec, alpha), gk.matrix.Dense.from_numpy(exec, b),
                gk.matrix.Dense.from_numpy(exec, beta), X)
        bound = 2 * sum_tol(dtype, 1237) * (np.abs(alpha) * magnitude + np.abs(beta * x))
        assert (np.abs(X.to_numpy() - (alpha * expected + beta * x)) <= bound).all()


# -- Jacobi and the relaxation steps --------------------------------------------------------------

def test_jacobi_kernels(ref, ocl, rng, dtype):
    S = _complex_matrix(rng, 1237, 1237)
    S.setdiag(np.where(np.arange(1237) == 7, 0, S.diagonal()))  # a zero diagonal entry: replaced by 1
    out = twin(ref, ocl, "preconditioner.jacobi.invert_diagonal", S, np.zeros((1237, 1), dtype), dtype=dtype)
    assert out[0][2] == out[1][2] == 1
    assert_twins(out, dtype)
    b = crandom(rng, (1237, 3), dtype)
    for block in (1, 4):
        results = []
        for exec in (ref, ocl):
            A = gk.matrix.Csr.from_scipy(exec, S + sp.eye(1237) * 3, dtype)
            J = gk.preconditioner.Jacobi.build().with_max_block_size(block).on(exec).generate(A)
            X = gk.matrix.Dense.zeros(exec, b.shape, dtype)
            J.apply(gk.matrix.Dense.from_numpy(exec, b), X)
            Jh = J.conj_transpose()
            Y = gk.matrix.Dense.zeros(exec, b.shape, dtype)
            Jh.apply(gk.matrix.Dense.from_numpy(exec, b), Y)
            results.append((X.to_numpy(), Y.to_numpy(), J.block_pointers))
        ptrs = results[0][2]
        D = sp.block_diag([(S + sp.eye(1237) * 3)[p:q, p:q].toarray() for p, q in zip(ptrs[:-1], ptrs[1:])])
        inverse = np.linalg.inv(D.toarray())
        for x, y, _ in results:
            np.testing.assert_allclose(x, inverse @ b, rtol=100 * tol(dtype), atol=100 * tol(dtype))
            np.testing.assert_allclose(y, inverse.conj().T @ b, rtol=100 * tol(dtype), atol=100 * tol(dtype))


def test_relaxation_kernels(ref, ocl, rng, dtype):
    S = _complex_matrix(rng, 1237, 1237)
    inv_diag = (1 / S.diagonal())[:, None].astype(dtype)
    b, x, d = (crandom(rng, (1237, 3), dtype) for _ in range(3))
    out = twin(ref, ocl, "components.relaxation.relax", 0.3, 0.7, S, inv_diag, b, x, d, np.zeros_like(x),
               dtype=dtype)
    assert_twins(out, dtype, factor=4)
    out = twin(ref, ocl, "components.relaxation.residual", S, b, x, np.zeros_like(x), dtype=dtype)
    assert_twins(out, dtype, factor=4)
    bounds = [exec.run("components.relaxation.gershgorin_bound", gk.matrix.Csr.from_scipy(exec, S, dtype),
                       Dense.from_numpy(exec, inv_diag)) for exec in (ref, ocl)]
    expected = np.max(np.abs(inv_diag[:, 0]) * np.asarray(abs(S).sum(axis=1)).ravel())
    np.testing.assert_allclose(bounds, expected, rtol=100 * tol(dtype))


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
    if dev.info.is_gpu and ocl.info.is_cpu:
        pytest.skip("PoCL's code generation for orthogonalize with complex values in a 256-wide work-group "
                    "takes half a minute (LLVM register allocation); the GPU layout runs on GPUs, PoCL runs its own")
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
    S = _complex_matrix(rng, n, n)
    inv_diag = (1 / S.diagonal())[:, None].astype(dtype)
    coarse_x, b, x = crandom(rng, (m, k), dtype), crandom(rng, (n, k), dtype), crandom(rng, (n, k), dtype)
    out = twin(ref, ocl, "solver.multigrid.prolong_relax", 0.7, S, inv_diag, agg, coarse_x, b, x,
               np.zeros((n, k), dtype), dtype=dtype)
    assert_twins(out, dtype, factor=4)
    out = twin(ref, ocl, "solver.multigrid.prolong", agg, coarse_x, x, dtype=dtype)
    assert_twins(out, dtype)


# -- the batched solvers' kernels ---------------------------------------------------------------------

@pytest.mark.parametrize("solver", ["Cg", "Bicgstab", "Gmres"])
@pytest.mark.parametrize("fmt, precond", [("Csr", None), ("Ell", 1), ("Dense", 4)])
def test_batched_solvers(ref, dev, rng, dtype, solver, fmt, precond):
    """Many small complex systems in one launch (Hermitian positive definite for Cg): the same
    verdicts and solutions on both executors, and the true residuals meet the tolerance."""
    from ginkpy.problems import magnetic_laplacian_2d
    N, side = 9, 6
    n = side * side
    A = magnetic_laplacian_2d(side, 0.2, shift=0.5)
    if solver != "Cg":
        A = (A + 0.5j * sp.eye(n)).tocsr()
    shifts = rng.uniform(0, 0.5, N)
    values = np.stack([(A + s * sp.eye(n)).tocsr().data for s in shifts])
    pattern = (A + sp.eye(n)).tocsr()
    B = crandom(rng, (N, n), dtype)
    rtol = 1e-10 if dtype == np.complex128 else 1e-4
    results = []
    for exec in (ref, dev):
        batch = gk.batch.matrix.Csr.from_pattern(exec, pattern, values, dtype)
        if fmt == "Ell":
            batch = gk.batch.matrix.Ell.from_csr(batch)
        elif fmt == "Dense":
            batch = gk.batch.matrix.Dense.from_numpy(exec, np.stack([m.toarray() for m in batch.to_scipy()]))
        params = getattr(gk.batch.solver, solver).build()
        if precond is not None:
            params = params.with_preconditioner(gk.batch.preconditioner.Jacobi.build().with_max_block_size(precond))
        s = params.on(exec).generate(batch)
        X = gk.batch.MultiVector.zeros(exec, (N, n), dtype)
        result = s.apply_with_tolerances(gk.batch.MultiVector.from_numpy(exec, B, dtype), X, rtol, 0.0, 500)
        results.append((X.to_numpy(), result))
    for (x, result) in results:
        assert (np.asarray(result.stop_reasons) == CONVERGED).all()
        for i in range(N):
            Ai = (A + shifts[i] * sp.eye(n)).astype(np.complex128)
            assert np.linalg.norm(B[i] - Ai @ x[i]) <= 1.01 * rtol * np.linalg.norm(B[i])
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e3 * rtol, atol=1e3 * rtol)
