"""The OpenCL batch kernels against their reference twins: SpMV of the three formats, the batch
Jacobi, and whole batched solves laid out as on a CPU (one work-item per item) and as on a GPU
(one work-group per item, the arrays in local memory, or partly in global memory with more
items than work-groups), with items that converge at once (b = 0), break down, and iterate."""
import attrs
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.linalg import batched_cg
from ginkpy.opencl.components import batch_solver
from ginkpy.problems import poisson_2d

from conftest import batch_systems, tol

CONVERGED, BREAKDOWN = StopReason.CONVERGED, StopReason.BREAKDOWN


def device(ocl, layout, n=None, arrays=0):
    """The device executor launching as on a CPU ("cpu"), as on a GPU with everything in local
    memory ("gpu"), or as on a GPU of one compute unit whose local memory holds only ``arrays``
    vectors of n entries ("gpu_partial": the rest in global memory, 8 work-groups looping over
    the items)."""
    exe = gk.OpenCLExecutor(ocl.device)
    gpu = layout != "cpu"
    info = attrs.evolve(ocl.info, is_cpu=not gpu, is_gpu=gpu)
    if layout == "gpu_partial":
        group = min(batch_solver.GPU_GROUP, 1 << max(0, n - 1).bit_length())
        info = attrs.evolve(info, compute_units=1, local_mem_size=batch_solver.LOCAL_RESERVE + 4 * group * 8
                            + arrays * n * 8)
    exe.info = info
    return exe


items = batch_systems


def run(exec, name, matrices, fmt, B, block_size, tolerance_type, max_iterations=400):
    A = gk.batch.matrix.Csr.from_scipy(exec, matrices)
    if fmt == "ell":
        A = gk.batch.matrix.Ell.from_csr(A)
    elif fmt == "dense":
        A = gk.batch.matrix.Dense.from_numpy(exec, [m.toarray() for m in matrices])
    p = (getattr(gk.batch.solver, name).build().with_max_iterations(max_iterations).with_tolerance(
        1e-10 if tolerance_type == "relative" else 1e-9).with_tolerance_type(tolerance_type))
    if block_size:
        p = p.with_preconditioner(gk.batch.preconditioner.Jacobi.build().with_max_block_size(block_size))
    solver = p.on(exec).generate(A)
    logger = gk.batch.log.BatchConvergence()
    solver.add_logger(logger)
    x = gk.batch.MultiVector.zeros(exec, B.shape)
    solver.apply(gk.batch.MultiVector.from_numpy(exec, B), x)
    return x.to_numpy(), logger


# -- SpMV and Jacobi -----------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["csr", "ell", "dense"])
@pytest.mark.parametrize("k", [1, 3])
def test_spmv_twins(ref, ocl, rng, fmt, k):
    # 7 items of 53 x 53 (more entries than a work-group), odd sizes, k columns
    pattern = sp.random(53, 53, density=0.1, random_state=1, format="csr") + sp.eye(53)
    values = rng.standard_normal((7, pattern.nnz))
    B = rng.standard_normal((7, 53, k))
    out = []
    for exec in (ref, ocl):
        A = gk.batch.matrix.Csr.from_pattern(exec, pattern, values)
        if fmt == "ell":
            A = gk.batch.matrix.Ell.from_csr(A)
        elif fmt == "dense":
            A = gk.batch.matrix.Dense.from_numpy(exec, np.stack([m.toarray() for m in A.to_scipy()]))
        out.append(A.apply(gk.batch.MultiVector.from_numpy(exec, B), gk.batch.MultiVector.zeros(exec, B.shape))
                   .to_numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=tol(np.float64), atol=tol(np.float64) * np.abs(out[0]).max())


@pytest.mark.parametrize("block_size", [1, 5])
def test_jacobi_apply_twins(ref, ocl, rng, block_size):
    matrices = items(rng, 6, 7, "general")
    B = rng.standard_normal((6, 49, 2))
    out = []
    for exec in (ref, ocl):
        A = gk.batch.matrix.Csr.from_scipy(exec, matrices)
        M = gk.batch.preconditioner.Jacobi.build().with_max_block_size(block_size).on(exec).generate(A)
        out.append(M.apply(gk.batch.MultiVector.from_numpy(exec, B), gk.batch.MultiVector.zeros(exec, B.shape))
                   .to_numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=tol(np.float64), atol=tol(np.float64) * np.abs(out[0]).max())


# -- whole batched solves --------------------------------------------------------------------------

# (layout, format, Jacobi block size (0: none), tolerance type, grid side): each solver runs each
# row, every combination compiles a kernel of its own
CASES = [("cpu", "csr", 0, "relative", 7), ("cpu", "ell", 1, "absolute", 7), ("cpu", "dense", 4, "relative", 5),
         ("gpu", "csr", 1, "relative", 7), ("gpu_partial", "csr", 4, "absolute", 7),
         ("gpu_partial", "csr", 1, "relative", 18)]


