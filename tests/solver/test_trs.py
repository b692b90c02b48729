"""LowerTrs / UpperTrs and the dense TRSV kernel.

Hand-checked tiny systems on both executors; reference-vs-device for every kernel on random
data larger than a work-group (sparse: thin levels batched into chains and wide levels launched
alone; dense: more rows than a block and a work-group); both executors against SciPy's
spsolve_triangular on random and real triangles; the "jacobi" algorithm (fixed sweeps) by hand,
against its twins and converging to the exact solve; the transposed solver.
"""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve_triangular

import ginkpy as gk
from conftest import assert_twins, matrix_path, tol, twin
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver import triangular as triangular_module
from ginkpy.core.solver.triangular import contraction_bound
from ginkpy.opencl.solver import triangular_kernels as ocl_trs

L3 = np.array([[2.0, 0, 0], [1, 4, 0], [0, 3, 5]])
U3 = np.array([[2.0, 1, 0], [0, 4, 3], [0, 0, 5]])


def _solve(exec, solver_type, matrix, b, unit=False, dense=False, dtype=np.float64):
    A = Dense.from_numpy(exec, matrix, dtype) if dense else gk.matrix.Csr.from_scipy(exec, matrix, dtype)
    solver = solver_type.build().with_unit_diagonal(unit).on(exec).generate(A)
    x = Dense.zeros(exec, np.atleast_2d(b.T).T.shape, dtype)
    return solver.apply(Dense.from_numpy(exec, b, dtype), x).to_numpy()


def _rel_err(x, expected):
    return np.linalg.norm(x - expected) / np.linalg.norm(expected)


# -- hand-checked -------------------------------------------------------------------------------
@pytest.mark.parametrize("dense", [False, True])
def test_hand_checked_lower_and_upper(exec, dense):
    # [2 0 0; 1 4 0; 0 3 5] x = [2 9 16]: x0 = 1, x1 = (9 - 1)/4 = 2, x2 = (16 - 6)/5 = 2
    x = _solve(exec, gk.solver.LowerTrs, L3, np.array([2.0, 9, 16]), dense=dense)
    np.testing.assert_allclose(x[:, 0], [1, 2, 2], rtol=1e-15)
    # [2 1 0; 0 4 3; 0 0 5] x = [4 14 10]: x2 = 2, x1 = (14 - 6)/4 = 2, x0 = (4 - 2)/2 = 1
    x = _solve(exec, gk.solver.UpperTrs, U3, np.array([4.0, 14, 10]), dense=dense)
    np.testing.assert_allclose(x[:, 0], [1, 2, 2], rtol=1e-15)


@pytest.mark.parametrize("dense", [False, True])
def test_unit_diagonal_ignores_stored_diagonal_and_other_triangle(exec, dense):
    # the full matrix L3 + U3 - diag: the upper part must be ignored by LowerTrs and vice versa;
    # unit diagonal: x0 = 2, x1 = 9 - 2 = 7, x2 = 16 - 21 = -5
    full = L3 + np.triu(U3, 1)
    b = np.array([[2.0, 4], [9, 14], [16, 10]])
    x = _solve(exec, gk.solver.LowerTrs, full, b, unit=True, dense=dense)
    np.testing.assert_allclose(x[:, 0], [2, 7, -5], rtol=1e-15)
    # upper, unit: x2 = 10, x1 = 14 - 30 = -16, x0 = 4 + 16 = 20
    x = _solve(exec, gk.solver.UpperTrs, full, b, unit=True, dense=dense)
    np.testing.assert_allclose(x[:, 1], [20, -16, 10], rtol=1e-15)
    # several right-hand sides: each column solved on its own (x_21 = 2 - 1.8 cancels: a CPU
    # device's substitution, which scales the row by 1 / a_22 first, rounds it to 1.4e-15)
    x = _solve(exec, gk.solver.LowerTrs, full, b, dense=dense)
    np.testing.assert_allclose(x, np.linalg.solve(L3, b), rtol=1e-14)


def test_advanced_apply(exec):
    A = gk.matrix.Csr.from_scipy(exec, sp.csr_matrix(L3))
    solver = gk.solver.LowerTrs.build().on(exec).generate(A)
    x = Dense.from_numpy(exec, np.ones(3))
    # x = 2 L^-1 b - x
    solver.apply(2.0, Dense.from_numpy(exec, np.array([2.0, 9, 16])), -1.0, x)
    np.testing.assert_allclose(x.to_numpy()[:, 0], [1, 3, 3], rtol=1e-15)


