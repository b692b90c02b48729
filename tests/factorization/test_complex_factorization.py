"""Complex values (complex64, complex128) in the triangular solves, the incomplete factorizations
(ILU/IC exact, ParIlu/ParIc, ParIlut/ParIct), ISAI and block-Jacobi.

Every OpenCL kernel these run against its reference twin on random complex data larger than a
work-group (odd sizes and column counts, zero pivots where the kernel checks them); then whole
solves on both executors: a complex symmetric, non-Hermitian Helmholtz system by Gmres and
Bicgstab with ILU, ParILU + ISAI and block-Jacobi, a Hermitian positive definite magnetic
Laplacian by Cg with IC and ParIC, the true residual checked with numpy, and the factors
checked (L U = A on A's pattern for exact ILU(0), L L^H = A on A's lower pattern for IC(0):
for complex values IC is Hermitian, as Ginkgo's, with a real positive diagonal).
"""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import (assert_twins, criteria, factorization_initialize_twins, isai_inverse_twins, solve, tol,
                      twin)
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.linalg import bicgstab, cg, gmres
from ginkpy.opencl.solver import triangular_kernels as ocl_trs
from ginkpy.problems import helmholtz_2d, magnetic_laplacian_2d

N = 517  # more than a work-group, odd
F, P = gk.factorization, gk.preconditioner


@pytest.fixture(params=[np.complex128, np.complex64], ids=["complex128", "complex64"])
def dtype(request, ocl):
    if request.param == np.complex128 and not ocl.info.fp64:
        pytest.skip("complex128 needs fp64")
    return np.dtype(request.param)


@pytest.fixture(params=[np.complex128, np.complex64], ids=["complex128", "complex64"])
def cdtype(request, exec):
    """A complex value type the executor has (complex128 needs fp64)."""
    info = getattr(exec, "info", None)
    if request.param == np.complex128 and info is not None and not info.fp64:
        pytest.skip("complex128 needs fp64")
    return np.dtype(request.param)


