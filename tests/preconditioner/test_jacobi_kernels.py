"""Twins of the (block-)Jacobi generate kernels: block detection (supervariable agglomeration)
and the inversion of the diagonal blocks, single-system and batched, in both device layouts
(one work-item per block, a work-group per block in local memory); singular blocks reported
the same; the reference apply's D^-1 made once."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import tol
from test_jacobi import assert_inverse_blocks

INT32_MAX = np.iinfo(np.int32).max


def runs_matrix(rng, n, longest=6, long_run=0):
    """A sparse n x n pattern whose rows come in runs of one column pattern (runs of 1 to
    ``longest`` rows, and one of ``long_run`` rows if given), random values, a strong diagonal."""
    lengths = []
    while sum(lengths) < n:
        lengths.append(int(rng.integers(1, longest + 1)))
    if long_run:
        lengths.insert(len(lengths) // 2, long_run)
    rows, cols, start = [], [], 0
    for length in lengths:
        columns = np.unique(np.r_[np.arange(start, start + length), rng.integers(0, n + long_run, 3)])
        for r in range(start, start + length):
            rows += [r] * columns.size
            cols += list(columns)
        start += length
    size = start
    keep = np.array(cols) < size
    A = sp.csr_matrix((rng.standard_normal(int(keep.sum())), (np.array(rows)[keep], np.array(cols)[keep])),
                      shape=(size, size))
    return (A + sp.diags(np.full(size, 10.0))).tocsr()


def block_system(rng, n, largest, dtype=np.float64):
    """A random n x n matrix with nonsingular diagonal blocks of random sizes up to ``largest``
    (coupled outside the blocks), and its block pointers."""
    sizes = []
    while sum(sizes) < n:
        sizes.append(int(rng.integers(1, largest + 1)))
    sizes[-1] -= sum(sizes) - n
    blocks = [rng.standard_normal((s, s)) + s * np.eye(s) for s in sizes]
    if np.dtype(dtype).kind == "c":
        blocks = [b + 1j * rng.standard_normal(b.shape) for b in blocks]
    A = sp.block_diag(blocks, format="csr") + sp.random(n, n, density=0.01, random_state=rng)
    return A.tocsr().astype(dtype), np.r_[0, np.cumsum(sizes)].astype(np.int32)


def _host(exec, value):
    return value if isinstance(value, (int, np.ndarray)) else exec.to_host(value)


@pytest.mark.parametrize("max_block_size", [2, 3, 8, 13, 32])
def test_find_blocks_twin(ref, dev, rng, max_block_size):
    A = runs_matrix(rng, 601, long_run=77)  # more rows than a work-group; a run longer than any block
    out = [exec.run("preconditioner.jacobi.find_blocks", gk.matrix.Csr.from_scipy(exec, A), max_block_size)
           for exec in (ref, dev)]
    (ptrs, largest), (dev_ptrs, dev_largest) = out
    np.testing.assert_array_equal(dev.to_host(dev_ptrs), ptrs)
    assert dev_largest == largest == np.diff(ptrs).max() and largest <= max_block_size
    assert ptrs[0] == 0 and ptrs[-1] == A.shape[0]


def test_find_blocks_by_hand(exec):
    # rows 0-2 share a pattern, rows 3-4 another, row 5 its own: supervariables [0, 3), [3, 5), [5, 6)
    pattern = np.array([[1, 1, 1, 0, 0, 0], [1, 1, 1, 0, 0, 0], [1, 1, 1, 0, 0, 0],
                        [0, 0, 0, 1, 1, 0], [0, 0, 0, 1, 1, 0], [0, 0, 0, 0, 0, 1]], dtype=float)
    A = gk.matrix.Csr.from_scipy(exec, sp.csr_matrix(pattern))
    for max_block_size, expected in [(2, [0, 2, 3, 5, 6]), (3, [0, 3, 6]), (5, [0, 5, 6]), (6, [0, 6])]:
        ptrs, largest = exec.run("preconditioner.jacobi.find_blocks", A, max_block_size)
        np.testing.assert_array_equal(_host(exec, ptrs), expected)
        assert largest == np.diff(expected).max()


@pytest.mark.parametrize("dtype, largest", [(np.float64, 1), (np.float64, 4), (np.float64, 7), (np.float64, 32),
                                            (np.float32, 4), (np.float32, 32), (np.complex128, 1),
                                            (np.complex128, 7)])
def test_generate_twin(ref, dev, rng, dtype, largest):
    A, ptrs = block_system(rng, 331, largest, dtype)
    stride = int(np.diff(ptrs).max())
    out = []
    for exec in (ref, dev):
        csr = gk.matrix.Csr.from_scipy(exec, A)
        result = exec.run("preconditioner.jacobi.generate", csr, exec.from_host(ptrs), stride)
        out.append([_host(exec, v) for v in result])
    (blocks, row_blocks, conditioning, bad), (d_blocks, d_row_blocks, d_conditioning, d_bad) = out
    np.testing.assert_array_equal(bad, [INT32_MAX, 0])
    np.testing.assert_array_equal(d_bad, bad)
    np.testing.assert_array_equal(d_row_blocks, row_blocks)
    assert_inverse_blocks(d_blocks, blocks, conditioning, dtype)
    np.testing.assert_allclose(d_conditioning, conditioning, rtol=4 * stride * np.finfo(dtype).eps * conditioning.max())
    # the inverse blocks are the inverses, the conditioning |D|_1 |D^-1|_1
    dense = A.toarray()
    for k in (0, len(ptrs) // 2, len(ptrs) - 2):
        s, e = ptrs[k], ptrs[k + 1]
        inverse = np.linalg.inv(dense[s:e, s:e].astype(np.complex128 if dtype == np.complex128 else np.float64))
        np.testing.assert_allclose(d_blocks[k, :e - s, :e - s].T, inverse, rtol=100 * tol(dtype) * conditioning[k],
                                   atol=100 * tol(dtype) * conditioning[k] * np.abs(inverse).max())
        assert conditioning[k] == pytest.approx(np.linalg.cond(dense[s:e, s:e], 1), rel=1e-3)


def test_generate_reports_the_singular_blocks(ref, dev):
    # blocks [0, 2) fine, [2, 4) rank one, [4, 5) zero, [5, 8) a zero column, [8, 9) fine
    D = np.zeros((9, 9))
    D[0:2, 0:2] = [[2.0, 1.0], [1.0, 3.0]]
    D[2:4, 2:4] = [[1.0, 2.0], [2.0, 4.0]]
    D[5:8, 5:8] = [[1.0, 0.0, 2.0], [3.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
    D[8, 8] = 5.0
    D[0, 8] = D[8, 0] = 1.0  # outside the blocks: ignored
    rows, cols = np.nonzero(D)
    A = sp.coo_matrix((np.r_[D[rows, cols], 0.0], (np.r_[rows, 4], np.r_[cols, 4])), shape=D.shape).tocsr()  # (4, 4): 0
    ptrs = np.array([0, 2, 4, 5, 8, 9], np.int32)
    for exec in (ref, dev):
        _, _, conditioning, bad = exec.run("preconditioner.jacobi.generate", gk.matrix.Csr.from_scipy(exec, A),
                                           exec.from_host(ptrs), 3)
        np.testing.assert_array_equal(_host(exec, bad), [1, 3])
        conditioning = _host(exec, conditioning)
        assert np.isinf(conditioning[[1, 2, 3]]).all() and np.isfinite(conditioning[[0, 4]]).all()
    with pytest.raises(ValueError, match=r"diagonal block 1 \(rows 2 to 3\) is singular to working precision "
                                         r"\(and 2 more blocks\)"):
        gk.preconditioner.Jacobi.build().with_block_pointers(ptrs).with_max_block_size(3).on(dev).generate(
            gk.matrix.Csr.from_scipy(dev, A))


@pytest.mark.parametrize("largest", [1, 5, 16])
def test_batch_generate_twin(ref, dev, rng, largest):
    A, ptrs = block_system(rng, 97, largest)
    N = 7
    values = A.data[None, :] * rng.uniform(0.5, 2.0, (N, A.nnz))
    stride = int(np.diff(ptrs).max())
    out = []
    for exec in (ref, dev):
        batch = gk.batch.matrix.Csr.from_pattern(exec, A, values)
        result = exec.run("batch.preconditioner.jacobi.generate", batch, exec.from_host(ptrs), stride)
        out.append([_host(exec, v) for v in result])
    (blocks, row_blocks, conditioning, bad), (d_blocks, d_row_blocks, d_conditioning, d_bad) = out
    assert blocks.shape == (N, len(ptrs) - 1, stride, stride)
    np.testing.assert_array_equal(d_bad, bad)
    np.testing.assert_array_equal(d_row_blocks, row_blocks)
    assert_inverse_blocks(d_blocks, blocks, conditioning, np.float64)
    # item 3's blocks are those of its own matrix
    single = gk.preconditioner.Jacobi.build().with_block_pointers(ptrs).with_max_block_size(stride).on(ref).generate(
        gk.matrix.Csr.from_scipy(ref, sp.csr_matrix((values[3], A.indices, A.indptr), shape=A.shape)))
    assert_inverse_blocks(blocks[3], single.blocks, single.conditioning, np.float64)


def test_batch_singular_block_names_the_item(dev):
    good = sp.csr_matrix(np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 1.0]]))
    bad = good.copy()
    bad.data[:4] = [1.0, 1.0, 1.0, 1.0]
    A = gk.batch.matrix.Csr.from_scipy(dev, [good, good, bad, good])
    with pytest.raises(ValueError, match=r"diagonal block 0 \(rows 0 to 1\) of item 2 is singular"):
        gk.batch.preconditioner.Jacobi.build().with_max_block_size(2).on(dev).generate(A)


def test_reference_apply_makes_the_inverse_once(ref, rng, monkeypatch):
    import ginkpy.reference.preconditioner.jacobi_kernels as kernels
    made = []
    original = kernels.block_diagonal
    monkeypatch.setattr(kernels, "block_diagonal", lambda *args: made.append(1) or original(*args))
    A, ptrs = block_system(rng, 50, 6)
    M = gk.preconditioner.Jacobi.build().with_max_block_size(6).on(ref).generate(gk.matrix.Csr.from_scipy(ref, A))
    b = gk.matrix.Dense.from_numpy(ref, rng.standard_normal((50, 2)))
    x = gk.matrix.Dense.zeros(ref, (50, 2))
    for _ in range(3):
        M.apply(b, x)
    M.apply(gk.matrix.Dense.from_numpy(ref, np.array([[2.0]])), b, gk.matrix.Dense.from_numpy(ref, np.array([[1.0]])),
            x)
    assert len(made) == 1
    dense = A.toarray()
    blocks = sp.block_diag([np.linalg.inv(dense[s:e, s:e]) for s, e in zip(M.block_pointers[:-1],
                                                                            M.block_pointers[1:])])
    np.testing.assert_allclose(x.to_numpy(), 3 * (blocks @ b.to_numpy()), rtol=1e-10)
