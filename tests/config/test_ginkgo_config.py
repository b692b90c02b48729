"""Ginkgo's configuration schema (issue 27 item 6): Ginkgo's example configurations run
unchanged, every key of Ginkgo's configuration tests (core/test/config/*.cpp) of the types
ginkpy has is accepted and generates, and the keys that change what is computed do so
(Multigrid's per-level lists, post_uses_pre, mid_case and selectors; Ilu's reverse_apply;
Jacobi's aggregate_l1; Isai's excess system; registry references and generated operators)."""
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.base.precision import MixedPrecision
from ginkpy.problems import convection_diffusion_2d, dense_row, poisson_2d

CONFIGS = Path(__file__).parent / "ginkgo_configs"


def _run(exec, params, S, b=None):
    A = gk.matrix.Csr.from_scipy(exec, S)
    solver = params.on(exec).generate(A)
    log = gk.log.Convergence()
    solver.add_logger(log)
    b = np.ones((S.shape[0], 1)) if b is None else b
    x = gk.matrix.Dense.zeros(exec, b.shape)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), x)
    return x.to_numpy(), log, solver


@pytest.mark.parametrize("name", sorted(p.stem for p in CONFIGS.glob("*.json")))
def test_ginkgo_example_configurations_run_unchanged(exec, name):
    # Ginkgo's examples/file-config-solver/config/*.json, as its example runs them: b = 1
    S = poisson_2d(12) if "gmres" not in name else convection_diffusion_2d(12)
    params = gk.config.parse(CONFIGS / f"{name}.json")
    x, log, solver = _run(exec, params, S)
    config = json.loads((CONFIGS / f"{name}.json").read_text())
    limit = [c for c in config["criteria"] if c["type"] == "ResidualNorm"][0]
    threshold = limit["reduction_factor"] * (1.0 if limit.get("baseline") == "absolute" else np.sqrt(S.shape[0]))
    if name == "cg" or name == "blockjacobi-cg":  # Ginkgo's own example stops these after 20 iterations
        assert log.num_iterations <= 20
        return
    assert log.has_converged and np.linalg.norm(S @ x - 1) <= threshold * (1 + 1e-6), name
    if name == "mixed-pgm-multigrid-cg":
        mg = solver.preconditioner
        assert [m.dtype for m in mg.matrices] == [np.float64] + [np.float32] * (mg.num_levels - 1)
        assert mg.pre_smoothers[0].dtype == np.float64 and mg.pre_smoothers[1].dtype == np.float32
        assert mg.post_smoothers == mg.pre_smoothers  # post_uses_pre
        # (the coarsest matrix comes from a float32 level: its float32 solver runs in it)
        assert mg.coarsest_solver.dtype == np.float32 and not isinstance(mg.coarsest_solver, MixedPrecision)


