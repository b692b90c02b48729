"""Smoothed aggregation (Pgm's ``prolongation_relax``): P = (I - w / rho D^-1 A) P_t checked by
hand, R = P^T and the Galerkin product R A P on both executors, the multigrid cycle with such
levels (symmetric, kept out of the merged launch), its iteration counts on 2D and 3D Poisson
and a 3D problem with jumping coefficients beside those of piecewise constant aggregation, and
new values (update)."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.problems import poisson_2d, poisson_3d, variable_3d

from conftest import sum_tol

Multigrid, Pgm = gk.solver.Multigrid, gk.multigrid.Pgm
SA_RELAX = 4 / 3  # PyAMG's omega


def _csr(exec, A, dtype=np.float64):
    return gk.matrix.Csr.from_scipy(exec, sp.csr_matrix(A), dtype)


def _sa(passes=2):
    return Pgm.build().with_prolongation_relax(SA_RELAX).with_aggregation_passes(passes)


# -- by hand -----------------------------------------------------------------------------------

def test_the_prolongation_is_the_jacobi_smoothed_tentative_one(ref):
    # the path 0-1 (5), 2-3 (4), 4-5 (3) of test_pgm: aggregates {0, 1}, {2, 3}, {4, 5}
    c = -np.array([5.0, 1, 4, 1, 3])
    A = sp.diags([c, np.full(6, 10.0), c], [-1, 0, 1], format="csr")
    level = Pgm.build().with_aggregation_passes(1).with_prolongation_relax(1.0).on(ref).generate(_csr(ref, A))
    np.testing.assert_array_equal(level.aggregates(), [0, 0, 1, 1, 2, 2])
    assert level.smoothed
    # rho = max_i sum_j |a_ij| / a_ii = (10 + 5 + 1) / 10 (rows 1 and 2);  P = P_t - (1 / rho) D^-1 A P_t
    rho = 1.6
    tentative = np.kron(np.eye(3), np.ones((2, 1)))
    P = tentative - (1 / rho) * (A.toarray() / 10.0) @ tentative
    # e.g. row 1: 1 - (10 - 5) / 16 in aggregate 0, +1 / 16 in aggregate 1
    np.testing.assert_allclose(P[1], [1 - 5 / 16, 1 / 16, 0])
    np.testing.assert_allclose(level.prolong_op.to_scipy().toarray(), P, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(level.restrict_op.to_scipy().toarray(), P.T, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(level.coarse_op.to_scipy().toarray(), P.T @ A.toarray() @ P, rtol=1e-14)


@pytest.mark.parametrize("passes", [1, 2, 3])
def test_coarse_matrix_is_the_galerkin_product_of_the_smoothed_prolongation(exec, passes):
    A = poisson_3d(7) + sp.diags(np.linspace(0, 1, 343))
    level = _sa(passes).on(exec).generate(_csr(exec, A))
    P, R, C = (op.to_scipy().toarray() for op in (level.prolong_op, level.restrict_op, level.coarse_op))
    np.testing.assert_array_equal(R, P.T)
    np.testing.assert_allclose(C, P.T @ A.toarray() @ P, rtol=1e-13, atol=1e-12)
    # a smoothed P still reproduces constants where A's rows sum to 0 (inside the grid)
    assert level.coarse_op.shape[0] == np.unique(level.aggregates()).size


def test_the_device_hierarchy_is_the_reference_one(ref, dev):
    # deterministic aggregates: the same on both executors, so P, R and R A P too (patterns
    # exactly, values to rounding: the device sums in another order)
    S = variable_3d(12)
    levels = [_sa(2).with_deterministic(True).on(e).generate(_csr(e, S)) for e in (ref, dev)]
    np.testing.assert_array_equal(levels[0].aggregates(), levels[1].aggregates())
    for name in ("prolong_op", "restrict_op", "coarse_op"):
        host, device = (getattr(level, name).to_scipy() for level in levels)
        np.testing.assert_array_equal(device.indptr, host.indptr)
        np.testing.assert_array_equal(device.indices, host.indices)
        scale = np.abs(host).max()
        np.testing.assert_allclose(device.data, host.data, rtol=0, atol=1e-13 * scale)


def test_update_of_a_smoothed_level_writes_its_arrays(exec):
    # new values on A's pattern: P, R and R A P again into the same arrays, nothing read
    S = poisson_3d(9).tocsr()
    A = _csr(exec, S)
    level = _sa(2).on(exec).generate(A)
    ops = (level.prolong_op, level.restrict_op, level.coarse_op)
    arrays = [(op.row_ptrs, op.col_idxs, op.values) for op in ops]
    S2 = S.copy()
    S2.data = S2.data * (1 + 0.5 * np.random.default_rng(1).random(S2.nnz))
    A.update_values(S2.data)
    reads = exec.counters["reads"]
    level.update()
    assert exec.counters["reads"] == reads
    assert all(all(x is y for x, y in zip((op.row_ptrs, op.col_idxs, op.values), kept))
               for op, kept in zip((level.prolong_op, level.restrict_op, level.coarse_op), arrays))
    # P = (I - w / rho D^-1 A) P_t of the new values, rho Gershgorin's bound
    agg = level.aggregates()
    tentative = sp.csr_matrix((np.ones(S2.shape[0]), (np.arange(S2.shape[0]), agg)))
    d = S2.diagonal()
    rho = np.max(np.asarray(abs(S2).sum(axis=1)).ravel() / np.abs(d))
    P = (sp.identity(S2.shape[0]) - (SA_RELAX / rho) * sp.diags(1 / d) @ S2) @ tentative
    np.testing.assert_allclose(level.prolong_op.to_scipy().toarray(), P.toarray(), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(level.restrict_op.to_scipy().toarray(), P.T.toarray(), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(level.coarse_op.to_scipy().toarray(), (P.T @ S2 @ P).toarray(), rtol=1e-12,
                               atol=1e-12)


def test_complex_hermitian_levels_stay_hermitian(exec):
    # R = P^H: the coarse matrix of a Hermitian A is Hermitian (P^T would not keep it so)
    from ginkpy.problems import magnetic_laplacian_2d
    S = magnetic_laplacian_2d(16).tocsr()
    level = _sa(2).on(exec).generate(_csr(exec, S, np.complex128))
    P, R, C = (op.to_scipy().toarray() for op in (level.prolong_op, level.restrict_op, level.coarse_op))
    assert np.abs(P.imag).max() > 0
    np.testing.assert_array_equal(R, P.conj().T)
    np.testing.assert_allclose(C, P.conj().T @ S.toarray() @ P, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(C, C.conj().T, rtol=1e-13, atol=1e-12)


def test_a_zero_diagonal_is_a_clear_error(exec):
    S = poisson_2d(8).tolil()
    S[5, 5] = 0
    with pytest.raises(ValueError, match="diagonal"):
        _sa(1).on(exec).generate(_csr(exec, S.tocsr()))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["float64", "complex128"])
def test_smoother_values_against_the_reference(ref, dev, dtype):
    # S = I - (w / rho) D^-1 A on A's pattern, rho found on the device (partial maxima over
    # more rows than a work-group, in the CPU's and the GPU's layouts); one row without a diagonal
    rng = np.random.default_rng(5)
    S = (sp.random(3000, 3000, density=0.002, random_state=6) + sp.diags(rng.uniform(1, 3, 3000))).tocsr()
    S = S.astype(dtype)
    if dtype == np.complex128:
        S.data = S.data * np.exp(1j * rng.uniform(0, 1, S.nnz))
    out = []
    for e in (ref, dev):
        A = _csr(e, S, dtype)
        values, flags = e.alloc((A.nnz,), A.dtype), e.alloc((1,), np.int32)
        e.run("multigrid.smoothed_aggregation.smoother_values", A, SA_RELAX, values, flags)
        out.append((e.to_host(values), int(e.to_host(flags)[0])))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-13, atol=1e-15)
    assert out[0][1] == out[1][1] == 0
    missing = S.tolil()
    missing[7, 7] = 0
    missing = missing.tocsr()
    missing.eliminate_zeros()
    for e in (ref, dev):
        A = _csr(e, missing, dtype)
        values, flags = e.alloc((A.nnz,), A.dtype), e.alloc((1,), np.int32)
        e.run("multigrid.smoothed_aggregation.smoother_values", A, SA_RELAX, values, flags)
        assert int(e.to_host(flags)[0]) == 1


def _prolongation(exec, S, agg):
    """The kernels of P = S P_t: its row pointers (and S's entries sorted), columns, values, slots."""
    row_ptrs, sorted_entries = exec.run("multigrid.smoothed_aggregation.prolongation_pattern", S, agg)
    size = int(exec.to_host(row_ptrs)[-1])
    return (row_ptrs, *exec.run("multigrid.smoothed_aggregation.prolongation_fill", S, row_ptrs, sorted_entries,
                                size))


def test_the_prolongation_merges_a_rows_entries_per_aggregate(ref):
    # P = S P_t by hand: row 0's entries at columns 0 and 2 (both aggregate 1) merged, row 1's
    # cancel to a kept zero, row 2 empty; slot of each entry of S = its entry of P
    S = sp.csr_matrix((np.array([1.0, 2.0, 4.0, 3.0, -3.0]), np.array([0, 1, 2, 0, 2]), np.array([0, 3, 5, 5])),
                      shape=(3, 3))
    agg = ref.from_host(np.array([1, 0, 1], np.int32))
    row_ptrs, col_idxs, values, slots = _prolongation(ref, _csr(ref, S), agg)
    np.testing.assert_array_equal(row_ptrs, [0, 2, 3, 3])
    np.testing.assert_array_equal(col_idxs, [0, 1, 1])
    np.testing.assert_array_equal(values, [2.0, 5.0, 0.0])
    np.testing.assert_array_equal(slots, [1, 0, 1, 2, 2])


def _smoother_like(rng, n, m, dtype):
    """n x m with 0 to 12 entries per row (a tenth empty), 5 rows of 300 entries, and the
    aggregates of its columns (m // 4 of them, at random)."""
    lengths = rng.integers(0, 13, n)
    lengths[rng.random(n) < 0.1] = 0
    lengths[rng.choice(n, 5, replace=False)] = 300
    rows = np.repeat(np.arange(n), lengths)
    cols = np.concatenate([np.sort(rng.choice(m, k, replace=False)) for k in lengths])
    S = sp.csr_matrix((rng.standard_normal(rows.size), (rows, cols)), shape=(n, m)).astype(dtype)
    if np.iscomplexobj(S.data):
        S.data = S.data * np.exp(1j * rng.uniform(0, 6, S.nnz))
    return S, rng.integers(0, m // 4, m).astype(np.int32)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["float64", "complex128"])
def test_prolongation_against_the_reference(ref, dev, dtype):
    # P = S P_t on the device (rows longer than a work-group, empty rows, odd sizes) against the
    # twin: pattern and slots exactly, values to the rounding of sums in any order; then the
    # values again from new values of S, into P's array
    rng = np.random.default_rng(11)
    S, agg = _smoother_like(rng, 1037, 1501, dtype)
    m = int(agg.max()) + 1

    def merged(values):  # (row i, agg[k]) summed over the entries of S
        out = sp.csr_matrix((values, agg[S.indices], S.indptr.copy()), shape=(S.shape[0], m))
        out.sum_duplicates()
        return out
    expected, magnitude, twice = merged(np.ones(S.nnz)), merged(np.abs(S.data)), merged(np.abs(S.data * 2 - 1))
    bound = sum_tol(dtype, 300) * magnitude.data
    out = {}
    for e in (ref, dev):
        Se = _csr(e, S, dtype)
        row_ptrs, col_idxs, values, slots = _prolongation(e, Se, e.from_host(agg))
        P = gk.matrix.Csr(e, expected.shape, row_ptrs, col_idxs, values)
        first = e.to_host(values).copy()
        Se.update_values(S.data * 2 - 1)
        e.run("multigrid.smoothed_aggregation.prolongation_values", Se, slots, P)
        out[e] = (e.to_host(row_ptrs), e.to_host(col_idxs), first, e.to_host(slots), e.to_host(values))
    host, device = out[ref], out[dev]
    np.testing.assert_array_equal(host[0], expected.indptr)
    np.testing.assert_array_equal(host[1], expected.indices)
    for h, d in zip(host[:2] + host[3:4], device[:2] + device[3:4]):
        np.testing.assert_array_equal(d, h)
    for h, d, scale in ((host[2], device[2], magnitude.data), (host[4], device[4], twice.data)):
        assert np.all(np.abs(d - h) <= sum_tol(dtype, 300) * scale)
    np.testing.assert_allclose(host[2], (S @ sp.csr_matrix((np.ones(S.shape[1]), agg, np.arange(S.shape[1] + 1)),
                                                           shape=(S.shape[1], m))).toarray()[expected.nonzero()],
                               rtol=0, atol=float(bound.max()))


def test_zero_relax_is_the_piecewise_constant_aggregation(ref):
    A = _csr(ref, poisson_2d(20))
    plain = Pgm.build().with_deterministic(True).on(ref).generate(A)
    zero = Pgm.build().with_deterministic(True).with_prolongation_relax(0.0).on(ref).generate(A)
    assert not zero.smoothed
    np.testing.assert_array_equal(zero.coarse_op.to_scipy().toarray(), plain.coarse_op.to_scipy().toarray())


def test_bad_relaxation(ref):
    with pytest.raises((ValueError, TypeError)):
        Pgm.build().with_prolongation_relax(-1.0)
    with pytest.raises((ValueError, TypeError)):
        Pgm.build().with_prolongation_relax(3.0)


# -- the cycle ---------------------------------------------------------------------------------

def test_the_cycle_stays_symmetric(exec):
    # M = one V-cycle from 0: u^T M v == v^T M u (CG needs it)
    A = _csr(exec, poisson_2d(30))
    mg = Multigrid.build().with_cycle("v").with_mg_level(_sa()).on(exec).generate(A)
    assert all(level.smoothed for level in mg.levels)
    rng = np.random.default_rng(3)
    u, v = rng.standard_normal((2, 900))
    Mu, Mv = (mg.apply(gk.matrix.Dense.from_numpy(exec, w), gk.matrix.Dense.zeros(exec, (900, 1))).to_numpy()[:, 0]
              for w in (u, v))
    assert abs(v @ Mu - u @ Mv) <= 1e-12 * np.linalg.norm(u) * np.linalg.norm(Mv)


def test_smoothed_levels_stay_out_of_the_merged_launch(ocl):
    A = _csr(ocl, poisson_2d(60))
    # (one sweep, as the launches below count: a GPU's default is two)
    every = Multigrid.build().with_cycle("v").with_smoother_iters(1).with_merged_rows(4096).with_mg_level(_sa()) \
        .on(ocl).generate(A)
    assert every.merged_from is None
    # the finest level smoothed, the rest piecewise constant: those are merged
    top = Multigrid.build().with_cycle("v").with_smoother_iters(1).with_merged_rows(4096) \
        .with_mg_level(_sa(), Pgm.build()) \
        .on(ocl).generate(A)
    assert top.merged_from == 1 and top.levels[0].smoothed and not top.levels[1].smoothed
    assert "smoothed aggregation" in repr(top)
    # launches of a V(1,1)-cycle: relax, residual, R, (merged), P, relax
    assert top.launches_per_cycle == 5 + 1


def _cg_iterations(exec, S, amg):
    A = _csr(exec, S)
    solver = gk.solver.Cg.build().with_preconditioner(amg).with_criteria(
        gk.stop.ResidualNorm.build().with_reduction_factor(1e-8), gk.stop.Iteration.build().with_max_iters(200)) \
        .on(exec).generate(A)
    b = S @ np.ones(S.shape[0])
    X = gk.matrix.Dense.zeros(exec, (S.shape[0], 1))
    log = gk.log.Convergence()
    solver.add_logger(log)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b), X)
    assert log.has_converged
    assert np.linalg.norm(b - S @ X.to_numpy()[:, 0]) <= 1e-8 * np.linalg.norm(b)
    return log.num_iterations


