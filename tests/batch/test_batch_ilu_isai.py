"""The batched ILU(0) and ISAI preconditioners (gk.batch.preconditioner.Ilu, Isai): the factors
against a dense per-item ILU(0) and the single-system factorization, the approximate inverses
against per-item dense solves of their small systems, every new OpenCL kernel against its
reference twin (more items than a work-group, odd sizes, a zero pivot), whole batched solves on
both executors laid out as on a CPU and as on a GPU (with items that stop at once), fewer
iterations than batch Jacobi, complex values, bad input and the doors (builder, gk.linalg)."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import tol
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.linalg import batched_bicgstab, batched_cg, batched_gmres
from ginkpy.problems import convection_diffusion_2d, poisson_2d
from test_opencl_batch import device

Ilu, Isai, Jacobi = gk.batch.preconditioner.Ilu, gk.batch.preconditioner.Isai, gk.batch.preconditioner.Jacobi


def _batch(rng, N, grid, dtype=np.float64, spd=False):
    """N convection-diffusion (or, ``spd``, Poisson) items of one pattern, rows and columns
    scaled at random per item (SPD stays SPD)."""
    P = (poisson_2d(grid) if spd else convection_diffusion_2d(grid, peclet=1.5)).tocsr()
    out = []
    for _ in range(N):
        d = sp.diags(np.sqrt(rng.uniform(0.5, 2.0, P.shape[0])))
        m = (d @ P @ d).astype(dtype)
        if np.dtype(dtype).kind == "c":
            m = m + 0.3j * sp.diags(rng.uniform(0.5, 1.0, P.shape[0]))
        out.append(sp.csr_matrix(m))
    return out


def _random_batch(rng, N, n, density=0.08):
    """N random items of one random pattern (the diagonal stored, dominant)."""
    pattern = sp.random(n, n, density=density, random_state=int(rng.integers(1 << 30)), format="csr")
    pattern = sp.csr_matrix(pattern + sp.eye(n))
    pattern.sort_indices()
    rows = np.repeat(np.arange(n), np.diff(pattern.indptr))
    values = rng.standard_normal((N, pattern.nnz))
    values[:, pattern.indices == rows] = 2 + np.abs(values).sum(axis=1, keepdims=True) / n
    return pattern, values


def _dense_ilu0(A):
    """ILU(0) of a dense matrix on its own nonzero pattern: L (unit) and U in one array."""
    A = np.array(A, dtype=np.result_type(A.dtype, np.float64))
    stored = A != 0
    n = A.shape[0]
    for i in range(n):
        for k in range(i):
            if stored[i, k]:
                A[i, k] /= A[k, k]
                A[i, k + 1:] -= np.where(stored[i, k + 1:], A[i, k] * A[k, k + 1:], 0)
    return A


def _combined(M, item):
    """Item ``item``'s factors (values in the pattern) as a dense array, on the host."""
    ptrs, cols, values = M.executor.to_host(M.row_ptrs, M.col_idxs, M.values)
    return sp.csr_matrix((values[item], cols, ptrs), shape=M.common_size).toarray()


# -- the factors -----------------------------------------------------------------------------------