def crandom(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _random(n, rng, density=4, hermitian=False):
    """A random complex diagonally dominant sparse matrix, nonsymmetric or Hermitian (a real
    positive diagonal then: Hermitian positive definite)."""
    m = sp.random(n, n, density / n, random_state=np.random.RandomState(rng.integers(1 << 31)), format="csr")
    m = sp.csr_matrix((crandom(rng, m.nnz), m.indices, m.indptr), shape=m.shape)
    if hermitian:
        m = m + m.conj().T
    diag = abs(m).sum(axis=1).A.ravel() + 1 + rng.random(n)
    m = (m + sp.diags(diag if hermitian else diag * np.exp(2j * np.pi * rng.random(n)))).tocsr()
    m.sort_indices()
    return m


def _random_triangle(n, rng, lower, per_row=3, reach=None):
    """A random complex sparse triangle with a nonzero diagonal (``reach``: how far left of the
    diagonal the entries lie: small for many thin levels)."""
    rows = np.repeat(np.arange(n), per_row)
    span = rows if reach is None else np.minimum(rows, reach)
    cols = rows - 1 - (rng.random(rows.size) * np.maximum(span, 1)).astype(int)
    keep = cols >= 0
    m = sp.csr_matrix((0.5 * crandom(rng, keep.sum()) / per_row, (rows[keep], cols[keep])), shape=(n, n))
    m.sum_duplicates()
    m = (m + sp.diags(rng.uniform(1, 2, n) * np.exp(2j * np.pi * rng.random(n)))).tocsr()
    return m if lower else m[::-1, ::-1].tocsr()


def _csr(exec, m, dtype):
    return Csr.from_scipy(exec, sp.csr_matrix(m), dtype)


def _rel_err(x, expected):
    return np.linalg.norm(x - expected) / np.linalg.norm(expected)


def _on_pattern(product, m):
    """The entries of ``product`` on m's pattern."""
    rows, cols = m.nonzero()
    return np.asarray(sp.csr_matrix(product)[rows, cols]).ravel(), np.asarray(m[rows, cols]).ravel()


# -- triangular solves ---------------------------------------------------------------------------

TRIANGLES = {"thin levels": dict(n=777, per_row=2, reach=3), "wide levels": dict(n=3001, per_row=3)}


@pytest.mark.parametrize("lower", [True, False], ids=["lower", "upper"])
@pytest.mark.parametrize("case", list(TRIANGLES))
def test_triangular_solve_twins(ref, dev, rng, dtype, case, lower):
    # solver.triangular.solve (chains of thin levels, wide levels alone) against the reference
    m = _random_triangle(rng=rng, lower=lower, **TRIANGLES[case])
    b = crandom(rng, (m.shape[0], 3))
    solver_type = gk.solver.LowerTrs if lower else gk.solver.UpperTrs
    xs = []
    for exec in (ref, dev):
        solver = solver_type.build().on(exec).generate(_csr(exec, m, dtype))
        xs.append(solver.apply(Dense.from_numpy(exec, b, dtype), Dense.zeros(exec, b.shape, dtype)).to_numpy())
    assert _rel_err(xs[1], xs[0]) <= tol(dtype)
    assert _rel_err(m @ xs[0].astype(np.complex128), b) <= 10 * tol(dtype)


@pytest.mark.parametrize("lower", [True, False], ids=["lower", "upper"])
def test_triangular_chains_and_wide_levels_mixed(ref, ocl, rng, monkeypatch, lower):
    monkeypatch.setattr(ocl_trs, "_chain_sizes", lambda info: (64, 64))
    monkeypatch.setattr(ocl_trs, "_sequential", lambda info: False)
    m = _random_triangle(1501, rng, lower, per_row=2, reach=300)
    b = crandom(rng, (m.shape[0], 1))
    dtype = np.complex128 if ocl.info.fp64 else np.complex64
    x = [(gk.solver.LowerTrs if lower else gk.solver.UpperTrs).build().on(e).generate(_csr(e, m, dtype))
         .apply(Dense.from_numpy(e, b, dtype), Dense.zeros(e, b.shape, dtype)).to_numpy() for e in (ref, ocl)]
    assert _rel_err(x[1], x[0]) <= tol(dtype)


@pytest.mark.parametrize("lower", [True, False], ids=["lower", "upper"])
def test_triangular_jacobi_kernel_twins(ref, ocl, rng, dtype, lower):
    n, k = 601, 3
    m = (_random_triangle(n, rng, lower) + 0.1 * _random(n, rng, density=2)).tocsr()  # both triangles
    outs = twin(ref, ocl, "solver.triangular.jacobi_generate", m, False, np.zeros((n, 1), dtype), dtype=dtype)
    assert outs[0][-1] == outs[1][-1] == -1
    assert_twins(outs, dtype)
    inv = outs[0][2]
    np.testing.assert_allclose(inv[:, 0] * m.diagonal(), 1, rtol=tol(dtype))
    b, x = crandom(rng, (n, k)), crandom(rng, (n, k))
    assert_twins(twin(ref, ocl, "solver.triangular.jacobi_initialize", inv, b, np.zeros((n, k), dtype),
                      dtype=dtype), dtype)
    assert_twins(twin(ref, ocl, "solver.triangular.jacobi_sweep", m, lower, inv, b, x, np.zeros((n, k), dtype),
                      dtype=dtype), dtype, factor=2)
    # a zero diagonal entry (also one with only an imaginary part is not zero): the first such row
    broken = m.tolil()
    broken[123, 123] = 0
    broken[456, 456] = 0
    broken[100, 100] = 1j
    outs = twin(ref, ocl, "solver.triangular.jacobi_generate", broken.tocsr(), False, np.zeros((n, 1), dtype),
                dtype=dtype)
    assert outs[0][-1] == outs[1][-1] == 123


@pytest.mark.parametrize("algorithm", ["sparselib", "jacobi"])
def test_triangular_solvers_and_conj_transpose(exec, cdtype, rng, algorithm):
    n = 301
    m = _random_triangle(n, rng, lower=True, reach=4)
    b = crandom(rng, (n, 2))
    A = _csr(exec, m, cdtype)
    params = gk.solver.LowerTrs.build().with_algorithm(algorithm).with_num_jacobi_sweeps(n)
    solver = params.on(exec).generate(A)
    x = solver.apply(Dense.from_numpy(exec, b, cdtype), Dense.zeros(exec, b.shape, cdtype)).to_numpy()
    assert _rel_err(m @ x, b) <= 10 * tol(cdtype)
    # the solver of L^H: an UpperTrs
    solver_h = solver.conj_transpose()
    assert isinstance(solver_h, gk.solver.UpperTrs)
    x = solver_h.apply(Dense.from_numpy(exec, b, cdtype), Dense.zeros(exec, b.shape, cdtype)).to_numpy()
    assert _rel_err(m.conj().T @ x, b) <= 10 * tol(cdtype)


def test_dense_trsv_twins(ref, ocl, rng, dtype):
    n, k = 203, 3  # more rows than a block and a work-group
    a = crandom(rng, (n, n)) / n + np.diag(2 + crandom(rng, n))
    b = crandom(rng, (n, k))
    for lower in (True, False):
        for transpose in (False, True):
            for unit in (False, True):
                xs = []
                for exec in (ref, ocl):
                    A, x = Dense.from_numpy(exec, a, dtype), Dense.from_numpy(exec, b, dtype)
                    exec.run("matrix.dense_trsv.trsv", A, x, lower, transpose, unit)
                    xs.append(x.to_numpy())
                assert _rel_err(xs[1], xs[0]) <= tol(dtype) * np.sqrt(n)
    # the LowerTrs of a Dense
    x = gk.solver.LowerTrs.build().on(ocl).generate(Dense.from_numpy(ocl, a, dtype)).apply(
        Dense.from_numpy(ocl, b, dtype), Dense.zeros(ocl, b.shape, dtype)).to_numpy()
    assert _rel_err(np.tril(a) @ x, b) <= 10 * tol(dtype) * np.sqrt(n)


# -- the fixed-point factorizations' kernels ----------------------------------------------------------

def test_initialize_twins(ref, ocl, rng, dtype):
    m = _random(N, rng)
    h = _random(N, rng, hermitian=True)
    for kernel, source in (("factorization.factorization.initialize_l_u", m),
                           ("factorization.factorization.initialize_l", h)):
        factorization_initialize_twins(ref, ocl, kernel, source, dtype, *([] if kernel.endswith("l_u") else [0.25]))
    # IC's initial diagonal is real: sqrt(a_ii)
    (ptrs, _, vals), _ = ref.run("factorization.factorization.initialize_l", _csr(ref, h, dtype), 0.25)
    np.testing.assert_allclose(vals[ptrs[1:] - 1], np.sqrt(1.25 * h.diagonal().real), rtol=tol(dtype))
    # a missing diagonal entry, and for IC a diagonal whose real part is not positive
    broken = m.tolil()
    broken[300, 300] = 0
    broken[411, 411] = 0
    broken = broken.tocsr()
    broken.eliminate_zeros()
    not_positive = h.tolil()
    not_positive[200, 200] = -1 + 1j
    for e in (ref, ocl):
        assert e.run("factorization.factorization.initialize_l_u", _csr(e, broken, dtype))[-1] == 300
        assert e.run("factorization.factorization.initialize_l", _csr(e, not_positive.tocsr(), dtype), 0.0)[-1] == 200


# ParIlu's and ParIc's sweeps in complex values: test_par_ilu.py's sweep twins (every value type)


def test_find_invalid_pivot_twins(ref, ocl, rng, dtype):
    m = _random(N, rng)
    for lower, part in ((True, sp.tril), (False, sp.triu)):
        factor = part(m).tocsr()
        outs = twin(ref, ocl, "factorization.factorization.find_invalid_pivot", factor, lower, dtype=dtype)
        assert outs[0][-1] == outs[1][-1] == -1
        broken = factor.tolil()
        broken[250, 250] = complex(np.nan, 1)
        broken[400, 400] = 1e-30j  # not zero
        outs = twin(ref, ocl, "factorization.factorization.find_invalid_pivot", broken.tocsr(), lower, dtype=dtype)
        assert outs[0][-1] == outs[1][-1] == 250


def test_par_factorizations_reference_vs_device(ref, ocl, rng, dtype):
    m, h = _random(N, rng), _random(N, rng, hermitian=True)
    for factorization, source in ((F.ParIlu, m), (F.ParIc, h)):
        params = factorization.build().with_iterations(3).with_sparsity_power(2)
        out = [[f.to_scipy().toarray() for f in params.on(e).generate(_csr(e, source, dtype)).factors]
               for e in (ref, ocl)]
        assert_twins(out, dtype, factor=20)


# -- ISAI -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["lower", "upper", "general", "spd"])
def test_isai_generate_inverse_twins(ref, ocl, rng, dtype, kind):
    m = _random(601, rng, hermitian=kind == "spd")
    system, (ptrs, cols), out = isai_inverse_twins(ref, ocl, m, dtype, kind)
    # the defining property on the pattern: (M S)_ij = delta_ij (spd: (G A)_ij = delta_ij / sqrt(m_i))
    s = sp.csr_matrix((system[2], system[1], system[0]), shape=m.shape)
    inverse = sp.csr_matrix(out[0][0])
    product, _ = _on_pattern(inverse @ s, sp.csr_matrix((np.ones(cols.size), cols, ptrs), shape=m.shape))
    rows = np.repeat(np.arange(m.shape[0]), np.diff(ptrs))
    expected = np.where(cols == rows, 1 / np.diag(out[0][0]).real[rows] if kind == "spd" else 1, 0)
    np.testing.assert_allclose(product, expected, atol=100 * tol(dtype))


def test_isai_singular_row(ref, ocl, dtype):
    # a singular 2 x 2 block at rows 300, 301 (complex): rows 300 and 301 are singular
    n = 517
    m = sp.diags([np.ones(n - 1), np.full(n, 2.0 + 1j), np.ones(n - 1)], [-1, 0, 1], format="lil")
    m[300, 300], m[300, 301], m[301, 300], m[301, 301] = 1j, 1, -1, 1j
    m[300, 299] = m[301, 302] = m[299, 300] = m[302, 301] = 0
    m = m.tocsr()
    m.eliminate_zeros()
    system, (ptrs, cols), _ = ref.run("preconditioner.isai.pattern", _csr(ref, m, dtype), "general", 1)
    for e in (ref, ocl):
        S = Csr(e, m.shape, *(e.from_host(a) for a in system))
        M = Csr(e, m.shape, e.from_host(ptrs), e.from_host(cols), e.alloc((cols.size,), dtype))
        assert e.run("preconditioner.isai.generate_inverse", S, M, False) == 300


def test_isai_conj_transpose(exec, cdtype, rng):
    n = 211
    m = _random(n, rng)
    A = _csr(exec, m, cdtype)
    b = crandom(rng, (n, 1))
    for kind in ("lower", "upper", "general"):
        M = P.Isai.build().with_isai_type(kind).on(exec).generate(A)
        inverse = M.approximate_inverse.to_scipy().toarray()
        for op, expected in ((M.transpose(), inverse.T), (M.conj_transpose(), inverse.conj().T)):
            x = op.apply(Dense.from_numpy(exec, b, cdtype), Dense.zeros(exec, b.shape, cdtype)).to_numpy()
            np.testing.assert_allclose(x, expected @ b, rtol=10 * tol(cdtype), atol=10 * tol(cdtype) * np.abs(b).max())
    # spd: M = G^H G is Hermitian, its own conjugate transpose; its transpose is conj(M)
    h = _random(n, rng, hermitian=True)
    M = P.SpdIsai.build().on(exec).generate(_csr(exec, h, cdtype))
    g = M.approximate_inverse.to_scipy().toarray()
    assert M.conj_transpose() is M
    for op, expected in ((M, g.conj().T @ g), (M.transpose(), (g.conj().T @ g).T)):
        x = op.apply(Dense.from_numpy(exec, b, cdtype), Dense.zeros(exec, b.shape, cdtype)).to_numpy()
        np.testing.assert_allclose(x, expected @ b, rtol=100 * tol(cdtype), atol=100 * tol(cdtype) * np.abs(b).max())
    # G A G^H has a unit diagonal
    np.testing.assert_allclose(np.diag(g @ h.toarray() @ g.conj().T), 1, rtol=100 * tol(cdtype))


# -- block-Jacobi ---------------------------------------------------------------------------------

@pytest.mark.parametrize("max_block_size", [5, 32])
def test_block_jacobi_reference_vs_device(ref, ocl, rng, dtype, max_block_size):
    n, k = 389, 3
    sizes = []
    while sum(sizes) < n:
        sizes.append(int(rng.integers(1, max_block_size + 1)))
    sizes[-1] -= sum(sizes) - n
    A = (sp.block_diag([crandom(rng, (s, s)) + 2 * s * np.eye(s) for s in sizes])
         + 0.1 * _random(n, rng, density=2)).tocsr()
    ptrs = np.r_[0, np.cumsum(sizes)]
    inverse = sp.block_diag([np.linalg.inv(A.toarray()[s:e, s:e]) for s, e in zip(ptrs[:-1], ptrs[1:])])
    b = crandom(rng, (n, k))
    x0 = crandom(rng, (n, k))
    alpha, beta = crandom(rng, (1, k)), crandom(rng, (1, k))
    outs = []
    for e in (ref, ocl):
        M = P.Jacobi.build().with_max_block_size(max_block_size).with_block_pointers(ptrs).on(e).generate(
            _csr(e, A, dtype))
        x = M.apply(Dense.from_numpy(e, b, dtype), Dense.zeros(e, b.shape, dtype)).to_numpy()
        y = Dense.from_numpy(e, x0, dtype)
        M.apply(Dense.from_numpy(e, alpha, dtype), Dense.from_numpy(e, b, dtype), Dense.from_numpy(e, beta, dtype), y)
        outs.append([x, y.to_numpy()])
    bound = tol(dtype) * (abs(inverse) @ np.abs(b))
    assert (np.abs(outs[1][0] - outs[0][0]) <= bound).all()
    assert (np.abs(outs[0][0] - inverse @ b) <= 10 * bound * max_block_size).all()
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=10 * tol(dtype), atol=10 * tol(dtype) * np.abs(outs[0][1]).max())
    np.testing.assert_allclose(outs[0][1], alpha * (inverse @ b) + beta * x0, rtol=1e-3 if dtype == np.complex64 else 1e-10)


