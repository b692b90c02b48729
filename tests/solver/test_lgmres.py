"""Lgmres (gk.solver.Lgmres, gk.linalg.lgmres): against SciPy's lgmres on generated and real
matrices (restart cycles and info), complex systems, several right-hand sides, its relation to
(flexible) GMRES, a singular system without NaN, bad input, the configuration and the command
line. Its launches are Gmres's kernels (tests/solver/test_gmres.py holds their twin tests)."""
import numpy as np
import pytest

import ginkpy as gk
from conftest import assert_columns_as_alone, criteria, solve
from ginkpy.problems import convection_diffusion_2d
import restarted_cases


@pytest.mark.parametrize("problem, kwargs", [("convection_diffusion", {}), ("pde900.mtx", {}),
                                             ("cage8.mtx", {"inner_m": 10}),
                                             ("orsirr_1.mtx", {"M": "jacobi"})])
def test_cycles_and_info_as_scipy(exec, problem, kwargs):
    restarted_cases.cycles_and_info_as_scipy(exec, "lgmres", problem, kwargs)


def test_complex_system(exec):
    restarted_cases.complex_system(exec, "lgmres", inner_m=20)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_several_right_hand_sides_through_the_builder(exec, dtype):
    assert_columns_as_alone(exec, "Lgmres", convection_diffusion_2d(9), dtype)


def test_first_cycle_is_gmres_and_no_augmentation_is_flexible_gmres(exec):
    # SciPy's test_arnoldi: one cycle of LGMRES(m, k) is GMRES(m); with k = 0 every cycle is
    A, b = restarted_cases.first_cycle_is_gmres(exec, "lgmres", inner_m=10)
    plain, log_g = solve(exec, "Gmres", A, b, criteria=criteria(400, 1e-10), krylov_dim=8)
    loose, log_l = solve(exec, "Lgmres", A, b, criteria=criteria(400, 1e-10), krylov_dim=8, augmentation_dim=0)
    assert log_l.has_converged and log_l.num_iterations == log_g.num_iterations
    np.testing.assert_allclose(loose, plain, rtol=1e-8)
    # the corrections kept save cycles (a cycle has 8 steps in Gmres, 8 + min(c, 3) here)
    _, log_a = solve(exec, "Lgmres", A, b, criteria=criteria(400, 1e-10), krylov_dim=8, augmentation_dim=3)
    ends = np.cumsum([8 + min(c, 3) for c in range(100)])
    cycles = int(np.searchsorted(ends, log_a.num_iterations)) + 1
    assert log_a.has_converged and cycles < -(-log_g.num_iterations // 8)


def test_preconditioner_and_callback(exec):
    # SciPy's: x0 first, then the x of each cycle, the last the solution
    assert len(restarted_cases.preconditioner_and_callback(exec, "lgmres")) >= 2


def test_maxiter_counts_cycles(exec):
    restarted_cases.maxiter_counts_cycles(exec, "lgmres", inner_m=5)


def test_singular_system_ends_without_nan(exec):
    # SciPy's test_breakdown_underdetermined
    restarted_cases.singular_system_ends_without_nan(exec, "lgmres", maxiter=1)


def test_bad_input(ref):
    A, b = convection_diffusion_2d(4), np.ones(16)
    for kwargs in ({"inner_m": 0}, {"outer_k": -1}, {"maxiter": 0}, {"inner_m": 2.5}):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            gk.linalg.lgmres(A, b, executor=ref, **kwargs)
    with pytest.raises(TypeError, match="outer_v must be a list"):
        gk.linalg.lgmres(A, b, outer_v=(), executor=ref)
    with pytest.raises(ValueError, match="augmentation_dim"):
        gk.solver.Lgmres.build().with_augmentation_dim(-1)
    with pytest.raises(ValueError, match="prepend_outer_v"):
        gk.linalg.lgmres(A, b, prepend_outer_v=1, executor=ref)
    solver = gk.solver.Lgmres.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, A))
    with pytest.raises(ValueError, match="n x s arrays with n = 16"):
        solver.set_augmentation(np.ones((16, 2)), np.ones((16, 3)))


@pytest.mark.parametrize("store_outer_Av", [True, False])
@pytest.mark.parametrize("prepend", [False, True])
def test_outer_v_carries_the_augmentation_as_scipy(exec, store_outer_Av, prepend):
    # SciPy's outer_v: filled with the kept corrections (normalized, oldest first, their products
    # or None); given to the next solve, it saves cycles (prepended or appended)
    A = convection_diffusion_2d(12)
    b = np.random.default_rng(11).standard_normal(A.shape[0])
    outer_v = []
    x, info = gk.linalg.lgmres(A, b, rtol=1e-10, inner_m=6, outer_k=3, outer_v=outer_v, store_outer_Av=store_outer_Av,
                               executor=exec)
    assert info == 0 and len(outer_v) == 3
    for v, av in outer_v:
        assert abs(np.linalg.norm(v) - 1) < 1e-12
        if store_outer_Av:
            np.testing.assert_allclose(av, A @ v, atol=1e-8)
        else:
            assert av is None
    b2 = b + 0.01 * np.random.default_rng(12).standard_normal(A.shape[0])
    fresh, again = [], []
    gk.linalg.lgmres(A, b2, rtol=1e-10, inner_m=6, outer_k=3, executor=exec, callback=lambda xk: fresh.append(1))
    x2, info = gk.linalg.lgmres(A, b2, rtol=1e-10, inner_m=6, outer_k=3, outer_v=outer_v, prepend_outer_v=prepend,
                                executor=exec, callback=lambda xk: again.append(1))
    assert info == 0 and np.linalg.norm(b2 - A @ x2) <= 1e-10 * np.linalg.norm(b2)
    assert len(again) <= len(fresh) and len(outer_v) == 3


def test_augmentation_through_the_builder(exec):
    # one cycle with the solution as its augmentation vector (prepended) converges at once
    A = convection_diffusion_2d(10)
    S = gk.matrix.Csr.from_scipy(exec, A)
    b = np.random.default_rng(13).standard_normal((A.shape[0], 1))
    solver = gk.solver.Lgmres.build().with_krylov_dim(4).with_augmentation_dim(2).with_prepend_augmentation(
        True).with_criteria(*criteria(400, 1e-10)).on(exec).generate(S)
    x = gk.matrix.Dense.zeros(exec, b.shape)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), x)
    Z, W = solver.augmentation()
    assert Z.shape == W.shape == (A.shape[0], 2)
    np.testing.assert_allclose(A @ Z, W, atol=1e-8 * np.abs(W).max())
    solver.set_augmentation(x.to_numpy())
    restarted_cases.next_solve_starts_at(exec, solver, b, x, max_iterations=2)


def test_configuration_and_command_line(ref, capsys, tmp_path):
    restarted_cases.configuration_and_command_line(capsys, tmp_path, "Lgmres", "lgmres",
                                                   {"krylov_dim": 10, "augmentation_dim": 2})
    assert "lgmres" in gk.config.solver_methods()


@pytest.mark.parametrize("method", ["lgmres", "gcrotmk"])
def test_solver_door(exec, method):
    # gk.linalg.Solver(A, method): restart is the Krylov dimension, solved again with the kept solver
    A = convection_diffusion_2d(10)
    solver = gk.linalg.Solver(A, method, restart=8, rtol=1e-9, executor=exec)
    assert solver.solver.parameters.krylov_dim == 8
    for seed in (14, 15):
        b = np.random.default_rng(seed).standard_normal(A.shape[0])
        x, info = solver.solve(b)
        assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-9 * np.linalg.norm(b)