def test_factors_are_each_items_ilu0(exec, rng):
    matrices = _batch(rng, 4, 6)
    M = Ilu.build().on(exec).generate(gk.batch.matrix.Csr.from_scipy(exec, matrices))
    for i, A in enumerate(matrices):
        expected = _dense_ilu0(A.toarray())
        np.testing.assert_allclose(_combined(M, i), np.where(A.toarray() != 0, expected, 0), rtol=1e-12,
                                   atol=1e-14)
        # as the single-system exact ILU(0) has them
        L, U = (f.to_scipy().toarray() for f in gk.factorization.Ilu.build().on(exec).generate(
            gk.matrix.Csr.from_scipy(exec, A)).factors)
        np.testing.assert_allclose(np.tril(_combined(M, i), -1) + np.eye(A.shape[0]), L, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(np.triu(_combined(M, i)), U, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_factorize_twins(ref, ocl, rng, dtype):
    # 301 items (more than a work-group of items), 37 rows; item 5 has a zero pivot in row 0 and
    # item 9 one further down (its a_33 cancels: a zero diagonal entry)
    pattern, values = _random_batch(rng, 301, 37)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(values.shape) * 0.1
    rows = np.repeat(np.arange(37), np.diff(pattern.indptr))
    diag = np.flatnonzero(pattern.indices == rows)
    values[5, diag[0]] = 0
    values[9, diag[3]] = 0
    out = []
    for exec in (ref, ocl):
        A = gk.batch.matrix.Csr.from_pattern(exec, pattern, values, dtype)
        with pytest.raises(ValueError, match=r"item 5 breaks down: the pivot of row 0 is zero .*and 1 more items"):
            Ilu.build().on(exec).generate(A)
        # the kernel itself: per item the first bad row, the values of the good items
        M = Ilu.__new__(Ilu)
        M.__dict__.update(num_batch_items=301, common_size=(37, 37), dtype=np.dtype(dtype), row_ptrs=A.row_ptrs,
                          col_idxs=A.col_idxs, values=exec.copy(A.values),
                          diag=exec.from_host(diag.astype(np.int32)))
        bad = np.asarray(exec.run("batch.preconditioner.ilu.factorize", M))
        out.append((bad, exec.to_host(M.values)))
    expected_bad = np.full(301, -1)
    expected_bad[5], expected_bad[9] = 0, 3
    np.testing.assert_array_equal(out[0][0], expected_bad)
    np.testing.assert_array_equal(out[1][0], expected_bad)
    good = expected_bad < 0
    r, d = out[0][1][good], out[1][1][good]
    np.testing.assert_allclose(d, r, rtol=100 * tol(dtype), atol=100 * tol(dtype) * np.abs(r).max())


@pytest.mark.parametrize("k", [1, 3])
def test_apply_twins_and_against_scipy(ref, ocl, rng, k):
    pattern, values = _random_batch(rng, 13, 53)
    B = rng.standard_normal((13, 53, k))
    out = {}
    for kind in (Ilu, Isai):
        for exec in (ref, ocl):
            A = gk.batch.matrix.Csr.from_pattern(exec, pattern, values)
            M = kind.build().on(exec).generate(A)
            x = M.apply(gk.batch.MultiVector.from_numpy(exec, B), gk.batch.MultiVector.zeros(exec, B.shape))
            out[kind, exec] = x.to_numpy()
        np.testing.assert_allclose(out[kind, ocl], out[kind, ref], rtol=100 * tol(np.float64),
                                   atol=100 * tol(np.float64) * np.abs(out[kind, ref]).max())
    # Ilu: x_i = (L_i U_i)^-1 b_i with the items' ILU(0) factors
    for i in range(13):
        A = sp.csr_matrix((values[i], pattern.indices, pattern.indptr), shape=pattern.shape).toarray()
        F = np.where(A != 0, _dense_ilu0(A), 0)
        LU = (np.tril(F, -1) + np.eye(53)) @ np.triu(F)
        np.testing.assert_allclose(out[Ilu, ref][i], np.linalg.solve(LU, B[i]), rtol=1e-10, atol=1e-12)
    # Isai approximates the same operator
    assert np.linalg.norm(out[Isai, ref] - out[Ilu, ref]) < 0.5 * np.linalg.norm(out[Ilu, ref])


def test_isai_rows_solve_their_small_systems(exec, rng):
    matrices = _batch(rng, 3, 5)
    for power in (1, 2):
        M = Isai.build().with_sparsity_power(power).on(exec).generate(gk.batch.matrix.Csr.from_scipy(exec, matrices))
        values = exec.to_host(M.values)
        for i, A in enumerate(matrices):
            F = np.where(A.toarray() != 0, _dense_ilu0(A.toarray()), 0)
            n = A.shape[0]
            ptrs, cols = exec.to_host(M.row_ptrs, M.col_idxs)
            split = M.lower_nnz
            for name, T, (p, c, v) in (
                    ("lower", np.tril(F, -1) + np.eye(n), (ptrs[:n + 1], cols[:split], values[i, :split])),
                    ("upper", np.triu(F), (ptrs[n + 1:], cols[split:], values[i, split:]))):
                inverse = sp.csr_matrix((v, c, p), shape=(n, n)).toarray()
                # (M T)_ij = delta_ij on the pattern of M
                product = inverse @ T
                on_pattern = inverse != 0
                np.testing.assert_allclose(product[on_pattern], np.eye(n)[on_pattern], atol=1e-12, err_msg=name)
                if power == 1:  # the pattern of the factor
                    np.testing.assert_array_equal(inverse != 0, T != 0)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("power", [1, 2])
def test_generate_twins(ref, ocl, rng, dtype, power):
    # 301 items of 23 rows: more rows of inverses than a work-group, odd sizes
    pattern, values = _random_batch(rng, 301, 23, density=0.15)
    if np.dtype(dtype).kind == "c":
        values = values + 0.5j * rng.standard_normal(values.shape)
    out = []
    for exec in (ref, ocl):
        M = Isai.build().with_sparsity_power(power).on(exec).generate(
            gk.batch.matrix.Csr.from_pattern(exec, pattern, values, dtype))
        out.append(exec.to_host(M.values))
    np.testing.assert_allclose(out[1], out[0], rtol=1000 * tol(dtype), atol=1000 * tol(dtype) * np.abs(out[0]).max())


def test_generate_reports_an_item_whose_inverse_is_not_finite(exec, rng):
    # a pivot of 1e-320 in row 4 of item 2: its U^-1 overflows
    pattern, values = _random_batch(rng, 4, 9, density=0.3)
    A = gk.batch.matrix.Csr.from_pattern(exec, pattern, values)
    ilu, isai = Ilu.build().on(exec).generate(A), Isai.build().on(exec).generate(A)
    lu = exec.to_host(ilu.values)
    lu[2, exec.to_host(ilu.diag)[4]] = 1e-320
    exec.write(ilu.values, lu)
    row = exec.run("batch.preconditioner.isai.generate", ilu, isai)
    assert row // 18 == 2 and row % 18 >= 9  # item 2, a row of M_U


# -- whole batched solves ----------------------------------------------------------------------------

def _solve(exec, name, matrices, B, M, fmt="csr", max_iterations=300):
    A = gk.batch.matrix.Csr.from_scipy(exec, matrices)
    if fmt == "ell":
        A = gk.batch.matrix.Ell.from_csr(A)
    elif fmt == "dense":
        A = gk.batch.matrix.Dense.from_numpy(exec, [m.toarray() for m in matrices])
    params = getattr(gk.batch.solver, name).build().with_max_iterations(max_iterations).with_tolerance(
        1e-10).with_tolerance_type("relative").with_preconditioner(M)
    solver = params.on(exec).generate(A)
    log = gk.batch.log.BatchConvergence()
    solver.add_logger(log)
    x = gk.batch.MultiVector.zeros(exec, B.shape, B.dtype)
    solver.apply(gk.batch.MultiVector.from_numpy(exec, B), x)
    return x.to_numpy(), log


def _check_solves(ref, dev, name, kind, matrices, B, fmt="csr"):
    """Both executors converge every item, item 0 (b = 0) at once, with the same verdicts and
    nearly the same iterations, to solutions that agree; the device's true residuals meet the
    tolerance. Returns the reference's iterations."""
    X_ref, log_ref = _solve(ref, name, matrices, B, kind.build(), fmt)
    X_dev, log_dev = _solve(dev, name, matrices, B, kind.build(), fmt)
    assert all(r == StopReason.CONVERGED for r in log_ref.stop_reasons)
    assert log_dev.stop_reasons == log_ref.stop_reasons
    assert log_ref.num_iterations[0] == log_dev.num_iterations[0] == 0
    assert np.abs(log_dev.num_iterations - log_ref.num_iterations).max() <= 1
    np.testing.assert_allclose(X_dev, X_ref, rtol=1e-6, atol=1e-6 * np.abs(X_ref).max())
    true = np.array([np.linalg.norm(b - A @ x) for A, b, x in zip(matrices, B, X_dev)])
    assert (true <= 1e-10 * np.linalg.norm(B, axis=1) * (1 + 1e-6)).all()
    return log_ref.num_iterations


@pytest.mark.parametrize("kind", [Ilu, Isai])
@pytest.mark.parametrize("name, fmt", [("Cg", "csr"), ("Bicgstab", "ell"), ("Gmres", "dense"), ("Gmres", "csr")])
def test_solver_twins_cpu_layout(ref, ocl, rng, kind, name, fmt):
    matrices = _batch(rng, 7, 7, spd=name == "Cg")
    B = rng.standard_normal((7, 49))
    B[0] = 0
    _check_solves(ref, device(ocl, "cpu"), name, kind, matrices, B, fmt)


@pytest.mark.slow  # PoCL compiles the work-group kernels with the level loops for a minute or more
@pytest.mark.parametrize("kind", [Ilu, Isai])
@pytest.mark.parametrize("name", ["Cg", "Bicgstab", "Gmres"])
@pytest.mark.parametrize("layout", ["gpu", "gpu_partial"])
def test_solver_twins_gpu_layout(ref, ocl, rng, kind, name, layout):
    # gpu_partial: 11 items looped over by 8 work-groups, some vectors in global memory
    matrices = _batch(rng, 11, 7, spd=name == "Cg")
    B = rng.standard_normal((11, 49))
    B[0] = 0
    _check_solves(ref, device(ocl, layout, 49, arrays=3), name, kind, matrices, B)


@pytest.mark.parametrize("name", ["Bicgstab", "Gmres"])
def test_fewer_iterations_than_jacobi(exec, rng, name):
    matrices = _batch(rng, 6, 10)
    B = rng.standard_normal((6, 100))
    iterations = {}
    for label, M in (("jacobi", Jacobi.build().with_max_block_size(1)), ("ilu", Ilu.build()), ("isai", Isai.build())):
        X, log = _solve(exec, name, matrices, B, M)
        assert all(log.converged), label
        iterations[label] = np.asarray(log.num_iterations)
    assert (iterations["ilu"] < iterations["jacobi"]).all()
    assert (iterations["isai"] < iterations["jacobi"]).all()
    assert iterations["ilu"].sum() <= iterations["isai"].sum()


@pytest.mark.parametrize("dtype", [np.complex128, np.float32])
def test_complex_and_float32(ref, ocl, rng, dtype):
    matrices = _batch(rng, 5, 6, dtype=dtype)
    B = (rng.standard_normal((5, 36)) + (1j * rng.standard_normal((5, 36)) if np.dtype(dtype).kind == "c" else 0)
         ).astype(dtype)
    rtol = 1e-10 if dtype == np.complex128 else 1e-5
    out = []
    for exec in (ref, ocl):
        for M in ("ilu", "isai"):
            X, info = batched_gmres(matrices, B, rtol=rtol, M=M, executor=exec)
            assert X.dtype == dtype and (info == 0).all()
            out.append(X)
            true = np.array([np.linalg.norm(b - A @ x) for A, b, x in zip(matrices, B, X)])
            assert (true <= 1.01 * rtol * np.linalg.norm(B, axis=1)).all()
    scale = np.abs(out[0]).max()
    np.testing.assert_allclose(out[2], out[0], rtol=1e-4 if dtype == np.float32 else 1e-8, atol=1e-4 * scale)


# -- bad input and the doors -------------------------------------------------------------------------

def test_bad_input(exec, rng):
    P = convection_diffusion_2d(4).tocsr()
    no_diagonal = sp.csr_matrix(P - sp.diags(P.diagonal()))
    no_diagonal.eliminate_zeros()
    no_diagonal = no_diagonal + sp.csr_matrix(([1.0], ([0], [0])), shape=P.shape)
    for kind in (Ilu, Isai):
        with pytest.raises(ValueError, match="row 1 has no stored diagonal entry in the shared pattern"):
            kind.build().on(exec).generate(gk.batch.matrix.Csr.from_scipy(exec, [no_diagonal] * 2))
    with pytest.raises(ValueError, match="sparsity_power"):
        Isai.build().with_sparsity_power(0)
    with pytest.raises(TypeError, match="Jacobi, Ilu or Isai"):
        gk.batch.solver.Cg.build().with_preconditioner(gk.preconditioner.Ilu.build()).on(exec).generate(
            gk.batch.matrix.Csr.from_scipy(exec, [P, P]))
    A = gk.batch.matrix.Csr.from_scipy(exec, [P, P])
    other = Ilu.build().on(exec).generate(gk.batch.matrix.Csr.from_scipy(exec, [P, P, P]))
    with pytest.raises(ValueError, match="the preconditioner has 3 items"):
        gk.batch.solver.Gmres.build().with_preconditioner(other).on(exec).generate(A)


def test_doors(exec, rng):
    matrices = _batch(rng, 4, 5)
    B = rng.standard_normal((4, 25))
    for solve in (batched_bicgstab, batched_gmres):
        for M in ("ilu", "isai", Ilu.build(), Isai.build().with_sparsity_power(2)):
            X, info = solve(matrices, B, rtol=1e-10, M=M, executor=exec)
            assert (info == 0).all()
            for A, b, x in zip(matrices, B, X):
                assert np.linalg.norm(b - A @ x) <= 1.01e-10 * np.linalg.norm(b)
    spd = _batch(rng, 3, 5, spd=True)
    X, info = batched_cg(spd, B[:3], rtol=1e-10, M="ilu", executor=exec)
    assert (info == 0).all()
    # a generated preconditioner, given to a solver
    A = gk.batch.matrix.Csr.from_scipy(exec, matrices)
    M = Isai.build().on(exec).generate(A)
    solver = gk.batch.solver.Gmres.build().with_preconditioner(M).with_tolerance(1e-9).on(exec).generate(A)
    assert solver.preconditioner is M
    with pytest.raises(ValueError, match="'ilut'"):
        batched_gmres(matrices, B, M="ilut", executor=exec)