# -- whole solves -------------------------------------------------------------------------------

def _reduction(dtype):
    return 1e-10 if dtype == np.complex128 else 1e-5


def _check_solution(A, b, x, dtype):
    residual = np.linalg.norm(b - A @ x.astype(np.complex128)) / np.linalg.norm(b)
    assert residual <= 2 * _reduction(dtype), residual


HELMHOLTZ = helmholtz_2d(14)  # complex symmetric, not Hermitian, indefinite
MAGNETIC = magnetic_laplacian_2d(14, shift=0.1)  # Hermitian positive definite


def _ilu(fact, l_solver=None, u_solver=None):
    p = P.Ilu.build().with_factorization(fact)
    return p.with_l_solver(l_solver).with_u_solver(u_solver) if l_solver is not None else p


NONSYMMETRIC_PRECONDITIONERS = {
    "ilu0_exact": lambda: _ilu(F.Ilu.build(), gk.solver.LowerTrs.build(), gk.solver.UpperTrs.build()),
    "parilu_isai": lambda: _ilu(F.ParIlu.build(), P.LowerIsai.build(), P.UpperIsai.build()),
    "parilut_trs_jacobi": lambda: _ilu(F.ParIlut.build(), gk.solver.LowerTrs.build().with_algorithm("jacobi"),
                                       gk.solver.UpperTrs.build().with_algorithm("jacobi")),
    "ilu_default": lambda: P.Ilu.build(),
    "block_jacobi": lambda: P.Jacobi.build().with_max_block_size(8),
    "general_isai": lambda: P.GeneralIsai.build(),
}


