"""Gcrotmk (gk.solver.Gcrotmk, gk.linalg.gcrotmk): against SciPy's gcrotmk on generated and
real matrices (restart cycles and info), complex systems, several right-hand sides, its
relation to GMRES, the recycled space's effect, both truncations, a singular system without NaN, bad input, the
configuration and the command line, and its kernel against the reference twin (its other
launches are Gmres's kernels and Dense's, tested with them)."""
import numpy as np
import pytest
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import assert_columns_as_alone, assert_twins, criteria, random_values, solve, twin
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason
from ginkpy.problems import convection_diffusion_2d
import restarted_cases

RUNNING, PENDING, CONVERGED = StopReason.RUNNING, StopReason.PENDING, StopReason.CONVERGED
DIVERGED = StopReason.DIVERGED


@pytest.mark.parametrize("problem, kwargs", [("convection_diffusion", {}), ("pde900.mtx", {}),
                                             ("cage8.mtx", {"m": 10, "k": 5}),
                                             ("orsirr_1.mtx", {"M": "jacobi"})])
def test_cycles_and_info_as_scipy(exec, problem, kwargs):
    restarted_cases.cycles_and_info_as_scipy(exec, "gcrotmk", problem, kwargs)


def test_complex_system(exec):
    restarted_cases.complex_system(exec, "gcrotmk")


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_several_right_hand_sides_through_the_builder(exec, dtype):
    assert_columns_as_alone(exec, "Gcrotmk", convection_diffusion_2d(9), dtype)


def test_first_cycle_is_gmres_and_recycling_saves_steps(exec):
    # SciPy's test_arnoldi: with k = 0 the first cycle is GMRES(m)
    A, b = restarted_cases.first_cycle_is_gmres(exec, "gcrotmk", m=10, k=0)
    _, log_g = solve(exec, "Gmres", A, b, criteria=criteria(600, 1e-10), krylov_dim=8)
    _, log_r = solve(exec, "Gcrotmk", A, b, criteria=criteria(600, 1e-10), krylov_dim=8, recycle_dim=8)
    assert log_g.has_converged and log_r.has_converged
    assert log_r.num_iterations < log_g.num_iterations


@pytest.mark.parametrize("truncate", ["oldest", "smallest"])
def test_truncate_as_scipy(exec, truncate):
    # SciPy's test_truncate at rtol 1e-8: the same cycles as SciPy's (each counted by its callback)
    rng = np.random.RandomState(1234)
    A = rng.rand(30, 30) + np.eye(30)
    b = rng.rand(30)
    ours, theirs = [], []
    x, info = gk.linalg.gcrotmk(A, b, m=10, k=10, truncate=truncate, rtol=1e-8, maxiter=200, executor=exec,
                                callback=lambda xk: ours.append(1))
    info_s = spla.gcrotmk(A, b, m=10, k=10, truncate=truncate, rtol=1e-8, maxiter=200,
                          callback=lambda xk: theirs.append(1))[1]
    assert info == info_s == 0
    assert np.linalg.norm(A @ x - b) <= 1e-8 * np.linalg.norm(b)
    assert abs(len(ours) - len(theirs)) <= 2, (len(ours), len(theirs))


def test_preconditioner_and_callback(exec):
    restarted_cases.preconditioner_and_callback(exec, "gcrotmk")


def test_maxiter_counts_cycles(exec):
    restarted_cases.maxiter_counts_cycles(exec, "gcrotmk", m=5, k=2)


def test_singular_system_ends_without_nan(exec):
    restarted_cases.singular_system_ends_without_nan(exec, "gcrotmk", maxiter=3)


def test_bad_input(ref):
    A, b = convection_diffusion_2d(4), np.ones(16)
    for kwargs in ({"m": 0}, {"k": -1}, {"maxiter": 0}):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            gk.linalg.gcrotmk(A, b, executor=ref, **kwargs)
    with pytest.raises(ValueError, match="truncate"):
        gk.linalg.gcrotmk(A, b, truncate="newest", executor=ref)
    with pytest.raises(ValueError, match="truncate"):
        gk.solver.Gcrotmk.build().with_truncate("newest")
    with pytest.raises(TypeError, match="CU must be a list"):
        gk.linalg.gcrotmk(A, b, CU=(), executor=ref)
    solver = gk.solver.Gcrotmk.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, A))
    with pytest.raises(ValueError, match="n x s arrays with n = 16"):
        solver.set_recycled_space(np.ones((15, 2)))


