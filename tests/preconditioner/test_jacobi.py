"""Jacobi: hand-checked inverse blocks, block detection, errors, reference-vs-device apply,
and Jacobi-preconditioned CG on a real matrix."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import matrix_path, tol
from ginkpy.problems import convection_diffusion_2d, poisson_2d

Jacobi = gk.preconditioner.Jacobi


def _generate(exec, A, max_block_size=32, block_pointers=None, dtype=None):
    params = Jacobi.build().with_max_block_size(max_block_size).with_block_pointers(block_pointers)
    return params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A, dtype))


def _apply(exec, M, b, *scalars):
    """M b, or with scalars (alpha, beta, x0): alpha M b + beta x0, as numpy of b's shape."""
    shape = np.shape(b)
    b = gk.matrix.Dense.from_numpy(exec, b, M.dtype)
    if scalars:
        alpha, beta, x0 = scalars
        x = M.apply(alpha, b, beta, gk.matrix.Dense.from_numpy(exec, x0, M.dtype))
    else:
        x = M.apply(b, gk.matrix.Dense.zeros(exec, b.shape, M.dtype))
    return x.to_numpy().reshape(shape)


# 2 x 2 blocks [[4, 1], [2, 3]] (inverse [[3, -1], [-2, 4]] / 10) and [[0, 1], [1, 1]] (zero
# diagonal entry, so the inverse [[-1, 1], [1, 0]] needs a row swap), coupled outside the blocks.
BLOCKS_4X4 = np.array([[4.0, 1.0, 0.0, 7.0],
                       [2.0, 3.0, 5.0, 0.0],
                       [0.0, 9.0, 0.0, 1.0],
                       [1.0, 0.0, 1.0, 1.0]])


def test_builder_defaults_to_ginkgo_block_size():
    params = Jacobi.build()
    assert params.max_block_size == 32 and params.block_pointers is None
    assert params.with_max_block_size(1).max_block_size == 1


def test_scalar_jacobi_divides_by_the_diagonal(exec):
    A = np.array([[2.0, 1.0], [-1.0, 4.0]])
    M = _generate(exec, A, max_block_size=1)
    assert M.num_blocks == 2 and M.block_stride == 1
    np.testing.assert_array_equal(_apply(exec, M, np.array([[1.0, 6.0], [2.0, -8.0]])),
                                  [[0.5, 3.0], [0.5, -2.0]])
    # x = alpha D^-1 b + beta x with one alpha per column
    out = _apply(exec, M, np.array([[1.0, 6.0], [2.0, -8.0]]), np.array([2.0, -1.0]), 3.0, np.ones((2, 2)))
    np.testing.assert_array_equal(out, [[4.0, 0.0], [4.0, 5.0]])


