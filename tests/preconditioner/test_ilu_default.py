"""The default Ilu / Ic (M="ilu" / "ic") never fails where an incomplete factorization exists:
the failure modes of issue 21 made by the generators of gk.problems (a circuit's MNA matrix
with zero and missing diagonals, a row beyond ISAI's limit, the Olmstead model whose ParILU
sweeps stall, an SPD matrix on which IC(0) breaks down), each fallback with one logging line,
iterations within 1.5x of exact ILU(0)'s; and M="ilut" (SciPy's spilu knobs) within 2x of
spilu's GMRES iterations."""
import logging

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from conftest import matrix_path
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.preconditioner import ilu as ilu_module
from ginkpy.core.solver.triangular import contraction_bound
from ginkpy.linalg import bicg, bicgstab, cg, gmres
from ginkpy.problems import circuit_mna, convection_diffusion_2d, dense_row, ic_breakdown, olmstead

F, P, S = gk.factorization, gk.preconditioner, gk.solver
EXACT = {"ilu": P.Ilu.build().with_factorization(F.Ilu.build()).with_l_solver(S.LowerTrs.build())
         .with_u_solver(S.UpperTrs.build()),
         "ic": P.Ic.build().with_factorization(F.Ic.build()).with_l_solver(S.LowerTrs.build())}


def _iterations(exec, A, precond, solver="Gmres", rtol=1e-8, max_iters=2000):
    params = getattr(S, solver).build().with_preconditioner(precond).with_criteria(
        gk.stop.Iteration.build().with_max_iters(max_iters), gk.stop.ResidualNorm.build().with_reduction_factor(rtol))
    if solver == "Gmres":
        params.with_krylov_dim(30)
    log = gk.log.Convergence(history=False)
    solver = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))
    solver.add_logger(log)
    b = A @ np.ones(A.shape[0])
    x = gk.matrix.Dense.zeros(exec, (A.shape[0], 1))
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), x)
    assert log.has_converged, (log.stop_reasons, log.num_iterations)
    return log.num_iterations


@pytest.fixture
def gpu(ocl, monkeypatch):
    """The OpenCL executor taken for a GPU by the default's choices (whatever the device is)."""
    monkeypatch.setattr(ilu_module, "tries_approximate_solves", lambda exec: True)
    return ocl


@pytest.fixture
def gpu_trying(gpu, monkeypatch):
    """The GPU's choices where the factors' contraction bound decides nothing (the trial route)."""
    monkeypatch.setattr(ilu_module, "MAX_DECIDED_SWEEPS", 1)
    return gpu


def _records(caplog):
    return [r for r in caplog.records if r.name == "ginkpy"]


# -- the failure modes of the issue ------------------------------------------------------------------
def test_circuit_with_missing_diagonal_and_zero_pivots(exec, caplog):
    A = circuit_mna()
    b = A @ np.ones(A.shape[0])
    caplog.set_level(logging.INFO, "ginkpy")
    x, info = gmres(A, b, rtol=1e-8, restart=30, maxiter=100, M="ilu", executor=exec)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-8 * np.linalg.norm(b)
    assert any("40 zero or tiny pivots" in r.getMessage() for r in _records(caplog))
    assert _iterations(exec, A, P.Ilu.build()) <= 1.5 * _iterations(exec, A, EXACT["ilu"])


def test_a_row_beyond_isais_limit_is_passed_over(gpu_trying, caplog):
    A = dense_row()
    caplog.set_level(logging.INFO, "ginkpy")
    M = P.Ilu.build().on(gpu_trying).generate(gk.matrix.Csr.from_scipy(gpu_trying, A))
    lines = _records(caplog)
    assert len(lines) == 1
    assert "ISAI (sparsity power 1) cannot be built (row 3599 of the approximate inverse would have" in \
        lines[0].getMessage()
    assert _iterations(gpu_trying, A, M) <= 1.5 * _iterations(gpu_trying, A, EXACT["ilu"])


def test_cpu_devices_substitute_exactly(exec, caplog, monkeypatch):
    # on a CPU (and the reference executor) the factors are solved exactly, with no fallback line;
    # the device taken for a CPU whatever it is (a GPU's choice: the next test)
    assert ilu_module.tries_approximate_solves(exec) == (exec.backend == "opencl" and exec.info.is_gpu)
    monkeypatch.setattr(ilu_module, "tries_approximate_solves", lambda exec: False)
    caplog.set_level(logging.INFO, "ginkpy")
    for A in (dense_row(), convection_diffusion_2d(30, peclet=3)):
        M = P.Ilu.build().on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))
        assert isinstance(M.l_solver, S.LowerTrs) and M.l_solver.parameters.algorithm == "sparselib"
        assert isinstance(M.u_solver, S.UpperTrs) and M.u_solver.parameters.algorithm == "sparselib"
    assert not _records(caplog)


