"""Gcr: GMRES's iterates with a fixed preconditioner, convergence with one that changes between
applications (where plain Gmres stagnates), restarts, several right-hand sides, a breakdown,
complex values, the configuration; each OpenCL kernel against its reference twin."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import (PARTIAL_GROUPS as G, Stop, assert_twins, criteria as _criteria, random_partials,
                      random_values, solve, sum_tol, tol, twin)
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.problems import convection_diffusion_2d, helmholtz_2d, poisson_2d

RUNNING, CONVERGED, BREAKDOWN = StopReason.RUNNING, StopReason.CONVERGED, StopReason.BREAKDOWN


def _changing_preconditioner():
    """Three iterations of Cg: a preconditioner that is another operator at every application."""
    return gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(3))


# -- whole solves ---------------------------------------------------------------------------------

@pytest.mark.parametrize("jacobi", [False, True], ids=["plain", "jacobi"])
def test_gcr_takes_the_iterations_of_gmres(exec, jacobi):
    # GCR and GMRES minimize the same residual over the same Krylov space: with a fixed M and the
    # same restart length they take the same iterations to the same x
    A = convection_diffusion_2d(14)
    b = np.random.default_rng(1).standard_normal(A.shape[0])
    M = gk.preconditioner.Jacobi.build().with_max_block_size(1) if jacobi else None
    (x, log), (x_gmres, log_gmres) = (solve(exec, name, A, b, criteria=_criteria(400, 1e-10), krylov_dim=20,
                                            preconditioner=M) for name in ("Gcr", "Gmres"))
    assert log.has_converged and log.num_iterations == log_gmres.num_iterations
    assert np.linalg.norm(b - A @ x[:, 0]) <= 1e-10 * np.linalg.norm(b)
    np.testing.assert_allclose(x, x_gmres, rtol=1e-7, atol=1e-7 * np.abs(x_gmres).max())


def test_gcr_converges_where_plain_gmres_stagnates(exec):
    A = poisson_2d(20)
    b = A @ np.ones(A.shape[0])
    x, log = solve(exec, "Gcr", A, b, criteria=_criteria(200, 1e-10), preconditioner=_changing_preconditioner())
    _, plain = solve(exec, "Gmres", A, b, criteria=_criteria(200, 1e-10), preconditioner=_changing_preconditioner())
    assert log.has_converged and log.num_iterations < 40
    assert np.linalg.norm(b - A @ x[:, 0]) <= 1e-10 * np.linalg.norm(b)
    assert not plain.has_converged


def test_restarts_and_columns(exec):
    # GCR(5) restarts: more iterations than GCR(30), the same answer; four columns stop on their
    # own (one b = 0, one x0 exact)
    A = convection_diffusion_2d(10)
    rng = np.random.default_rng(3)
    n = A.shape[0]
    exact = rng.standard_normal(n)
    b = np.column_stack([rng.standard_normal(n), np.zeros(n), A @ exact, A @ np.ones(n)])
    x0 = np.column_stack([np.zeros(n), np.zeros(n), exact, np.zeros(n)])
    x, log = solve(exec, "Gcr", A, b, x0=x0, criteria=_criteria(1000, 1e-10), krylov_dim=5)
    _, long = solve(exec, "Gcr", A, b[:, 0], criteria=_criteria(1000, 1e-10), krylov_dim=30)
    assert log.has_converged and log.iterations[1] == 0 and log.iterations[2] == 0
    assert log.iterations[0] > long.num_iterations
    np.testing.assert_array_equal(x[:, 1], 0.0)
    for j in (0, 3):
        assert np.linalg.norm(b[:, j] - A @ x[:, j]) <= 1e-10 * np.linalg.norm(b[:, j])


def test_singular_system_is_a_breakdown(exec):
    # A = [[0, 1], [0, 0]], b = e_1: z = r = e_1, A z = 0: no direction can reduce the residual
    x, log = solve(exec, "Gcr", sp.csr_matrix([[0.0, 1.0], [0.0, 0.0]]), np.array([1.0, 0.0]))
    assert log.stop_reason == BREAKDOWN
    np.testing.assert_array_equal(x, 0.0)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64], ids=["complex128", "complex64"])
def test_complex(exec, dtype):
    A = helmholtz_2d(12).astype(dtype)
    b = A @ np.ones(A.shape[0], dtype)
    rtol = 1e-10 if dtype == np.complex128 else 1e-5
    x, log = solve(exec, "Gcr", A, b, criteria=_criteria(600, rtol), dtype=dtype)
    assert log.has_converged
    assert np.linalg.norm(b - A @ x[:, 0].astype(np.complex128)) <= 2 * rtol * np.linalg.norm(b)


def test_parameters_and_configuration():
    assert gk.solver.Gcr.build().krylov_dim == 30
    with pytest.raises(ValueError, match="with_krylov_dim"):
        gk.solver.Gcr.build().with_krylov_dim(0)
    config = {"type": "solver::Gcr", "krylov_dim": 10,
              "preconditioner": {"type": "solver::Cg", "criteria": {"iteration": 3}}}
    params = gk.config.parse(config)
    assert params.product is gk.solver.Gcr and params.krylov_dim == 10
    assert params.preconditioner.product is gk.solver.Cg


# -- OpenCL kernels against their reference twin -----------------------------------------------

M = 6  # directions kept
SHAPES = [(1237, 3), (5001, 1), (7, 301)]


@pytest.fixture(params=[np.float64, np.float32, np.complex128], ids=["float64", "float32", "complex128"])
def dtype(request, ocl):
    if request.param != np.float32 and not ocl.info.fp64:
        pytest.skip("needs fp64")
    return np.dtype(request.param)


def _at(kk):
    """The iteration arguments (step, parity, first) of direction kk: 0 as the first of its cycle,
    else read from step[kk % 2] (the other entry -1, which step_1 sets to kk + 1)."""
    if kk == 0:
        return [np.full(2, -1, np.int32), 0, 1]
    step = np.full(2, -1, np.int32)
    step[kk % 2] = kk
    return [step, kk % 2, 0]


def _raw(array):
    """A raw array (a basis) made on each executor by ``twin``."""
    return lambda exec: exec.from_host(array)


def _assert_sums(device, reference, magnitude, terms, dtype, factor=1.0):
    """Partial sums whose column sums agree within sum_tol of ``magnitude`` (real or complex)."""
    err = np.abs(np.asarray(device, np.complex128).sum(axis=0) - np.asarray(reference, np.complex128).sum(axis=0))
    bound = factor * sum_tol(dtype, terms) * np.asarray(magnitude, np.float64)
    assert (err <= bound).all(), f"error {err.max():.3g} > {bound[np.argmax(err - bound)]:.3g}"


def _rows(partials):
    """Partial sums a consumer kernel gets: one row (their sums) on the reference, the rows as
    given on the device."""
    summed = partials.sum(axis=0, keepdims=True)
    return lambda exec: gk.matrix.Dense.from_numpy(exec, summed if exec.backend == "reference" else partials,
                                                   partials.dtype)


@pytest.mark.parametrize("kk", [0, 4])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_opencl_multi_dot(ref, dev, rng, dtype, shape, kk):
    # h = [conj(q_i) . t for i < kk] (rows of M k)
    n, k = shape
    qbasis, t = random_values(rng, (M * n, k), dtype), random_values(rng, (n, k), dtype)
    out = twin(ref, dev, "solver.gcr.multi_dot", *_at(kk), _raw(qbasis), t, np.zeros((1, M * k)), dtype=dtype)
    assert out[1][5].shape[1] == M * k
    q = qbasis.reshape(M, n, k)[:kk].astype(np.complex128)
    magnitude = np.einsum("inc,nc->ic", np.abs(q), np.abs(t)).ravel()
    _assert_sums(out[1][5][:, :kk * k], out[0][5][:, :kk * k], magnitude, n, dtype)


@pytest.mark.parametrize("kk", [0, 4])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_opencl_orthogonalize(ref, dev, rng, dtype, shape, kk):
    # q_kk = t - Q beta, p_kk = z - P beta, beta_i = h_i / ||q_i||^2 (0 where q_i = 0: column 0 of
    # direction 1);  partial sums of ||q_kk||^2, conj(q_kk) . r, ||r||^2
    n, k = shape
    pbasis, qbasis = random_values(rng, (M * n, k), dtype), random_values(rng, (M * n, k), dtype)
    z, t, r = (random_values(rng, (n, k), dtype) for _ in range(3))
    nq = rng.uniform(0.5, 2, (M, k))
    nq[1, 0] = 0
    h = np.pad(random_partials(rng, rng.uniform(-2, 2, kk * k), dtype), [(0, 0), (0, (M - kk) * k)])
    out = twin(ref, dev, "solver.gcr.orthogonalize", *_at(kk), _raw(pbasis), _raw(qbasis), z, t, r, nq, _rows(h),
               np.zeros((1, 3 * k)), dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(9, 10))
    q_new = out[0][4].reshape(M, n, k)[kk].astype(np.complex128)
    r = r.astype(np.complex128)
    sums = np.concatenate([(np.abs(q_new) ** 2).sum(axis=0), (q_new.conj() * r).sum(axis=0),
                           (np.abs(r) ** 2).sum(axis=0)])
    magnitude = np.concatenate([(np.abs(q_new) ** 2).sum(axis=0), (np.abs(q_new) * np.abs(r)).sum(axis=0),
                                (np.abs(r) ** 2).sum(axis=0)])
    _assert_sums(out[1][10], sums[None], magnitude, n, dtype, factor=np.sqrt(G))
    for basis, given in ((out[1][3], pbasis), (out[1][4], qbasis)):  # only vector kk written
        np.testing.assert_array_equal(np.delete(basis, np.s_[kk * n:(kk + 1) * n], axis=0),
                                      np.delete(given, np.s_[kk * n:(kk + 1) * n], axis=0))


@pytest.mark.parametrize("kk", [0, 3])
def test_opencl_step_1(ref, dev, rng, dtype, kk):
    # columns: runs; was stopped (x, r untouched); q_kk = 0 with r != 0 (breakdown); q_kk = 0 and
    # r = 0 (idles); runs;  step[1 - kk % 2] = kk + 1
    n, k = 1237, 5
    pbasis, qbasis = random_values(rng, (M * n, k), dtype), random_values(rng, (M * n, k), dtype)
    x, r = random_values(rng, (n, k), dtype), random_values(rng, (n, k), dtype)
    r[:, 3] = 0
    qq = np.array([1.5, 0.7, 0.0, 0.0, 2.0])
    rr = np.array([3.0, 2.0, 1.0, 0.0, 1.0])
    qr = random_partials(rng, np.concatenate([qq, rng.uniform(-1, 1, k), rr]), dtype)
    stop = Stop([RUNNING, CONVERGED, RUNNING, RUNNING, RUNNING], np.ones(k))
    out = twin(ref, dev, "solver.gcr.step_1", *_at(kk), _raw(pbasis), _raw(qbasis), x, r, qr, np.zeros((M, k)),
               np.zeros((1, k)), stop, dtype=dtype)
    assert_twins(out, dtype, factor=np.sqrt(G), skip=(9,))
    assert out[1][0][1 - kk % 2] == kk + 1
    assert list(out[1][10].status) == [RUNNING, CONVERGED, BREAKDOWN, RUNNING, RUNNING]
    for c in (1, 2, 3):
        np.testing.assert_array_equal(out[1][5][:, c], x[:, c])
        np.testing.assert_array_equal(out[1][6][:, c], r[:, c])
    r_new = out[0][6].astype(np.complex128)
    _assert_sums(out[1][9], out[0][9], (np.abs(r_new) ** 2).sum(axis=0), n, dtype, factor=np.sqrt(G))
    np.testing.assert_allclose(out[1][8][kk].real, qq, rtol=np.sqrt(G) * tol(dtype))