# -- errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dense", [False, True])
def test_zero_diagonal_is_refused_at_generate(exec, dense):
    singular = L3.copy()
    singular[1, 1] = 0.0  # explicit zero (sparse: also not stored after from_scipy of a dense array)
    A = Dense.from_numpy(exec, singular) if dense else gk.matrix.Csr.from_scipy(exec, singular)
    with pytest.raises(ValueError, match="row 1 is zero"):
        gk.solver.LowerTrs.build().on(exec).generate(A)
    with pytest.raises(ValueError, match="row 1 is zero"):
        gk.solver.UpperTrs.build().on(exec).generate(A)
    # with a unit diagonal the stored diagonal is not used
    x = gk.solver.LowerTrs.build().with_unit_diagonal(True).on(exec).generate(A).apply(
        Dense.from_numpy(exec, np.array([2.0, 9, 16])), Dense.zeros(exec, (3, 1)))
    np.testing.assert_allclose(x.to_numpy()[:, 0], [2, 7, -5], rtol=1e-15)


def test_explicitly_stored_zero_diagonal(exec):
    m = sp.csr_matrix((np.array([1.0, 0.0, 2.0, 3.0]), np.array([0, 1, 1, 2]), np.array([0, 1, 2, 4])),
                      shape=(3, 3))
    m.data[1] = 0.0  # the diagonal entry of row 1 is stored and zero
    with pytest.raises(ValueError, match="row 1"):
        gk.solver.UpperTrs.build().on(exec).generate(gk.matrix.Csr.from_scipy(exec, m))


def test_bad_parameters_and_matrices(ref):
    with pytest.raises(TypeError, match="unit_diagonal must be True or False"):
        gk.solver.LowerTrs.build().with_unit_diagonal("yes")
    with pytest.raises(ValueError, match="square"):
        gk.solver.LowerTrs.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, np.ones((2, 3))))
    with pytest.raises(TypeError, match="not Identity"):
        gk.solver.LowerTrs.build().on(ref).generate(gk.matrix.Identity(ref, (3, 3), np.float64))
    solver = gk.solver.LowerTrs.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, L3))
    with pytest.raises(ValueError, match="b has 4 rows"):
        solver.apply(Dense.zeros(ref, (4, 1)), Dense.zeros(ref, (3, 1)))


def test_empty_system(exec):
    A = gk.matrix.Csr.from_scipy(exec, sp.csr_matrix((0, 0)))
    x = gk.solver.LowerTrs.build().on(exec).generate(A).apply(Dense.zeros(exec, (0, 2)), Dense.zeros(exec, (0, 2)))
    assert x.shape == (0, 2)