# Ginkgo's configuration tests (core/test/config/*.cpp): each type with every key it sets there,
# values as there (objects it gives as registry names are given here as objects or names)
GINKGO_TEST_CONFIGS = {
    "solver::Cg": {"preconditioner": {"type": "preconditioner::Jacobi"}, "criteria": {"iteration": 20}},
    "solver::Cgs": {"criteria": [{"type": "Iteration", "max_iters": 20}]},
    "solver::Fcg": {"criteria": {"iteration": 20}, "value_type": "float64"},
    "solver::Bicg": {"criteria": {"iteration": 20}},
    "solver::Bicgstab": {"criteria": {"iteration": 20}},
    "solver::Minres": {"criteria": {"iteration": 20}},
    "solver::Ir": {"relaxation_factor": 1.2, "default_initial_guess": "zero", "criteria": {"iteration": 3},
                   "solver": {"type": "solver::Cg", "value_type": "float64", "criteria": {"iteration": 2}}},
    "solver::Idr": {"subspace_dim": 3, "kappa": 0.9, "deterministic": True, "complex_subspace": False,
                    "criteria": {"iteration": 10}},
    "solver::Gmres": {"krylov_dim": 3, "ortho_method": "cgs", "criteria": {"iteration": 10}},
    "solver::Direct": {"num_rhs": 3, "value_type": "float64", "factorization": {"type": "factorization::Lu"}},
    "solver::LowerTrs": {"num_rhs": 3, "unit_diagonal": True, "algorithm": "syncfree"},
    "solver::UpperTrs": {"num_rhs": 3, "unit_diagonal": True, "algorithm": "syncfree"},
    "solver::Chebyshev": {"foci": [0.5, 7.5], "default_initial_guess": "zero", "criteria": {"iteration": 5}},
    "solver::Multigrid": {"post_uses_pre": False, "mid_case": "both", "max_levels": 20, "min_coarse_rows": 32,
                          "cycle": "w", "kcycle_base": 2, "kcycle_rel_tol": 0.5, "smoother_relax": 0.3,
                          "smoother_iters": 2, "default_initial_guess": "provided",
                          "criteria": {"type": "Iteration", "max_iters": 4},
                          "mg_level": [{"type": "multigrid::Pgm"}, {"type": "multigrid::Pgm"}],
                          "pre_smoother": {"type": "solver::Ir", "criteria": {"iteration": 1}},
                          "post_smoother": {"type": "solver::Ir", "criteria": {"iteration": 1}},
                          "mid_smoother": {"type": "solver::Ir", "criteria": {"iteration": 1}},
                          "coarsest_solver": {"type": "solver::Ir", "criteria": {"iteration": 4}}},
    "multigrid::Pgm": {"max_iterations": 20, "max_unassigned_ratio": 0.1, "deterministic": True,
                       "skip_sorting": True},
    "factorization::Ic": {"l_strategy": "sparselib", "skip_sorting": True, "both_factors": False,
                          "algorithm": "syncfree"},
    "factorization::Ilu": {"l_strategy": "sparselib", "u_strategy": "sparselib", "skip_sorting": True,
                           "algorithm": "syncfree"},
    "factorization::Cholesky": {"skip_sorting": True},
    "factorization::Lu": {"symbolic_algorithm": "near_symmetric", "skip_sorting": True},
    "factorization::ParIc": {"iterations": 3, "skip_sorting": True, "l_strategy": "sparselib",
                             "both_factors": False},
    "factorization::ParIlu": {"iterations": 3, "skip_sorting": True, "l_strategy": "sparselib",
                              "u_strategy": "sparselib"},
    "factorization::ParIct": {"iterations": 3, "skip_sorting": True, "l_strategy": "sparselib",
                              "approximate_select": False, "deterministic_sample": True, "fill_in_limit": 2.5,
                              "lt_strategy": "sparselib"},
    "factorization::ParIlut": {"iterations": 3, "skip_sorting": True, "l_strategy": "sparselib",
                               "approximate_select": False, "deterministic_sample": True, "fill_in_limit": 2.5,
                               "u_strategy": "sparselib"},
    "preconditioner::Ic": {"value_type": "float32", "l_solver": {"type": "solver::LowerTrs"},
                           "factorization": {"type": "factorization::Ic"}},
    "preconditioner::Ilu": {"value_type": "float32", "reverse_apply": True,
                            "l_solver": {"type": "solver::LowerTrs"}, "u_solver": {"type": "solver::UpperTrs"},
                            "factorization": {"type": "factorization::ParIlu"}},
    "preconditioner::Isai": {"isai_type": "upper", "value_type": "float32", "skip_sorting": True,
                             "sparsity_power": 2, "excess_limit": 32, "excess_solver_reduction": 1e-4,
                             "excess_solver_factory": {"type": "solver::Gmres", "criteria": {"iteration": 30}}},
    "preconditioner::Jacobi": {"value_type": "float32", "max_block_size": 16, "max_block_stride": 32,
                               "skip_sorting": True, "storage_optimization": [0, 1], "accuracy": 1e-2,
                               "aggregate_l1": True},
    "preconditioner::Sor": {"value_type": "float32", "skip_sorting": True, "symmetric": True,
                            "relaxation_factor": 0.8, "l_solver": {"type": "solver::LowerTrs"},
                            "u_solver": {"type": "solver::UpperTrs"}},
    "preconditioner::GaussSeidel": {"value_type": "float32", "skip_sorting": True, "symmetric": True,
                                    "l_solver": {"type": "solver::LowerTrs"},
                                    "u_solver": {"type": "solver::UpperTrs"}},
    "ResidualNorm": {"baseline": "absolute", "reduction_factor": 1e-6},
    "ImplicitResidualNorm": {"baseline": "initial_resnorm", "reduction_factor": 1e-6},
    "Iteration": {"max_iters": 10},
    "Time": {"time_limit": 10 ** 9},
}


