"""Nothing wrong, ever (issue 9): norms that neither underflow nor overflow, no NaN returned,
Gmres never worse than its start, concurrent solves, parameters checked where declared, clear
errors for devices and configurations."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import solve
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.problems import convection_diffusion_2d, poisson_2d

SOLVERS = ["Cg", "Bicgstab", "Gmres", "Bicg", "Cgs", "Fcg", "Idr", "Ir", "Tfqmr", "Qmr"]


def _criteria(max_iters=500, reduction=1e-8):
    return [gk.stop.Iteration.build().with_max_iters(max_iters),
            gk.stop.ResidualNorm.build().with_reduction_factor(reduction)]


# -- scaled norms: tiny and huge right-hand sides and initial guesses ----------------------------

@pytest.mark.parametrize("dtype, scale", [(np.float64, 1e-300), (np.float64, 1e300), (np.float32, 1e-25),
                                          (np.float32, 1e20),
                                          # subnormal b: the scale stops at 2^1023 (2^1030 overflowed: a ValueError)
                                          (np.float64, 1e-310), (np.float32, 1e-42)])
@pytest.mark.parametrize("name", ["Cg", "Bicgstab", "Gmres", "Tfqmr", "Qmr"])
def test_tiny_and_huge_right_hand_sides_converge_honestly(exec, name, dtype, scale):
    # the solution of A x = s b is s x: the solve must not conclude "converged" from an
    # underflowed ||b|| (x = 0 has relative residual 1), nor call a finite b NaN or Inf
    S = poisson_2d(8)
    b = np.random.default_rng(0).uniform(0.5, 1.5, S.shape[0])
    x, log = solve(exec, name, S, (b * scale).astype(dtype), criteria=_criteria(reduction=1e-5), dtype=dtype)
    assert log.has_converged
    x_unit = np.linalg.solve(S.toarray(), b)
    np.testing.assert_allclose(x[:, 0] / scale, x_unit, rtol=1e-3)


@pytest.mark.parametrize("dtype, scale", [(np.float64, 1e-310), (np.float64, 1e200), (np.float32, 1e-25)])
@pytest.mark.parametrize("method, M", [("bicgstab", None), ("cg", "jacobi"), ("gmres", "jacobi")])
def test_a_whole_system_too_small_or_too_large_is_solved_or_says_how_to_scale(exec, dtype, scale, method, M):
    # issue 33's fuzz: A and b scaled by 1e-310 were reported as diverged (reference) or broken
    # down (OpenCL); now the right answer or a clear error whose recipe solves the system
    S = (poisson_2d(8) * scale).astype(dtype).tocsr()
    x_true = np.linspace(1.0, 2.0, S.shape[0])
    b = ((poisson_2d(8) @ x_true) * scale).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (Jacobi's warning of diagonal entries too small to invert)
        try:
            x, info = getattr(gk.linalg, method)(S, b, M=M, executor=exec, rtol=1e-4)
        except ValueError as err:
            assert "scale A and b by 2**" in str(err)
        else:  # the right answer, where the method copes (Jacobi-preconditioned CG often does)
            assert info == 0 and np.allclose(x, x_true, rtol=1e-2)
            return
    gk.linalg.clear_cache()
    k = -int(np.round(np.log2(np.abs(S.data).max())))
    S.data, b = np.ldexp(S.data, k), np.ldexp(b, k)
    x, info = getattr(gk.linalg, method)(S, b, M=M, executor=exec, rtol=1e-4)
    assert info == 0 and np.allclose(x, x_true, rtol=1e-2)
    gk.linalg.clear_cache()


@pytest.mark.parametrize("dtype, scale", [(np.float64, 1e307), (np.float32, 1e37)])
def test_a_huge_initial_guess_is_not_an_error(exec, dtype, scale):
    # a finite x0 is no "NaN or Inf" error; the solve ends honestly: x finite, and converged only
    # where the true residual says so (x = x0 - (x0 - 2) cancels to 0 in floating point: the
    # first step from such an x0 cannot hold the answer)
    S = sp.identity(5, format="csr") * 0.5
    b = np.ones(5)
    x0 = np.full((5, 1), scale)
    x, log = solve(exec, "Cg", S, b.astype(dtype), x0=x0.astype(dtype), criteria=_criteria(), dtype=dtype)
    assert np.isfinite(x).all()
    true = np.linalg.norm(b - S @ x[:, 0].astype(np.float64))
    assert log.has_converged == (true <= 1e-8 * np.linalg.norm(b) * (1 + 1e-6))


def test_linalg_norms_of_tiny_and_huge_vectors(exec):
    S = poisson_2d(8).tocsr()
    b = np.random.default_rng(1).uniform(0.5, 1.5, S.shape[0])
    for scale in (1e-300, 1e300):
        x, info = gk.linalg.cg(S, b * scale, rtol=1e-8, executor=exec)
        assert info == 0
        np.testing.assert_allclose(x / scale, np.linalg.solve(S.toarray(), b), rtol=1e-6)


@pytest.mark.parametrize("name", ["Cg", "Gmres", "Bicgstab"])
def test_b_zero_gives_x_zero_at_once_whatever_x0(exec, name):
    x, log = solve(exec, name, poisson_2d(5), np.zeros(25), x0=np.ones((25, 1)), criteria=_criteria())
    assert log.has_converged and log.num_iterations == 0
    assert not x.any()


# -- no NaN returned ----------------------------------------------------------------------------

def _singular(n=20):
    """A matrix with an empty last row and column: b = ones has no solution."""
    A = poisson_2d(5).tolil()[:n, :n]
    A[n - 1, :] = 0
    A[:, n - 1] = 0
    return A.tocsr()


@pytest.mark.parametrize("name", SOLVERS)
def test_a_singular_system_returns_no_nan(exec, name):
    # (Ir: Richardson's iteration, which diverges on this matrix)
    x, log = solve(exec, name, _singular(), np.ones(20), criteria=_criteria(300))
    assert np.isfinite(x).all(), log.stop_reasons
    assert not log.has_converged
    assert log.stop_reasons[0] in (StopReason.BREAKDOWN, StopReason.DIVERGED, StopReason.ITERATION_LIMIT)


def test_gmres_is_never_worse_than_its_start(exec):
    # a singular 2 x 2 block: the Hessenberg matrix is rank-deficient; x must not blow up
    A = sp.csr_matrix([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]])
    b = np.array([1.0, 0.0, 1.0])
    x, log = solve(exec, "Gmres", A, b, criteria=_criteria(50))
    assert np.isfinite(x).all()
    assert np.linalg.norm(b - A @ x[:, 0]) <= np.linalg.norm(b) * (1 + 1e-12)
    assert not log.has_converged


# -- concurrent solves ---------------------------------------------------------------------------

def test_concurrent_solves_on_one_executor(exec):
    # threads solving with their own solvers, sharing one solver, and through a second executor
    # object on the same device: every result equal to the serial one
    S = convection_diffusion_2d(12)
    rng = np.random.default_rng(7)
    rhs = [rng.standard_normal(S.shape[0]) for _ in range(6)]
    A = gk.matrix.Csr.from_scipy(exec, S)

    def make(e=exec):
        return (gk.solver.Bicgstab.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
                .with_criteria(*_criteria(400, 1e-10)).on(e).generate(A))

    def run(solver, b):
        e = solver.executor
        X = gk.matrix.Dense.zeros(e, (S.shape[0], 1))
        solver.apply(gk.matrix.Dense.from_numpy(e, b), X)
        return X.to_numpy()[:, 0]

    serial = [run(make(), b) for b in rhs]
    other = gk.executor("opencl") if exec.backend == "opencl" else gk.ReferenceExecutor()
    shared = make()
    errors, results = [], {}

    def worker(t):
        try:
            for rep in range(4):
                for i, b in enumerate(rhs):
                    solver = shared if t == 0 else make(other if t == 2 else exec)
                    results.setdefault((t, rep, i), run(solver, b))
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for (t, rep, i), x in results.items():
        np.testing.assert_allclose(x, serial[i], rtol=1e-12, atol=1e-14)


# -- parameters checked where they are declared ---------------------------------------------------

def test_parameters_are_checked_where_they_are_given():
    cases = [
        (lambda: gk.stop.ResidualNorm.build().with_reduction_factor("1e-8"), "reduction_factor"),
        (lambda: gk.stop.Iteration.build().with_max_iters(float("nan")), "max_iters"),
        (lambda: gk.stop.Iteration.build().with_max_iters(float("inf")), "max_iters"),
        (lambda: gk.solver.Gmres.build().with_krylov_dim(0), "krylov_dim"),
        (lambda: gk.solver.Idr.build().with_subspace_dim(0), "subspace_dim"),
        (lambda: gk.solver.Idr.build().with_kappa(2.0), "kappa"),
        (lambda: gk.solver.Ir.build().with_relaxation_factor(float("nan")), "relaxation_factor"),
        (lambda: gk.solver.Cg.build().with_default_initial_guess("guess"), "default_initial_guess"),
        (lambda: gk.preconditioner.Jacobi.build().with_max_block_size(64), "max_block_size"),
    ]
    for make, name in cases:
        with pytest.raises(ValueError, match=name):
            make()


def test_krylov_dim_is_capped_at_n(exec):
    # a Krylov space of 10^6 vectors for 100 unknowns: capped at n, as linalg.gmres does
    x, log = solve(exec, "Gmres", poisson_2d(10), np.ones(100), criteria=_criteria(), krylov_dim=10 ** 6)
    assert log.has_converged


def test_executor_names_are_checked():
    with pytest.raises(TypeError, match="string"):
        gk.executor(None)
    with pytest.raises(ValueError, match="unknown executor"):
        gk.executor("cuda")


def test_a_requested_device_that_does_not_exist_is_an_error(ocl, monkeypatch):
    monkeypatch.setenv("GINKPY_OPENCL_DEVICE", "no such device 1234")
    for make in (lambda: gk.executor("opencl"), gk.default_executor, lambda: gk.executor("default")):
        with pytest.raises(RuntimeError, match="no OpenCL device matches .*the devices are"):
            make()
    with pytest.raises(RuntimeError, match="no OpenCL device 9:9.*the devices are"):
        gk.executor("opencl:9:9")


def test_the_configuration_checks_the_kind_of_each_nested_type(ref):
    with pytest.raises((ValueError, TypeError), match="preconditioner"):
        gk.config.parse({"type": "solver::Cg", "preconditioner": {"type": "stop::Iteration", "max_iters": 3}})
    with pytest.raises((ValueError, TypeError), match="criteria"):
        gk.config.parse({"type": "solver::Cg", "criteria": [{"type": "solver::Cg"}]})


def test_a_launch_needing_more_local_memory_than_the_device_has_is_an_error(ocl):
    # (Gmres with many right-hand sides and a large krylov_dim on a GPU's 48 KiB, for example)
    import pyopencl as cl
    from ginkpy.opencl.components import reduction_kernels
    kernel = ocl.kernel(reduction_kernels.__file__, np.float64, "sum_rows", TWO=0)
    too_much = cl.LocalMemory(ocl.info.local_mem_size + 8)
    partial, result = ocl.alloc((4, 1), np.float64), ocl.alloc((1,), np.float64)
    with pytest.raises(ValueError, match="local memory"):
        kernel(ocl.queue, (64,), (64,), np.int32(4), np.int32(1), partial.data, result.data, too_much)
