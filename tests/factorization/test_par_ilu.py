"""ParIlu / ParIc (fixed-point sweeps on the device) and ParIlut / ParIct (threshold, on the host).

Hand-checked sweeps on tiny matrices, convergence to exact ILU(0) / IC(0), every kernel against
its reference twin on random sparse matrices larger than a work-group (odd sizes), the fill-in
limit of the threshold factorizations, and the errors of bad input.
"""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import ginkpy as gk
from conftest import assert_twins, factorization_initialize_twins, matrix_path, raised_pivot_floors, tol, twin
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.problems import convection_diffusion_2d, poisson_2d

F = gk.factorization
A3 = np.array([[4.0, 1, 0], [2, 5, 1], [0, 1, 3]])
S3 = np.array([[4.0, 2, 0], [2, 5, 2], [0, 2, 5]])  # = L L^T, L = [2 0 0; 1 2 0; 0 1 2]


def _csr(exec, m, dtype=np.float64):
    return Csr.from_scipy(exec, sp.csr_matrix(m), dtype)


def _dense(factor):
    return factor.to_scipy().toarray()


def _random(n, rng, density=4, symmetric=False, complex_values=False):
    """A random diagonally dominant sparse matrix with a nonsymmetric (or symmetric) pattern, real
    or complex (a complex diagonal where nonsymmetric); symmetric: Hermitian with a real positive
    diagonal (positive definite)."""
    m = sp.random(n, n, density / n, random_state=np.random.RandomState(rng.integers(1 << 31)), format="csr")
    m.data = rng.uniform(-1, 1, m.nnz) + (1j * rng.uniform(-1, 1, m.nnz) if complex_values else 0)
    if symmetric:
        m = m + m.conj().T
    diag = abs(m).sum(axis=1).A.ravel() + 1 + rng.random(n)
    if complex_values and not symmetric:
        diag = diag * np.exp(2j * np.pi * rng.random(n))
    m = m + sp.diags(diag)
    m = m.tocsr()
    m.sort_indices()
    return m


# -- hand-checked sweeps ---------------------------------------------------------------------------
def test_par_ilu_sweeps_by_hand(exec):
    # initial guess l10 = 2/4, l21 = 1/5, U = triu(A). Sweep 1, U first: u11 = 5 - l10 u01 = 4.5,
    # u22 = 3 - l21 u12 = 2.8; then L from the new U: l10 = 2/4, l21 = 1/4.5. Sweep 2: u22 = 3 - 2/9.
    A = _csr(exec, A3)
    one = F.ParIlu.build().with_iterations(1).on(exec).generate(A)
    np.testing.assert_allclose(_dense(one.l_factor), [[1, 0, 0], [0.5, 1, 0], [0, 2 / 9, 1]], rtol=1e-15)
    np.testing.assert_allclose(_dense(one.u_factor), [[4, 1, 0], [0, 4.5, 1], [0, 0, 2.8]], rtol=1e-15)
    two = F.ParIlu.build().with_iterations(2).on(exec).generate(A)
    np.testing.assert_allclose(_dense(two.u_factor)[2, 2], 25 / 9, rtol=1e-15)


def test_par_ic_sweeps_by_hand(exec):
    # initial guess l_ii = sqrt(a_ii), l10 = 2/2, l21 = 2/sqrt(5). Sweep 1, the diagonal first:
    # l11 = sqrt(5 - 1) = 2, l22 = sqrt(5 - 4/5); then l21 = 2 / l11 = 1. Sweep 2: l22 = sqrt(5 - 1) = 2.
    A = _csr(exec, S3)
    one = F.ParIc.build().with_iterations(1).on(exec).generate(A)
    np.testing.assert_allclose(_dense(one.l_factor), [[2, 0, 0], [1, 2, 0], [0, 1, np.sqrt(4.2)]], rtol=1e-15)
    two = F.ParIc.build().with_iterations(2).on(exec).generate(A)
    np.testing.assert_allclose(_dense(two.l_factor), [[2, 0, 0], [1, 2, 0], [0, 1, 2]], rtol=1e-15)
    np.testing.assert_allclose(_dense(two.lt_factor), _dense(two.l_factor).T, rtol=0)