@pytest.mark.parametrize("name", list(GINKGO_TEST_CONFIGS))
def test_every_key_of_ginkgos_configuration_tests(exec, name):
    config = {"type": name, **GINKGO_TEST_CONFIGS[name]}
    params = gk.config.parse(config)
    for key in GINKGO_TEST_CONFIGS[name]:
        assert getattr(params, key) is not None or key in ("value_type",)
    assert gk.config.parse(gk.config.to_dict(params)) == params
    if issubclass(params.product, gk.stop.Iteration.__mro__[1]):  # a criterion: in a solve
        params = gk.solver.Cg.build().with_criteria(params, gk.stop.Iteration.build().with_max_iters(50))
    S = poisson_2d(12)
    if name == "solver::LowerTrs":
        S = sp.tril(S, format="csr")
    elif name == "solver::UpperTrs":
        S = sp.triu(S, format="csr")
    elif name == "solver::Chebyshev":
        S = poisson_2d(12)
    product = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, S))
    b = gk.matrix.Dense.from_numpy(exec, np.ones((S.shape[0], 1)))
    x = product.apply(b, gk.matrix.Dense.zeros(exec, b.shape)).to_numpy() \
        if isinstance(product, gk.LinOp) and not name.startswith("factorization") else None
    assert x is None or np.isfinite(x).all()


def test_unknown_keys_and_values_say_what_is_accepted():
    with pytest.raises(ValueError, match="solver::Multigrid has no parameter 'invalid_key'"):
        gk.config.parse({"type": "solver::Multigrid", "invalid_key": ""})
    with pytest.raises(ValueError, match=r"configuration\.mid_case: Multigrid\.with_mid_case\('middle'\)"):
        gk.config.parse({"type": "solver::Multigrid", "mid_case": "middle"})
    with pytest.raises(ValueError, match="l_strategy"):
        gk.config.parse({"type": "factorization::ParIlu", "l_strategy": "fastest"})


# -- the registry and generated operators -------------------------------------------------------------

def test_registry_names_and_generated_operators(exec):
    S = poisson_2d(10)
    A = gk.matrix.Csr.from_scipy(exec, S)
    jacobi = gk.preconditioner.Jacobi.build().with_max_block_size(1)
    registry = {"M": jacobi, "generated": jacobi.on(exec).generate(A),
                "tol": gk.stop.ResidualNorm.build().with_reduction_factor(1e-10),
                "limit": gk.stop.Iteration.build().with_max_iters(200)}
    for config in ({"type": "solver::Cg", "preconditioner": "M", "criteria": ["tol", "limit"]},
                   {"type": "solver::Cg", "generated_preconditioner": "generated", "criteria": ["tol", "limit"]}):
        params = gk.config.parse(config, registry=registry)
        x, log, solver = _run(exec, params, S)
        assert log.has_converged and solver.preconditioner.inverse_diagonal is not None
    ir = gk.config.parse({"type": "solver::Ir", "generated_solver": "generated", "criteria": "limit"}, registry)
    assert ir.solver is registry["generated"]
    with pytest.raises(ValueError, match="'missing' names no object of the registry"):
        gk.config.parse({"type": "solver::Cg", "preconditioner": "missing"}, registry=registry)
    with pytest.raises(TypeError, match="takes an operator generated already"):
        gk.config.parse({"type": "solver::Cg", "generated_preconditioner": "M"}, registry=registry)