# CG's iterations to 1e-8 with V(1,1)-cycles, measured on the reference executor and PoCL
# (smoothed / piecewise constant: 13 / 29-30, 13 / 21, 18 / 24; the default cycle, W(1,1) on a
# CPU: 18-19, 14-15, 23), bounds with 15% for the aggregates of other devices' matchings (not
# deterministic by default). Aggregates of 2 pairwise passes (~4.7 rows) in 2D and where the
# coefficients jump (the matching follows the strong couplings), 3 (~10 rows) in 3D.
ITERATIONS = {
    # problem: (smoothed, piecewise constant)
    "poisson_2d_160": (15, 35),
    "poisson_3d_28": (15, 25),
    "variable_3d_24": (21, 28),
}
PROBLEMS = {"poisson_2d_160": (lambda: poisson_2d(160), 2), "poisson_3d_28": (lambda: poisson_3d(28), 3),
            "variable_3d_24": (lambda: variable_3d(24), 2)}


@pytest.mark.parametrize("problem", list(ITERATIONS))
def test_smoothed_aggregation_cuts_iterations(exec, problem):
    make, passes = PROBLEMS[problem]
    S = make()
    v11 = Multigrid.build().with_cycle("v").with_smoother_iters(1)
    smoothed = _cg_iterations(exec, S, v11.with_mg_level(_sa(passes)))
    plain = _cg_iterations(exec, S, Multigrid.build().with_cycle("v").with_smoother_iters(1)
                           .with_mg_level(Pgm.build().with_aggregation_passes(passes)))
    bound_sa, bound_plain = ITERATIONS[problem]
    assert smoothed <= bound_sa
    assert plain <= bound_plain
    assert smoothed < plain


