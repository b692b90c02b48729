"""gk.config: Ginkgo's JSON configuration format to parameters and back, and its errors."""
import json

import numpy as np
import pytest

import ginkpy as gk
from ginkpy.problems import poisson_2d

ISSUE_EXAMPLE = {"type": "solver::Cg",
                 "preconditioner": {"type": "preconditioner::Jacobi", "max_block_size": 1},
                 "criteria": [{"type": "Iteration", "max_iters": 1000},
                              {"type": "ResidualNorm", "reduction_factor": 1e-8}]}


def test_parse_builds_what_the_builder_builds():
    expected = (gk.solver.Cg.build()
                .with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
                .with_criteria(gk.stop.Iteration.build().with_max_iters(1000),
                               gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)))
    assert gk.config.parse(ISSUE_EXAMPLE) == expected


def test_parsed_parameters_solve(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(6))
    b = gk.matrix.Dense.from_numpy(ref, np.ones(36))
    x = gk.matrix.Dense.zeros(ref, (36, 1))
    solver = gk.config.parse(ISSUE_EXAMPLE).on(ref).generate(A)
    logger = gk.log.Convergence()
    solver.add_logger(logger)
    solver.apply(b, x)
    assert logger.has_converged
    assert np.linalg.norm(np.ones(36) - poisson_2d(6) @ x.to_numpy()[:, 0]) <= 1e-8 * 6


ROUND_TRIPS = [
    lambda: gk.solver.Cg.build(),
    lambda: gk.solver.Gmres.build().with_krylov_dim(12).with_criteria(
        gk.stop.ResidualNorm.build().with_baseline("initial_resnorm").with_reduction_factor(1e-6),
        gk.stop.Time.build().with_time_limit(2.5)),
    lambda: gk.solver.Bicgstab.build().with_preconditioner(gk.preconditioner.Ilu.build()),
    lambda: gk.solver.Idr.build().with_subspace_dim(4).with_kappa(0.5),
    lambda: gk.solver.Ir.build().with_relaxation_factor(0.8).with_solver(
        gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(3))),
    lambda: gk.preconditioner.Ic.build().with_factorization(gk.factorization.Ic.build()),
    lambda: gk.preconditioner.Jacobi.build().with_max_block_size(4).with_block_pointers((0, 2, 5)),
    lambda: gk.solver.LowerTrs.build().with_unit_diagonal(True),
]


@pytest.mark.parametrize("make", ROUND_TRIPS)
def test_round_trip_through_json(make):
    params = make()
    data = gk.config.to_dict(params)
    again = gk.config.parse(json.loads(json.dumps(data)))
    assert again == params
    assert gk.config.to_dict(again) == data


def test_round_trip_through_a_file(tmp_path):
    path = tmp_path / "solver.json"
    path.write_text(json.dumps(ISSUE_EXAMPLE))
    assert gk.config.parse(path) == gk.config.parse(str(path)) == gk.config.parse(ISSUE_EXAMPLE)
    assert gk.config.to_dict(gk.config.parse(path)) == ISSUE_EXAMPLE


def test_to_dict_writes_only_what_differs_from_the_defaults(ref):
    params = gk.solver.Gmres.build().with_krylov_dim(30)
    assert gk.config.to_dict(params) == {"type": "solver::Gmres"}
    assert gk.config.to_dict(gk.solver.Gmres.build().with_krylov_dim(7).on(ref)) == \
        {"type": "solver::Gmres", "krylov_dim": 7}


def test_time_limits_are_nanoseconds_as_in_ginkgo():
    params = gk.config.parse({"type": "Time", "time_limit": 1_500_000_000})
    assert params.time_limit == pytest.approx(1.5)
    assert gk.config.to_dict(gk.stop.Time.build().with_time_limit(0.25)) == {"type": "Time", "time_limit": 250_000_000}


def test_criteria_forms():
    listed = gk.config.parse({"type": "solver::Cg", "criteria": [
        {"type": "Iteration", "max_iters": 50},
        {"type": "ResidualNorm", "reduction_factor": 1e-6, "baseline": "rhs_norm"},
        {"type": "ResidualNorm", "reduction_factor": 1e-3, "baseline": "initial_resnorm"},
        {"type": "ResidualNorm", "reduction_factor": 1e-9, "baseline": "absolute"},
        {"type": "Time", "time_limit": 2_000_000_000}]})
    short = gk.config.parse({"type": "solver::Cg", "criteria": {
        "iteration": 50, "relative_residual_norm": 1e-6, "initial_residual_norm": 1e-3,
        "absolute_residual_norm": 1e-9, "time": 2_000_000_000}})
    assert short == listed
    single = gk.config.parse({"type": "solver::Cg", "criteria": {"type": "Iteration", "max_iters": 50}})
    assert single.criteria == listed.criteria[:1]


