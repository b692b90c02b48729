"""Isai: inverses of diagonal and bidiagonal triangles by hand, the defining property (M S)_ij =
delta_ij on the pattern for every type, the kernel against its reference twin, the transpose,
and bad input."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import isai_inverse_twins
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.problems import convection_diffusion_2d, poisson_2d

P = gk.preconditioner
L3 = np.array([[2.0, 0, 0], [1, 4, 0], [0, 3, 5]])
# by hand: row 1 solves [2 1; 0 4] m = e_1 (L[J, J]^T, J = {0, 1}): m = [-1/8, 1/4];
# row 2 solves [4 3; 0 5] m = e_1 (J = {1, 2}): m = [-3/20, 1/5]; (2, 0) is outside the pattern
M_L3 = np.array([[1 / 2, 0, 0], [-1 / 8, 1 / 4, 0], [0, -3 / 20, 1 / 5]])
# the upper bidiagonal L3^T: rows 0 and 1 solve [2 0; 1 4] m = e_0 and [4 0; 3 5] m = e_0
M_U3 = np.array([[1 / 2, -1 / 8, 0], [0, 1 / 4, -3 / 20], [0, 0, 1 / 5]])


def _csr(exec, m, dtype=np.float64):
    return Csr.from_scipy(exec, sp.csr_matrix(m), dtype)


def _inverse(exec, kind, m, power=1, dtype=np.float64):
    return getattr(P, kind).build().with_sparsity_power(power).on(exec).generate(_csr(exec, m, dtype))


@pytest.mark.parametrize("kind", ["LowerIsai", "UpperIsai", "GeneralIsai", "SpdIsai"])
def test_diagonal(exec, kind):
    d = np.diag([2.0, 4.0, 5.0])
    isai = _inverse(exec, kind, d)
    expected = np.diag([1 / 2, 1 / 4, 1 / 5]) if kind != "SpdIsai" else np.diag(1 / np.sqrt([2, 4, 5]))
    np.testing.assert_allclose(isai.approximate_inverse.to_scipy().toarray(), expected, rtol=1e-15)
    x = isai.apply(Dense.from_numpy(exec, np.array([2.0, 4, 5])), Dense.zeros(exec, (3, 1)))
    np.testing.assert_allclose(x.to_numpy()[:, 0], 1, rtol=1e-15)


def test_bidiagonal_triangles_by_hand(exec):
    np.testing.assert_allclose(_inverse(exec, "LowerIsai", L3).approximate_inverse.to_scipy().toarray(), M_L3,
                               rtol=1e-15)
    np.testing.assert_allclose(_inverse(exec, "UpperIsai", L3.T).approximate_inverse.to_scipy().toarray(), M_U3,
                               rtol=1e-15)
    # the other triangle is ignored, as by LowerTrs / UpperTrs
    full = L3 + np.triu(np.full((3, 3), 7.0), 1)
    np.testing.assert_allclose(_inverse(exec, "LowerIsai", full).approximate_inverse.to_scipy().toarray(), M_L3,
                               rtol=1e-15)
    # Isai with an isai_type is the same
    isai = P.Isai.build().with_isai_type("lower").on(exec).generate(_csr(exec, L3))
    np.testing.assert_allclose(isai.approximate_inverse.to_scipy().toarray(), M_L3, rtol=1e-15)
    # sparsity power 2 takes the pattern of L^2: the full lower triangle, the exact inverse
    np.testing.assert_allclose(_inverse(exec, "LowerIsai", L3, 2).approximate_inverse.to_scipy().toarray(),
                               np.linalg.inv(L3), rtol=1e-15)


def _defining_property(m, isai):
    """max |(M S)_ij - delta_ij| over the pattern of M (S the triangle or matrix inverted)."""
    M = isai.approximate_inverse.to_scipy()
    product = (M @ m).toarray()
    pattern = M.toarray() != 0
    return np.abs(product - np.eye(m.shape[0]))[pattern].max()


@pytest.mark.parametrize("power", [1, 2])
def test_defining_property(exec, power):
    m = convection_diffusion_2d(11)
    assert _defining_property(sp.tril(m).tocsr(), _inverse(exec, "LowerIsai", m, power)) < 1e-14
    assert _defining_property(sp.triu(m).tocsr(), _inverse(exec, "UpperIsai", m, power)) < 1e-14
    assert _defining_property(m, _inverse(exec, "GeneralIsai", m, power)) < 1e-14
    # spd: G lower with (G A)_ij = 0 off the diagonal of G's pattern and G A G^T with a unit diagonal
    s = poisson_2d(11)
    G = _inverse(exec, "SpdIsai", s, power).approximate_inverse.to_scipy()
    assert sp.triu(G, 1).nnz == 0
    GA = (G @ s).toarray()
    pattern = (G.toarray() != 0) & ~np.eye(s.shape[0], dtype=bool)
    assert np.abs(GA[pattern]).max() < 1e-14
    np.testing.assert_allclose((G @ s @ G.T).diagonal(), 1, rtol=1e-14)


def test_spd_applies_g_transpose_g(exec, rng):
    s = poisson_2d(9)
    isai = _inverse(exec, "SpdIsai", s)
    G = isai.approximate_inverse.to_scipy()
    b = rng.standard_normal((81, 2))
    x = isai.apply(Dense.from_numpy(exec, b), Dense.zeros(exec, (81, 2))).to_numpy()
    np.testing.assert_allclose(x, G.T @ (G @ b), rtol=1e-13)
    assert isai.transpose() is isai


def test_transpose(exec, rng):
    m = convection_diffusion_2d(7)
    lower = _inverse(exec, "LowerIsai", m)
    t = lower.transpose()
    assert t.isai_type == "upper"
    np.testing.assert_allclose(t.approximate_inverse.to_scipy().toarray(),
                               lower.approximate_inverse.to_scipy().toarray().T, rtol=0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["lower", "upper", "general", "spd"])
def test_generate_inverse_twins(ref, ocl, rng, kind, dtype):
    n = 601  # more than a work-group, odd
    m = sp.random(n, n, 4 / n, random_state=np.random.RandomState(5), format="csr")
    m.data = rng.uniform(-1, 1, m.nnz)
    m = m + m.T if kind == "spd" else m
    m = (m + sp.diags(abs(m).sum(axis=1).A.ravel() + 1)).tocsr()
    isai_inverse_twins(ref, ocl, m, dtype, kind)


def test_singular_row_twins(ref, ocl):
    # a singular 2 x 2 block at rows 300, 301 of a general matrix: rows 300 and 301 are singular
    n = 517
    m = sp.diags([np.ones(n - 1), np.full(n, 2.0), np.ones(n - 1)], [-1, 0, 1], format="lil")
    m[300, 300] = m[301, 301] = 1
    m[300, 299] = m[301, 302] = m[299, 300] = m[302, 301] = 0
    m = m.tocsr()
    m.eliminate_zeros()
    system, (ptrs, cols), _ = ref.run("preconditioner.isai.pattern", _csr(ref, m), "general", 1)
    for e in (ref, ocl):
        S = Csr(e, m.shape, *(e.from_host(a) for a in system))
        M = Csr(e, m.shape, e.from_host(ptrs), e.from_host(cols), e.alloc((cols.size,), np.float64))
        assert e.run("preconditioner.isai.generate_inverse", S, M, False) == 300
    # a zero diagonal entry in row 300 of a lower triangle
    m = sp.diags([np.ones(n - 1), np.full(n, 2.0)], [-1, 0], format="lil")
    m[300, 300] = 0
    for e in (ref, ocl):
        with pytest.raises(ValueError, match="LowerIsai: the diagonal entry of row 300 of the lower triangle"):
            _inverse(e, "LowerIsai", m.tocsr())


def test_bad_input(exec):
    with pytest.raises(ValueError, match="diagonal entry of row 1 of the upper triangle is zero"):
        _inverse(exec, "UpperIsai", np.array([[1.0, 1], [0, 0]]))
    with pytest.raises(ValueError, match="GeneralIsai: the system of row 0.*singular"):
        _inverse(exec, "GeneralIsai", np.array([[1.0, 1], [1, 1]]))
    with pytest.raises(ValueError, match="SpdIsai.*not symmetric positive definite"):
        _inverse(exec, "SpdIsai", np.array([[1.0, 2], [2, 1]]))
    with pytest.raises(ValueError, match="square"):
        _inverse(exec, "GeneralIsai", np.ones((2, 3)))
    with pytest.raises(TypeError, match="needs a sparse matrix, not Dense"):
        P.LowerIsai.build().on(exec).generate(Dense.from_numpy(exec, L3))
    # a row of the inverse longer than the dense systems allow
    with pytest.raises(ValueError, match="row 0 of the approximate inverse would have 200 entries"):
        _inverse(exec, "GeneralIsai", np.ones((200, 200)) + 200 * np.eye(200))
    empty = _inverse(exec, "GeneralIsai", sp.csr_matrix((0, 0)))
    assert empty.shape == (0, 0)


def test_parameters():
    assert P.Isai.build().isai_type == "general" and P.LowerIsai.build().isai_type == "lower"
    with pytest.raises(ValueError, match="isai_type must be one of 'lower', 'upper', 'general', 'spd'"):
        P.Isai.build().with_isai_type("diagonal")
    with pytest.raises(ValueError, match="isai_type must be one of 'upper'"):
        P.UpperIsai.build().with_isai_type("lower")
    with pytest.raises(ValueError, match="sparsity_power must be an integer >= 1"):
        P.SpdIsai.build().with_sparsity_power(0)


def test_isai_preconditions_on_its_own(exec):
    m = convection_diffusion_2d(20)
    b = m @ np.ones(m.shape[0])
    its = {}
    for name, precond in (("jacobi", P.Jacobi.build().with_max_block_size(1)), ("isai", P.GeneralIsai.build())):
        solver = (gk.solver.Bicgstab.build().with_preconditioner(precond)
                  .with_criteria(gk.stop.Iteration.build().with_max_iters(500),
                                 gk.stop.ResidualNorm.build().with_reduction_factor(1e-10)).on(exec)
                  .generate(_csr(exec, m)))
        log = gk.log.Convergence()
        solver.add_logger(log)
        x = solver.apply(Dense.from_numpy(exec, b), Dense.zeros(exec, (m.shape[0], 1))).to_numpy()
        assert log.has_converged
        np.testing.assert_allclose(x[:, 0], 1, rtol=1e-8)
        its[name] = int(np.max(log.num_iterations))
    assert its["isai"] < its["jacobi"]