@pytest.mark.parametrize("solver", ["Gmres", "Bicgstab"])
@pytest.mark.parametrize("precond", list(NONSYMMETRIC_PRECONDITIONERS))
def test_helmholtz_solves(exec, cdtype, solver, precond):
    A = HELMHOLTZ
    x_true = np.exp(2j * np.pi * np.arange(A.shape[0]) / 37)
    b = A @ x_true
    x, log = solve(exec, solver, A, b[:, None], dtype=cdtype, criteria=criteria(400, _reduction(cdtype)),
                   preconditioner=NONSYMMETRIC_PRECONDITIONERS[precond]())
    assert log.converged, (log.num_iterations, log.residual_norm)
    _check_solution(A, b[:, None], x, cdtype)


HERMITIAN_PRECONDITIONERS = {
    "ic0_exact": lambda: P.Ic.build().with_factorization(F.Ic.build()).with_l_solver(gk.solver.LowerTrs.build()),
    "paric_isai": lambda: P.Ic.build().with_factorization(F.ParIc.build()).with_l_solver(P.LowerIsai.build()),
    "parict": lambda: P.Ic.build().with_factorization(F.ParIct.build()).with_l_solver(gk.solver.LowerTrs.build()),
    "ic_default": lambda: P.Ic.build(),
    "spd_isai": lambda: P.SpdIsai.build(),
    "block_jacobi": lambda: P.Jacobi.build().with_max_block_size(8),
}