def test_implicit_residual_norm_forms():
    short = gk.config.parse({"type": "solver::Cg", "criteria": {"relative_implicit_residual_norm": 1e-6,
                                                               "iteration": 5, "value_type": "float64"}})
    (implicit, iteration) = short.criteria
    assert implicit.product is gk.stop.ImplicitResidualNorm and implicit.baseline == "rhs_norm"
    assert iteration.max_iters == 5


# -- Multigrid: per-level lists, post_uses_pre, mid_case, selectors -----------------------------------

def _ir(iters=1, relax=0.9):
    return gk.solver.Ir.build().with_solver(gk.preconditioner.Jacobi.build().with_max_block_size(1)) \
        .with_relaxation_factor(relax).with_criteria(gk.stop.Iteration.build().with_max_iters(iters))


def _amg_cg(exec, S, mg):
    params = gk.solver.Cg.build().with_preconditioner(mg).with_criteria(
        gk.stop.ResidualNorm.build().with_reduction_factor(1e-10), gk.stop.Iteration.build().with_max_iters(300))
    return _run(exec, params, S, S @ np.ones((S.shape[0], 1)))


def test_smoother_lists_follow_the_level_selector(exec):
    # Ginkgo's handle_list: one smoother for every level, or the one at the level's mg_level index
    S = poisson_2d(24)
    pgm = gk.multigrid.Pgm.build
    mg = gk.solver.Multigrid.build().with_mg_level(pgm(), pgm()).with_pre_smoother(_ir(1), _ir(2)) \
        .with_post_uses_pre(True)
    x, log, solver = _amg_cg(exec, S, mg)
    m = solver.preconditioner
    assert log.has_converged and m.level_indices[:2] == [0, 1]
    assert [s.parameters.criteria[0].max_iters for s in m.pre_smoothers] == [1] + [2] * (len(m.levels) - 1)
    assert m.post_smoothers == m.pre_smoothers
    # a selector of our own: every level uses the second factory
    mg = gk.solver.Multigrid.build().with_mg_level(pgm(), pgm().with_deterministic(True)) \
        .with_level_selector(lambda level, A: 1).with_pre_smoother(_ir(1), _ir(3))
    x, log, solver = _amg_cg(exec, S, mg)
    m = solver.preconditioner
    assert log.has_converged and set(m.level_indices) == {1}
    assert {s.parameters.criteria[0].max_iters for s in m.pre_smoothers} == {3}
    with pytest.raises(ValueError, match="level_selector gave 2 for level 0"):
        gk.solver.Multigrid.build().with_mg_level(pgm()).with_level_selector(lambda level, A: 2).on(exec).generate(
            gk.matrix.Csr.from_scipy(exec, S))
    with pytest.raises(ValueError, match="pre_smoother has 2 factories but level 2 uses mg_level 2"):
        gk.solver.Multigrid.build().with_mg_level(pgm(), pgm(), pgm()).with_pre_smoother(_ir(), _ir()).with_min_coarse_rows(4) \
            .on(exec).generate(gk.matrix.Csr.from_scipy(exec, S))


def test_post_uses_pre_and_post_smoothers(ref):
    S = poisson_2d(20)
    A = gk.matrix.Csr.from_scipy(ref, S)
    gs = gk.preconditioner.GaussSeidel.build()
    unset = gk.solver.Multigrid.build().with_pre_smoother(gs).on(ref).generate(A)
    assert unset.post_smoothers[0].is_backward  # ginkpy's default: the backward sweep after a forward one
    same = gk.solver.Multigrid.build().with_pre_smoother(gs).with_post_uses_pre(True).on(ref).generate(A)
    assert same.post_smoothers[0] is same.pre_smoothers[0]  # Ginkgo's: the pre-smoother itself
    ignored = gk.solver.Multigrid.build().with_pre_smoother(gs).with_post_smoother(_ir()).with_post_uses_pre(True) \
        .on(ref).generate(A)
    assert ignored.post_smoothers[0] is ignored.pre_smoothers[0]
    default_post = gk.solver.Multigrid.build().with_pre_smoother(gs).with_post_uses_pre(False).on(ref).generate(A)
    assert default_post.post_smoothers[0] is None  # the built-in Jacobi sweeps


