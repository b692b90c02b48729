"""Pgm (parallel graph match aggregation): aggregates and Galerkin products checked by hand on
small graphs, each OpenCL kernel against its reference twin on random graphs larger than a
work-group, and the deterministic mode giving the same hierarchy on every executor."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import tol
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


def _state(rng, A, ref, sweeps):
    """Weights, aggregates and strongest neighbours after ``sweeps`` matching sweeps (reference)."""
    a = gk.matrix.Csr.from_scipy(ref, A)
    weights = np.empty(a.nnz)
    ref.run("multigrid.pgm.compute_weights", a, a.extract_diagonal(), weights)
    agg = np.full(A.shape[0], -1, np.int32)
    strongest = np.full(A.shape[0], -1, np.int32)
    for _ in range(sweeps):
        ref.run("multigrid.pgm.find_strongest_neighbor", a, weights, agg, strongest)
        ref.run("multigrid.pgm.match_edge", strongest, agg)
    return weights, agg, strongest


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("symmetric", [True, False])
def test_compute_weights_twin(ref, ocl, rng, dtype, symmetric):
    A = _random_graph(rng, symmetric=symmetric).astype(dtype)
    out = []
    for a in _both(ref, ocl, A, dtype):
        e = a.executor
        weights = e.alloc((a.nnz,), dtype)
        flag = e.run("multigrid.pgm.compute_weights", a, a.extract_diagonal(), weights)
        out.append((flag, _host(e, weights)))
    assert out[0][0] == out[1][0] == symmetric
    # divisions in double, rounded once where the device has fp64; float32 weights may still
    # differ by an ulp on a GPU (seen on the H100, float32 only)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=np.finfo(dtype).eps if dtype == np.float32 else 0)


@pytest.mark.parametrize("sweeps", [0, 1, 3])
def test_matching_kernels_twin(ref, ocl, rng, sweeps):
    A = _random_graph(rng)
    weights, agg, strongest = _state(rng, A, ref, sweeps)
    results = []
    for a in _both(ref, ocl, A):
        e = a.executor
        w, g, s = e.from_host(weights), e.from_host(agg), e.from_host(strongest)
        e.run("multigrid.pgm.find_strongest_neighbor", a, w, g, s)
        found = _host(e, s)
        e.run("multigrid.pgm.match_edge", s, g)
        matched = _host(e, g)
        count = e.run("multigrid.pgm.count_unagg", g)
        results.append((found, matched, count))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])
    assert results[1][2] == results[0][2] == int(np.count_nonzero(results[0][1] == -1))


def test_assign_renumber_compose_twin(ref, ocl, rng):
    A = _random_graph(rng)
    weights, agg, _ = _state(rng, A, ref, 1)
    assert (agg == -1).any()
    coarse_agg = rng.integers(0, 50, A.shape[0]).astype(np.int32)
    results = []
    for a in _both(ref, ocl, A):
        e = a.executor
        g = e.from_host(agg)
        e.run("multigrid.pgm.assign_to_exist_agg", a, e.from_host(weights), g, e.alloc((a.shape[0],), np.int32))
        assigned = _host(e, g)
        count = e.run("multigrid.pgm.renumber", g)
        renumbered = _host(e, g)
        e.run("multigrid.pgm.compose", g, e.from_host(coarse_agg))
        results.append((assigned, count, renumbered, _host(e, g)))
    for r, d in zip(*results):
        np.testing.assert_array_equal(d, r)
    assigned, count, renumbered, _ = results[0]
    assert (assigned >= 0).all() and count == np.unique(assigned).size
    np.testing.assert_array_equal(np.unique(renumbered), np.arange(count))


@pytest.mark.parametrize("largest", [5, 300])
def test_find_aggregate_rows_twin(ref, ocl, rng, largest):
    # aggregates of random sizes; one of `largest` rows (300 is sorted on the host)
    n = 1001
    agg = rng.integers(1, 200, n).astype(np.int32)
    agg[rng.choice(n, largest, replace=False)] = 0
    results = [tuple(_host(e, v) for v in e.run("multigrid.pgm.find_aggregate_rows", e.from_host(agg), 200))
               for e in (ref, ocl)]
    for r, d in zip(*results):
        np.testing.assert_array_equal(d, r)
    ptrs, rows = results[0]
    assert ptrs[1] == largest and all((np.diff(rows[ptrs[i]:ptrs[i + 1]]) > 0).all() for i in range(200))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compute_coarse_twin(ref, ocl, rng, dtype):
    A = _random_graph(rng).tolil()
    # a row with more distinct aggregates than one work-item's list holds
    A[5, rng.choice(A.shape[0], 200, replace=False)] = -0.25
    A = A.tocsr().astype(dtype)
    agg = rng.integers(0, 400, A.shape[0]).astype(np.int32)
    agg[:400] = np.arange(400)
    results = []
    for a in _both(ref, ocl, A, dtype):
        e = a.executor
        g = e.from_host(agg)
        ptrs, rows = e.run("multigrid.pgm.find_aggregate_rows", g, 400)
        results.append(tuple(_host(e, v) for v in e.run("multigrid.pgm.compute_coarse", a, g, ptrs, rows, 400)))
    for r, d in zip(*results):
        # a fixed summation order: the same values on every device
        np.testing.assert_array_equal(d, r)
    P = sp.csr_matrix((np.ones(agg.size), (np.arange(agg.size), agg)))
    C = sp.csr_matrix((results[0][2], results[0][1], results[0][0]), shape=(400, 400))
    np.testing.assert_allclose(C.toarray(), (P.T @ A.astype(np.float64) @ P).toarray(), rtol=tol(dtype) * 100,
                               atol=tol(dtype) * 100)


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


@pytest.fixture(params=["cpu_layout", "gpu_layout"])
def dev(request, ocl):
    """The device executor launching as on a CPU or as on a GPU, whatever the device is."""
    import attrs
    exe = gk.OpenCLExecutor(ocl.device)
    gpu = request.param == "gpu_layout"
    exe.info = attrs.evolve(ocl.info, is_cpu=not gpu, is_gpu=gpu)
    return exe


def test_both_launch_layouts_give_the_reference_level(ref, dev):
    # 40000 rows: the prefix sums of a GPU layout recurse twice
    A = poisson_2d(200) + sp.diags(np.linspace(0, 1, 40000))
    levels = [_level(e, A, deterministic=True, aggregation_passes=2) for e in (ref, dev)]
    np.testing.assert_array_equal(levels[1].aggregates(), levels[0].aggregates())
    c_ref, c_dev = (lv.coarse_op.to_scipy() for lv in levels)
    np.testing.assert_array_equal(c_dev.indptr, c_ref.indptr)
    np.testing.assert_array_equal(c_dev.data, c_ref.data)
    for lv, e in zip(levels, (ref, dev)):
        assert e.run("multigrid.pgm.count_unagg", lv.agg) == 0