def test_gpu_devices_approximate_the_same_factors(gpu, caplog):
    # the same matrices on a GPU. The dense row's factors are dominant (contraction bound 0.65):
    # 3 Jacobi sweeps (0.65^3 <= 0.3) decided without a trial, no line. Convection-diffusion at
    # Peclet 3 (bound 0.81): no ISAI within 2%, the fewest Jacobi sweeps that solve within 2%, one line
    caplog.set_level(logging.INFO, "ginkpy")
    M = P.Ilu.build().on(gpu).generate(gk.matrix.Csr.from_scipy(gpu, dense_row()))
    assert not _records(caplog)
    for solver in (M.l_solver, M.u_solver):
        assert solver.parameters.algorithm == "jacobi" and solver.parameters.num_jacobi_sweeps == 3
    A = convection_diffusion_2d(30, peclet=3)
    M = P.Ilu.build().on(gpu).generate(gk.matrix.Csr.from_scipy(gpu, A))
    lines = _records(caplog)
    assert len(lines) == 1 and "applied by 16 Jacobi sweeps: ISAI (sparsity power 1)" in lines[0].getMessage()
    assert "8 Jacobi sweeps solves with an error of" in lines[0].getMessage()
    for solver, factor in ((M.l_solver, M.factorization.l_factor), (M.u_solver, M.factorization.u_factor)):
        assert solver.parameters.algorithm == "jacobi" and solver.parameters.num_jacobi_sweeps == 16
        assert ilu_module.solve_error(solver, factor) <= ilu_module.SOLVE_QUALITY


def test_a_poor_isai_falls_back_to_exact_substitution(gpu, caplog):
    # olm1000's factors: no approximation solves them; exact level-scheduled substitution
    A = olmstead(500)
    caplog.set_level(logging.INFO, "ginkpy")
    M = P.Ilu.build().on(gpu).generate(gk.matrix.Csr.from_scipy(gpu, A))
    assert isinstance(M.l_solver, S.LowerTrs) and M.l_solver.parameters.algorithm == "sparselib"
    lines = _records(caplog)
    assert len(lines) == 1 and "ISAI (sparsity power 1) solves with an error of" in lines[0].getMessage()
    assert "16 Jacobi sweeps solves with an error of" in lines[0].getMessage()
    assert "applied by exact substitution" in lines[0].getMessage()


def test_gpu_dominant_factors_decide_without_trials(gpu, caplog):
    # convection-diffusion's factors (contraction bound 0.65): 3 Jacobi sweeps, no trial solve, no
    # line; within 1.5x exact ILU(0)'s iterations
    caplog.set_level(logging.INFO, "ginkpy")
    A = convection_diffusion_2d(30)
    M = P.Ilu.build().on(gpu).generate(gk.matrix.Csr.from_scipy(gpu, A))
    assert not _records(caplog)
    for solver, factor, lower in ((M.l_solver, M.factorization.l_factor, True),
                                  (M.u_solver, M.factorization.u_factor, False)):
        assert solver.parameters.algorithm == "jacobi" and solver.parameters.num_jacobi_sweeps == 3
        assert contraction_bound(factor, lower) ** 3 <= ilu_module.SWEEP_BOUND
    for solver in ("Gmres", "Bicgstab"):
        assert _iterations(gpu, A, M, solver) <= 1.5 * _iterations(gpu, A, EXACT["ilu"], solver)


def test_gpu_choices_are_measured(gpu_trying, caplog):
    # where the bound decides nothing the cheap candidates come first: the first that solves within 2%
    caplog.set_level(logging.INFO, "ginkpy")
    A = convection_diffusion_2d(30)
    M = P.Ilu.build().on(gpu_trying).generate(gk.matrix.Csr.from_scipy(gpu_trying, A))
    lines = _records(caplog)
    assert len(lines) == 1 and "ISAI (sparsity power 1) solves with an error of" in lines[0].getMessage()
    chosen = lines[0].getMessage().split("applied by ")[1].split(":")[0]
    assert chosen != "exact substitution (level-scheduled)"
    for solver, factor in ((M.l_solver, M.factorization.l_factor), (M.u_solver, M.factorization.u_factor)):
        assert ilu_module.solve_error(solver, factor) <= ilu_module.SOLVE_QUALITY
    assert _iterations(gpu_trying, A, M) <= 1.5 * _iterations(gpu_trying, A, EXACT["ilu"])


