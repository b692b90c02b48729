"""Pgm (parallel graph match aggregation): aggregates and Galerkin products checked by hand on
small graphs, each OpenCL kernel against its reference twin on random graphs larger than a
work-group, and the deterministic mode giving the same hierarchy on every executor."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import tol
from ginkpy.core.multigrid import pgm as pgm_module
from ginkpy.problems import poisson_2d, poisson_3d

Pgm = gk.multigrid.Pgm


def _level(exec, A, dtype=np.float64, **params):
    p = Pgm.build().with_aggregation_passes(1).with_over_interp(1.0)
    for key, value in params.items():
        getattr(p, f"with_{key}")(value)
    return p.on(exec).generate(gk.matrix.Csr.from_scipy(exec, sp.csr_matrix(A), dtype))


def _weighted_path(couplings, diagonal=10.0):
    """A symmetric path graph: a_{i,i+1} = -couplings[i], diagonal entries ``diagonal``."""
    c = -np.asarray(couplings, dtype=float)
    n = c.size + 1
    return sp.diags([c, np.full(n, diagonal), c], [-1, 0, 1], format="csr")


# -- by hand -----------------------------------------------------------------------------------

def test_pairs_of_a_path_and_their_galerkin_product(ref):
    # weights |a_ij| / 10: 0.5, 0.1, 0.4, 0.1, 0.3 -> 0-1, 2-3 and 4-5 choose each other
    A = _weighted_path([5, 1, 4, 1, 3])
    level = _level(ref, A)
    np.testing.assert_array_equal(level.aggregates(), [0, 0, 1, 1, 2, 2])
    # c_IJ = sum of a_ij over i in I, j in J
    expected = [[10 - 5 - 5 + 10, -1, 0], [-1, 10 - 4 - 4 + 10, -1], [0, -1, 10 - 3 - 3 + 10]]
    np.testing.assert_array_equal(level.coarse_op.to_scipy().toarray(), expected)
    np.testing.assert_array_equal(level.prolong_op.to_scipy().toarray(),
                                  [[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]])
    np.testing.assert_array_equal(level.restrict_op.to_scipy().toarray(), level.prolong_op.to_scipy().toarray().T)


def test_a_second_pass_aggregates_the_coarse_matrix(ref):
    # pass 2 on [[10, -1, 0], [-1, 12, -1], [0, -1, 14]]: 0-1 pair (1/12 > 1/14), then 2 joins them
    level = _level(ref, _weighted_path([5, 1, 4, 1, 3]), aggregation_passes=2)
    np.testing.assert_array_equal(level.aggregates(), np.zeros(6))
    assert level.coarse_op.to_scipy().toarray().tolist() == [[10 + 12 + 14 - 2 - 2]]


def test_a_row_whose_neighbours_are_aggregated_joins_the_strongest(ref):
    # 0-1 pair in sweep 1 (0.5 > 0.1); row 2's only neighbour is then taken: it joins
    A = _weighted_path([5, 1])
    np.testing.assert_array_equal(_level(ref, A).aggregates(), [0, 0, 0])
    # without sweeps left, it joins in the final assignment instead
    np.testing.assert_array_equal(_level(ref, A, max_iterations=1).aggregates(), [0, 0, 0])


def test_an_isolated_row_forms_its_own_aggregate(ref):
    A = sp.block_diag([_weighted_path([5]), sp.identity(1) * 3.0], format="csr")
    level = _level(ref, A)
    np.testing.assert_array_equal(level.aggregates(), [0, 0, 1])
    np.testing.assert_array_equal(level.coarse_op.to_scipy().toarray(), [[10, 0], [0, 3]])


def test_without_sweeps_every_row_stays_alone(ref):
    A = poisson_2d(5)
    level = _level(ref, A, max_iterations=0)
    np.testing.assert_array_equal(level.aggregates(), np.arange(25))
    assert (level.coarse_op.to_scipy() != A).nnz == 0


def test_equal_weights_are_broken_by_the_edge_hash_into_pairs(ref):
    # a uniform grid: Ginkgo's larger-column rule would match one pair per sweep
    level = _level(ref, poisson_2d(20))
    sizes = np.bincount(level.aggregates())
    assert level.num_aggregates < 0.6 * 400 and sizes.min() >= 1 and sizes.max() <= 6


def test_over_interp_divides_the_coarse_matrix(ref):
    A = _weighted_path([5, 1, 4, 1, 3])
    plain = _level(ref, A).coarse_op.to_scipy().toarray()
    np.testing.assert_allclose(_level(ref, A, over_interp=1.5).coarse_op.to_scipy().toarray(), plain / 1.5)


def test_a_pattern_that_is_not_symmetric_is_matched_on_its_symmetric_part(ref):
    # a_01 is stored, a_10 is not: 1 still sees 0 as a neighbour
    A = sp.csr_matrix(np.array([[4.0, -2, 0], [0, 4, 0], [0, -1, 4]]))
    level = _level(ref, A)
    np.testing.assert_array_equal(level.aggregates(), [0, 0, 0])
    assert level.coarse_op.to_scipy().toarray().tolist() == [[A.sum()]]


@pytest.mark.parametrize("passes", [1, 2, 3])
def test_coarse_matrix_is_the_galerkin_product(exec, passes):
    A = poisson_3d(7) + sp.diags(np.linspace(0, 1, 343))
    level = _level(exec, A, aggregation_passes=passes)
    agg = level.aggregates()
    P = sp.csr_matrix((np.ones(agg.size), (np.arange(agg.size), agg)))
    np.testing.assert_allclose(level.coarse_op.to_scipy().toarray(), (P.T @ A @ P).toarray(), rtol=1e-14, atol=1e-13)


def test_bad_input(ref):
    with pytest.raises(ValueError, match="square"):
        _level(ref, sp.csr_matrix(np.ones((2, 3))))
    with pytest.raises(ValueError, match="empty"):
        _level(ref, sp.csr_matrix((0, 0)))
    with pytest.raises(ValueError, match="max_iterations"):
        Pgm.build().with_max_iterations(-1)
    with pytest.raises(ValueError, match="over_interp"):
        Pgm.build().with_over_interp(0)
    with pytest.raises(ValueError, match="deterministic"):
        Pgm.build().with_deterministic(1)
    with pytest.raises(TypeError, match="LinOp"):
        Pgm.build().on(ref).generate(poisson_2d(3))


# -- reference vs device -----------------------------------------------------------------------

def _random_graph(rng, n=1001, per_row=6, symmetric=True):
    """A random sparse matrix with a nonzero diagonal (some entries stored as 0, some weights
    equal), of n > one work-group rows."""
    rows = rng.integers(0, n, n * per_row // 2)
    cols = rng.integers(0, n, rows.size)
    vals = rng.choice([-1.0, -2.0, -0.5, 0.0, 0.3], rows.size)
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    if symmetric:
        A = A + A.T
    A = (A + sp.diags(rng.uniform(4, 8, n))).tocsr()
    A.sum_duplicates()
    return A


def _both(ref, ocl, A, dtype=np.float64):
    return [gk.matrix.Csr.from_scipy(e, A, dtype) for e in (ref, ocl)]


def _host(exec, v):
    return exec.to_host(v)


def _flags(exec):
    return exec.from_host(np.zeros(2, np.int32))


def _matching_state(n, sweeps=15, ratio=0.05):
    state = np.zeros(2 + sweeps, np.int32)
    state[:2] = int(np.ceil(ratio * n)), n
    return state


def _state(rng, A, ref, sweeps):
    """Weights, aggregates, strongest neighbours and matching state after ``sweeps`` matching
    sweeps (reference)."""
    a = gk.matrix.Csr.from_scipy(ref, A)
    weights = np.empty(a.nnz)
    agg = np.full(A.shape[0], -1, np.int32)
    strongest = np.full(A.shape[0], -1, np.int32)
    ref.run("multigrid.pgm.compute_weights", a, ref.run("multigrid.pgm.diagonal_scale", a), weights, _flags(ref),
            strongest)
    state = _matching_state(A.shape[0])
    for s in range(sweeps):
        if s > 0:
            ref.run("multigrid.pgm.find_strongest_neighbor", a, weights, agg, strongest, state, s)
        ref.run("multigrid.pgm.match_edge", strongest, agg, state, s)
    return weights, agg, strongest, state


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("symmetric", [True, False])
def test_compute_weights_twin(ref, ocl, rng, dtype, symmetric):
    A = _random_graph(rng, symmetric=symmetric).tolil()
    A[7, 7] = 0.0  # a zero diagonal entry: its row's weights over the neighbour's alone
    A = A.tocsr().astype(dtype)
    out = []
    for a in _both(ref, ocl, A, dtype):
        e = a.executor
        weights, flags, strongest = e.alloc((a.nnz,), dtype), _flags(e), e.alloc((a.shape[0],), np.int32)
        scale = e.run("multigrid.pgm.diagonal_scale", a)
        e.run("multigrid.pgm.compute_weights", a, scale, weights, flags, strongest)
        # the first sweep's choice is find_strongest_neighbor's from nothing aggregated
        first = e.from_host(np.zeros(a.shape[0], np.int32))
        e.run("multigrid.pgm.find_strongest_neighbor", a, weights, e.from_host(np.full(a.shape[0], -1, np.int32)),
              first, e.from_host(_matching_state(a.shape[0])), 0)
        out.append((_host(e, flags), _host(e, scale), _host(e, weights), _host(e, strongest), _host(e, first)))
    assert out[0][0][0] == out[1][0][0] == (not symmetric)
    assert np.isinf(out[0][1][7]) and np.isinf(out[1][1][7])
    # reciprocals in double, rounded once where the device has fp64; the weights' products may
    # still round otherwise on a device (2 ulps in float32 on the H100): the suite's tolerance. The
    # strongest neighbours below match exactly: the closest distinct weights of a row here are
    # 900 ulps apart (float32), far beyond it
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=tol(dtype))
    np.testing.assert_allclose(out[1][2], out[0][2], rtol=tol(dtype))
    if dtype == np.float64:
        # (|a_ij| + |a_ji|) / 2 / max(|a_ii|, |a_jj|), over 1 where both are 0
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        diagonal = abs(A.diagonal())
        denom = np.maximum(diagonal[rows], diagonal[A.indices])
        sym = np.asarray((abs(A) + abs(A.T))[rows, A.indices]).ravel() / 2
        expected = np.where(rows == A.indices, 0, sym / np.where(denom == 0, 1, denom))
        np.testing.assert_allclose(out[0][2], expected, rtol=4e-16)
    for r, d in ((out[0][3], out[1][3]), (out[0][4], out[1][4]), (out[0][3], out[0][4])):
        np.testing.assert_array_equal(d, r)


@pytest.mark.parametrize("sweeps", [0, 1, 3])
def test_matching_kernels_twin(ref, ocl, rng, sweeps):
    A = _random_graph(rng)
    weights, agg, strongest, state = _state(rng, A, ref, sweeps)
    results = []
    for a in _both(ref, ocl, A):
        e = a.executor
        w, g, s, st = e.from_host(weights), e.from_host(agg), e.from_host(strongest), e.from_host(state)
        e.run("multigrid.pgm.find_strongest_neighbor", a, w, g, s, st, sweeps)
        found = _host(e, s)
        e.run("multigrid.pgm.match_edge", s, g, st, sweeps)
        results.append((found, _host(e, g), _host(e, st)))
    for r, d in zip(*results):
        np.testing.assert_array_equal(d, r)
    # the state counts the rows each sweep aggregated
    assert results[0][2][2 + sweeps] == np.count_nonzero(agg == -1) - np.count_nonzero(results[0][1] == -1) > 0


def test_sweeps_stop_themselves_on_the_device(exec, rng):
    # after the sweep that leaves fewer than the threshold unaggregated, further sweeps do nothing
    A = _random_graph(rng)
    n = A.shape[0]
    a = gk.matrix.Csr.from_scipy(exec, A)
    weights = exec.alloc((a.nnz,), np.float64)
    state = _matching_state(n, ratio=0.5)
    agg, strongest, state = (exec.from_host(v) for v in (np.full(n, -1, np.int32), np.zeros(n, np.int32), state))
    exec.run("multigrid.pgm.compute_weights", a, exec.run("multigrid.pgm.diagonal_scale", a), weights, _flags(exec),
             strongest)
    history = []
    for s in range(8):
        if s > 0:
            exec.run("multigrid.pgm.find_strongest_neighbor", a, weights, agg, strongest, state, s)
        exec.run("multigrid.pgm.match_edge", strongest, agg, state, s)
        history.append(np.count_nonzero(_host(exec, agg) == -1))
    from ginkpy.core.multigrid.pgm import matching_stopped
    host_state = _host(exec, state)
    stop = next(s for s in range(1, 9) if matching_stopped(host_state, s))
    # sweep stop - 1 was the first to leave fewer than half the rows unaggregated, and the
    # sweeps after it aggregated none
    assert history[stop - 1] < 0.5 * n and (stop == 1 or history[stop - 2] >= 0.5 * n)
    assert history[stop - 1:] == [history[stop - 1]] * (9 - stop) and (host_state[2 + stop:] == 0).all()


def test_assign_twin(ref, ocl, rng):
    A = _random_graph(rng)
    weights, agg, _, _ = _state(rng, A, ref, 1)
    assert (agg == -1).any()
    results = []
    for a in _both(ref, ocl, A):
        e = a.executor
        g = e.from_host(agg)
        e.run("multigrid.pgm.assign_to_exist_agg", a, e.from_host(weights), g, e.alloc((a.shape[0],), np.int32))
        results.append(_host(e, g))
    np.testing.assert_array_equal(results[1], results[0])
    assert (results[0] >= 0).all()


def _named_aggregates(rng, n, count, largest=5):
    """Aggregates named by one of their rows (their root), of random sizes, one of ``largest``
    rows."""
    roots = np.sort(rng.choice(n, count, replace=False))
    agg = roots[rng.integers(0, count, n)]
    agg[roots] = roots
    big = rng.choice(np.setdiff1d(np.arange(n), roots), largest - 1, replace=False)
    agg[big] = roots[0]
    return agg.astype(np.int32)


def _valid(ptrs, sizes):
    return ptrs[:int(sizes[0]) + 1]


@pytest.mark.parametrize("largest", [5, 300])
def test_find_aggregates_twin(ref, ocl, rng, largest):
    # aggregates of random sizes, one of `largest` rows (300: the device cannot sort it and says so)
    n = 1001
    A = _random_graph(rng, n)
    agg = _named_aggregates(rng, n, 211, largest)
    members = np.concatenate([[0], np.cumsum(rng.integers(1, 5, n))]).astype(np.int32)
    results = []
    for a in _both(ref, ocl, A):
        e = a.executor
        g, flags = e.from_host(agg), _flags(e)
        ptrs, rows, bounds, fine, sizes = (_host(e, v) for v in e.run("multigrid.pgm.find_aggregates", a, g,
                                                                         e.from_host(members), flags))
        results.append((_host(e, g), ptrs, rows, bounds, fine, sizes, _host(e, flags)))
    (g_r, p_r, rows_r, b_r, f_r, s_r, _), (g_d, p_d, rows_d, b_d, f_d, s_d, flags_d) = results
    m = 211
    np.testing.assert_array_equal(s_d, s_r)
    assert s_r.tolist() == [m, A.nnz, members[-1]]
    np.testing.assert_array_equal(g_d, g_r)
    np.testing.assert_array_equal(np.unique(g_r), np.arange(m))  # numbered in the roots' order
    np.testing.assert_array_equal(g_r, np.searchsorted(np.unique(agg), agg))
    for ptrs_r, ptrs_d in ((p_r, p_d), (b_r, b_d), (f_r, f_d)):
        np.testing.assert_array_equal(_valid(ptrs_d, s_d), _valid(ptrs_r, s_r))
    lengths = np.diff(A.indptr)
    np.testing.assert_array_equal(np.diff(b_r), np.bincount(g_r, weights=lengths, minlength=m))
    np.testing.assert_array_equal(np.diff(f_r), np.bincount(g_r, weights=np.diff(members), minlength=m))
    assert flags_d[1] == (largest > 256)
    for I in range(m):
        rows = rows_d[p_r[I]:p_r[I + 1]]
        np.testing.assert_array_equal(np.sort(rows), rows_r[p_r[I]:p_r[I + 1]])
        if largest <= 256:
            np.testing.assert_array_equal(rows, rows_r[p_r[I]:p_r[I + 1]])
    sorted_ptrs, sorted_rows = ref.run("multigrid.pgm.sort_aggregates", g_r, m)
    np.testing.assert_array_equal(sorted_ptrs, p_r)
    np.testing.assert_array_equal(sorted_rows, rows_r)


def test_compose_twin(ref, ocl, rng):
    # first pass: 401 aggregates of 1001 rows; second pass: 97 aggregates of those 401
    n = 1001
    A, C = _random_graph(rng, n), _random_graph(rng, 401)
    first = _named_aggregates(rng, n, 401)
    second = _named_aggregates(rng, 401, 97)
    results = []
    for e in (ref, ocl):
        a, c = gk.matrix.Csr.from_scipy(e, A), gk.matrix.Csr.from_scipy(e, C)
        flags = _flags(e)
        g1, g2 = e.from_host(first), e.from_host(second)
        p1, r1, _, _, _ = e.run("multigrid.pgm.find_aggregates", a, g1, None, flags)
        p2, r2, _, fine, sizes = e.run("multigrid.pgm.find_aggregates", c, g2, p1, flags)
        before = _host(e, g1)
        composed, rows = e.run("multigrid.pgm.compose", g1, p1, r1, g2, p2, r2, fine, sizes, flags)
        np.testing.assert_array_equal(_host(e, g1), before)  # the first pass's aggregates kept
        results.append((_host(e, composed), _host(e, fine)[:98], _host(e, rows), _host(e, flags)))
    for r, d in zip(*results):
        np.testing.assert_array_equal(d, r)
    agg, ptrs, rows, flags = results[0]
    np.testing.assert_array_equal(agg, np.searchsorted(np.unique(second), second)[np.searchsorted(np.unique(first),
                                                                                                  first)])
    np.testing.assert_array_equal(rows, np.argsort(agg, kind="stable"))
    np.testing.assert_array_equal(np.diff(ptrs), np.bincount(agg, minlength=97))
    assert not flags.any()


def _galerkin(exec, A, agg, dtype=np.float64, scale=1.0):
    """P^T A P by find_aggregates, compute_coarse and pack, as a SciPy matrix."""
    a = gk.matrix.Csr.from_scipy(exec, A, dtype)
    g, flags = exec.from_host(agg), _flags(exec)
    ptrs, rows, bounds, _, sizes = exec.run("multigrid.pgm.find_aggregates", a, g, None, flags)
    product = exec.run("multigrid.pgm.compute_coarse", a, g, ptrs, rows, bounds, sizes)
    m, nnz = int(_host(exec, sizes)[0]), int(_host(exec, product[-1])[0])
    arrays = [_host(exec, v) for v in exec.run("multigrid.pgm.pack", *product[:-1], m, nnz, scale)]
    return sp.csr_matrix((arrays[2], arrays[1], arrays[0]), shape=(m, m)), _host(exec, g)


def _scipy_galerkin(A, agg, m):
    P = sp.csr_matrix((np.ones(agg.size), (np.arange(agg.size), agg)), shape=(agg.size, m))
    return (P.T @ A @ P).tocsr()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("matrix", ["random", "poisson", "wide"])
def test_galerkin_product_twin_against_scipy(ref, ocl, rng, dtype, matrix):
    # odd sizes; "wide": a row with more distinct aggregates than one work-item's list holds
    if matrix == "poisson":
        A = poisson_2d(33) + sp.diags(rng.uniform(0, 1, 33 * 33))
    else:
        A = _random_graph(rng, 1001).tolil()
        if matrix == "wide":
            A[5, rng.choice(1001, 200, replace=False)] = -0.25
        A = A.tocsr()
    if np.dtype(dtype).kind == "c":
        A = (A + 1j * sp.diags(rng.uniform(0, 1, A.shape[0]))).tocsr()
    A = A.astype(dtype)
    agg = _named_aggregates(rng, A.shape[0], A.shape[0] // 4 + 1)
    (c_ref, g), (c_dev, _) = (_galerkin(e, A, agg, dtype, scale=1 / 1.5) for e in (ref, ocl))
    # a fixed summation order: the same values on every device
    np.testing.assert_array_equal(c_dev.indptr, c_ref.indptr)
    np.testing.assert_array_equal(c_dev.indices, c_ref.indices)
    np.testing.assert_array_equal(c_dev.data, c_ref.data)
    expected = _scipy_galerkin(A.astype(np.complex128), g, int(g.max()) + 1) / 1.5
    np.testing.assert_allclose(c_ref.toarray(), expected.toarray(), rtol=tol(dtype) * 100, atol=tol(dtype) * 100)
    # columns ascending within each row, no duplicates
    rows = np.repeat(np.arange(c_ref.shape[0]), np.diff(c_ref.indptr))
    assert ((np.diff(c_ref.indices) > 0) | (np.diff(rows) > 0)).all()


def test_non_deterministic_assignment_still_aggregates_every_row(ocl, rng):
    level = _level(ocl, _random_graph(rng), deterministic=False, max_iterations=1)
    agg = level.aggregates()
    assert (agg >= 0).all() and np.unique(agg).size == level.num_aggregates


# -- deterministic: the same hierarchy everywhere ----------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_deterministic_hierarchy_is_identical_on_every_executor(ref, ocl, rng, dtype):
    # random coefficients (sums that round) and a grid (ties everywhere)
    for A in (poisson_2d(40), _random_graph(rng)):
        hierarchies = []
        for exec in (ref, ocl):
            mg = (gk.solver.Multigrid.build().with_mg_level(Pgm.build().with_deterministic(True))
                  .with_min_coarse_rows(8).on(exec).generate(gk.matrix.Csr.from_scipy(exec, A, dtype)))
            hierarchies.append([(level.aggregates(), level.coarse_op.to_scipy()) for level in mg.levels])
        assert len(hierarchies[0]) == len(hierarchies[1]) > 1
        for (agg_r, c_r), (agg_d, c_d) in zip(*hierarchies):
            np.testing.assert_array_equal(agg_d, agg_r)
            np.testing.assert_array_equal(c_d.indptr, c_r.indptr)
            np.testing.assert_array_equal(c_d.indices, c_r.indices)
            np.testing.assert_array_equal(c_d.data, c_r.data)


def test_both_launch_layouts_give_the_reference_level(ref, dev):
    # 40000 rows: the prefix sums of a GPU layout recurse twice
    A = poisson_2d(200) + sp.diags(np.linspace(0, 1, 40000))
    levels = [_level(e, A, deterministic=True, aggregation_passes=2) for e in (ref, dev)]
    np.testing.assert_array_equal(levels[1].aggregates(), levels[0].aggregates())
    c_ref, c_dev = (lv.coarse_op.to_scipy() for lv in levels)
    np.testing.assert_array_equal(c_dev.indptr, c_ref.indptr)
    np.testing.assert_array_equal(c_dev.data, c_ref.data)
    assert (levels[1].aggregates() >= 0).all()


# -- one blocking read per pass ------------------------------------------------------------------

@pytest.mark.parametrize("passes", [1, 2])
def test_a_pass_reads_once(exec, passes):
    """The whole pass is enqueued as if FIRST_SWEEPS sweeps finished the matching (a grid's do)
    and read once: state, flags and sizes together."""
    A = gk.matrix.Csr.from_scipy(exec, poisson_2d(30))
    assert A.is_finite()  # (generate's check, read once and kept)
    before = exec.counters["reads"]
    level = Pgm.build().with_aggregation_passes(passes).on(exec).generate(A)
    assert exec.counters["reads"] - before == passes
    assert 0 < level.num_aggregates < A.shape[0]


@pytest.mark.parametrize("symmetric", [True, False])
def test_a_wrong_guess_of_the_sweeps_runs_the_pass_again(exec, rng, monkeypatch, symmetric):
    """With one sweep guessed (the matching needs more) the pass runs again with all sweeps, and
    so does a pattern that is not symmetric (matched on its symmetric part): the level is the
    one of a right guess, on both executors."""
    A = _random_graph(rng, symmetric=symmetric)
    right = _level(exec, A, deterministic=True, aggregation_passes=2, max_iterations=15)
    monkeypatch.setattr(pgm_module, "FIRST_SWEEPS", 1)
    before = exec.counters["reads"]
    guessed = _level(exec, A, deterministic=True, aggregation_passes=2, max_iterations=15)
    assert exec.counters["reads"] - before > 2  # at least one pass ran again
    np.testing.assert_array_equal(guessed.aggregates(), right.aggregates())
    c_right, c_guessed = (lv.coarse_op.to_scipy() for lv in (right, guessed))
    np.testing.assert_array_equal(c_guessed.indptr, c_right.indptr)
    np.testing.assert_array_equal(c_guessed.indices, c_right.indices)
    np.testing.assert_array_equal(c_guessed.data, c_right.data)


@pytest.mark.parametrize("passes", [1, 2])
def test_an_aggregate_too_large_to_sort_on_the_device(ref, ocl, passes):
    """A star of 600 leaves (and a path beside it): the hub's aggregate has more rows than a
    device sorts (SORT_LIMIT), ordered on the host after the pass's one read; the level is the
    reference's and its coarse matrix the Galerkin product."""
    n = 601
    hub = sp.csr_matrix((np.full(n - 1, -1.0), (np.zeros(n - 1, int), np.arange(1, n))), shape=(n, n))
    A = sp.csr_matrix(hub + hub.T + sp.diags(np.full(n, 700.0)))
    A = sp.csr_matrix(sp.block_diag([A, poisson_2d(12)]))
    levels = [_level(e, A, deterministic=True, aggregation_passes=passes) for e in (ref, ocl)]
    agg = levels[0].aggregates()
    np.testing.assert_array_equal(levels[1].aggregates(), agg)
    assert np.bincount(agg).max() > 256
    P = sp.csr_matrix((np.ones(agg.size), (np.arange(agg.size), agg)))
    for level in levels:
        np.testing.assert_allclose(level.coarse_op.to_scipy().toarray(), (P.T @ A @ P).toarray(), rtol=1e-13,
                                   atol=1e-12)