@pytest.mark.parametrize("precond", list(HERMITIAN_PRECONDITIONERS))
def test_magnetic_laplacian_cg(exec, cdtype, precond):
    A = MAGNETIC
    b = A @ np.exp(2j * np.pi * np.arange(A.shape[0]) / 29)
    x, log = solve(exec, "Cg", A, b[:, None], dtype=cdtype, criteria=criteria(400, _reduction(cdtype)),
                   preconditioner=HERMITIAN_PRECONDITIONERS[precond]())
    assert log.converged, (log.num_iterations, log.residual_norm)
    _check_solution(A, b[:, None], x, cdtype)
    if precond == "ic0_exact":
        # IC(0) is a better preconditioner than none
        _, plain = solve(exec, "Cg", A, b[:, None], dtype=cdtype, criteria=criteria(400, _reduction(cdtype)))
        assert log.num_iterations < plain.num_iterations


def test_exact_ilu_factors(exec, cdtype):
    A = HELMHOLTZ
    fact = F.Ilu.build().on(exec).generate(_csr(exec, A, cdtype))
    L, U = (f.to_scipy() for f in fact.factors)
    assert L.dtype == U.dtype == cdtype
    np.testing.assert_array_equal(L.diagonal(), 1)
    assert sp.triu(L, 1).nnz == 0 and sp.tril(U, -1).nnz == 0
    product, a = _on_pattern(L.astype(np.complex128) @ U, A)
    np.testing.assert_allclose(product, a, atol=10 * tol(cdtype) * abs(A).max())