def test_stalled_sweeps_fall_back_to_the_exact_factorization(gpu, caplog, monkeypatch):
    # olm1000: ParILU's sweeps stall at a relative change of 1e-2 with useless factors
    monkeypatch.setattr(ilu_module, "EXACT_ENTRIES", 0)
    A = olmstead(500)
    caplog.set_level(logging.INFO, "ginkpy")
    M = P.Ilu.build().on(gpu).generate(gk.matrix.Csr.from_scipy(gpu, A))
    assert isinstance(M.factorization, F.Ilu)
    assert any("sweeps did not settle" in r.getMessage() and "factorized exactly" in r.getMessage()
               for r in _records(caplog))
    assert _iterations(gpu, A, M) <= 1.5 * _iterations(gpu, A, EXACT["ilu"])
    # where they settle, the sweeps' factors are kept
    caplog.clear()
    M = P.Ilu.build().on(gpu).generate(gk.matrix.Csr.from_scipy(gpu, convection_diffusion_2d(30)))
    assert isinstance(M.factorization, F.ParIlu) and M.factorization.converged
    assert M.factorization.sweeps == 5 and M.factorization.change <= 1e-3


def test_ic_on_an_spd_matrix_where_ic0_breaks_down(exec, caplog):
    A = ic_breakdown(100)
    b = A @ np.ones(A.shape[0])
    caplog.set_level(logging.INFO, "ginkpy")
    x, info = cg(A, b, rtol=1e-8, M="ic", executor=exec)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-8 * np.linalg.norm(b)
    lines = [r.getMessage() for r in _records(caplog)]
    assert sum("broke down" in line for line in lines) == 1
    assert any("Manteuffel" in line for line in lines)


def test_a_failing_factorization_parameter_falls_back(exec, caplog):
    # SuperLU's threshold factorization finds no pivot in a column of this singular matrix
    A = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 0, 0], [0, 0, 1]]) + 0 * sp.eye(3))
    caplog.set_level(logging.INFO, "ginkpy")
    M = P.Ilu.build().with_factorization(F.Ilut.build()).on(exec).generate(gk.matrix.Csr.from_scipy(exec, A))
    assert not isinstance(M.factorization, F.Ilut)
    assert any("the Ilut factorization failed" in r.getMessage() for r in _records(caplog))


# fast tier: one matrix each (the others are slow tests: whole solves on real matrices)
@pytest.mark.parametrize("name", ["pde900.mtx", *(pytest.param(name, marks=pytest.mark.slow)
                                                 for name in ("orsirr_1.mtx", "watt_2.mtx", "add32.mtx", "cage8.mtx"))])
def test_default_within_half_again_of_exact_ilu0_on_real_matrices(ref, gpu, name):
    # on the reference executor the CPU's choices, on the device the GPU's (whatever it is)
    A = scipy.io.mmread(matrix_path(name)).tocsr()
    for exec in (ref, gpu):
        # BiCGStab on watt_2 (where it breaks down unpreconditioned) takes 10 or 18 iterations
        # with triangular solves accurate to 3e-3: a measure of its rounding, not of the solves
        for solver in ("Gmres",) if name == "watt_2.mtx" else ("Gmres", "Bicgstab"):
            assert _iterations(exec, A, P.Ilu.build(), solver) <= 1.5 * _iterations(exec, A, EXACT["ilu"], solver) + 1


@pytest.mark.parametrize("name", ["nos6.mtx", *(pytest.param(name, marks=pytest.mark.slow)
                                               for name in ("gr_900_900_crg.mtx", "ani4.mtx", "lap3D_7pt_n20.mtx"))])
def test_default_ic_within_half_again_of_exact_ic0_on_real_matrices(ref, gpu, name):
    A = scipy.io.mmread(matrix_path(name)).tocsr()
    for exec in (ref, gpu):
        assert _iterations(exec, A, P.Ic.build(), "Cg") <= 1.5 * _iterations(exec, A, EXACT["ic"], "Cg") + 1


# -- M="ilut" -------------------------------------------------------------------------------------
def _spilu_gmres_iterations(A, **options):
    ilu = spla.spilu(sp.csc_matrix(A), **options)
    count = [0]
    b = A @ np.ones(A.shape[0])
    spla.gmres(A, b, rtol=1e-8, restart=30, maxiter=100, M=spla.LinearOperator(A.shape, ilu.solve),
               callback=lambda r: count.__setitem__(0, count[0] + 1), callback_type="pr_norm")
    return count[0]


@pytest.mark.parametrize("name", ["pde900.mtx", "orsirr_1.mtx", "watt_2.mtx", "olm1000"])
def test_ilut_within_twice_spilus_gmres_iterations(exec, name):
    A = olmstead(500) if name == "olm1000" else scipy.io.mmread(matrix_path(name)).tocsr()
    b = A @ np.ones(A.shape[0])
    count = [0]
    x, info = gmres(A, b, rtol=1e-8, restart=30, maxiter=100, M=("ilut", {"drop_tol": 1e-4, "fill_factor": 10}),
                    executor=exec, callback=lambda r: count.__setitem__(0, count[0] + 1), callback_type="pr_norm")
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-8 * np.linalg.norm(b)
    assert count[0] <= 2 * _spilu_gmres_iterations(A, drop_tol=1e-4, fill_factor=10)