# -- level structure (host analysis of the OpenCL schedule and the exact factorizations) ----------
def test_levels_and_schedule(ref):
    # rows 0 and 2 need nothing, row 1 needs 0, row 3 needs 1 and 2, row 4 needs 3
    strict = sp.csr_matrix(np.array([[0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                                     [0, 1, 1, 0, 0], [0, 0, 0, 1, 0.0]]))
    levels = ref.run("components.level_set.compute_levels", strict.indptr, strict.indices)
    np.testing.assert_array_equal(levels, [0, 1, 0, 2, 3])
    # upper: row 4 needs nothing, 3 needs 4, 1 and 2 need 3, 0 needs 1
    upper = strict.T.tocsr()
    np.testing.assert_array_equal(ref.run("components.level_set.compute_levels", upper.indptr, upper.indices),
                                  [3, 2, 2, 1, 0])
    # a cycle is not a triangle
    with pytest.raises(ValueError, match="cycle"):
        ref.run("components.level_set.compute_levels", np.array([0, 1, 2]), np.array([1, 0]))
    # level sizes 1, 300, 2, 2, 500, 1 with at most 64 rows in a chained level
    level_ptrs = np.cumsum([0, 1, 300, 2, 2, 500, 1])
    assert ocl_trs._schedule(level_ptrs, 64) == (("chain", 0, 1), ("level", 1, 301), ("chain", 2, 4),
                                                 ("level", 305, 805), ("chain", 5, 6))


# -- random triangles: reference vs device, and against SciPy ------------------------------------
def _random_triangle(n, rng, lower, per_row, reach=None):
    """A well-conditioned random triangle: |off-diagonal row sum| <= 1/2 <= diagonal.

    ``reach`` limits how far back (lower) or forward (upper) a row's entries lie: a small reach
    gives many thin levels, None (anywhere) a few wide ones."""
    rows = np.repeat(np.arange(n), per_row)
    span = rows if reach is None else np.minimum(rows, reach)
    offset = 1 + (rng.random(rows.size) * np.maximum(span, 1)).astype(int)
    cols = rows - offset
    keep = cols >= 0
    m = sp.csr_matrix((rng.uniform(-0.5, 0.5, keep.sum()) / per_row, (rows[keep], cols[keep])), shape=(n, n))
    m.sum_duplicates()
    m = (m + sp.diags(rng.uniform(1, 2, n))).tocsr()
    return m if lower else m[::-1, ::-1].tocsr()


CASES = {
    "thin levels": dict(n=777, per_row=2, reach=3),
    "wide levels": dict(n=3001, per_row=3, reach=None),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("case", list(CASES))
def test_sparse_reference_vs_device(ref, ocl, rng, case, lower, dtype):
    m = _random_triangle(rng=rng, lower=lower, **CASES[case])
    b = rng.standard_normal((m.shape[0], 3))
    solver_type = gk.solver.LowerTrs if lower else gk.solver.UpperTrs
    x_ref = _solve(ref, solver_type, m, b, dtype=dtype)
    x_ocl = _solve(ocl, solver_type, m, b, dtype=dtype)
    assert _rel_err(x_ocl, x_ref) <= tol(dtype)


@pytest.mark.parametrize("lower", [True, False])
def test_sparse_chains_and_wide_levels_mixed(ref, ocl, rng, monkeypatch, lower):
    # chains of 64 work-items and levels over 64 rows launched alone, whatever the device
    monkeypatch.setattr(ocl_trs, "_chain_sizes", lambda info: (64, 64))
    monkeypatch.setattr(ocl_trs, "_sequential", lambda info: False)
    m = _random_triangle(1501, rng, lower, per_row=2, reach=None)
    A = gk.matrix.Csr.from_scipy(ocl, m)
    solver = (gk.solver.LowerTrs if lower else gk.solver.UpperTrs).build().on(ocl).generate(A)
    kinds = {kind for kind, _, _ in solver.plan.launches}
    assert kinds == {"chain", "level"}, solver.plan.launches
    b = rng.standard_normal((m.shape[0], 5))
    x = solver.apply(Dense.from_numpy(ocl, b), Dense.zeros(ocl, b.shape)).to_numpy()
    x_ref = _solve(ref, gk.solver.LowerTrs if lower else gk.solver.UpperTrs, m, b)
    assert _rel_err(x, x_ref) <= tol(np.float64)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("sequential", [True, False], ids=["sequential", "levels"])
def test_sequential_and_level_scheduled_substitution(ref, ocl, rng, monkeypatch, lower, sequential):
    # the CPU's in-order substitution and the GPU's levels, whatever the device
    monkeypatch.setattr(ocl_trs, "_sequential", lambda info: sequential)
    m = _random_triangle(1501, rng, lower, per_row=3, reach=200)
    A = gk.matrix.Csr.from_scipy(ocl, m)
    solver = (gk.solver.LowerTrs if lower else gk.solver.UpperTrs).build().on(ocl).generate(A)
    assert ({kind for kind, _, _ in solver.plan.launches} == {"sequential"}) == sequential
    b = rng.standard_normal((m.shape[0], 3))
    x = solver.apply(Dense.from_numpy(ocl, b), Dense.zeros(ocl, b.shape)).to_numpy()
    x_ref = _solve(ref, gk.solver.LowerTrs if lower else gk.solver.UpperTrs, m, b)
    assert _rel_err(x, x_ref) <= tol(np.float64)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("lower", [True, False])
def test_sequential_split_against_reference(ref, ocl, rng, monkeypatch, lower, unit, dtype):
    # a CPU's substitution splits each row into its diagonal, its entry of the row solved just
    # before (i - 1 forward, i + 1 backward) and the others: rows with and without that entry,
    # the other triangle's entries ignored, three columns, then new values on the same pattern
    monkeypatch.setattr(ocl_trs, "_sequential", lambda info: True)
    n = 1029
    t = _random_triangle(n, rng, True, per_row=3, reach=4).tocoo()
    drop = (t.col == t.row - 1) & (rng.random(t.nnz) < 0.5)
    t = sp.csr_matrix((t.data[~drop], (t.row[~drop], t.col[~drop])), shape=(n, n))
    if not lower:
        t = t[::-1, ::-1].tocsr()
    other = sp.random(n, n, density=3 / n, random_state=1, format="csr")
    m = (t + (sp.triu(other, 1) if lower else sp.tril(other, -1))).astype(dtype)
    if dtype == np.complex128:
        m.data = m.data * np.exp(1j * rng.uniform(0, np.pi, m.nnz))
    b = rng.standard_normal((n, 3)).astype(dtype)
    solver_type = gk.solver.LowerTrs if lower else gk.solver.UpperTrs
    solvers = [solver_type.build().with_unit_diagonal(unit).on(e).generate(gk.matrix.Csr.from_scipy(e, m, dtype))
               for e in (ref, ocl)]
    assert solvers[1].plan.launches == (("sequential", 0, 0),)
    for values in (None, 1.5 * m.data):
        if values is not None:
            for solver in solvers:
                solver.system_matrix.update_values(values)
                assert solver.update()
        x_ref, x_ocl = (s.apply(Dense.from_numpy(s.executor, b), Dense.zeros(s.executor, b.shape, dtype)).to_numpy()
                        for s in solvers)
        assert _rel_err(x_ocl, x_ref) <= tol(np.float64)


def test_sequential_row_without_its_near_entry_ignores_that_x(ocl, monkeypatch):
    # x_0 is infinite; row 1 has no entry in column 0, so x_1 stays finite (0 * inf is not 0)
    monkeypatch.setattr(ocl_trs, "_sequential", lambda info: True)
    x = _solve(ocl, gk.solver.LowerTrs, np.array([[1.0, 0, 0], [0, 2, 0], [1, 0, 4]]), np.array([np.inf, 2, 1]))
    assert x[0, 0] == np.inf and x[1, 0] == 1 and x[2, 0] == -np.inf


@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("case", list(CASES))
def test_sparse_against_scipy(exec, rng, case, unit):
    m = _random_triangle(rng=rng, lower=True, **CASES[case])
    b = rng.standard_normal(m.shape[0])
    # unit diagonal: the stored diagonal (in [1, 2]) is ignored
    expected = spsolve_triangular(sp.tril(m, -1, format="csr") + sp.eye(m.shape[0]) if unit else m, b)
    x = _solve(exec, gk.solver.LowerTrs, m, b, unit=unit)
    assert _rel_err(x[:, 0], expected) <= 1e-12


@pytest.mark.parametrize("name", ["ani4.mtx", "1138_bus.mtx"])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_real_triangles_against_scipy(exec, name, lower, unit):
    A = scipy.io.mmread(matrix_path(name)).tocsr()
    n = A.shape[0]
    b = np.random.default_rng(7).standard_normal((n, 2))
    strict = sp.tril(A, -1) if lower else sp.triu(A, 1)
    triangle = (strict + (sp.eye(n) if unit else sp.diags(A.diagonal()))).tocsr()
    expected = spsolve_triangular(triangle, b, lower=lower)
    # the full matrix is given: only its triangle may be used
    x = _solve(exec, gk.solver.LowerTrs if lower else gk.solver.UpperTrs, A, b, unit=unit)
    assert _rel_err(x, expected) <= 1e-10


# -- dense TRSV ---------------------------------------------------------------------------------
def test_dense_reference_kernels_hand_checked(ref):
    a = Dense.from_numpy(ref, L3 + np.triu(U3, 1))
    x = Dense.from_numpy(ref, np.array([2.0, 9, 16]))
    ref.run("matrix.dense_trsv.trsv", a, x, True, False, False)
    np.testing.assert_allclose(x.to_numpy()[:, 0], [1, 2, 2], rtol=1e-15)
    # L^T x = b with L3: x2 = 10/5 = 2, x1 = (14 - 3*2)/4 = 2, x0 = (4 - 2)/2 = 1
    x = Dense.from_numpy(ref, np.array([4.0, 14, 10]))
    ref.run("matrix.dense_trsv.trsv", a, x, True, True, False)
    np.testing.assert_allclose(x.to_numpy()[:, 0], [1, 2, 2], rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_reference_vs_device(ref, ocl, rng, dtype):
    n, k = 301, 3  # more rows than a work-group (128) and several blocks (<= 64 wide)
    a = rng.uniform(-1, 1, (n, n)) / n + np.diag(rng.uniform(1, 2, n))
    a[0, 0] = a[n - 1, n - 1] = np.nan  # unit diagonal: never read
    b = rng.standard_normal((n, k))
    for lower in (True, False):
        for transpose in (False, True):
            for unit in (False, True):
                if not unit:
                    a[0, 0] = a[n - 1, n - 1] = 1.5
                out = []
                for exec in (ref, ocl):
                    A = Dense.from_numpy(exec, a, dtype)
                    x = Dense.from_numpy(exec, b, dtype)
                    exec.run("matrix.dense_trsv.trsv", A, x, lower, transpose, unit)
                    out.append(x.to_numpy())
                assert _rel_err(out[1], out[0]) <= tol(dtype), (lower, transpose, unit)


def test_dense_and_sparse_solvers_agree(exec, rng):
    m = _random_triangle(200, rng, lower=False, per_row=4)
    b = rng.standard_normal((200, 2))
    x_sparse = _solve(exec, gk.solver.UpperTrs, m, b)
    x_dense = _solve(exec, gk.solver.UpperTrs, m.toarray(), b, dense=True)
    assert _rel_err(x_dense, x_sparse) <= tol(np.float64)


# -- the "jacobi" algorithm -------------------------------------------------------------------------
def _jacobi(exec, solver_type, matrix, b, sweeps, unit=False):
    A = gk.matrix.Csr.from_scipy(exec, matrix)
    solver = (solver_type.build().with_algorithm("jacobi").with_num_jacobi_sweeps(sweeps).with_unit_diagonal(unit)
              .on(exec).generate(A))
    return solver.apply(Dense.from_numpy(exec, b), Dense.zeros(exec, np.atleast_2d(b.T).T.shape)).to_numpy()


def test_jacobi_sweeps_by_hand(exec):
    # L3 x = [2 9 16]: x_1 = D^-1 b = [1, 9/4, 16/5]; x_2 = D^-1 (b - N x_1) = [1, (9 - 1)/4, (16 - 27/4)/5];
    # x_3 = [1, 2, (16 - 6)/5] is exact (three levels)
    b = np.array([2.0, 9, 16])
    np.testing.assert_allclose(_jacobi(exec, gk.solver.LowerTrs, L3, b, 1)[:, 0], [1, 9 / 4, 16 / 5], rtol=1e-15)
    np.testing.assert_allclose(_jacobi(exec, gk.solver.LowerTrs, L3, b, 2)[:, 0], [1, 2, (16 - 27 / 4) / 5],
                               rtol=1e-15)
    np.testing.assert_allclose(_jacobi(exec, gk.solver.LowerTrs, L3, b, 3)[:, 0], [1, 2, 2], rtol=1e-15)
    # upper, and the other triangle of a full matrix ignored; unit diagonal
    full = L3 + np.triu(U3, 1)
    np.testing.assert_allclose(_jacobi(exec, gk.solver.UpperTrs, full, np.array([4.0, 14, 10]), 3)[:, 0],
                               np.linalg.solve(np.triu(full), [4, 14, 10]), rtol=1e-15)
    np.testing.assert_allclose(_jacobi(exec, gk.solver.LowerTrs, full, b, 3, unit=True)[:, 0], [2, 7, -5],
                               rtol=1e-15)


@pytest.mark.parametrize("fused", [True, False])
def test_three_sweeps_in_one_launch_or_not(exec, rng, monkeypatch, fused):
    # the first three sweeps in one launch (short rows) or in two (FUSED_WORK 0): the same x
    monkeypatch.setattr(triangular_module, "FUSED_WORK", 64 if fused else 0)
    m = _random_triangle(777, rng, True, per_row=3, reach=3)
    b = rng.standard_normal((777, 2))
    A = gk.matrix.Csr.from_scipy(exec, m)
    D, N = m.diagonal()[:, None], sp.tril(m, -1)
    x = b / D
    for sweeps in range(1, 6):
        solver = gk.solver.LowerTrs.build().with_algorithm("jacobi").with_num_jacobi_sweeps(sweeps).on(exec).generate(A)
        assert solver._three_in_one == (fused and sweeps >= 3)
        got = solver.apply(Dense.from_numpy(exec, b), Dense.zeros(exec, b.shape)).to_numpy()
        assert _rel_err(got, x) <= tol(np.float64)
        x = (b - N @ x) / D  # the next sweep


@pytest.mark.parametrize("lower", [True, False])
def test_jacobi_converges_to_the_exact_solve(exec, rng, lower):
    m = _random_triangle(777, rng, lower, per_row=3, reach=3)
    b = rng.standard_normal((777, 3))
    exact = spsolve_triangular(m, b, lower=lower)
    solver_type = gk.solver.LowerTrs if lower else gk.solver.UpperTrs
    errors = [_rel_err(_jacobi(exec, solver_type, m, b, s), exact) for s in (2, 6, 40)]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-14


def test_jacobi_zero_diagonal_and_parameters(exec):
    singular = L3.copy()
    singular[1, 1] = 0.0
    with pytest.raises(ValueError, match="row 1 is zero"):
        gk.solver.LowerTrs.build().with_algorithm("jacobi").on(exec).generate(gk.matrix.Csr.from_scipy(exec, singular))
    with pytest.raises(ValueError, match="algorithm must be one of 'sparselib', 'syncfree', 'jacobi'"):
        gk.solver.LowerTrs.build().with_algorithm("levelset")
    with pytest.raises(ValueError, match="num_jacobi_sweeps must be an integer >= 1"):
        gk.solver.UpperTrs.build().with_num_jacobi_sweeps(0)
    # a Dense triangle is solved exactly whatever the algorithm
    x = gk.solver.LowerTrs.build().with_algorithm("jacobi").with_num_jacobi_sweeps(1).on(exec).generate(
        Dense.from_numpy(exec, L3)).apply(Dense.from_numpy(exec, np.array([2.0, 9, 16])), Dense.zeros(exec, (3, 1)))
    np.testing.assert_allclose(x.to_numpy()[:, 0], [1, 2, 2], rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("lower", [True, False])
def test_jacobi_kernel_twins(ref, ocl, rng, lower, dtype):
    n, k = 601, 3
    m = _random_triangle(n, rng, lower, per_row=3) + sp.random(n, n, 2 / n, random_state=3)  # both triangles
    m = m.tocsr()
    inv = np.zeros((n, 1))
    outs = twin(ref, ocl, "solver.triangular.jacobi_generate", m, False, inv, dtype=dtype)
    assert outs[0][-1] == outs[1][-1] == -1
    assert_twins(outs, dtype)
    inv = outs[0][2]
    b, x, out = rng.standard_normal((n, k)), rng.standard_normal((n, k)), np.zeros((n, k))
    assert_twins(twin(ref, ocl, "solver.triangular.jacobi_initialize", inv, b, out, dtype=dtype), dtype)
    assert_twins(twin(ref, ocl, "solver.triangular.jacobi_sweep", m, lower, inv, b, x, out, dtype=dtype), dtype,
                 factor=2)
    assert_twins(twin(ref, ocl, "solver.triangular.jacobi_two_sweeps", m, lower, inv, b, out, dtype=dtype), dtype,
                 factor=4)
    assert_twins(twin(ref, ocl, "solver.triangular.jacobi_three_sweeps", m, lower, inv, b, out, dtype=dtype), dtype,
                 factor=8)
    outs = twin(ref, ocl, "solver.triangular.jacobi_inverse_diagonal", m, False, np.zeros((n, 1)), dtype=dtype)
    assert_twins(outs, dtype)
    # the same inverse diagonal as jacobi_generate's; on the device to its division's rounding
    # (NVIDIA's OpenCL divides float32 to 2.5 ulp unless built with -cl-fp32-correctly-rounded-divide-sqrt)
    np.testing.assert_array_equal(outs[0][2], inv)
    np.testing.assert_allclose(outs[1][2], inv, rtol=4 * np.finfo(dtype).eps, atol=0)
    for unit in (False, True):
        bounds = [_bound_maxima(o[-1]) for o in twin(ref, ocl, "solver.triangular.jacobi_bound", m, lower, unit,
                                                     dtype=dtype)]
        assert np.isfinite(bounds[0][0]) and bounds[1][0] == pytest.approx(bounds[0][0], rel=float(tol(dtype)))
        assert bounds[0][1] == bounds[1][1] > 0  # the work of jacobi_three_sweeps' longest row
        assert bounds[0][2] == bounds[1][2] == 0  # nonzero diagonal, finite values
    # a zero diagonal entry: the first such row; a bound of inf, flagged
    broken = m.tolil()
    broken[123, 123] = 0
    broken[456, 456] = 0
    outs = twin(ref, ocl, "solver.triangular.jacobi_generate", broken.tocsr(), False, np.zeros((n, 1)), dtype=dtype)
    assert outs[0][-1] == outs[1][-1] == 123
    outs = twin(ref, ocl, "solver.triangular.jacobi_bound", broken.tocsr(), lower, False, dtype=dtype)
    assert [_bound_maxima(o[-1])[0] for o in outs] == [np.inf, np.inf]
    assert [_bound_maxima(o[-1])[2] for o in outs] == [1, 1]
    # a value that is not finite (in the ignored triangle too): flagged
    for where in ((300, 299), (299, 300)):
        broken = m.tolil()
        broken[where] = np.nan
        outs = twin(ref, ocl, "solver.triangular.jacobi_bound", broken.tocsr(), lower, False, dtype=dtype)
        assert [_bound_maxima(o[-1])[2] for o in outs] == [1, 1]


def _bound_maxima(partial) -> np.ndarray:
    # jacobi_bound's (groups, 3) work-group maxima (on the device for OpenCL) reduced: (q, work, bad)
    host = partial if isinstance(partial, np.ndarray) else partial.get()
    return host.reshape(-1, 3).max(axis=0)


def test_contraction_bound_by_hand(exec):
    # q = max_i |t_ii|^-1 sum_{j in N_i} |t_ij|: L3's rows 1/4 and 3/5; with a unit diagonal 1 and 3;
    # U3's 1/2 and 3/4; no rows: 0
    bound = contraction_bound
    csr = gk.matrix.Csr.from_scipy
    assert bound(csr(exec, sp.csr_matrix(-L3)), True) == pytest.approx(0.6, rel=1e-15)
    assert bound(csr(exec, sp.csr_matrix(L3)), True, unit_diagonal=True) == pytest.approx(3, rel=1e-15)
    assert bound(csr(exec, sp.csr_matrix(L3 + np.triu(U3, 1))), False) == pytest.approx(0.75, rel=1e-15)
    assert bound(csr(exec, sp.csr_matrix((0, 0))), True) == 0


@pytest.mark.parametrize("algorithm", ["sparselib", "jacobi"])
def test_transpose(exec, rng, algorithm):
    m = _random_triangle(301, rng, True, per_row=2, reach=3)
    A = gk.matrix.Csr.from_scipy(exec, m)
    lower = gk.solver.LowerTrs.build().with_algorithm(algorithm).with_num_jacobi_sweeps(50).on(exec).generate(A)
    upper = lower.transpose()
    assert isinstance(upper, gk.solver.UpperTrs) and upper.parameters.algorithm == algorithm
    b = rng.standard_normal(301)
    x = upper.apply(Dense.from_numpy(exec, b), Dense.zeros(exec, (301, 1))).to_numpy()[:, 0]
    np.testing.assert_allclose(x, spsolve_triangular(m.T.tocsr(), b, lower=False), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_contraction_bound_complex_twins(ref, ocl, dtype):
    # |t_ij| of complex entries (hypot on the device); more rows than a work-group
    n = 701
    m = (sp.random(n, n, 3 / n, random_state=1) + 1j * sp.random(n, n, 3 / n, random_state=2) + sp.eye(n)).tocsr()
    for lower in (True, False):
        bounds = [contraction_bound(gk.matrix.Csr.from_scipy(e, m, dtype), lower) for e in (ref, ocl)]
        assert bounds[1] == pytest.approx(bounds[0], rel=float(tol(dtype)))


@pytest.mark.parametrize("where", ["solved", "ignored"])
def test_jacobi_refuses_values_not_finite(exec, rng, where):
    # the Jacobi sweeps check the triangle from its contraction bound's launch: a value not
    # finite, on the solved side or in the ignored triangle, is still the system matrix's error
    m = _random_triangle(301, rng, True, per_row=2).tolil()
    m[200, 100 if where == "solved" else 250] = np.nan
    with pytest.raises(ValueError, match="contains NaN or Inf"):
        gk.solver.LowerTrs.build().with_algorithm("jacobi").on(exec).generate(gk.matrix.Csr.from_scipy(exec, m.tocsr()))