@pytest.mark.parametrize("kind", ["ilu", "ic"])
def test_enough_sweeps_give_the_exact_factorization(exec, kind):
    m = poisson_2d(12) if kind == "ic" else convection_diffusion_2d(12)
    A = _csr(exec, m)
    exact, par = (F.Ic, F.ParIc) if kind == "ic" else (F.Ilu, F.ParIlu)
    e = exact.build().on(exec).generate(A)
    # the dependency depth of a 12 x 12 grid is 2 * 11 levels: that many sweeps are exact
    p = par.build().with_iterations(30).on(exec).generate(A)
    for fe, fp in zip(e.factors, p.factors):
        np.testing.assert_allclose(_dense(fp), _dense(fe), rtol=0, atol=1e-13)
    # a few sweeps are close, not exact
    few = par.build().with_iterations(2).on(exec).generate(A)
    error = np.abs(_dense(few.factors[0]) - _dense(e.factors[0])).max()
    assert 1e-8 < error < 0.1


def test_sparsity_power_adds_fill(exec):
    m = convection_diffusion_2d(9)
    A = _csr(exec, m)
    f1 = F.ParIlu.build().on(exec).generate(A)
    f2 = F.ParIlu.build().with_sparsity_power(2).with_iterations(40).on(exec).generate(A)
    pattern2 = (abs(m) @ abs(m)).tocsr()
    assert f1.l_factor.nnz + f1.u_factor.nnz == m.nnz + m.shape[0]
    assert f2.l_factor.nnz + f2.u_factor.nnz == pattern2.nnz + m.shape[0]
    # more fill: L U is closer to A
    r1 = np.abs(_dense(f1.l_factor) @ _dense(f1.u_factor) - m.toarray()).max()
    r2 = np.abs(_dense(f2.l_factor) @ _dense(f2.u_factor) - m.toarray()).max()
    assert r2 < r1


def test_defaults_and_parameters():
    p = F.ParIlu.build()
    assert p.iterations == 0 and p.sparsity_power == 1  # 0: auto, Ginkgo's default
    assert F.ParIlut.build().fill_in_limit == 2.0 and F.ParIlut.build().approximate_select is True
    with pytest.raises(ValueError, match="iterations must be an integer >= 0"):
        F.ParIlu.build().with_iterations(-1)
    with pytest.raises(ValueError, match="sparsity_power must be an integer >= 1"):
        F.ParIc.build().with_sparsity_power(0)
    with pytest.raises(ValueError, match="fill_in_limit must be a finite number > 0"):
        F.ParIlut.build().with_fill_in_limit(0)
    with pytest.raises(TypeError, match="approximate_select must be True or False"):
        F.ParIct.build().with_approximate_select("yes")


# -- bad input -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["ParIlu", "ParIc", "ParIlut", "ParIct"])
def test_bad_input(exec, name):
    fact = getattr(F, name).build().on(exec)
    with pytest.raises(ValueError, match="square"):
        fact.generate(_csr(exec, np.ones((2, 3))))
    with pytest.raises(TypeError, match="needs a sparse matrix, not Dense"):
        fact.generate(Dense.from_numpy(exec, S3))
    # no stored diagonal in row 2: added as a zero (ILU: the pivot -1 after elimination), or not SPD (IC)
    missing = np.array([[2.0, 0, 1], [0, 2, 0], [1, 0, 0]])
    if name in ("ParIc", "ParIct"):
        with pytest.raises(ValueError, match="row 2 is not positive.*not symmetric positive definite.*M='ilu'"):
            fact.generate(_csr(exec, missing))
    else:
        l_factor, u_factor = (f.to_scipy().toarray() for f in fact.generate(_csr(exec, missing)).factors)
        np.testing.assert_allclose(l_factor @ u_factor, missing, atol=1e-14)
    # empty: empty factors
    empty = fact.generate(_csr(exec, sp.csr_matrix((0, 0))))
    assert all(f.shape == (0, 0) and f.nnz == 0 for f in empty.factors)


