"""Reference-vs-device tests of the OpenCL Csr kernels, for every SpMV strategy."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.opencl.executor import DeviceInfo
from ginkpy.opencl.matrix import csr_kernels, csr_strategy
from ginkpy.problems import arrow, poisson_3d, power_law, webbase_like

from conftest import Same, assert_sums, sum_tol, tol, twin

# Forced launches of each strategy, with work-groups of other sizes than powers of two where
# that is allowed: long rows in short pieces, with one or several work-items per other row; the
# merge path with short parts (odd piece length, so rows cross work-item and work-group
# boundaries); row blocks several to a work-group (the last one only partly used).
STRATEGIES = {
    "classical": dict(name="classical"),
    "vector": dict(name="vector", lanes=8),
    "long_rows": dict(name="long_rows", work_group=48, items=3),
    "long_rows_lanes": dict(name="long_rows", work_group=32, lanes=4, items=5),
    "merge_path": dict(name="merge_path", work_group=96, items=7),
    "row_blocks": dict(name="row_blocks", work_group=4, items=301),
    "automatic": {},
}
LONG_ROW = 100_000


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def dtype(request):
    return np.dtype(request.param)


@pytest.fixture(params=list(STRATEGIES))
def strategy(request):
    return STRATEGIES[request.param]


def _random_csr(rng, n, m, dtype, long_row=0, long_rows=None):
    """n x m with 0 to 12 entries per row (a fifth of the rows empty) and, if long_row, one row
    of that many entries; long_rows: {row: entries} of more such rows."""
    lengths = np.where(rng.random(n) < 0.2, 0, rng.integers(1, 13, n))
    if long_row:
        lengths[n // 3] = long_row
    for row, length in (long_rows or {}).items():
        lengths[row] = length
    rows = np.repeat(np.arange(n), lengths)
    cols = np.concatenate([rng.choice(m, size=length, replace=False) for length in lengths])
    return sp.csr_matrix((rng.standard_normal(rows.size), (rows, cols)), shape=(n, m), dtype=dtype)


def _spmv_both(ref, ocl, S, b, x0, strategy, alpha=None, beta=None):
    """x = S b (or alpha S b + beta x0) on the reference executor and on the device."""
    out = []
    for exec in (ref, ocl):
        A = gk.matrix.Csr.from_scipy(exec, S)
        if exec is ocl:
            csr_strategy.select_strategy(ocl, A, **strategy)
        x = gk.matrix.Dense.from_numpy(exec, x0)
        B = gk.matrix.Dense.from_numpy(exec, b)
        if alpha is None:
            A.apply(B, x)
        else:
            A.apply(gk.matrix.Dense.from_numpy(exec, alpha), B, gk.matrix.Dense.from_numpy(exec, beta), x)
        out.append(x.to_numpy())
    return out


def _assert_close(device, reference, scale, dtype):
    """|device - reference| <= tol * scale entry-wise, scale = |alpha| |A| |b| + |beta| |x|:
    the size of the terms summed, which bounds the rounding error of any summation order."""
    assert device.dtype == reference.dtype == dtype
    err = np.abs(device.astype(np.float64) - reference)
    assert (err <= tol(dtype) * scale).all(), f"max error {err.max()} (scale {scale.max()})"


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("max_row", [12, 16])
def test_spmv_classical_unrolled(ref, ocl, rng, dtype, k, max_row):
    # the classical kernel with each row's loop unrolled to max_row turns (rows of 0 to 12 entries)
    S = _random_csr(rng, 1001, 777, dtype)
    b = rng.standard_normal((777, k)).astype(dtype)
    x0 = rng.standard_normal((1001, k)).astype(dtype)
    alpha, beta = np.array([[1.5]], dtype), np.array([[-0.5]], dtype)
    expected, got = _spmv_both(ref, ocl, S, b, x0, dict(name="classical", max_row=max_row), alpha, beta)
    _assert_close(got, expected, 1.5 * (abs(S) @ np.abs(b)) + 0.5 * np.abs(x0), dtype)


def test_short_rows_unroll_the_classical_loop(ocl):
    # the automatic choice: stencil rows (at most 7 or 3 entries) unrolled to 8 or 4 turns, longer ones not
    short = csr_strategy.select_strategy(ocl, gk.matrix.Csr.from_scipy(ocl, poisson_3d(5)), "classical")
    assert short.max_row == 8
    assert "unrolled to 8 turns" in csr_strategy.describe(short)
    tridiagonal = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(50, 50), format="csr")
    assert csr_strategy.select_strategy(ocl, gk.matrix.Csr.from_scipy(ocl, tridiagonal), "classical").max_row == 4
    long = csr_strategy.select_strategy(ocl, gk.matrix.Csr.from_scipy(ocl, sp.random(40, 40, 0.5, format="csr",
                                                                                     random_state=0)), "classical")
    assert long.max_row == 0


@pytest.mark.parametrize("k", [1, 3])
def test_spmv(ref, ocl, rng, dtype, strategy, k):
    S = _random_csr(rng, 1001, 777, dtype)
    b = rng.standard_normal((777, k)).astype(dtype)
    x0 = np.full((1001, k), np.nan, dtype)  # plain SpMV must not read x
    device, reference = _spmv_both(ref, ocl, S, b, x0, strategy)
    _assert_close(device, reference, abs(S) @ np.abs(b.astype(np.float64)), dtype)


@pytest.mark.parametrize("per_column", [False, True], ids=["1x1", "1xk"])
def test_advanced_spmv(ref, ocl, rng, dtype, strategy, per_column):
    k = 3
    S = _random_csr(rng, 1001, 1234, dtype)
    b = rng.standard_normal((1234, k)).astype(dtype)
    x0 = rng.standard_normal((1001, k)).astype(dtype)
    alpha = np.array([[-1.5, 0.0, 2.0]] if per_column else [[0.75]], dtype)
    beta = np.array([[0.0, -2.0, 1.0]] if per_column else [[-0.5]], dtype)
    device, reference = _spmv_both(ref, ocl, S, b, x0, strategy, alpha, beta)
    scale = np.abs(alpha) * (abs(S) @ np.abs(b.astype(np.float64))) + np.abs(beta) * np.abs(x0)
    _assert_close(device, reference, scale, dtype)


@pytest.mark.parametrize("k", [1, 3])
def test_spmv_one_very_long_row(ref, ocl, rng, dtype, strategy, k):
    S = _random_csr(rng, 301, LONG_ROW + 7, dtype, long_row=LONG_ROW)
    b = rng.standard_normal((S.shape[1], k)).astype(dtype)
    alpha, beta = np.array([[2.0]], dtype), np.array([[0.5]], dtype)
    x0 = rng.standard_normal((301, k)).astype(dtype)
    device, reference = _spmv_both(ref, ocl, S, b, x0, strategy, alpha, beta)
    _assert_close(device, reference, 2 * (abs(S) @ np.abs(b.astype(np.float64))) + 0.5 * np.abs(x0), dtype)


def test_spmv_several_long_rows(ref, ocl, rng, dtype, strategy):
    # long rows first, last and between, of different lengths: several rows split over parts
    # (or pieces), some over more parts than others
    S = _random_csr(rng, 501, 30_011, dtype, long_rows={0: 30_000, 250: 9_000, 251: 700, 500: 4_000})
    b = rng.standard_normal((S.shape[1], 2)).astype(dtype)
    device, reference = _spmv_both(ref, ocl, S, b, np.zeros((501, 2), dtype), strategy)
    _assert_close(device, reference, abs(S) @ np.abs(b.astype(np.float64)), dtype)


@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (300, 299)])
def test_spmv_without_nonzeros(ref, ocl, strategy, shape):
    S = sp.csr_matrix(shape)
    x0 = np.ones((shape[0], 2))
    device, reference = _spmv_both(ref, ocl, S, np.ones((shape[1], 2)), x0, strategy,
                                   np.array([[3.0]]), np.array([[2.0]]))
    np.testing.assert_array_equal(device, reference)
    np.testing.assert_array_equal(device, 2 * x0)
    device, _ = _spmv_both(ref, ocl, S, np.ones((shape[1], 2)), x0, strategy)
    np.testing.assert_array_equal(device, np.zeros_like(x0))


def test_generated_problems_all_strategies_agree(ocl, rng):
    # power-law, web-crawl-like and arrow rows in float64; each strategy against SciPy
    for S in (power_law(2001, seed=3), webbase_like(20_000, seed=2), arrow(1501)):
        b = rng.standard_normal((S.shape[0], 1))
        for config in STRATEGIES.values():
            A = gk.matrix.Csr.from_scipy(ocl, S)
            csr_strategy.select_strategy(ocl, A, **config)
            x = gk.matrix.Dense.zeros(ocl, (S.shape[0], 1))
            A.apply(gk.matrix.Dense.from_numpy(ocl, b), x)
            _assert_close(x.to_numpy(), S @ b, abs(S) @ np.abs(b), np.float64)


def test_spmv_after_the_matrix_arrays_are_replaced(ocl, rng):
    # the launches keep the matrix's arrays; new arrays must be used, not the old ones
    S = _random_csr(rng, 1001, 5007, np.float64, long_row=5000)
    b = gk.matrix.Dense.from_numpy(ocl, rng.standard_normal((5007, 2)))
    for config in STRATEGIES.values():
        A = gk.matrix.Csr.from_scipy(ocl, S)
        csr_strategy.select_strategy(ocl, A, **config)
        x = gk.matrix.Dense.zeros(ocl, (1001, 2))
        A.apply(b, x)
        A.values = ocl.from_host(-2 * S.data)
        A.apply(b, x)
        _assert_close(x.to_numpy(), -2 * (S @ b.to_numpy()), 2 * (abs(S) @ np.abs(b.to_numpy())), np.float64)


# -- SpMV with the dot products that follow it (spmv_dots) -----------------------------------------

# Forced strategies: fused for classical, vector and row blocks that split no row (several blocks
# to a work-group on a GPU layout, one on a CPU layout); the others, and row blocks that split the
# long row, run the SpMV and then components.reduction.dots. (strategy, long row length, fused)
DOTS_STRATEGIES = {
    "classical": (dict(name="classical"), 900, True),
    "classical_unrolled": (dict(name="classical", max_row=12), 0, True),
    "vector": (dict(name="vector", lanes=8), 900, True),
    "row_blocks": (dict(name="row_blocks", items=301), 0, True),
    "row_blocks_split": (dict(name="row_blocks", items=301), 900, False),
    "long_rows": (dict(name="long_rows", work_group=48, items=3), 900, False),
    "merge_path": (dict(name="merge_path", work_group=96, items=7), 900, False),
    "automatic": ({}, 900, None),
}
DOTS_N, DOTS_M = 5001, 1001  # more rows than the fused kernels' work-items: each takes several


@pytest.fixture(scope="module")
def dots_matrices():
    """{long row length: matrix} of the spmv_dots tests, made once."""
    rng = np.random.default_rng(7)
    return {long_row: _random_csr(rng, DOTS_N, DOTS_M, np.float64, long_row=long_row) for long_row in (0, 900)}


# (k, the second dot product): one dot product, two (u . x, w . x), and x . x as the second (w is
# x); every variant for the fused kernels, one for those that fall back to reduction.dots
DOTS_VARIANTS = [(1, None), (3, "w"), (5, "x")]
DOTS_CASES = [(name, *variant) for name in ("classical", "classical_unrolled", "vector", "row_blocks")
              for variant in DOTS_VARIANTS]
DOTS_CASES += [(name, 3, "x") for name in ("row_blocks_split", "long_rows", "merge_path")] + [("automatic", 1, None)]


@pytest.mark.parametrize("name, k, second", DOTS_CASES, ids=str)
def test_spmv_dots(ref, dev, rng, dtype, dots_matrices, name, k, second, monkeypatch):
    # x = A b and the partial sums of u . x, and of w . x (second "w") or x . x (second "x": w is x)
    config, long_row, fused = DOTS_STRATEGIES[name]
    if name == "classical_unrolled":
        # the rows' loops unrolled (max_row), 3 rows a work-item at once as on a GPU, any device
        monkeypatch.setattr(csr_kernels, "rows_at_once", lambda info: 3)
    S = dots_matrices[long_row].astype(dtype)
    strategies = []

    def matrix(exec):
        A = gk.matrix.Csr.from_scipy(exec, S)
        if exec is dev:
            strategies.append(csr_strategy.select_strategy(dev, A, **config))
        return A

    b, u, w = (rng.standard_normal(shape).astype(dtype) for shape in ((DOTS_M, k), (DOTS_N, k), (DOTS_N, k)))
    w_arg = {None: None, "w": w, "x": Same(2)}[second]
    out = twin(ref, dev, "matrix.csr.spmv_dots", matrix, b, np.full((DOTS_N, k), np.nan), u, w_arg,
                np.zeros((1, k)), dtype=dtype)
    strategy = strategies[0]
    if strategy.name == "row_blocks" and fused is not None:
        assert (strategy.runs is None) == fused  # no row split over blocks: the fused kernel
    # x = A b, every entry within the rounding of its row's sum
    terms = np.diff(S.indptr).max()
    scale = abs(S) @ np.abs(b.astype(np.float64))
    err = np.abs(out[1][2].astype(np.float64) - out[0][2])
    assert (err <= sum_tol(dtype, terms) * scale).all()
    # the partial sums, within the rounding of n products plus the rounding x has (checked above)
    magnitude = (np.abs(u) * scale).sum(axis=0)
    if second is not None:
        magnitude = np.concatenate([magnitude, ((np.abs(w) if second == "w" else 2 * scale) * scale).sum(axis=0)])
    assert_sums(out[1][5], out[0][5], magnitude, DOTS_N, dtype, factor=1 + np.sqrt(terms / DOTS_N))
    if fused and strategy.name == "row_blocks":
        assert out[1][5].shape[0] == strategy.parts  # one partial sum per block


def test_scale_columns(ref, ocl, rng, dtype):
    # the values of A D, D = diag(diag): one product per stored entry
    S = _random_csr(rng, 1237, 1001, dtype, long_row=900)
    diag = rng.uniform(-2, 2, 1001).astype(dtype)
    out = twin(ref, ocl, "matrix.csr.scale_columns", S, diag, lambda exec: exec.alloc((S.nnz,), dtype),
                dtype=dtype)
    np.testing.assert_allclose(out[1][2], out[0][2], rtol=tol(dtype), atol=0)
    np.testing.assert_allclose(out[0][2], S.data * diag[S.indices], rtol=tol(dtype), atol=0)


def test_convert_to_dense(ref, ocl, rng, dtype):
    S = _random_csr(rng, 517, 263, dtype)
    device = gk.matrix.Csr.from_scipy(ocl, S).to_dense().to_numpy()
    np.testing.assert_array_equal(device, gk.matrix.Csr.from_scipy(ref, S).to_dense().to_numpy())
    assert device.dtype == dtype


@pytest.mark.parametrize("shape", [(517, 263), (263, 517), (301, LONG_ROW + 7)])
def test_extract_diagonal(ref, ocl, rng, dtype, shape):
    S = _random_csr(rng, *shape, dtype, long_row=LONG_ROW if shape[1] > LONG_ROW else 0)
    # diagonal: half the entries stored, half missing
    d = np.where(rng.random(min(shape)) < 0.5, rng.standard_normal(min(shape)), 0).astype(dtype)
    S = (S - sp.diags(S.diagonal(), shape=shape) + sp.diags(d, shape=shape)).tocsr()
    S.eliminate_zeros()
    device = gk.matrix.Csr.from_scipy(ocl, S).extract_diagonal().to_numpy()
    np.testing.assert_array_equal(device, gk.matrix.Csr.from_scipy(ref, S).extract_diagonal().to_numpy())
    np.testing.assert_array_equal(device[:, 0], S.diagonal())
    assert (device == 0).any() and (device != 0).any()  # stored and missing diagonal entries


def test_is_finite(ocl, rng, dtype):
    S = _random_csr(rng, 700, 700, dtype)
    assert gk.matrix.Csr.from_scipy(ocl, S).is_finite()
    for bad in (np.nan, np.inf, -np.inf):
        T = S.copy()
        T.data[rng.integers(T.nnz)] = bad
        assert not gk.matrix.Csr.from_scipy(ocl, T).is_finite()
    assert gk.matrix.Csr.from_scipy(ocl, sp.csr_matrix((4, 4))).is_finite()


def test_zero_size_conversions(ocl):
    for shape in ((0, 0), (0, 3), (3, 0)):
        A = gk.matrix.Csr.from_scipy(ocl, sp.csr_matrix(shape))
        assert A.to_dense().shape == shape
        assert A.extract_diagonal().shape == (min(shape), 1)


def _info(is_cpu):
    return DeviceInfo(name="test", platform="test", is_cpu=is_cpu, is_gpu=not is_cpu, fp64=True,
                      max_work_group_size=1024, local_mem_size=49152, compute_units=132,
                      subgroups=False, global_mem_size=2**34)


def test_automatic_choice_by_row_lengths():
    def choose(S, is_cpu=False):
        return csr_strategy._choose(_info(is_cpu), S.shape[0], S.nnz, np.diff(S.indptr))

    assert choose(poisson_3d(10)) == "classical"         # short, regular stencil rows
    assert choose(sp.random(500, 500, 0.2, format="csr", random_state=0)) == "vector"  # ~100 per row
    assert choose(power_law(5000)) == "merge_path"       # a few very long rows
    assert choose(arrow(1000)) == "long_rows"            # one full row, the others short
    assert choose(sp.csr_matrix((3, 3))) == "classical"  # nothing stored
    assert choose(poisson_3d(10), is_cpu=True) == "row_blocks"  # CPUs: balanced blocks of rows


def test_strategy_is_kept_in_cache_and_can_be_forced(ocl):
    A = gk.matrix.Csr.from_scipy(ocl, poisson_3d(5))
    first = csr_strategy.select_strategy(ocl, A)
    assert A.cache[csr_strategy.CACHE_KEY] is first
    assert csr_strategy.select_strategy(ocl, A) is first
    forced = csr_strategy.select_strategy(ocl, A, "vector", lanes=4)
    assert (forced.name, forced.lanes) == ("vector", 4)
    assert csr_strategy.select_strategy(ocl, A) is forced


def test_bad_strategy_parameters(ocl):
    A = gk.matrix.Csr.from_scipy(ocl, poisson_3d(3))
    with pytest.raises(ValueError, match="unknown SpMV strategy 'fast'"):
        csr_strategy.select_strategy(ocl, A, "fast")
    with pytest.raises(ValueError, match="lanes must be a power of two"):
        csr_strategy.select_strategy(ocl, A, "vector", lanes=3)
    with pytest.raises(ValueError, match="work_group must be between 1"):
        csr_strategy.select_strategy(ocl, A, "classical", work_group=0)
    with pytest.raises(ValueError, match="items"):
        csr_strategy.select_strategy(ocl, A, "row_blocks", items=0)
    with pytest.raises(ValueError, match="longest row's length 7"):
        csr_strategy.select_strategy(ocl, A, "classical", max_row=6)
    with pytest.raises(ValueError, match="must fit the device's"):
        csr_strategy.select_strategy(ocl, A, "merge_path", work_group=1,
                                    items=ocl.info.local_mem_size)
    with pytest.raises(ValueError, match="merge_path needs 2 <= items"):
        csr_strategy.select_strategy(ocl, A, "merge_path", items=1)
    with pytest.raises(ValueError, match="lanes must be a power of two >= 1 dividing"):
        csr_strategy.select_strategy(ocl, A, "long_rows", work_group=32, lanes=64)


def test_merge_path_bounds_by_hand():
    # rows of 2, 0, 5 and 1 entries: row ends at path positions 2, 3, 9, 11 (path of 12 steps)
    row_ptrs = np.array([0, 2, 2, 7, 8])
    bounds, runs = csr_strategy._merge_path_bounds(row_ptrs, 4, align=False)
    # parts begin at diagonals 0, 4, 8 (rows 0, 2, 2), end at 12 (row 4 = n); part 0 ends
    # before row 2's first entry, part 1 inside it: one carry, of part 1 into row 2
    np.testing.assert_array_equal(bounds, [0, 0, 4, 2, 8, 2, 12, 4])
    np.testing.assert_array_equal(runs, [1, 1, 2])
    # aligned: 4 is already at a row end, 8 moves to 10 (after row 2's end); no row is split
    bounds, runs = csr_strategy._merge_path_bounds(row_ptrs, 4, align=True)
    np.testing.assert_array_equal(bounds, [0, 0, 4, 2, 10, 3, 12, 4])
    assert runs.size == 0
    # a row of 100 entries (path steps 1 to 102) is longer than half a part: it stays split
    # over parts 0 to 9 (the last bound moves from 100 to 103, after its end), and the
    # carries of parts 0 to 8 run into it
    bounds, runs = csr_strategy._merge_path_bounds(np.array([0, 1, 101, 102]), 10, align=True)
    np.testing.assert_array_equal(bounds[::2], [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 103, 105])
    np.testing.assert_array_equal(bounds[1::2], [0] + [1] * 9 + [2, 3])
    np.testing.assert_array_equal(runs, [0, 9, 1])


def test_long_row_pieces_by_hand():
    # rows of 2, 10, 1 and 7 entries; rows 1 and 3 cut into pieces of at most 4 entries
    row_ptrs = np.array([0, 2, 12, 13, 20])
    bounds, runs = csr_strategy._long_row_pieces(row_ptrs, np.array([1, 3]), 4)
    np.testing.assert_array_equal(bounds, [2, 6, 6, 10, 10, 12, 13, 17, 17, 20])
    np.testing.assert_array_equal(runs, [0, 3, 1, 3, 2, 3])  # (first piece, pieces, row)
    bounds, runs = csr_strategy._long_row_pieces(row_ptrs, np.array([], int), 4)
    assert bounds.size == runs.size == 0


@pytest.mark.parametrize("name", csr_strategy.STRATEGIES)
def test_spmv_strategy_is_described(ocl, name):
    """`ginkpy info --executor` says which strategy a matrix's SpMV got, with its sizes."""
    S = sp.random(300, 300, density=0.02, format="csr", random_state=1) + sp.eye(300, format="csr")
    A = gk.matrix.Csr.from_scipy(ocl, S)
    csr_strategy.select_strategy(ocl, A, name=name)
    line = A.spmv_strategy()
    assert line.startswith(f"{name}: ") and "work-group" in line