@pytest.mark.parametrize("discard_C", [False, True])
def test_cu_recycles_the_space_as_scipy(exec, discard_C):
    # SciPy's CU: filled with the pairs kept (oldest first) and (None, x); given to the next solve
    # of the same system, it converges at once (one callback: x0 is the solution's projection)
    A = convection_diffusion_2d(12)
    b = np.random.default_rng(8).standard_normal(A.shape[0])
    CU = []
    x, info = gk.linalg.gcrotmk(A, b, rtol=1e-10, m=6, k=3, CU=CU, discard_C=discard_C, executor=exec)
    assert info == 0 and len(CU) == 4
    assert CU[-1][0] is None
    np.testing.assert_array_equal(CU[-1][1], x)
    for c, u in CU[:-1]:
        if discard_C:
            assert c is None
        else:  # c = A u, orthonormal
            np.testing.assert_allclose(A @ u, c, atol=1e-8)
            assert abs(np.linalg.norm(c) - 1) < 1e-10
    calls = []
    x2, info = gk.linalg.gcrotmk(A, b, rtol=1e-10, m=6, k=3, CU=CU, discard_C=discard_C, executor=exec,
                                 callback=lambda xk: calls.append(1))
    assert info == 0 and len(calls) == 1
    np.testing.assert_allclose(x2, x, rtol=1e-7, atol=1e-9 * np.abs(x).max())
    # a nearby right-hand side starts from the recycled space too
    b3 = b + 0.1 * np.random.default_rng(9).standard_normal(A.shape[0])
    x3, info = gk.linalg.gcrotmk(A, b3, rtol=1e-10, m=6, k=3, CU=CU, executor=exec)
    assert info == 0 and np.linalg.norm(b3 - A @ x3) <= 1e-10 * np.linalg.norm(b3)


def test_recycled_space_through_the_builder(exec):
    A = convection_diffusion_2d(10)
    S = gk.matrix.Csr.from_scipy(exec, A)
    b = np.random.default_rng(10).standard_normal((A.shape[0], 1))
    solver = gk.solver.Gcrotmk.build().with_krylov_dim(5).with_recycle_dim(3).with_criteria(
        *criteria(500, 1e-10)).on(exec).generate(S)
    C0, U0 = solver.recycled_space()
    assert C0.shape == (A.shape[0], 0)
    x = gk.matrix.Dense.zeros(exec, b.shape)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), x)
    C, U = solver.recycled_space()
    assert C.shape == U.shape == (A.shape[0], 3)
    np.testing.assert_allclose(C.T @ C, np.eye(3), atol=1e-10)
    np.testing.assert_allclose(A @ U, C, atol=1e-8)
    # seeded with (U, x): the next solve starts at the solution
    solver.set_recycled_space(np.column_stack([U, x.to_numpy()]))
    restarted_cases.next_solve_starts_at(exec, solver, b, x, max_iterations=1)


def test_configuration_and_command_line(ref, capsys, tmp_path):
    restarted_cases.configuration_and_command_line(capsys, tmp_path, "Gcrotmk", "gcrotmk",
                                                   {"krylov_dim": 10, "recycle_dim": 4})


# -- the kernel ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_recycle_kernel_against_its_reference_twin(ref, ocl, dtype):
    """Random data larger than a work-group, odd sizes; per column k = 5: running, cc = 0 (no
    correction: the slots and x kept), pending, cc not finite (the same, and diverged),
    stopped with cr not finite (the same, still stopped)."""
    rng = np.random.default_rng(7)
    n, k = 1237, 5
    vec = lambda: random_values(rng, (n, k), dtype)  # noqa: E731
    cc = (np.abs(random_values(rng, (1, k), np.float64)) + 0.5).astype(dtype)
    cc[0, 1], cc[0, 3] = 0, np.nan
    cr = random_values(rng, (1, k), dtype)
    cr[0, 4] = np.nan
    status = np.array([RUNNING, RUNNING, PENDING, RUNNING, CONVERGED], STATUS_DTYPE)
    x, c_slot, u_slot = vec(), vec(), vec()
    out = twin(ref, ocl, "solver.gcrotmk.recycle", cc, cr, vec(), vec(), x, c_slot, u_slot, status, dtype=dtype)
    assert_twins(out, dtype, factor=4)
    for o in out:
        for got, before in zip(o[4:7], (x, c_slot, u_slot)):
            np.testing.assert_array_equal(got[:, [1, 3, 4]], before[:, [1, 3, 4]])
        assert list(o[7]) == [RUNNING, RUNNING, PENDING, DIVERGED, CONVERGED]