# -- the device's choice ------------------------------------------------------------------------

@pytest.mark.parametrize("levels", [None, 1, 0])
def test_the_device_choice_turns_smoothed_aggregation_on(exec, monkeypatch, levels):
    # the default mg_level follows exec.device_choices().multigrid: smoothed on the finest
    # `levels` levels (None: all), piecewise constant below; off (0, the shipped choice) by default
    import dataclasses
    A = _csr(exec, poisson_2d(60))
    assert not any(level.smoothed for level in Multigrid.build().on(exec).generate(A).levels)
    choices = exec.device_choices()
    on = dataclasses.replace(choices, multigrid=dataclasses.replace(choices.multigrid, prolongation_relax=SA_RELAX,
                                                                    smoothed_levels=levels))
    monkeypatch.setattr(exec, "device_choices", lambda: on)
    mg = Multigrid.build().on(exec).generate(A)
    smoothed = [level.smoothed for level in mg.levels]
    expected = {None: [True] * len(smoothed), 1: [True] + [False] * (len(smoothed) - 1), 0: [False] * len(smoothed)}
    assert len(smoothed) >= 2 and smoothed == expected[levels]
    # (2 pairwise passes on a 2D 5-point stencil: round(log2(5)); 3 on a 3D 7-point one)
    assert all(level.parameters.aggregation_passes == 2 for level in mg.levels if level.smoothed)
    if levels is None:
        mg3 = Multigrid.build().on(exec).generate(_csr(exec, poisson_3d(12)))
        assert mg3.levels[0].smoothed and mg3.levels[0].parameters.aggregation_passes == 3
    assert _cg_iterations(exec, poisson_2d(60), Multigrid.build()) <= 20