@pytest.mark.parametrize("mid_case", ["both", "post_smoother", "pre_smoother", "standalone"])
@pytest.mark.parametrize("cycle", ["w", "f"])
def test_mid_case(exec, mid_case, cycle):
    # the four ways between a W- or F-cycle's two visits of a level converge, each as a fixed
    # symmetric operator where it is one (W, both or standalone with a symmetric mid-smoother)
    S = poisson_2d(24)
    mg = gk.solver.Multigrid.build().with_cycle(cycle).with_mid_case(mid_case).with_mid_smoother(_ir(2, 0.8))
    params = (gk.solver.Fcg if cycle == "f" or mid_case in ("post_smoother", "pre_smoother") else gk.solver.Cg) \
        .build().with_preconditioner(mg).with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-10),
                                                       gk.stop.Iteration.build().with_max_iters(300))
    x, log, solver = _run(exec, params, S, S @ np.ones((S.shape[0], 1)))
    m = solver.preconditioner
    assert log.has_converged and np.linalg.norm(S @ x[:, 0] - S @ np.ones(S.shape[0])) <= 1e-9 * np.linalg.norm(
        S @ np.ones(S.shape[0]))
    if mid_case != "both":
        assert m.merged_from is None  # (within merged levels the visits smooth before and after)
    if mid_case == "standalone":
        assert all(s is not None for s in m.mid_smoothers)


def test_mid_case_changes_the_cycle(ref):
    # "post_smoother" skips the second visit's pre-smoothing: fewer smoothing steps, another operator
    S = poisson_2d(20)
    A = gk.matrix.Csr.from_scipy(ref, S)
    b = gk.matrix.Dense.from_numpy(ref, np.random.default_rng(0).standard_normal((S.shape[0], 1)))
    out = {}
    for mid in ("both", "post_smoother", "pre_smoother"):
        mg = gk.solver.Multigrid.build().with_cycle("w").with_mid_case(mid).on(ref).generate(A)
        out[mid] = mg.apply(b, gk.matrix.Dense.zeros(ref, b.shape)).to_numpy()
    assert not np.allclose(out["both"], out["post_smoother"]) and not np.allclose(out["both"], out["pre_smoother"])


def test_coarsest_solver_list_and_selector(ref):
    S = poisson_2d(20)
    A = gk.matrix.Csr.from_scipy(ref, S)
    mg = gk.solver.Multigrid.build().with_coarsest_solver(gk.solver.Direct.build(), _ir(4)).on(ref).generate(A)
    assert isinstance(mg.coarsest_solver, gk.solver.Direct)  # the first, as Ginkgo's default selector
    mg = gk.solver.Multigrid.build().with_coarsest_solver(gk.solver.Direct.build(), _ir(4)) \
        .with_solver_selector(lambda level, A: 1).on(ref).generate(A)
    assert isinstance(mg.coarsest_solver, gk.solver.Ir)


# -- keys that change what is computed ----------------------------------------------------------------

def test_ilu_reverse_apply(exec):
    S = convection_diffusion_2d(8)
    A = gk.matrix.Csr.from_scipy(exec, S)
    # exact triangular solves (a GPU's default approximates them: ISAI or Jacobi sweeps)
    ilu = (gk.preconditioner.Ilu.build().with_factorization(gk.factorization.Ilu.build())
           .with_l_solver(gk.solver.LowerTrs.build()).with_u_solver(gk.solver.UpperTrs.build()))
    forward = ilu.on(exec).generate(A)
    reverse = ilu.with_reverse_apply(True).on(exec).generate(A)
    L = forward.factorization.l_factor.to_scipy().toarray()
    U = forward.factorization.u_factor.to_scipy().toarray()
    b = np.random.default_rng(1).standard_normal((S.shape[0], 1))
    B = gk.matrix.Dense.from_numpy(exec, b)
    x = reverse.apply(B, gk.matrix.Dense.zeros(exec, b.shape)).to_numpy()
    np.testing.assert_allclose(x, np.linalg.solve(L, np.linalg.solve(U, b)), rtol=1e-10)  # L^-1 U^-1 b
    x = forward.apply(B, gk.matrix.Dense.zeros(exec, b.shape)).to_numpy()
    np.testing.assert_allclose(x, np.linalg.solve(U, np.linalg.solve(L, b)), rtol=1e-10)