def test_value_and_index_type_keys_are_checked():
    plain = gk.config.parse({"type": "solver::Cg"})
    assert gk.config.parse({"type": "solver::Cg", "index_type": "int32"}) == plain
    for value_type in ("float32", "float64", "complex<float64>", "complex<float32>"):  # Ginkgo's names
        assert gk.config.parse({"type": "solver::Cg", "value_type": value_type}) == \
            gk.solver.Cg.build().with_value_type(value_type)
    with pytest.raises(ValueError, match=r"configuration\.value_type: value_type 'float16' is not a value type "
                                         r"ginkpy computes in: use 'float64', 'float32', 'complex<float64>' or "
                                         r"'complex<float32>'"):
        gk.config.parse({"type": "solver::Cg", "value_type": "float16"})
    with pytest.raises(ValueError, match="int32"):
        gk.config.parse({"type": "solver::Cg", "index_type": "int64"})


def test_types_come_from_the_public_namespaces():
    types = gk.config.types()
    for name in gk.solver.__all__:
        assert types[f"solver::{name}"] is getattr(gk.solver, name)
    for name in gk.preconditioner.__all__:
        assert types[f"preconditioner::{name}"] is getattr(gk.preconditioner, name)
    assert types["Iteration"] is gk.stop.Iteration and "StopReason" not in types
    assert gk.config.short_names("solver")["bicgstab"] is gk.solver.Bicgstab
    assert gk.config.short_names("preconditioner")["jacobi"].build().max_block_size == 1  # scalar Jacobi
    assert gk.config.short_names("preconditioner")["block_jacobi"].build().max_block_size == 32
    assert gk.config.type_name(gk.solver.Gmres) == "solver::Gmres"


def test_errors_say_what_is_accepted(tmp_path):
    with pytest.raises(ValueError, match=r"unknown type 'solver::Nosuch'.*solver::Bicgstab.*solver::Cg"):
        gk.config.parse({"type": "solver::Nosuch"})
    with pytest.raises(ValueError, match="unknown type None"):
        gk.config.parse({"preconditioner": {"type": "preconditioner::Jacobi"}})
    with pytest.raises(ValueError, match=r"configuration\.krylov_dim: solver::Cg has no parameter 'krylov_dim'; "
                                         r"accepted keys: criteria, default_initial_guess, generated_preconditioner, index_type, preconditioner, type, "
                                         r"value_type"):
        gk.config.parse({"type": "solver::Cg", "krylov_dim": 10})
    with pytest.raises(ValueError, match=r"configuration\.preconditioner\.max_blocksize: preconditioner::Jacobi has no parameter "
                                         r"'max_blocksize'.*max_block_size"):
        gk.config.parse({"type": "solver::Cg", "preconditioner": {"type": "preconditioner::Jacobi",
                                                                  "max_blocksize": 4}})
    with pytest.raises(ValueError, match="unknown criterion 'iterations'.*iteration, time"):
        gk.config.parse({"type": "solver::Cg", "criteria": {"iterations": 5}})
    with pytest.raises(ValueError, match=r"criteria\[1\]: solver::Cg is not a stopping criterion"):
        gk.config.parse({"type": "solver::Cg", "criteria": [{"type": "Iteration", "max_iters": 5},
                                                            {"type": "solver::Cg"}]})
    with pytest.raises(TypeError, match="must be a dict with a 'type' key, got list"):
        gk.config.parse([ISSUE_EXAMPLE])
    with pytest.raises(TypeError, match="nanoseconds"):
        gk.config.parse({"type": "Time", "time_limit": "10s"})
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "solver::Cg",}')
    with pytest.raises(ValueError, match="bad.json is not valid JSON"):
        gk.config.parse(bad)
    with pytest.raises(FileNotFoundError):
        gk.config.parse(tmp_path / "missing.json")


def test_to_dict_errors(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(3))
    generated = gk.solver.Cg.build().with_preconditioner(gk.preconditioner.Jacobi.build().on(ref).generate(A))
    with pytest.raises(TypeError, match="Jacobi cannot be written as configuration data"):
        gk.config.to_dict(generated)
    with pytest.raises(TypeError, match="takes parameters"):
        gk.config.to_dict({"type": "solver::Cg"})


def test_the_configuration_checks_the_kind_of_each_nested_type(ref):
    with pytest.raises((ValueError, TypeError), match="preconditioner"):
        gk.config.parse({"type": "solver::Cg", "preconditioner": {"type": "stop::Iteration", "max_iters": 3}})
    with pytest.raises((ValueError, TypeError), match="criteria"):
        gk.config.parse({"type": "solver::Cg", "criteria": [{"type": "solver::Cg"}]})