# -- new values --------------------------------------------------------------------------------

def test_update_follows_new_values(exec):
    # the aggregates and the patterns kept, P, R and R A P of every level made again from the
    # new values into their arrays
    S = poisson_3d(10).tocsr()
    A = _csr(exec, S)
    mg = Multigrid.build().with_cycle("v").with_mg_level(_sa(2)).on(exec).generate(A)
    S2 = S.copy()
    S2.data = S2.data * (1 + 0.5 * np.random.default_rng(0).random(S2.nnz))
    S2 = ((S2 + S2.T) / 2).tocsr()
    S2.sort_indices()
    A.update_values(S2.data)
    aggregates = [level.aggregates() for level in mg.levels]
    arrays = [level.coarse_op.values for level in mg.levels]
    mg.update()  # (False only where a level's smoother relaxation changed with the values)
    assert mg.levels[0].fine_op is A
    assert all(np.array_equal(a, level.aggregates()) for a, level in zip(aggregates, mg.levels))
    assert all(v is level.coarse_op.values for v, level in zip(arrays, mg.levels))
    fine = S2.toarray()
    for level in mg.levels:
        P = level.prolong_op.to_scipy().toarray()
        np.testing.assert_allclose(level.fine_op.to_scipy().toarray(), fine, rtol=1e-13, atol=1e-13)
        fine = P.T @ fine @ P
        np.testing.assert_allclose(level.coarse_op.to_scipy().toarray(), fine, rtol=1e-12, atol=1e-12)


def test_not_on_a_distributed_matrix(ref):
    # the distributed levels aggregate on each rank with piecewise constant transfers only
    from types import SimpleNamespace

    from ginkpy.core.distributed.multigrid import aggregate
    with pytest.raises(ValueError, match="prolongation_relax"):
        aggregate(SimpleNamespace(executor=ref, comm=None, shape=(4, 4)), _sa().on(ref))