@pytest.mark.parametrize("block", [1, 4])
def test_jacobi_aggregate_l1(exec, block):
    # the blocks of A + diag(the row's off-block |a_ij|): l1-Jacobi
    S = convection_diffusion_2d(9)
    A = gk.matrix.Csr.from_scipy(exec, S)
    ptrs = np.arange(0, S.shape[0] + 1, block) if block > 1 else None
    J = gk.preconditioner.Jacobi.build().with_max_block_size(block).with_aggregate_l1(True)
    if ptrs is not None:
        ptrs = np.append(ptrs[ptrs < S.shape[0]], S.shape[0])
        J = J.with_block_pointers(ptrs)
    M = J.on(exec).generate(A)
    ptrs = np.arange(S.shape[0] + 1) if ptrs is None else ptrs
    D = np.zeros(S.shape)
    dense = S.toarray()
    for start, end in zip(ptrs[:-1], ptrs[1:]):
        D[start:end, start:end] = dense[start:end, start:end]
        off = np.abs(dense[start:end]).sum(axis=1) - np.abs(dense[start:end, start:end]).sum(axis=1)
        D[np.arange(start, end), np.arange(start, end)] += off
    b = np.random.default_rng(2).standard_normal((S.shape[0], 1))
    x = M.apply(gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.zeros(exec, b.shape)).to_numpy()
    np.testing.assert_allclose(x, np.linalg.solve(D, b), rtol=1e-10)


@pytest.mark.parametrize("kind", ["general", "lower", "spd"])
def test_isai_excess_system_for_long_rows(exec, kind):
    # a row of 200 entries: refused by default, solved as Ginkgo's excess system when asked
    S = dense_row(60, 200)
    if kind == "spd":
        S = (S @ S.T + 100 * sp.identity(S.shape[0])).tocsr()
    A = gk.matrix.Csr.from_scipy(exec, S)
    isai = gk.preconditioner.Isai.build().with_isai_type(kind)
    with pytest.raises(ValueError, match="excess_limit"):
        isai.on(exec).generate(A)
    for limit in (250, 100_000):
        M = gk.preconditioner.Isai.build().with_isai_type(kind).with_excess_limit(limit) \
            .with_excess_solver_reduction(1e-12).on(exec).generate(A).approximate_inverse.to_scipy()
        assert np.diff(M.indptr).max() > 128
        if kind == "spd":  # G A G^H has a unit diagonal
            np.testing.assert_allclose((M @ S @ M.conj().T).diagonal(), 1.0, rtol=1e-8)
            continue
        T = S if kind == "general" else sp.tril(S)
        pattern = (M != 0).astype(float)
        residual = (M @ T).multiply(pattern) - sp.identity(S.shape[0]).multiply(pattern)
        assert abs(residual).max() <= 1e-8


def test_idr_complex_subspace(exec):
    S = convection_diffusion_2d(10).astype(np.complex128)
    params = gk.solver.Idr.build().with_complex_subspace(True).with_criteria(
        gk.stop.ResidualNorm.build().with_reduction_factor(1e-10), gk.stop.Iteration.build().with_max_iters(400))
    A = gk.matrix.Csr.from_scipy(exec, S)
    solver = params.on(exec).generate(A)
    assert np.iscomplexobj(solver.subspace_vectors)
    b = gk.matrix.Dense.from_numpy(exec, np.ones((S.shape[0], 1), np.complex128))
    x = solver.apply(b, gk.matrix.Dense.zeros(exec, b.shape, np.complex128)).to_numpy()
    assert np.linalg.norm(S @ x - 1) <= 1e-9 * np.sqrt(S.shape[0])
    with pytest.raises(ValueError, match="complex arithmetic"):
        params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, convection_diffusion_2d(10)))