@pytest.mark.parametrize("name", ["Cg", "Bicgstab", "Gmres"])
@pytest.mark.parametrize("layout, fmt, block_size, tolerance_type, grid", CASES)
def test_solver_twins(ref, ocl, rng, name, layout, fmt, block_size, tolerance_type, grid):
    # 11 items (more than the 8 work-groups of gpu_partial): item 0 has b = 0 (converged at
    # once), item 1 (without a preconditioner) is the zero matrix (breaks down at once), the
    # others iterate; all agree with the reference, system by system
    N = 11 if grid < 10 else 3
    matrices = items(rng, N, grid, "spd" if name == "Cg" else "general")
    n = matrices[0].shape[0]
    if not block_size:
        matrices[1] = sp.csr_matrix((np.zeros(matrices[1].nnz), matrices[1].indices, matrices[1].indptr),
                                    shape=matrices[1].shape)
    B = rng.standard_normal((N, n))
    B[0] = 0
    dev = device(ocl, layout, n, arrays=3)
    X_ref, log_ref = run(ref, name, matrices, fmt, B, block_size, tolerance_type)
    X_dev, log_dev = run(dev, name, matrices, fmt, B, block_size, tolerance_type)
    assert log_dev.stop_reasons == log_ref.stop_reasons
    assert log_ref.stop_reasons[0] == CONVERGED and log_ref.num_iterations[0] == 0
    if not block_size:
        assert log_ref.stop_reasons[1] == BREAKDOWN
    assert all(r == CONVERGED for r in log_ref.stop_reasons[2:])
    # rounding differs between the two: an item may take one iteration more or less
    assert np.abs(log_dev.num_iterations - log_ref.num_iterations).max() <= 1
    np.testing.assert_allclose(X_dev, X_ref, rtol=1e-6, atol=1e-6 * np.abs(X_ref).max())
    # converged means the true residual meets the tolerance, on the device too
    limit = 1e-10 * np.linalg.norm(B, axis=1) if tolerance_type == "relative" else np.full(N, 1e-9)
    true = np.array([np.linalg.norm(b - A @ x) for A, b, x in zip(matrices, B, X_dev)])
    assert (true[log_dev.converged] <= limit[log_dev.converged] * (1 + 1e-6)).all()


def test_partial_layout_places_what_fits(ocl):
    dev = device(ocl, "gpu_partial", 49, arrays=3)
    plan = batch_solver.plan(dev.info, 11, 49, [("p", 49, True), ("ap", 49, True), ("r", 49, True), ("z", 49, True),
                                                ("xv", 49, False), ("a_vals", 200, False)], 8)
    assert plan.local == {"p", "ap", "r"} and plan.global_entries == 49 and plan.groups == 8
    assert plan.work_group == 64
    cpu = batch_solver.plan(device(ocl, "cpu").info, 11, 49, [("p", 49, True)], 8)
    assert cpu.work_group == 1 and cpu.groups == 11


def test_float32_and_linalg_on_the_device(ref, ocl, rng):
    matrices = items(rng, 5, 6, "spd")
    B = rng.standard_normal((5, 36)).astype(np.float32)
    X_ref, info_ref = batched_cg(matrices, B, rtol=1e-5, M="jacobi", executor=ref)
    X_dev, info_dev = batched_cg([m.astype(np.float32) for m in matrices], B, rtol=1e-5, M="jacobi", executor=ocl)
    assert X_dev.dtype == np.float32 and (info_dev == 0).all() and (info_ref == 0).all()
    np.testing.assert_allclose(X_dev, X_ref, rtol=1e-3, atol=1e-3 * np.abs(X_ref).max())


def test_single_system_door_in_the_gpu_layout(ocl):
    # a batch of one on a GPU takes up to 1024 work-items: here 512 for 300 rows, some without a row
    from ginkpy.core.solver.small_system import solve_single
    dev = device(ocl, "gpu")
    S = poisson_2d(18)[:300, :300].tocsr()  # SPD: a principal submatrix
    A = gk.matrix.Csr.from_scipy(dev, S)
    b = gk.matrix.Dense.from_numpy(dev, np.ones(300))
    x = gk.matrix.Dense.zeros(dev, (300, 1))
    result = solve_single("cg", A, b, x, 1000, 1e-10)
    assert result.stop_reasons == [CONVERGED] and result.residual_norm[0] <= 1e-10
    assert np.linalg.norm(np.ones(300) - S @ x.to_numpy()[:, 0]) <= 1e-10