def test_zero_pivot_is_replaced_and_logged(exec, caplog):
    # ILU: u11 = 1 - 1 * 1 = 0 becomes sqrt(eps) ||a_1||_1 = 2 sqrt(eps)
    floor = 2 * np.sqrt(np.finfo(np.float64).eps)
    for name in ("ParIlu", "ParIlut"):
        caplog.clear()
        fact = getattr(F, name).build().on(exec).generate(_csr(exec, np.array([[1.0, 1], [1, 1]])))
        np.testing.assert_allclose(fact.u_factor.to_scipy().toarray(), [[1, 1], [0, floor]], rtol=1e-12)
        assert len(caplog.records) == 1
        assert "1 zero or tiny pivot (the first in row 1) replaced by 1.5e-08 times the row's 1-norm" in caplog.text


def test_ic_breakdown_is_shifted_and_logged(exec, caplog):
    # IC: l11 = sqrt(1 - 4) is not a number; A + alpha diag(A) factorizes once 1 + alpha > 2
    for name in ("ParIc", "ParIct"):
        caplog.clear()
        fact = getattr(F, name).build().on(exec).generate(_csr(exec, np.array([[1.0, 2], [2, 1]])))
        l_factor = fact.l_factor.to_scipy().toarray()
        assert np.isfinite(l_factor).all() and (np.diag(l_factor) > 0).all()
        assert len(caplog.records) == 1
        assert "broke down (the pivot of row 1 was not positive); factorized A + 1.02 diag(A)" in caplog.text
    with pytest.raises(ValueError, match="ParIC: the diagonal entry of row 1 is not positive.*M='ilu'"):
        F.ParIc.build().on(exec).generate(_csr(exec, np.array([[1.0, 0], [0, -1]])))


# -- kernels against their reference twins ----------------------------------------------------------
N = 517  # more than a work-group, odd


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_initialize_twins(ref, ocl, rng, dtype):
    m = _random(N, rng)
    for kernel in ("factorization.factorization.initialize_l_u", "factorization.factorization.initialize_l"):
        source = m if kernel.endswith("l_u") else (m + m.T).tocsr()
        factorization_initialize_twins(ref, ocl, kernel, source, dtype, *([] if kernel.endswith("l_u") else [0.25]))
    # a missing diagonal entry: the first such row
    m = m.tolil()
    m[300, 300] = 0
    m[411, 411] = 0
    for e in (ref, ocl):
        assert e.run("factorization.factorization.initialize_l_u", _csr(e, m.tocsr(), dtype))[-1] == 300


def _factors(exec, m, dtype, ic=False):
    """A's Csr, the initial factors and their row indices on exec."""
    A = _csr(exec, m, dtype)
    if ic:
        arrays, _ = exec.run("factorization.factorization.initialize_l", A, 0.25)
        L = Csr(exec, A.shape, *arrays)
        return A, L, gk.core.factorization.factorization.row_indices(L)
    l_arrays, u_arrays, _ = exec.run("factorization.factorization.initialize_l_u", A)
    L, U = Csr(exec, A.shape, *l_arrays), Csr(exec, A.shape, *u_arrays)
    rows = gk.core.factorization.factorization.row_indices
    return A, L, U, rows(L), rows(U)


SWEEP_DTYPES = [np.float64, np.float32, np.complex128, np.complex64]


@pytest.mark.parametrize("dtype", SWEEP_DTYPES)
def test_par_ilu_sweep_twins(ref, ocl, rng, dtype):
    m = _random(N, rng, density=6, complex_values=np.dtype(dtype).kind == "c")
    out = []
    for e in (ref, ocl):
        A, L, U, l_rows, u_rows = _factors(e, m, dtype)
        like = gk.core.factorization.factorization.like
        U_new, L_new = like(U), like(L)
        e.run("factorization.par_ilu.sweep_u", A, L, U, u_rows, raised_pivot_floors(e, A), U_new)
        e.run("factorization.par_ilu.sweep_l", A, L, l_rows, U_new, L_new)
        out.append([_dense(U_new), _dense(L_new), e.to_host(l_rows), e.to_host(u_rows)])
    assert_twins(out, dtype, factor=4)


