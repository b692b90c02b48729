"""Mixed precision (issue 27 item 5): every factory's value type, multigrid levels and smoothers
of another type converting at their boundary, iterative refinement with a float32 inner
solver, and block-Jacobi with its blocks stored in float32. The accuracy of a solve is judged in
the system's own type."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.base.precision import MixedPrecision
from ginkpy.problems import convection_diffusion_2d, magnetic_laplacian_2d, poisson_2d

from conftest import assert_twins, tol, twin



def jacobi():
    return gk.preconditioner.Jacobi.build().with_max_block_size(1)


def _solve(exec, S, params, b, dtype=np.float64):
    A = gk.matrix.Csr.from_scipy(exec, S, dtype)
    solver = params.on(exec).generate(A)
    log = gk.log.Convergence()
    solver.add_logger(log)
    x = gk.matrix.Dense.zeros(exec, b.shape, dtype)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b, dtype), x)
    return x.to_numpy(), log, solver


def _cg(M, reduction=1e-10):
    return gk.solver.Cg.build().with_preconditioner(M).with_criteria(
        gk.stop.ResidualNorm.build().with_reduction_factor(reduction), gk.stop.Iteration.build().with_max_iters(500))


def _relative_residual(S, x, b):
    return np.linalg.norm(S @ x - b, axis=0) / np.linalg.norm(b, axis=0)


def test_every_factory_takes_a_value_type():
    from ginkpy.config import types
    for name, cls in types().items():
        params = cls.build()
        assert params.value_type is None, name
        assert params.with_value_type("float32").value_type == "float32"
    params = gk.solver.Cg.build()
    for given, canonical in (("float", "float32"), (np.float64, "float64"), ("complex64", "complex<float32>"),
                             (np.complex128, "complex<float64>"), ("complex<float32>", "complex<float32>")):
        assert params.with_value_type(given).value_type == canonical
    with pytest.raises(ValueError, match="value_type 'half' is not a value type ginkpy computes in"):
        params.with_value_type("half")
    assert gk.config.to_dict(params.with_value_type("complex64")) == {"type": "solver::Cg",
                                                                      "value_type": "complex<float32>"}


def test_complex_value_type_of_a_real_system_is_refused(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(4))
    with pytest.raises(ValueError, match="value_type 'complex<float32>' is complex, the system float64 is real"):
        jacobi().with_value_type("complex<float32>").on(ref).generate(A)


@pytest.mark.parametrize("where", ["whole", "levels"])
def test_float32_multigrid_in_a_float64_cg(exec, where):
    # the hierarchy in float32 (as a whole, or from level 1 on as Ginkgo's mixed-pgm-multigrid-cg
    # example): at most 1.2x the iterations of float64 AMG-CG, and the float64 accuracy
    S = poisson_2d(40)
    b = np.random.default_rng(0).standard_normal((S.shape[0], 2))
    _, log64, _ = _solve(exec, S, _cg(gk.solver.Multigrid.build()), b)
    if where == "whole":
        M = gk.solver.Multigrid.build().with_value_type("float32")
    else:
        M = gk.solver.Multigrid.build().with_mg_level(gk.multigrid.Pgm.build(),
                                                       gk.multigrid.Pgm.build().with_value_type("float32"))
    x, log, solver = _solve(exec, S, _cg(M), b)
    assert log.has_converged and (_relative_residual(S, x, b) <= 1e-10).all()
    assert log.num_iterations <= 1.2 * log64.num_iterations
    mg = solver.preconditioner
    if where == "whole":
        assert isinstance(mg, MixedPrecision) and mg.dtype == np.float64
        assert {m.dtype for m in mg.operator.matrices} == {np.dtype(np.float32)}
    else:
        assert [m.dtype for m in mg.matrices] == [np.float64] + [np.float32] * (mg.num_levels - 1)


@pytest.mark.parametrize("cycle", ["v", "w"])
def test_a_float32_level_below_float64_ones_and_merged_levels(exec, cycle):
    # levels 0 and 1 in float64, the rest in float32 (the boundary between level 1 and 2), the
    # coarse levels merged into one launch where they share a type
    S = poisson_2d(48)
    b = S @ np.ones(S.shape[0])
    pgm = gk.multigrid.Pgm.build
    M = gk.solver.Multigrid.build().with_cycle(cycle).with_merged_rows(1000).with_mg_level(
        pgm(), pgm(), pgm().with_value_type("float32"))
    x, log, solver = _solve(exec, S, _cg(M), b[:, None])
    mg = solver.preconditioner
    assert [m.dtype for m in mg.matrices][:3] == [np.float64, np.float64, np.float32]
    assert log.has_converged and _relative_residual(S, x, b[:, None])[0] <= 1e-10
    if mg.merged_from is not None:
        assert {m.dtype for m in mg.matrices[mg.merged_from - 1:]} == {np.dtype(np.float32)}


def test_a_float32_smoother_on_float64_levels(exec):
    smoother = gk.solver.Ir.build().with_value_type("float32").with_solver(jacobi()).with_relaxation_factor(0.9) \
        .with_criteria(gk.stop.Iteration.build().with_max_iters(2))
    S = poisson_2d(30)
    b = np.random.default_rng(1).standard_normal((S.shape[0], 1))
    x, log, solver = _solve(exec, S, _cg(gk.solver.Multigrid.build().with_pre_smoother(smoother)), b)
    assert log.has_converged and _relative_residual(S, x, b)[0] <= 1e-10
    assert isinstance(solver.preconditioner.pre_smoothers[0], MixedPrecision)


def test_mixed_precision_iterative_refinement(exec):
    # Ir with a float32 inner Cg (each solve to 1e-4) refines a float64 solution far beyond what
    # float32 resolves
    S = poisson_2d(30)
    b = np.random.default_rng(2).standard_normal((S.shape[0], 2))
    inner = _cg(jacobi(), 1e-4).with_value_type("float32")
    params = gk.solver.Ir.build().with_solver(inner).with_criteria(
        gk.stop.ResidualNorm.build().with_reduction_factor(1e-13), gk.stop.Iteration.build().with_max_iters(30))
    x, log, solver = _solve(exec, S, params, b)
    assert log.has_converged and (_relative_residual(S, x, b) <= 1e-13).all()
    assert log.num_iterations <= 8
    assert isinstance(solver.solver, MixedPrecision) and solver.solver.operator.dtype == np.float32


def test_complex_systems_run_their_float32_parts_in_complex64(exec):
    S = magnetic_laplacian_2d(24, shift=0.05)
    rng = np.random.default_rng(3)
    b = (rng.standard_normal(S.shape[0]) + 1j * rng.standard_normal(S.shape[0]))[:, None]
    x, log, solver = _solve(exec, S, _cg(gk.solver.Multigrid.build().with_value_type("float32")), b, np.complex128)
    assert solver.preconditioner.operator.dtype == np.complex64
    assert log.has_converged and _relative_residual(S, x, b)[0] <= 1e-10


def test_a_second_apply_allocates_nothing(exec):
    S = poisson_2d(20)
    A = gk.matrix.Csr.from_scipy(exec, S)
    solver = _cg(gk.solver.Multigrid.build().with_value_type("float32")).on(exec).generate(A)
    b = gk.matrix.Dense.from_numpy(exec, np.ones((S.shape[0], 1)))
    solver.apply(b, gk.matrix.Dense.zeros(exec, b.shape))
    x = gk.matrix.Dense.zeros(exec, b.shape)
    before = dict(exec.counters)
    solver.apply(b, x)
    assert exec.counters["allocations"] == before["allocations"]
    assert exec.counters["captures"] == before["captures"]


def test_configuration_value_types(exec):
    # Ginkgo's per-object "value_type" runs the object in it
    config = {"type": "solver::Cg", "criteria": {"relative_residual_norm": 1e-10, "iteration": 300},
              "preconditioner": {"type": "solver::Multigrid", "value_type": "float32"}}
    S = poisson_2d(20)
    b = np.ones((S.shape[0], 1))
    x, log, solver = _solve(exec, S, gk.config.parse(config), b)
    assert isinstance(solver.preconditioner, MixedPrecision) and log.has_converged
    assert gk.config.to_dict(gk.config.parse(config)) == {**config, "criteria": gk.config.to_dict(
        gk.config.parse(config))["criteria"]}


# -- block-Jacobi with its blocks in float32 ----------------------------------------------------------

@pytest.mark.parametrize("option", ["float32", (0, 1), "autodetect"])
def test_block_jacobi_storage_in_float32(exec, option):
    S = convection_diffusion_2d(30)
    b = np.random.default_rng(4).standard_normal((S.shape[0], 2))
    params = gk.solver.Bicgstab.build().with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-10))
    J = gk.preconditioner.Jacobi.build().with_max_block_size(8)
    _, log64, _ = _solve(exec, S, params.with_preconditioner(J), b)
    x, log, solver = _solve(exec, S, params.with_preconditioner(J.with_storage_optimization(option)), b)
    assert solver.preconditioner.blocks.dtype == np.float32
    assert log.has_converged and (_relative_residual(S, x, b) <= 1e-10).all()
    assert log.num_iterations <= 1.2 * log64.num_iterations


def test_autodetect_keeps_ill_conditioned_blocks_in_full_precision(ref):
    # 2 x 2 blocks with condition number about 1e8: float32 storage would lose them
    blocks = [np.array([[1.0, 1.0], [1.0, 1.0 + 1e-8]]) for _ in range(4)]
    A = gk.matrix.Csr.from_scipy(ref, sp.block_diag(blocks).tocsr())
    J = gk.preconditioner.Jacobi.build().with_block_pointers(np.arange(0, 9, 2))
    assert J.with_storage_optimization("autodetect").on(ref).generate(A).blocks.dtype == np.float64
    assert J.with_storage_optimization("float32").on(ref).generate(A).blocks.dtype == np.float32
    assert J.with_storage_optimization((0, 0)).on(ref).generate(A).blocks.dtype == np.float64
    with pytest.raises(ValueError, match="with_storage_optimization"):
        J.with_storage_optimization("half")


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("kernel", ["simple_apply", "apply"])
def test_opencl_apply_of_single_precision_blocks(ref, ocl, rng, dtype, kernel):
    # the apply kernels read float32 (complex64) blocks into the value type: twins
    if not ocl.info.fp64:
        pytest.skip("needs fp64")
    n, k = 1237, 3
    S = sp.random(n, n, density=4 / n, random_state=5) + sp.identity(n) * 8
    if np.dtype(dtype).kind == "c":
        S = S + 1j * sp.random(n, n, density=2 / n, random_state=6)
    b = rng.standard_normal((n, k)).astype(dtype)
    x = rng.standard_normal((n, k)).astype(dtype)
    J = gk.preconditioner.Jacobi.build().with_max_block_size(7).with_storage_optimization("float32")

    def jacobi(exec):
        return J.on(exec).generate(gk.matrix.Csr.from_scipy(exec, S.tocsr(), dtype))
    args = [jacobi, b, x] if kernel == "simple_apply" else [np.array([[0.5]]), jacobi, b, np.array([[-1.5]]), x]
    out = twin(ref, ocl, f"preconditioner.jacobi.{kernel}", *args, dtype=dtype)
    # (each executor inverts the blocks itself: their float32 roundings may differ by an ulp)
    assert_twins(out, dtype, factor=2 * tol(np.float32) / tol(dtype), skip=(0 if kernel == "simple_apply" else 1,))
    # and the blocks' rounding is float32's, not the value type's
    full = gk.preconditioner.Jacobi.build().with_max_block_size(7).on(ref).generate(
        gk.matrix.Csr.from_scipy(ref, S.tocsr(), dtype))
    exact = full.apply(gk.matrix.Dense.from_numpy(ref, b, dtype), gk.matrix.Dense.zeros(ref, b.shape, dtype))
    if kernel == "simple_apply":
        np.testing.assert_allclose(out[1][2], exact.to_numpy(), rtol=100 * tol(np.float32))