def test_block_jacobi_hand_checked_inverse_blocks(exec):
    M = _generate(exec, BLOCKS_4X4, block_pointers=[0, 2, 4])
    np.testing.assert_array_equal(M.block_pointers, [0, 2, 4])
    blocks = exec.to_host(M.blocks).transpose(0, 2, 1)  # stored transposed
    np.testing.assert_allclose(blocks[0], [[0.3, -0.1], [-0.2, 0.4]], rtol=1e-15)
    np.testing.assert_array_equal(blocks[1], [[-1.0, 1.0], [1.0, 0.0]])
    # x = D^-1 b for b = [10, 10, 2, 3] (two columns: b and 2 b)
    b = np.array([10.0, 10.0, 2.0, 3.0])
    np.testing.assert_allclose(_apply(exec, M, np.c_[b, 2 * b]), [[2, 4], [2, 4], [1, 2], [2, 4]], rtol=1e-15)
    out = _apply(exec, M, b, 0.5, -1.0, np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(out, [0.0, -1.0, -2.5, -3.0], rtol=1e-15, atol=1e-15)


def test_mixed_block_sizes_and_dense_input(exec):
    # blocks of 1 and 3 rows: the 1 x 1 block is padded to 3 x 3 with zeros
    A = np.diag([2.0, 1.0, 1.0, 1.0]) + np.diag([0.0, 1.0, 1.0], 1)
    M = Jacobi.build().with_block_pointers([0, 1, 4]).on(exec).generate(gk.matrix.Dense.from_numpy(exec, A))
    assert M.block_stride == 3
    blocks = exec.to_host(M.blocks).transpose(0, 2, 1)
    np.testing.assert_array_equal(blocks[0], [[0.5, 0, 0], [0, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(blocks[1], np.linalg.inv(A[1:, 1:]))
    np.testing.assert_array_equal(_apply(exec, M, np.array([1.0, 3.0, 2.0, 1.0])), [0.5, 2.0, 1.0, 1.0])


def _grouped_pattern():
    """6 rows: rows 0-2 share the pattern {0, 1, 2, 5}, row 3 is {3}, rows 4-5 share {0, 4, 5}."""
    A = np.zeros((6, 6))
    A[np.ix_([0, 1, 2], [0, 1, 2, 5])] = 1.0
    A[3, 3] = 1.0
    A[np.ix_([4, 5], [0, 4, 5])] = 1.0
    return A + 9.0 * np.eye(6)


@pytest.mark.parametrize("max_block_size, expected", [
    (32, [0, 6]),         # supervariables 3, 1, 2 agglomerate into one block
    (4, [0, 4, 6]),       # 3 + 1 fits, adding 2 would not
    (3, [0, 3, 6]),       # 3 | 1 + 2
    (2, [0, 2, 4, 6]),    # supervariable of 3 split into 2 + 1, then 2 | 1 + 1 | 2
    (1, [0, 1, 2, 3, 4, 5, 6]),
])
def test_supervariable_agglomeration(ref, max_block_size, expected):
    M = _generate(ref, _grouped_pattern(), max_block_size)
    np.testing.assert_array_equal(M.block_pointers, expected)


def test_blocks_of_a_block_structured_matrix(exec, rng):
    # 3 unknowns per grid node: every node's rows share one pattern (a supervariable of 3)
    node_values = rng.uniform(0.5, 1.0, (3, 3)) + 3 * np.eye(3)
    A = sp.kron(poisson_2d(3), node_values, format="csr")
    M = _generate(exec, A, max_block_size=3)
    np.testing.assert_array_equal(M.block_pointers, np.arange(0, 28, 3))
    M = _generate(exec, A, max_block_size=7)
    np.testing.assert_array_equal(M.block_pointers, [0, 6, 12, 18, 24, 27])
    dense = A.toarray()
    inverse = sp.block_diag([np.linalg.inv(dense[s:e, s:e]) for s, e in [(0, 6), (6, 12), (12, 18),
                                                                           (18, 24), (24, 27)]])
    b = rng.standard_normal((27, 2))
    np.testing.assert_allclose(_apply(exec, M, b), inverse @ b, rtol=1e-12, atol=1e-12)


def test_zero_diagonal_is_replaced_by_one_with_a_warning(exec, caplog):
    # PETSc's PCJACOBI rule: a zero diagonal entry (or one too small to invert, as 4e-310)
    # becomes 1; a warning names how many and the first row
    A = np.diag([2.0, 4.0, 0.0, 4e-310, 8.0])
    with caplog.at_level("WARNING", logger="ginkpy"):
        M = _generate(exec, A, max_block_size=1)
    assert "2 diagonal entries" in caplog.text and "row 2" in caplog.text
    x = M.apply(gk.matrix.Dense.from_numpy(exec, np.ones(5)), gk.matrix.Dense.zeros(exec, (5, 1))).to_numpy()[:, 0]
    np.testing.assert_array_equal(x, [0.5, 0.25, 1.0, 1.0, 0.125])


def test_singular_block_names_the_block(exec):
    A = np.eye(5)
    A[2:4, 2:4] = [[1.0, 2.0], [0.5, 1.0]]  # singular
    with pytest.raises(ValueError, match=r"block 1 \(rows 2 to 3\) is singular"):
        _generate(exec, A, block_pointers=[0, 2, 4, 5])
    A[2:4, 2:4] = [[0.1, 0.3], [0.2, 0.6]]  # singular, but not exactly so after rounding
    with pytest.raises(ValueError, match=r"block 1 \(rows 2 to 3\) is singular"):
        _generate(exec, A, block_pointers=[0, 2, 4, 5])


def test_badly_scaled_blocks_are_not_singular(ref):
    # rows and columns of very different scales: the inverse still exists and is found
    block = np.array([[1e20, 1.0], [1.0, 1e-10]])
    A = sp.block_diag([block, [[1.0, 1e-20], [1.0, 2e-20]]]).toarray()
    M = _generate(ref, A, block_pointers=[0, 2, 4])
    b = np.arange(1.0, 5.0)
    expected = np.r_[np.linalg.solve(A[:2, :2], b[:2]), np.linalg.solve(A[2:, 2:], b[2:])]
    np.testing.assert_allclose(_apply(ref, M, b), expected, rtol=1e-12)


def test_invalid_parameters_and_matrices(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(2))
    for value in (0, 33, 2.5, True):
        with pytest.raises(ValueError, match=r"max_block_size must be an integer >= 1 and <= 32"):
            Jacobi.build().with_max_block_size(value)
    for ptrs in ([1, 4], [0, 2, 2, 4], [0, 3], [[0, 4]], [0.0, 4.0]):
        with pytest.raises(ValueError, match="block_pointers must"):
            Jacobi.build().with_block_pointers(ptrs).on(ref).generate(A)
    with pytest.raises(ValueError, match=r"block 0 \(rows 0 to 2\) has 3 rows, more than max_block_size 2"):
        Jacobi.build().with_max_block_size(2).with_block_pointers([0, 3, 4]).on(ref).generate(A)
    with pytest.raises(ValueError, match="square"):
        Jacobi.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, np.ones((2, 3))))
    bad = poisson_2d(2)
    bad.data[1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Jacobi.build().on(ref).generate(gk.matrix.Csr.from_scipy(ref, bad))
    with pytest.raises(TypeError, match="LinOp"):
        Jacobi.build().on(ref).generate(poisson_2d(2))
    solver = gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(1)).on(ref).generate(A)
    with pytest.raises(TypeError, match="Jacobi needs a matrix"):
        Jacobi.build().on(ref).generate(solver)


def test_empty_matrix(exec):
    M = _generate(exec, sp.csr_matrix((0, 0)))
    assert M.num_blocks == 0
    assert _apply(exec, M, np.zeros((0, 2))).shape == (0, 2)


def _random_block_system(rng, n, max_block_size):
    """A random sparse n x n matrix with nonsingular diagonal blocks of random sizes up to
    max_block_size, and its block pointers."""
    sizes = []
    while sum(sizes) < n:
        sizes.append(int(rng.integers(1, max_block_size + 1)))
    sizes[-1] -= sum(sizes) - n
    blocks = [rng.standard_normal((s, s)) + s * np.eye(s) for s in sizes]
    A = sp.block_diag(blocks, format="csr") + sp.random(n, n, density=0.01, random_state=rng)
    return A.tocsr(), np.r_[0, np.cumsum(sizes)]


def assert_inverse_blocks(device, reference, conditioning, dtype):
    """Inverse blocks (..., stride, stride) that agree as two pivoted inversions may: per block
    |D_dev^-1 - D_ref^-1|_1 <= 4 stride eps cond_1(D) |D_ref^-1|_1."""
    stride = reference.shape[-1]
    norm = np.abs(reference).sum(axis=-1).max(axis=-1)  # blocks are stored transposed: row sums
    error = np.abs(device.astype(np.result_type(device.dtype, np.float64)) - reference).sum(axis=-1).max(axis=-1)
    bound = 4 * stride * np.finfo(dtype).eps * conditioning.reshape(norm.shape) * norm
    assert (error <= bound).all(), (error / np.maximum(bound, 1e-300)).max()


def _inverse_matrix(M):
    """D^-1 of a reference Jacobi as a scipy block-diagonal matrix, from its stored blocks."""
    sizes = np.diff(M.block_pointers)
    return sp.block_diag([block.T[:s, :s] for block, s in zip(M.blocks, sizes)], format="csr")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("max_block_size", [1, 5, 32])
@pytest.mark.parametrize("k", [1, 3])
def test_apply_reference_vs_device(ref, ocl, rng, dtype, max_block_size, k):
    n = 389  # more than a work-group, not a multiple of any block size
    A, ptrs = _random_block_system(rng, n, max_block_size)
    M_ref = _generate(ref, A, max_block_size, ptrs, dtype)
    M_ocl = _generate(ocl, A, max_block_size, ptrs, dtype)
    assert_inverse_blocks(ocl.to_host(M_ocl.blocks), M_ref.blocks, M_ref.conditioning, dtype)
    b = rng.standard_normal((n, k))
    x0 = rng.standard_normal((n, k))
    alpha = rng.standard_normal(k)
    # error bound of the dot products: ~10 eps times |M| |b| (and |alpha| |M| |b| + |beta x0|)
    abs_mb = abs(_inverse_matrix(M_ref)) @ np.abs(b)
    expected = _apply(ref, M_ref, b)
    assert (np.abs(_apply(ocl, M_ocl, b) - expected) <= tol(dtype) * abs_mb).all()
    expected = _apply(ref, M_ref, b, alpha, -0.5, x0)
    bound = tol(dtype) * (np.abs(alpha) * abs_mb + 0.5 * np.abs(x0))
    assert (np.abs(_apply(ocl, M_ocl, b, alpha, -0.5, x0) - expected) <= bound).all()


def test_reference_apply_matches_the_block_inverse(ref, rng):
    A, ptrs = _random_block_system(rng, 60, 7)
    M = _generate(ref, A, 7, ptrs)
    dense = A.toarray()
    inverse = sp.block_diag([np.linalg.inv(dense[s:e, s:e]) for s, e in zip(ptrs[:-1], ptrs[1:])])
    b = rng.standard_normal((60, 3))
    np.testing.assert_allclose(_apply(ref, M, b), inverse @ b, rtol=1e-10, atol=1e-12)


def _cg_iterations(exec, A, b, preconditioner):
    params = gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(2000),
                                                gk.stop.ResidualNorm.build().with_reduction_factor(1e-8))
    if preconditioner is not None:
        params = params.with_preconditioner(preconditioner)
    solver = params.on(exec).generate(A)
    log = gk.log.Convergence()
    solver.add_logger(log)
    x = solver.apply(gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.zeros(exec, (A.shape[0], 1)))
    assert log.has_converged
    return log.num_iterations, x.to_numpy()[:, 0]


def test_jacobi_cg_on_nos6(exec):
    # nos6 is badly scaled: SciPy's CG takes 668 iterations, with Jacobi 84
    A = gk.read(matrix_path("nos6.mtx"), exec)
    S = A.to_scipy()
    b = S @ np.ones(S.shape[0])
    plain, _ = _cg_iterations(exec, A, b, None)
    for max_block_size in (1, 32):
        iterations, x = _cg_iterations(exec, A, b, Jacobi.build().with_max_block_size(max_block_size))
        assert iterations < plain / 4, (max_block_size, iterations, plain)
        assert np.linalg.norm(b - S @ x) <= 1e-8 * np.linalg.norm(b) * (1 + 1e-6)


def test_transpose_is_the_jacobi_of_the_transpose(exec, rng):
    n = 37
    A = sp.random(n, n, density=0.2, random_state=1) + sp.diags(np.full(n, 4.0))
    for size in (1, 4):
        pointers = np.arange(0, n + 1, size) if size > 1 else None
        params = gk.preconditioner.Jacobi.build().with_max_block_size(size)
        if pointers is not None:
            params.with_block_pointers(np.append(pointers[pointers < n], n))
        M = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A)).transpose()
        MT = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A.T.tocsr()))
        b = gk.matrix.Dense.from_numpy(exec, rng.standard_normal((n, 2)))
        x, y = gk.matrix.Dense.zeros(exec, (n, 2)), gk.matrix.Dense.zeros(exec, (n, 2))
        np.testing.assert_allclose(M.apply(b, x).to_numpy(), MT.apply(b, y).to_numpy(), rtol=1e-12)


def test_bicg_takes_jacobi(exec):
    A = convection_diffusion_2d(8)
    b = np.ones(A.shape[0])
    solver = (gk.solver.Bicg.build().with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(4))
              .with_criteria(gk.stop.Iteration.build().with_max_iters(200),
                             gk.stop.ResidualNorm.build().with_reduction_factor(1e-10))
              .on(exec).generate(gk.matrix.Csr.from_scipy(exec, A)))
    log = gk.log.Convergence()
    solver.add_logger(log)
    x = solver.apply(gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.zeros(exec, (A.shape[0], 1)))
    assert log.has_converged
    assert np.linalg.norm(b - A @ x.to_numpy()[:, 0]) <= 1e-10 * np.linalg.norm(b)