def test_ilut_applies_spilus_preconditioner(ref, ocl, rng):
    # x = C^T U^-1 L^-1 R b, as spilu(A).solve(b), on both executors; and its transpose (Bicg)
    A = convection_diffusion_2d(25, peclet=2).tocsr()
    A[3, 3] = 0  # a zero diagonal: the factorization pivots
    b = rng.standard_normal(A.shape[0])
    expected = spla.spilu(A.tocsc(), drop_tol=1e-3, fill_factor=5).solve(b)
    for exec in (ref, ocl):
        M = P.Ilu.build().with_factorization(F.Ilut.build().with_drop_tol(1e-3).with_fill_factor(5)) \
            .with_l_solver(S.LowerTrs.build()).with_u_solver(S.UpperTrs.build()).on(exec) \
            .generate(gk.matrix.Csr.from_scipy(exec, A))
        assert M.permutations is not None
        x = M.apply(Dense.from_numpy(exec, b), Dense.zeros(exec, (A.shape[0], 1))).to_numpy()[:, 0]
        np.testing.assert_allclose(x, expected, rtol=1e-10, atol=1e-12 * np.abs(expected).max())
        fact = M.factorization
        y = fact.apply(Dense.from_numpy(exec, b), Dense.zeros(exec, (A.shape[0], 1))).to_numpy()[:, 0]
        rows, cols = fact.row_permutation.to_numpy(), fact.column_permutation.to_numpy()
        l_factor, u_factor = (f.to_scipy() for f in fact.factors)
        expected_y = np.empty_like(b)
        expected_y[rows] = l_factor @ (u_factor @ b[cols])  # A b = R^T L U C b
        np.testing.assert_allclose(y, expected_y, rtol=1e-12)
        x, info = bicg(A, A @ np.ones(A.shape[0]), rtol=1e-10, M="ilut", executor=exec)
        assert info == 0 and np.allclose(x, 1, rtol=1e-7)


def test_m_with_options(ref):
    A = convection_diffusion_2d(10)
    b = A @ np.ones(A.shape[0])
    x, info = gmres(A, b, rtol=1e-10, M=("ilut", {"fill_factor": 3}), executor=ref)
    assert info == 0
    x, info = bicgstab(A, b, rtol=1e-10, M=("ilu", {"factorization": F.ParIlu.build().with_iterations(3)}),
                       executor=ref)
    assert info == 0
    x, info = bicgstab(A, b, rtol=1e-10, M=("jacobi", {}), executor=ref)
    assert info == 0
    # SciPy spilu's spellings: drop_tol or droptol, fill_factor
    for options in ({"droptol": 1e-3}, {"drop_tol": 1e-3, "fill_factor": 3}, {"droptol": 1e-3, "fill_factor": 3}):
        x, info = gmres(A, b, rtol=1e-10, M=("ilut", options), executor=ref)
        assert info == 0
    with pytest.raises(ValueError, match=r"'droptol' and 'drop_tol' are the same parameter"):
        gmres(A, b, M=("ilut", {"droptol": 1e-4, "drop_tol": 1e-4}), executor=ref)
    # an unknown key lists what this M form takes: the preset's keywords and Ilu's parameters
    with pytest.raises(ValueError, match=r"M=\('ilut', \{'drop_toll': 0.0001\}\): the preset has no parameter "
                                         r"'drop_toll'; it takes drop_tol \(or droptol\), fill_factor, or Ilu's "
                                         r"parameters value_type, l_solver"):
        gmres(A, b, M=("ilut", {"drop_toll": 1e-4}), executor=ref)
    x, info = gmres(A, b, rtol=1e-10, M=("block_jacobi", {"max_block_size": 4}), executor=ref)
    assert info == 0
    with pytest.raises(ValueError, match=r"Ilu has no parameter 'drop_tol'; its parameters are .*; did you mean "
                                         r"M=\('ilut', \{'drop_tol': \.\.\.\}\)\?"):
        gmres(A, b, M=("ilu", {"drop_tol": 1e-4}), executor=ref)
    with pytest.raises(TypeError, match="options must be a dict"):
        gmres(A, b, M=("ilut", 1e-4), executor=ref)
    with pytest.raises(ValueError, match="drop_tol must be a finite number >= 0"):
        gmres(A, b, M=("ilut", {"drop_tol": -1}), executor=ref)
