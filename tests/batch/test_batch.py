"""gk.batch on the reference executor (and the API on both): batch matrices and MultiVector,
hand-checked batched solves of 2 x 2 and 3 x 3 systems, stop reasons, the batched solve
against the single-system solver, gk.linalg.batched_*, the single-system door, bad input."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from ginkpy.core.solver.small_system import solve_single
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.linalg import batched_bicgstab, batched_cg, batched_gmres
from conftest import batch_systems, taken_for
from ginkpy.problems import convection_diffusion_2d, poisson_2d

CONVERGED, LIMIT, BREAKDOWN, DIVERGED = (StopReason.CONVERGED, StopReason.ITERATION_LIMIT, StopReason.BREAKDOWN,
                                         StopReason.DIVERGED)
SOLVERS = ["Cg", "Bicgstab", "Gmres"]


cells = batch_systems


def batch_solve(exec, name, matrices, B, X0=None, tolerance=1e-10, tolerance_type="relative", max_iterations=200,
                block_size=None, fmt="csr", **params):
    """Solve with gk.batch.solver.<name> on ``exec``: returns X (N, n) and the BatchConvergence logger."""
    A = gk.batch.matrix.Csr.from_scipy(exec, matrices)
    if fmt == "ell":
        A = gk.batch.matrix.Ell.from_csr(A)
    elif fmt == "dense":
        A = gk.batch.matrix.Dense.from_numpy(exec, [m.toarray() for m in matrices])
    p = (getattr(gk.batch.solver, name).build().with_max_iterations(max_iterations).with_tolerance(tolerance)
         .with_tolerance_type(tolerance_type))
    if block_size is not None:
        p = p.with_preconditioner(gk.batch.preconditioner.Jacobi.build().with_max_block_size(block_size))
    for key, value in params.items():
        getattr(p, f"with_{key}")(value)
    solver = p.on(exec).generate(A)
    logger = gk.batch.log.BatchConvergence()
    solver.add_logger(logger)
    x = gk.batch.MultiVector.from_numpy(exec, np.zeros_like(B) if X0 is None else X0)
    solver.apply(gk.batch.MultiVector.from_numpy(exec, B), x)
    return x.to_numpy(), logger


# -- batch matrices and MultiVector --------------------------------------------------------------

def test_multivector_keeps_the_shape_it_was_built_from(exec, rng):
    for shape in [(3, 5), (3, 5, 2)]:
        V = rng.standard_normal(shape)
        mv = gk.batch.MultiVector.from_numpy(exec, V)
        assert mv.num_batch_items == 3 and mv.common_size == (5, shape[2] if len(shape) == 3 else 1)
        np.testing.assert_array_equal(mv.to_numpy(), V)
        assert gk.batch.MultiVector.zeros(exec, shape).to_numpy().shape == shape


def test_formats_round_trip_and_apply(exec, rng):
    # SpMV by hand: two 2 x 2 items of one pattern
    items = [sp.csr_matrix([[2.0, 1.0], [0.0, 3.0]]), sp.csr_matrix([[4.0, -1.0], [0.0, 0.5]])]
    b = gk.batch.MultiVector.from_numpy(exec, np.array([[1.0, 2.0], [3.0, 4.0]]))
    expected = np.array([[4.0, 6.0], [8.0, 2.0]])
    csr = gk.batch.matrix.Csr.from_scipy(exec, items)
    for A in (csr, gk.batch.matrix.Ell.from_csr(csr),
              gk.batch.matrix.Dense.from_numpy(exec, np.stack([m.toarray() for m in items]))):
        x = gk.batch.MultiVector.zeros(exec, (2, 2))
        np.testing.assert_array_equal(A.apply(b, x).to_numpy(), expected)
        for got, want in zip(A.to_scipy(), items):
            np.testing.assert_array_equal(got.toarray(), want.toarray())
        assert A.shape == (2, 2, 2)


def test_from_pattern_follows_the_patterns_own_order(ref):
    # a pattern with unsorted columns: the values follow its stored order
    pattern = sp.csr_matrix((np.ones(3), np.array([1, 0, 1]), np.array([0, 2, 3])), shape=(2, 2))
    A = gk.batch.matrix.Csr.from_pattern(ref, pattern, np.array([[5.0, 6.0, 7.0], [1.0, 2.0, 3.0]]))
    np.testing.assert_array_equal(A.to_scipy()[0].toarray(), [[6.0, 5.0], [0.0, 7.0]])
    np.testing.assert_array_equal(A.to_scipy()[1].toarray(), [[2.0, 1.0], [0.0, 3.0]])


def test_different_patterns_name_the_item_and_how(ref):
    a = sp.csr_matrix(np.array([[2.0, 1.0], [1.0, 2.0]]))
    with pytest.raises(ValueError, match=r"item 2 is 3 x 3 where item 0 is 2 x 2"):
        gk.batch.matrix.Csr.from_scipy(ref, [a, a, sp.eye(3)])
    with pytest.raises(ValueError, match=r"item 1 stores 2 entries where item 0 stores 4: row 0 stores columns \[0\] "
                                         r"where item 0 stores \[0, 1\]"):
        gk.batch.matrix.Csr.from_scipy(ref, [a, sp.eye(2, format="csr")])
    with pytest.raises(ValueError, match=r"item 1 stores entries at other positions than item 0: row 1 stores "
                                         r"columns \[0\] where item 0 stores \[1\]"):
        gk.batch.matrix.Csr.from_scipy(ref, [sp.csr_matrix([[1.0, 0], [0, 1.0]]), sp.csr_matrix([[1.0, 0], [1.0, 0]])])


def test_a_list_compares_index_arrays_by_value(ref):
    # item 1: int64 index arrays, its indices a strided view; item 2: each row's columns in reverse order
    a = sp.csr_matrix(np.array([[2.0, 1.0], [1.0, 2.0]]))
    b = sp.csr_matrix(3 * a)
    b.indices, b.indptr = np.repeat(a.indices.astype(np.int64), 2)[::2], a.indptr.astype(np.int64)
    c = sp.csr_matrix((np.array([5.0, 4.0, 7.0, 6.0]), np.array([1, 0, 1, 0], np.int32), a.indptr), shape=(2, 2))
    got = [m.toarray() for m in gk.batch.matrix.Csr.from_scipy(ref, [a, b, c]).to_scipy()]
    np.testing.assert_allclose(np.stack(got), [a.toarray(), 3 * a.toarray(), [[4.0, 5.0], [6.0, 7.0]]], rtol=1e-15)


def test_nan_names_the_item(ref):
    a = sp.csr_matrix(np.array([[2.0, 1.0], [1.0, 2.0]]))
    bad = a.copy()
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"item 2 has a NaN or infinite value at \(1, 0\)"):
        gk.batch.matrix.Csr.from_scipy(ref, [a, a, bad])
    values = np.ones((3, 4))
    values[1, 3] = np.inf
    with pytest.raises(ValueError, match=r"item 1 has a NaN or infinite value at \(1, 1\)"):
        gk.batch.matrix.Csr.from_pattern(ref, a, values)
    dense = np.ones((2, 3, 3))
    dense[1, 2, 0] = np.nan
    with pytest.raises(ValueError, match=r"item 1 has a NaN or infinite value at \(2, 0\)"):
        gk.batch.matrix.Dense.from_numpy(ref, dense)


@pytest.mark.parametrize("where", ["reference", "cpu", pytest.param("gpu", marks=pytest.mark.slow)])
def test_every_chunk_checked_finite(request, where, monkeypatch):
    # where the executor's memory is the host's, each chunk of the gather is checked there (one sum,
    # the exact test where it is not finite); a GPU (the device layout's choices) checks by a
    # kernel: both name the first bad item, in any chunk, and take huge finite values
    from ginkpy.core.batch.matrix import batch_pattern
    exec = request.getfixturevalue("ref") if where == "reference" else taken_for(request.getfixturevalue("ocl"), where)
    monkeypatch.setattr(batch_pattern, "CHUNK_BYTES", 64)  # 2 items of 4 values a chunk
    monkeypatch.setattr("ginkpy.opencl.executor.PIPELINE_BYTES", 64)  # a GPU's copies: as many chunks
    a = sp.csr_matrix(np.array([[2.0, 1.0], [1.0, 2.0]]))
    items = [a * (i + 1) for i in range(7)]
    huge = sp.csr_matrix(np.array([[1e308, 1e308], [1e308, 1e308]]))  # finite, their sum is not
    np.testing.assert_array_equal(gk.batch.matrix.Csr.from_scipy(exec, [*items, huge]).to_scipy()[7].toarray(),
                                  huge.toarray())
    for bad_item, value in [(0, np.nan), (5, np.inf), (6, -np.inf)]:
        bad = items[bad_item].copy()
        bad.data[2] = value
        with pytest.raises(ValueError, match=rf"item {bad_item} has a NaN or infinite value at \(1, 0\)"):
            gk.batch.matrix.Csr.from_scipy(exec, [*items[:bad_item], bad, *items[bad_item + 1:]])
    values = np.ones((5, 4))
    values[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"item 3 has a NaN or infinite value at \(0, 1\)"):
        gk.batch.matrix.Csr.from_pattern(exec, a, values)
    assert exec.device_choices().checks_values_on_host == (exec.device_choices().kind != "gpu")
    shuffled = sp.csr_matrix((items[3].data[[1, 0, 3, 2]], items[3].indices[[1, 0, 3, 2]], items[3].indptr),
                             shape=a.shape)  # another order: found by the comparison, the values written again
    got = gk.batch.matrix.Csr.from_scipy(exec, [*items[:3], shuffled, *items[4:]]).to_scipy()
    np.testing.assert_array_equal(np.stack([m.toarray() for m in got]), np.stack([m.toarray() for m in items]))


def test_empty_batches_and_wrong_shapes(ref):
    a = sp.eye(3, format="csr")
    with pytest.raises(ValueError, match="at least one item"):
        gk.batch.matrix.Csr.from_scipy(ref, [])
    with pytest.raises(ValueError, match="at least one item"):
        gk.batch.matrix.Csr.from_pattern(ref, a, np.zeros((0, 3)))
    with pytest.raises(ValueError, match="at least one item"):
        gk.batch.matrix.Dense.from_numpy(ref, np.zeros((0, 3, 3)))
    with pytest.raises(ValueError, match=r"must have shape \(N, 3\)"):
        gk.batch.matrix.Csr.from_pattern(ref, a, np.ones((2, 4)))
    # a pattern storing (0, 0) twice: its values are summed, as SciPy does
    twice = gk.batch.matrix.Csr.from_pattern(ref, sp.csr_matrix((np.ones(2), [0, 0], [0, 2, 2]), shape=(2, 2)),
                                             np.array([[1.0, 2.0]]))
    np.testing.assert_array_equal(twice.to_scipy()[0].toarray(), [[3.0, 0.0], [0.0, 0.0]])
    with pytest.raises(TypeError, match="list of SciPy sparse"):
        gk.batch.matrix.Csr.from_scipy(ref, a)
    A = gk.batch.matrix.Csr.from_scipy(ref, [a, a])
    with pytest.raises(ValueError, match="operator has 2 items but b has 3"):
        A.apply(gk.batch.MultiVector.zeros(ref, (3, 3)), gk.batch.MultiVector.zeros(ref, (2, 3)))
    with pytest.raises(ValueError, match="b has 4 rows per item"):
        A.apply(gk.batch.MultiVector.zeros(ref, (2, 4)), gk.batch.MultiVector.zeros(ref, (2, 3)))
    with pytest.raises(TypeError, match="gk.batch.MultiVector"):
        A.apply(np.zeros((2, 3)), gk.batch.MultiVector.zeros(ref, (2, 3)))
    with pytest.raises(ValueError, match=r"shape \(N, n\)"):
        gk.batch.MultiVector.from_numpy(ref, np.zeros(3))


def test_solver_input_checks(ref):
    square = gk.batch.matrix.Csr.from_scipy(ref, [sp.eye(3, format="csr")] * 2)
    with pytest.raises(ValueError, match="must be square, but its items are 2 x 3"):
        gk.batch.solver.Cg.build().on(ref).generate(gk.batch.matrix.Csr.from_scipy(ref, [sp.eye(2, 3)] * 2))
    with pytest.raises(TypeError, match="must be a batch matrix"):
        gk.batch.solver.Cg.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, sp.eye(3)))
    with pytest.raises(ValueError, match="tolerance_type"):
        gk.batch.solver.Cg.build().with_tolerance_type("rel")
    with pytest.raises(ValueError, match="max_iterations"):
        gk.batch.solver.Bicgstab.build().with_max_iterations(-1)
    with pytest.raises(ValueError, match="krylov_dim"):
        gk.batch.solver.Gmres.build().with_krylov_dim(0)
    with pytest.raises(ValueError, match="max_block_size"):
        gk.batch.preconditioner.Jacobi.build().with_max_block_size(33)
    with pytest.raises(TypeError, match="gk.batch.preconditioner.Jacobi"):
        gk.batch.solver.Cg.build().with_preconditioner(gk.preconditioner.Jacobi.build()).on(ref).generate(square)
    solver = gk.batch.solver.Cg.build().on(ref).generate(square)
    with pytest.raises(ValueError, match="one right-hand side per item"):
        solver.apply(gk.batch.MultiVector.zeros(ref, (2, 3, 2)), gk.batch.MultiVector.zeros(ref, (2, 3, 2)))


def test_jacobi_names_the_item_and_row(ref):
    good = sp.csr_matrix(np.array([[2.0, 1.0], [1.0, 2.0]]))
    zero = good.copy()
    zero[1, 1] = 0
    A = gk.batch.matrix.Csr.from_scipy(ref, [good, zero])
    with pytest.raises(ValueError, match="item 1 has a zero diagonal entry in row 1"):
        gk.batch.preconditioner.Jacobi.build().with_max_block_size(1).on(ref).generate(A)
    singular = sp.csr_matrix(np.array([[1.0, 1.0], [1.0, 1.0]]))
    A = gk.batch.matrix.Csr.from_scipy(ref, [good, good, singular])
    with pytest.raises(ValueError, match=r"block 0 \(rows 0 to 1\) of item 2 is singular"):
        gk.batch.preconditioner.Jacobi.build().with_max_block_size(2).on(ref).generate(A)


def test_jacobi_inverts_each_items_blocks(exec):
    # rows 0 and 1 share a pattern: blocks rows 0-1 and row 2. Item 0: diag(2, 4, 5) (explicit
    # zeros in the block); item 1: the block [[2, 1], [1, 1]] (inverse [[1, -1], [-1, 2]]) and 5
    pattern = sp.csr_matrix(np.array([[1.0, 1.0, 0], [1.0, 1.0, 0], [0, 0, 1.0]]))
    A = gk.batch.matrix.Csr.from_pattern(exec, pattern, np.array([[2.0, 0, 0, 4.0, 5.0], [2.0, 1.0, 1.0, 1.0, 5.0]]))
    b = gk.batch.MultiVector.from_numpy(exec, np.array([[2.0, 4.0, 5.0], [1.0, 1.0, 10.0]]))
    M = gk.batch.preconditioner.Jacobi.build().with_max_block_size(2).on(exec).generate(A)
    assert M.num_blocks == 2
    x = M.apply(b, gk.batch.MultiVector.zeros(exec, (2, 3))).to_numpy()
    np.testing.assert_allclose(x, [[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]], atol=1e-15)


# -- hand-checked batched solves (reference) -------------------------------------------------------

@pytest.mark.parametrize("name", SOLVERS)
def test_two_by_two_systems_solve_exactly(ref, name):
    # 2 x 2 SPD systems: CG and GMRES are exact after 2 steps, BiCGStab after 2 iterations at most
    items = [sp.csr_matrix([[4.0, 1.0], [1.0, 3.0]]), sp.csr_matrix([[2.0, -1.0], [-1.0, 2.0]])]
    B = np.array([[1.0, 2.0], [3.0, 0.0]])
    X, log = batch_solve(ref, name, items, B, tolerance=1e-14)
    np.testing.assert_allclose(X, [[1 / 11, 7 / 11], [2.0, 1.0]], rtol=1e-13)
    assert log.has_converged and (log.num_iterations <= 2).all()
    assert (log.residual_norm <= 1e-14 * np.linalg.norm(B, axis=1)).all()


@pytest.mark.parametrize("name", SOLVERS)
def test_jacobi_solves_diagonal_systems_in_one_iteration(ref, name):
    # 3 x 3 diagonal systems: M = A^-1, so x = D^-1 b after one iteration
    items = [sp.diags([2.0, 4.0, 8.0], format="csr"), sp.diags([1.0, 5.0, 10.0], format="csr")]
    B = np.array([[2.0, 4.0, 8.0], [3.0, 5.0, 20.0]])
    X, log = batch_solve(ref, name, items, B, tolerance=1e-14, block_size=1)
    np.testing.assert_allclose(X, [[1.0, 1.0, 1.0], [3.0, 1.0, 2.0]], rtol=1e-15)
    np.testing.assert_array_equal(log.num_iterations, [1, 1])


@pytest.mark.parametrize("name", SOLVERS)
def test_each_item_stops_on_its_own(ref, name):
    # item 0 converges, item 1 has b = 0 (converged at once, x = 0), item 2 breaks down at once:
    # CG's p . A p = 0 ([[1, 0], [0, -1]], b = (1, 1)), BiCGStab's r_hat . v = 0 and GMRES's
    # singular Hessenberg matrix (both for [[0, 1], [-1, 0]] with b = (1, 0) ... and [[1, 0], [0, 0]])
    def full(m):  # every entry stored (explicit zeros): one pattern for all items
        return sp.csr_matrix((np.ravel(m), np.tile([0, 1], 2), [0, 2, 4]), shape=(2, 2))
    good = full([[4.0, 1.0], [1.0, 3.0]])
    bad = {"Cg": ([[1.0, 0.0], [0.0, -1.0]], [1.0, 1.0]), "Bicgstab": ([[0.0, 1.0], [-1.0, 0.0]], [1.0, 0.0]),
           "Gmres": ([[1.0, 0.0], [0.0, 0.0]], [0.0, 1.0])}[name]
    items = [good, good, full(bad[0])]
    B = np.array([[1.0, 2.0], [0.0, 0.0], bad[1]])
    X, log = batch_solve(ref, name, items, B, tolerance=1e-12)
    assert log.stop_reasons == [CONVERGED, CONVERGED, BREAKDOWN]
    np.testing.assert_array_equal(log.num_iterations[1:], [0, 0 if name != "Gmres" else 1])
    np.testing.assert_array_equal(X[1:], 0)
    assert log.converged.tolist() == [True, True, False] and not log.has_converged


@pytest.mark.parametrize("name", SOLVERS)
def test_absolute_and_relative_tolerance(ref, rng, name):
    items = cells(rng, 2, 3)
    B = np.stack([1e-6 * np.ones(9), np.ones(9)])
    # absolute 1e-4: item 0 (||b|| = 3e-6) has converged at x = 0, item 1 iterates
    X, log = batch_solve(ref, name, items, B, tolerance=1e-4, tolerance_type="absolute")
    assert log.has_converged and log.num_iterations[0] == 0 and log.num_iterations[1] > 0
    assert (log.residual_norm <= 1e-4).all()
    # relative 1e-4: both iterate to 1e-4 ||b_i||
    X, log = batch_solve(ref, name, items, B, tolerance=1e-4, tolerance_type="relative")
    assert log.has_converged and (log.num_iterations > 0).all()
    assert (log.residual_norm <= 1e-4 * np.linalg.norm(B, axis=1)).all()


@pytest.mark.parametrize("name", SOLVERS)
def test_iteration_limit_and_true_residual(ref, rng, name):
    items = cells(rng, 3, 5, kind="spd" if name == "Cg" else "general")
    B = rng.standard_normal((3, 25))
    X, log = batch_solve(ref, name, items, B, max_iterations=2)
    assert log.stop_reasons == [LIMIT] * 3 and (log.num_iterations == 2).all()
    X, log = batch_solve(ref, name, items, B, tolerance=1e-9, block_size=4)
    assert log.has_converged
    true = np.array([np.linalg.norm(b - A @ x) for A, b, x in zip(items, B, X)])
    np.testing.assert_allclose(log.residual_norm, true, rtol=1e-6)
    assert (true <= 1e-9 * np.linalg.norm(B, axis=1)).all()


@pytest.mark.parametrize("name", SOLVERS)
def test_overflowing_steps_leave_the_last_finite_iterate(ref, name):
    # alpha = 1e300: x + alpha p would overflow; item 0 stops (diverged) with x finite
    tiny = sp.diags([1e-300, 1e-300], format="csr")
    X, log = batch_solve(ref, name, [tiny, sp.diags([2.0, 2.0], format="csr")], np.array([[1e10, 1e10], [2.0, 2.0]]))
    assert log.stop_reasons[0] in (DIVERGED, BREAKDOWN) and log.stop_reasons[1] == CONVERGED
    assert np.isfinite(X).all()
    np.testing.assert_allclose(X[1], [1.0, 1.0])


def test_nan_in_b_names_the_item(ref):
    A = gk.batch.matrix.Csr.from_scipy(ref, [sp.eye(2, format="csr")] * 3)
    solver = gk.batch.solver.Cg.build().on(ref).generate(A)
    B = np.ones((3, 2))
    B[2, 1] = np.nan
    x = gk.batch.MultiVector.zeros(ref, (3, 2))
    with pytest.raises(ValueError, match="item 2: the right-hand side b or the initial guess x contains NaN"):
        solver.apply(gk.batch.MultiVector.from_numpy(ref, B), x)
    assert np.isfinite(x.to_numpy()).all()


@pytest.mark.parametrize("name, kind, criteria_solver", [("Cg", "spd", "Cg"), ("Bicgstab", "general", "Bicgstab"),
                                                          ("Gmres", "general", "Gmres")])
def test_batched_agrees_with_the_single_system_solver(ref, rng, name, kind, criteria_solver):
    items = cells(rng, 3, 5, kind)
    B = rng.standard_normal((3, 25))
    X, log = batch_solve(ref, name, items, B, tolerance=1e-10, block_size=1, krylov_dim=30) if name == "Gmres" else \
        batch_solve(ref, name, items, B, tolerance=1e-10, block_size=1)
    for A, b, x in zip(items, B, X):
        params = (getattr(gk.solver, criteria_solver).build()
                  .with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
                  .with_criteria(gk.stop.Iteration.build().with_max_iters(200),
                                 gk.stop.ResidualNorm.build().with_reduction_factor(1e-10)))
        single = params.on(ref).generate(gk.matrix.Csr.from_scipy(ref, A))
        xs = gk.matrix.Dense.zeros(ref, (25, 1))
        single.apply(gk.matrix.Dense.from_numpy(ref, b), xs)
        np.testing.assert_allclose(x, xs.to_numpy()[:, 0], rtol=1e-7, atol=1e-7 * np.abs(x).max())
    assert log.has_converged


# -- gk.linalg.batched_* ---------------------------------------------------------------------------

@pytest.mark.parametrize("function, kind", [(batched_cg, "spd"), (batched_bicgstab, "general"),
                                            (batched_gmres, "general")])
def test_linalg_matches_scipy_per_system(ref, rng, function, kind):
    items = cells(rng, 4, 5, kind)
    B = rng.standard_normal((4, 25))
    B[1] = 0
    X, info = function(items, B, rtol=1e-8, M="jacobi", executor=ref)
    np.testing.assert_array_equal(info, 0)
    np.testing.assert_array_equal(X[1], 0)
    scipy_solver = {batched_cg: spla.cg, batched_bicgstab: spla.bicgstab, batched_gmres: spla.gmres}[function]
    for i in (0, 2, 3):
        assert np.linalg.norm(B[i] - items[i] @ X[i]) <= 1e-8 * np.linalg.norm(B[i])
        xs, _ = scipy_solver(items[i], B[i], rtol=1e-12)
        np.testing.assert_allclose(X[i], xs, rtol=1e-5, atol=1e-6 * np.abs(xs).max())
    # the same from (pattern, values), float32, with atol, a block Jacobi and an iteration limit
    values = np.stack([m.data for m in items])
    X, info = function((items[0], values.astype(np.float32)), B.astype(np.float32), atol=1e-3, M="block_jacobi",
                       executor=ref)
    assert X.dtype == np.float32 and (info == 0).all()
    X, info = function(items, B, rtol=1e-12, maxiter=1, executor=ref,
                       **({"restart": 2} if function is batched_gmres else {}))
    np.testing.assert_array_equal(info, [1, 0, 1, 1])


def _forms(items):
    """The same systems in every input form of gk.linalg.batched_*."""
    P = items[0]
    values = np.stack([m.data for m in items])
    dense = np.stack([m.toarray() for m in items])
    # item 1 stored with its columns in another order (same entries), item 2 as CSC, others CSR
    shuffled = items[1].copy()
    order = np.concatenate([np.arange(a, b)[::-1] for a, b in zip(shuffled.indptr[:-1], shuffled.indptr[1:])])
    shuffled = sp.csr_matrix((shuffled.data[order], shuffled.indices[order], shuffled.indptr), shape=P.shape)
    shuffled.has_sorted_indices = False
    return {"list of CSR": items, "list of CSC": [m.tocsc() for m in items],
            "list of COO": [m.tocoo() for m in items], "reordered item": [items[0], shuffled, *items[2:]],
            "mixed formats": [items[0], items[1].tocoo(), items[2].tolil(), *items[3:]],
            "3-D array": dense, "list of 2-D arrays": list(dense), "(pattern, values)": (P, values),
            "(indptr, indices, values)": (P.indptr, P.indices, values),
            "(data, indices, indptr)": (values, P.indices, P.indptr)}


@pytest.mark.parametrize("form", ["list of CSR", "list of CSC", "list of COO", "reordered item", "mixed formats",
                                  "3-D array", "list of 2-D arrays", "(pattern, values)",
                                  "(indptr, indices, values)", "(data, indices, indptr)"])
def test_every_input_form_matches_scipy_per_system(exec, rng, form):
    items = cells(rng, 5, 4)
    B = rng.standard_normal((5, 16))
    X, info = batched_cg(_forms(items)[form], B, rtol=1e-10, M="jacobi", executor=exec)
    np.testing.assert_array_equal(info, 0)
    for i, A in enumerate(items):
        np.testing.assert_allclose(X[i], spla.spsolve(A.tocsc(), B[i]), rtol=1e-7, atol=1e-9)


def test_batch_from_a_list_of_one_pattern(exec, rng):
    items = cells(rng, 4, 3)
    # item 0 stores (0, 0) twice: summed in every item's values, as SciPy does
    first = items[0].tocoo()
    twice = sp.coo_matrix((np.r_[first.data, 1.0], (np.r_[first.row, 0], np.r_[first.col, 0])), shape=first.shape)
    A = gk.batch.matrix.Csr.from_scipy(exec, [twice, *[m.tocoo() for m in items[1:]]])
    got = A.to_scipy()
    expected = [items[0] + sp.csr_matrix(([1.0], ([0], [0])), shape=first.shape), *items[1:]]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.toarray(), e.toarray(), rtol=1e-15)
    # a 3-D array: the pattern is every position nonzero in some item
    dense = np.zeros((3, 4, 4))
    dense[0, 0, 1] = dense[1, 2, 3] = 1.0
    dense[:, range(4), range(4)] = 2.0
    A = gk.batch.matrix.Csr.from_scipy(exec, dense)
    assert A.nnz == 6
    np.testing.assert_array_equal(np.stack([m.toarray() for m in A.to_scipy()]), dense)
    for fmt in (gk.batch.matrix.Ell, gk.batch.matrix.Dense):
        B = fmt.from_scipy(exec, dense) if fmt is gk.batch.matrix.Ell else fmt.from_numpy(exec, items)
        want = dense if fmt is gk.batch.matrix.Ell else np.stack([m.toarray() for m in items])
        np.testing.assert_array_equal(np.stack([m.toarray() for m in B.to_scipy()]), want)


def test_a_differing_pattern_names_the_system(ref, rng):
    items = cells(rng, 6, 3)
    other = items[3].tolil()
    other[0, 8] = 1.0  # one more entry
    with pytest.raises(ValueError, match=r"item 3 stores 34 entries where item 0 stores 33: row 0 stores columns "
                                         r"\[0, 1, 3, 8\] where item 0 stores \[0, 1, 3\]"):
        batched_cg([*items[:3], other.tocsr(), *items[4:]], np.ones((6, 9)), executor=ref)
    with pytest.raises(ValueError, match=r"item 5 is 4 x 4 where item 0 is 9 x 9"):
        gk.batch.matrix.Csr.from_scipy(ref, [*items[:5], sp.eye(4, format="csr")])
    with pytest.raises(TypeError, match="item 2 must be a SciPy sparse matrix or a 2-D NumPy array, not str"):
        gk.batch.matrix.Csr.from_scipy(ref, [items[0], items[1], "A"])
    with pytest.raises(ValueError, match=r"col_idxs must lie in \[0, 9\)"):
        batched_cg((items[0].indptr, items[0].indices + 1, np.ones((2, 33))), np.ones((2, 9)), executor=ref)


def test_pattern_checked_while_the_values_travel(exec, rng):
    # the index arrays are compared after the values left for the executor: items made on item 0's
    # arrays, an item storing the same entries in another order (found then: the values written
    # again), and an item storing as many entries elsewhere (an error naming it)
    items = cells(rng, 5, 3)
    P = items[0]
    shared = [sp.csr_matrix((m.data, P.indices, P.indptr), shape=P.shape) for m in items]
    reversed_rows = np.concatenate([np.arange(a, b)[::-1] for a, b in zip(P.indptr[:-1], P.indptr[1:])])
    shuffled = sp.csr_matrix((items[3].data[reversed_rows], P.indices[reversed_rows], P.indptr.copy()), shape=P.shape)
    B = rng.standard_normal((5, P.shape[0]))
    for systems in (shared, [*shared[:3], shuffled, items[4]]):
        X, info = batched_cg(systems, B, rtol=1e-12, M="jacobi", executor=exec)
        np.testing.assert_array_equal(info, 0)
        for i, A in enumerate(items):
            np.testing.assert_allclose(X[i], spla.spsolve(A.tocsc(), B[i]), rtol=1e-8, atol=1e-10)
    moved = items[2].tolil()
    moved[0, 1], moved[0, 8] = 0.0, 1.0  # (0, 1) gone, (0, 8) new: as many entries, one elsewhere
    moved = moved.tocsr()
    moved.eliminate_zeros()
    assert moved.nnz == P.nnz
    with pytest.raises(ValueError, match=r"item 2 stores entries at other positions than item 0: row 0 stores "
                                         r"columns \[0, 3, 8\] where item 0 stores \[0, 1, 3\]"):
        batched_cg([*shared[:2], moved, *shared[3:]], B, executor=exec)


def test_linalg_checks_the_pattern_beside_the_solve(exec, monkeypatch):
    # gk.linalg compares a list's index arrays while the device solves (after the solve is
    # enqueued); values uploaded in an item's own order that break the Jacobi (a stored zero in
    # the diagonal's place) still give the right answer, and a differing pattern's error comes
    # before the error its misplaced values cause
    from ginkpy.core.batch.solver.batch_solver import BatchSolver
    a = sp.csr_matrix(np.array([[4.0, 1.0, 0.0], [1.0, 4.0, 1.0], [0.0, 1.0, 4.0]]))
    order = [1, 0, 2, 3, 4, 6, 5]  # row 0 and row 2 each stored backwards
    rows = np.repeat(np.arange(3), np.diff(a.indptr))
    diagonal = sp.csr_matrix((np.where(a.indices == rows, 4.0, 0.0), a.indices.copy(), a.indptr.copy()),
                             shape=a.shape)  # 4 I stored in a's pattern: zeros off the diagonal
    backwards = sp.csr_matrix((diagonal.data[order], diagonal.indices[order], a.indptr.copy()), shape=a.shape)
    calls = []
    solve = BatchSolver.apply_with_tolerances

    def spy(self, *args, **kwargs):
        calls.append(args[5] if len(args) > 5 else kwargs.get("while_solving"))
        return solve(self, *args, **kwargs)
    monkeypatch.setattr(BatchSolver, "apply_with_tolerances", spy)
    B = np.ones((3, 3))
    X, info = batched_cg([a, backwards, a], B, rtol=1e-12, M="jacobi", executor=exec)
    np.testing.assert_array_equal(info, 0)
    np.testing.assert_allclose(X[1], B[1] / 4.0, rtol=1e-12)
    np.testing.assert_allclose(X[0], np.linalg.solve(a.toarray(), B[0]), rtol=1e-10)
    assert calls == [None]  # the first try stopped at the Jacobi, the check found the order: solved again
    batched_cg([a, diagonal, a], B, M="jacobi", executor=exec)
    assert calls[-1] is not None  # a list's pattern checked beside the solve
    moved = sp.csr_matrix((np.array([0.0, 1.0, 1.0, 4.0, 1.0, 1.0, 4.0]), np.array([0, 2, 0, 1, 2, 1, 2]),
                           a.indptr.copy()), shape=a.shape)  # (0, 2) for (0, 1), and a zero diagonal
    with pytest.raises(ValueError, match=r"item 1 stores entries at other positions than item 0: row 0 stores "
                                         r"columns \[0, 2\] where item 0 stores \[0, 1\]"):
        batched_cg([a, moved, a], B, M="jacobi", executor=exec)


def test_value_type_from_the_values_b_and_x0(ref, rng):
    items = [m.astype(np.float32) for m in cells(rng, 3, 3)]
    B = rng.standard_normal((3, 9))
    assert batched_cg(items, B.astype(np.float32), rtol=1e-4, executor=ref)[0].dtype == np.float32
    assert batched_cg(items, B, rtol=1e-4, executor=ref)[0].dtype == np.float64
    assert batched_cg(items, B.astype(np.float32), np.zeros((3, 9)), rtol=1e-4, executor=ref)[0].dtype == np.float64
    assert batched_cg([m.astype(np.int64) for m in cells(rng, 2, 2)], np.ones((2, 4), np.int64),
                      executor=ref)[0].dtype == np.float64
    with pytest.raises(TypeError, match="B has value type float16"):
        batched_cg(items, B.astype(np.float16), executor=ref)


def test_upload_in_both_layouts(dev):
    # a CPU device maps the new buffer; a GPU copies from a page-locked staging buffer, reused
    for shape in [(3, 5), (1000, 7), (2, 3)]:
        host = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
        np.testing.assert_array_equal(dev.to_host(dev.upload(shape, np.float64, lambda out: np.copyto(out, host))),
                                      host)
    assert dev.upload((0, 4), np.float32, lambda out: None).shape == (0, 4)


@pytest.mark.parametrize("chunk_bytes", [None, 1, 64, 1 << 30])
def test_upload_in_chunks_of_rows(dev, ref, chunk_bytes):
    # each chunk filled once, in order, and (a GPU) copied as soon as it is filled
    for exec in (dev, ref):
        for shape in [(7, 3), (1000, 5), (1,), (0, 2)]:
            host = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
            starts = []

            def fill_rows(rows, start):
                starts.append(start)
                np.copyto(rows, host[start:start + rows.shape[0]])
            got = exec.to_host(exec.upload_rows(shape, np.float64, fill_rows, chunk_bytes))
            np.testing.assert_array_equal(got, host)
            assert starts == sorted(set(starts)) and (not host.size or starts[0] == 0)
            if chunk_bytes == 64 and host.size:
                assert len(starts) == -(-shape[0] // max(1, 64 // host[0:1].nbytes))


def test_linalg_bad_input(ref):
    a = sp.eye(3, format="csr")
    with pytest.raises(ValueError, match="at least one item"):
        batched_cg([], np.zeros((0, 3)), executor=ref)
    with pytest.raises(ValueError, match=r"B has shape \(2, 4\), but there are 2 systems of 3 x 3"):
        batched_cg([a, a], np.zeros((2, 4)), executor=ref)
    B = np.ones((2, 3))
    B[1, 0] = np.nan
    with pytest.raises(ValueError, match="B of system 1 contains NaN"):
        batched_cg([a, a], B, executor=ref)
    with pytest.raises(ValueError, match="each system must be square"):
        batched_gmres([sp.eye(2, 3)] * 2, np.ones((2, 2)), executor=ref)
    with pytest.raises(ValueError, match="unknown preconditioner 'ilut'"):
        batched_bicgstab([a, a], np.ones((2, 3)), M="ilut", executor=ref)
    with pytest.raises(ValueError, match="maxiter"):
        batched_cg([a, a], np.ones((2, 3)), maxiter=0, executor=ref)
    with pytest.raises(ValueError, match="rtol"):
        batched_cg([a, a], np.ones((2, 3)), rtol=-1.0, executor=ref)


# -- the single-system door --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_single_system_through_the_batch_kernel(exec, name):
    S = poisson_2d(9) if name == "cg" else convection_diffusion_2d(9)
    A = gk.matrix.Csr.from_scipy(exec, S)
    b = gk.matrix.Dense.from_numpy(exec, np.ones(81))
    jacobi = gk.preconditioner.Jacobi.build().with_max_block_size(4).on(exec).generate(A)
    x = gk.matrix.Dense.zeros(exec, (81, 1))
    result = solve_single(name, A, b, x, 500, 1e-9, jacobi, krylov_dim=30)
    assert result.stop_reasons == [CONVERGED] and result.residual_norm[0] <= 1e-9
    assert result.method == "batch of one"
    x = x.to_numpy()[:, 0]
    assert np.linalg.norm(np.ones(81) - S @ x) <= 1e-9
    solver = getattr(gk.solver, {"cg": "Cg", "bicgstab": "Bicgstab", "gmres": "Gmres"}[name]).build() \
        .with_preconditioner(jacobi).with_criteria(gk.stop.Iteration.build().with_max_iters(500),
                                                   gk.stop.ResidualNorm.build().with_baseline("absolute")
                                                   .with_reduction_factor(1e-9)).on(exec).generate(A)
    xs = gk.matrix.Dense.zeros(exec, (81, 1))
    solver.apply(b, xs)
    np.testing.assert_allclose(x, xs.to_numpy()[:, 0], rtol=1e-6)
    x2 = gk.matrix.Dense.zeros(exec, (81, 1))
    limited = solve_single(name, A, b, x2, 3, 1e-9)
    assert limited.stop_reasons == [LIMIT] and limited.iterations[0] == 3