def test_exact_ic_factors(exec, cdtype):
    A = MAGNETIC
    fact = F.Ic.build().on(exec).generate(_csr(exec, A, cdtype))
    L, LH = (f.to_scipy() for f in fact.factors)
    assert sp.triu(L, 1).nnz == 0
    # the diagonal real and positive; lt_factor is L^H (as Ginkgo's: the conjugate transpose)
    assert (L.diagonal().imag == 0).all() and (L.diagonal().real > 0).all()
    np.testing.assert_array_equal(LH.toarray(), L.conj().T.toarray())
    product, a = _on_pattern(L.astype(np.complex128) @ LH, sp.tril(A).tocsr())
    np.testing.assert_allclose(product, a, atol=10 * tol(cdtype) * abs(A).max())
    # ParIc converges to it
    par = F.ParIc.build().with_iterations(30).on(exec).generate(_csr(exec, A, cdtype))
    np.testing.assert_allclose(par.l_factor.to_scipy().toarray(), L.toarray(), atol=100 * tol(cdtype))


def test_ic_refuses_a_matrix_that_is_not_hermitian_positive_definite(exec, cdtype):
    # the Helmholtz matrix is indefinite: a pivot's real part is not positive
    A = _csr(exec, helmholtz_2d(14, wavenumber=40), cdtype)
    for factorization in (F.Ic, F.ParIc, F.ParIct):
        with pytest.raises(ValueError, match="not symmetric positive definite"):
            factorization.build().on(exec).generate(A)