@pytest.mark.parametrize("dtype", SWEEP_DTYPES)
def test_par_ic_sweep_twins(ref, ocl, rng, dtype):
    m = _random(N, rng, density=3, symmetric=True, complex_values=np.dtype(dtype).kind == "c")
    out = []
    for e in (ref, ocl):
        A, L, l_rows = _factors(e, m, dtype, ic=True)
        e.run("factorization.par_ic.sweep_diagonal", A, L, l_rows, 0.25)
        L_new = gk.core.factorization.factorization.like(L)
        e.run("factorization.par_ic.sweep_off_diagonal", A, L, l_rows, L_new)
        out.append([_dense(L), _dense(L_new)])
    assert_twins(out, dtype, factor=4)
    # the diagonal stays real and positive; the sums conjugate: l_ij = (a_ij - sum l_ik conj(l_jk)) / l_jj
    L = out[0][0]
    assert (np.diag(L).imag == 0).all() and (np.diag(L).real > 0).all()
    strict = np.tril(L, -1)
    expected = np.tril(m.toarray() - strict @ strict.conj().T, -1) / np.diag(L).real[None, :]
    mask = np.tril(m.toarray(), -1) != 0
    np.testing.assert_allclose(out[0][1][mask], expected[mask], rtol=100 * tol(dtype), atol=100 * tol(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_add_diagonal_elements_twins(ref, ocl, rng, dtype):
    m = _random(N, rng).tolil()
    for row in (0, 300, 301, N - 1):  # the first and last rows, two in a row
        m[row, row] = 0
    m = m.tocsr()
    m.eliminate_zeros()
    m[5, N - 1] = 3.0  # a row whose diagonal is followed by entries, another ...
    m[N - 1, 0] = 2.0  # ... whose missing diagonal comes last
    m.sort_indices()
    outs = [[e.to_host(a) for a in e.run("factorization.factorization.add_diagonal_elements", _csr(e, m, dtype))]
            for e in (ref, ocl)]
    for r, d in zip(*outs):
        np.testing.assert_array_equal(d, r)
    ptrs, cols, vals = outs[0]
    added = sp.csr_matrix((vals, cols, ptrs), shape=m.shape)
    assert added.nnz == m.nnz + 4 and added.has_sorted_indices
    np.testing.assert_array_equal(added.toarray(), m.toarray().astype(dtype))
    assert (added.diagonal() == 0).sum() == 4 and all(added[i, i] == 0 for i in (0, 300, 301, N - 1))
    rows = np.repeat(np.arange(N), np.diff(ptrs))
    assert np.count_nonzero(cols == rows) == N


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_pivot_floor_twins(ref, ocl, rng, dtype):
    m = _random(N, rng)
    m[7] = 0  # an empty row: floor 0
    m.eliminate_zeros()
    outs = []
    for e in (ref, ocl):
        A = _csr(e, m, dtype)
        floors = gk.core.factorization.factorization.pivot_floors(A)
        outs.append(floors.to_numpy()[:, 0])
    np.testing.assert_allclose(outs[1], outs[0], rtol=tol(dtype))
    relative = np.sqrt(np.finfo(dtype).eps)
    np.testing.assert_allclose(outs[0], relative * np.asarray(abs(m).sum(axis=1)).ravel(), rtol=tol(dtype))
    assert outs[0][7] == 0
    # floored pivots: rows whose pivot is not above the floor (a zero floor counts as 1)
    for lower, part in ((True, sp.tril), (False, sp.triu)):
        factor = part(m).tocsr()
        factor.setdiag(1.0)
        floors = outs[0].copy()
        floors[[10, 200, N - 1]] = 2.0
        outs_f = twin(ref, ocl, "factorization.factorization.floored_pivots", factor, lower,
                      lambda e: Dense.from_numpy(e, floors.reshape(-1, 1)), dtype=dtype)
        assert outs_f[0][-1] == outs_f[1][-1] == (4, 7)


def test_find_invalid_pivot_twins(ref, ocl, rng):
    m = _random(N, rng)
    upper = sp.triu(m).tocsr()
    lower = sp.tril(m).tocsr()
    for factor, is_lower in ((upper, False), (lower, True)):
        outs = twin(ref, ocl, "factorization.factorization.find_invalid_pivot", factor, is_lower)
        assert outs[0][-1] == outs[1][-1] == -1
        broken = factor.copy()
        diag_positions = np.flatnonzero(np.repeat(np.arange(N), np.diff(broken.indptr)) == broken.indices)
        broken.data[diag_positions[400]] = np.nan
        broken.data[diag_positions[333]] = 0.0  # stored zero: still in the pattern
        outs = twin(ref, ocl, "factorization.factorization.find_invalid_pivot", broken, is_lower)
        assert outs[0][-1] == outs[1][-1] == 333


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_check_factor_twins(ref, ocl, rng, dtype):
    # [first invalid pivot, first row not finite, floored pivots, first floored], n where none
    m = _random(N, rng)
    floors = np.full((N, 1), 1e-8)
    floors[[10, 200]] = 1e3  # pivots below these floors
    for part, lower in ((sp.triu, False), (sp.tril, True)):
        factor = part(m).tocsr().astype(dtype)
        for fl in (floors, None):
            arg = None if fl is None else (lambda e, fl=fl: Dense.from_numpy(e, fl))
            outs = twin(ref, ocl, "factorization.factorization.check_factor", factor, lower, arg, dtype=dtype)
            expected = [N, N, 2, 10] if fl is not None else [N, N, 0, N]
            assert [list(np.asarray(_host(o[-1]))) for o in outs] == [expected, expected]
        broken = factor.copy()
        diag_positions = np.flatnonzero(np.repeat(np.arange(N), np.diff(broken.indptr)) == broken.indices)
        broken.data[diag_positions[400]] = np.inf
        broken.data[diag_positions[333]] = 0.0  # stored zero: an invalid pivot, not a value that is not finite
        off = np.flatnonzero(np.repeat(np.arange(N), np.diff(broken.indptr)) != broken.indices)
        broken.data[off[-1]] = np.nan  # an off-diagonal value of the last rows
        outs = twin(ref, ocl, "factorization.factorization.check_factor", broken, lower, None, dtype=dtype)
        assert [list(np.asarray(_host(o[-1])))[:2] for o in outs] == [[333, 400], [333, 400]]
    # no rows
    outs = twin(ref, ocl, "factorization.factorization.check_factor", sp.csr_matrix((0, 0)), True, None)
    assert [list(np.asarray(_host(o[-1]))) for o in outs] == [[0, 0, 0, 0], [0, 0, 0, 0]]


def _host(array) -> np.ndarray:
    return array if isinstance(array, np.ndarray) else array.get()


@pytest.mark.parametrize("layout", ["cpu", "gpu"])
@pytest.mark.parametrize("size", [0, 1, 517, 70001])
def test_prefix_sum_twins(ref, ocl, rng, size, layout):
    # long chunks as on a CPU, short ones as on a GPU, whatever the device is
    import attrs
    dev = gk.OpenCLExecutor(ocl.device)
    dev.info = attrs.evolve(ocl.info, is_cpu=layout == "cpu", is_gpu=layout == "gpu")
    counts = rng.integers(0, 9, size).astype(np.int32)
    counts[::7] = 0
    outs = twin(ref, dev, "components.prefix_sum.prefix_sum", counts)
    assert_twins(outs, np.float64)
    np.testing.assert_array_equal(outs[1][0], np.concatenate([[0], np.cumsum(counts)[:-1]]) if size else counts)


def test_convert_ptrs_to_idxs_twins(ref, ocl, rng):
    ptrs = np.concatenate([[0], np.cumsum(rng.integers(0, 5, N))]).astype(np.int32)
    outs = twin(ref, ocl, "components.format_conversion.convert_ptrs_to_idxs", ptrs,
                np.zeros(ptrs[-1], np.int32))
    assert_twins(outs, np.float64)
    np.testing.assert_array_equal(outs[1][1], np.repeat(np.arange(N), np.diff(ptrs)))


def test_par_ilu_reference_vs_device(ref, ocl, rng):
    m = _random(1001, rng, density=5)
    out = [[_dense(f) for f in F.ParIlu.build().on(e).generate(_csr(e, m)).factors] for e in (ref, ocl)]
    assert_twins(out, np.float64, factor=10)


# -- ParIlut / ParIct ------------------------------------------------------------------------------
@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("limit", [1.0, 1.7, pytest.param(3.0, marks=pytest.mark.slow)])  # fast tier: two limits
def test_par_ilut_fill_in_limit(exec, rng, approximate, limit):
    m = _random(2001 if approximate else 401, rng, density=5)
    fact = F.ParIlut.build().with_fill_in_limit(limit).with_approximate_select(approximate).on(exec).generate(
        _csr(exec, m))
    L, U = fact.l_factor.to_scipy(), fact.u_factor.to_scipy()
    assert L.nnz <= int(limit * sp.tril(m).nnz) and U.nnz <= int(limit * sp.triu(m).nnz)
    assert (sp.triu(L, 1).nnz, sp.tril(U, -1).nnz) == (0, 0)
    np.testing.assert_array_equal(L.diagonal(), 1)
    # it fills in: beyond A's pattern when the limit allows it
    if limit > 1:
        assert L.nnz + U.nnz > m.nnz + m.shape[0]


def test_par_ict_fill_in_limit_and_quality(exec):
    m = poisson_2d(15)
    ict = F.ParIct.build().with_fill_in_limit(2.0).on(exec).generate(_csr(exec, m))
    L = ict.l_factor.to_scipy()
    assert L.nnz <= 2 * sp.tril(m).nnz and sp.triu(L, 1).nnz == 0
    np.testing.assert_allclose(ict.lt_factor.to_scipy().toarray(), L.T.toarray(), rtol=0)
    ic = F.Ic.build().on(exec).generate(_csr(exec, m)).l_factor.to_scipy()
    # more fill, a closer factorization
    assert abs(L @ L.T - m).max() < abs(ic @ ic.T - m).max()


def test_par_ilut_beats_ilu0_on_convection_diffusion(exec):
    m = convection_diffusion_2d(16)
    A = _csr(exec, m)
    residual = {}
    for name in ("Ilu", "ParIlut"):
        f = getattr(F, name).build().on(exec).generate(A)
        residual[name] = abs(f.l_factor.to_scipy() @ f.u_factor.to_scipy() - m).max()
    assert residual["ParIlut"] < 0.5 * residual["Ilu"]


def test_diverging_threshold_factorization_is_refused(exec):
    # pivots of 1e-9 next to entries of 1: the threshold steps blow up instead of converging
    n = 60
    m = sp.diags([np.ones(n - 1), np.r_[1e-9, np.ones(n - 1)], np.ones(n - 1)], [-1, 0, 1], format="lil")
    m[n - 1, 0] = m[0, n - 1] = 1
    with pytest.raises(ValueError, match="ParILUT (diverges|breaks down)"):
        F.ParIlut.build().on(exec).generate(_csr(exec, m.tocsr()))
    # watt_2's pivots down to 4e-9 (exact ILU(0) and ParILU work on it)
    watt = scipy.io.mmread(matrix_path("watt_2.mtx")).tocsr()
    with pytest.raises(ValueError, match="ParILUT diverges.*scale the matrix"):
        F.ParIlut.build().on(exec).generate(_csr(exec, watt))


def test_values_not_finite_are_named(exec, rng):
    # ParIlu checks A's values only where its factors' check finds them spoilt (no read
    # before): the error still names the system matrix
    m = _random(N, rng).tolil()
    m[300, 2] = np.inf
    with pytest.raises(ValueError, match="contains NaN or Inf"):
        gk.factorization.ParIlu.build().on(exec).generate(_csr(exec, m.tocsr(), np.float64))