def test_linalg_doors(exec, cdtype):
    A = HELMHOLTZ.astype(cdtype)
    b = (A @ np.ones(A.shape[0])).astype(cdtype)
    for M in ("ilu", "ilu0_exact", "isai", "block_jacobi"):
        for method in (gmres, bicgstab):
            x, info = method(A, b, rtol=_reduction(cdtype), M=M, executor=exec)
            assert info == 0 and x.dtype == cdtype, (M, method)
            _check_solution(A, b, x, cdtype)
    H = MAGNETIC.astype(cdtype)
    b = (H @ np.ones(H.shape[0])).astype(cdtype)
    for M in ("ic", "ic0_exact", "spdisai"):
        x, info = cg(H, b, rtol=_reduction(cdtype), M=M, executor=exec)
        assert info == 0 and x.dtype == cdtype, M
        _check_solution(H, b, x, cdtype)


@pytest.mark.parametrize("name", ["Ilu", "Ic"])
def test_ilu_ic_conj_transpose(exec, cdtype, name):
    # M^H = L^-H U^-H: what Bicg applies in its shadow system
    A = HELMHOLTZ if name == "Ilu" else MAGNETIC
    n = A.shape[0]
    b = np.exp(2j * np.pi * np.arange(n) / 31)[:, None]
    for l_solver in (gk.solver.LowerTrs.build(), P.LowerIsai.build()):
        params = getattr(P, name).build().with_factorization(getattr(F, name).build()).with_l_solver(l_solver)
        if name == "Ilu":
            params = params.with_u_solver(gk.solver.UpperTrs.build() if l_solver.product is gk.solver.LowerTrs
                                          else P.UpperIsai.build())
        M = params.on(exec).generate(_csr(exec, A, cdtype))
        # M as a dense matrix, column by column
        eye = np.eye(n, dtype=cdtype)
        dense = M.apply(Dense.from_numpy(exec, eye, cdtype), Dense.zeros(exec, (n, n), cdtype)).to_numpy()
        for op, expected in ((M.conj_transpose(), dense.conj().T), (M.transpose(), dense.T)):
            x = op.apply(Dense.from_numpy(exec, b, cdtype), Dense.zeros(exec, b.shape, cdtype)).to_numpy()
            assert _rel_err(x, expected @ b) <= 100 * tol(cdtype)
    x, info = gk.linalg.bicg(A.astype(cdtype), (A @ np.ones(n)).astype(cdtype), rtol=_reduction(cdtype),
                             M=name.lower(), executor=exec)
    assert info == 0
    _check_solution(A, A @ np.ones(n), x, cdtype)
