"""Core tests: the API without numbers (parameters, dispatch, dimension and type checks)."""
import numpy as np
import pytest

import ginkpy as gk
from ginkpy.problems import poisson_2d


def test_builder_sets_parameters_and_chains():
    params = gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(5))
    assert isinstance(params, gk.solver.Cg.Parameters)
    assert len(params.criteria) == 1
    assert params.criteria[0].max_iters == 5
    assert params.preconditioner is None


def test_on_binds_executor_and_copies_parameters(ref):
    params = gk.stop.Iteration.build().with_max_iters(3)
    factory = params.on(ref)
    params.with_max_iters(7)
    assert factory.executor is ref
    assert factory.parameters.max_iters == 3


def test_on_rejects_non_executor():
    with pytest.raises(TypeError, match="executor"):
        gk.solver.Cg.build().on("reference")


def test_parameters_without_an_executor_say_to_bind_one():
    # as in Ginkgo, parameters make nothing until .on(exec) binds them to an executor
    A = gk.matrix.Csr.from_scipy(gk.ReferenceExecutor(), poisson_2d(3))
    with pytest.raises(TypeError, match=r"Cg.build\(\)...generate\(\): parameters must be bound to an "
                                        r"executor first.*on\(exec\).generate"):
        gk.solver.Cg.build().generate(A)


def test_executor_by_name():
    assert isinstance(gk.executor("reference"), gk.ReferenceExecutor)
    with pytest.raises(ValueError, match="unknown executor"):
        gk.executor("cuda")


def test_missing_kernel_names_backend_and_kernel(ref):
    with pytest.raises(gk.KernelNotFoundError, match=r"'matrix\.dense\.nope'.*reference"):
        ref.run("matrix.dense.nope")
    with pytest.raises(gk.KernelNotFoundError, match=r"no module ginkpy\.reference\.nothing_kernels"):
        ref.run("nothing.f")


def test_dimension_and_type_checks(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(3))
    with pytest.raises(ValueError, match="b has 4 rows"):
        A.apply(gk.matrix.Dense.zeros(ref, (4, 1)), gk.matrix.Dense.zeros(ref, (9, 1)))
    with pytest.raises(ValueError, match="x must be 9 x 2"):
        A.apply(gk.matrix.Dense.zeros(ref, (9, 2)), gk.matrix.Dense.zeros(ref, (9, 1)))
    with pytest.raises(TypeError, match="value type mismatch"):
        A.apply(gk.matrix.Dense.zeros(ref, (9, 1), np.float32), gk.matrix.Dense.zeros(ref, (9, 1)))
    with pytest.raises(TypeError, match="ginkpy matrix"):
        A.apply(np.zeros(9), gk.matrix.Dense.zeros(ref, (9, 1)))


def test_unsupported_value_types(ref):
    with pytest.raises(TypeError, match="float16.*float32, float64, complex64 or complex128"):
        gk.matrix.Dense.from_numpy(ref, np.zeros(3, np.float16))
    with pytest.raises(TypeError, match="clongdouble|complex256|complex192"):
        gk.matrix.Dense.from_numpy(ref, np.zeros(3, np.clongdouble))
    assert gk.matrix.Dense.from_numpy(ref, np.arange(3)).dtype == np.float64
    assert gk.matrix.Dense.from_numpy(ref, np.zeros(3, complex)).dtype == np.complex128


def test_complex_values_are_never_made_real(ref):
    """A complex array, matrix or scalar given where the value type is real is refused (its
    imaginary parts would be lost), with what to do instead."""
    z = np.array([1 + 2j, 3])
    with pytest.raises(TypeError, match="complex .* real: the imaginary parts would be lost"):
        gk.matrix.Dense.from_numpy(ref, z, np.float64)
    with pytest.raises(TypeError, match="imaginary parts would be lost"):
        gk.matrix.Csr.from_scipy(ref, np.diag(z), np.float32)
    with pytest.raises(TypeError, match="imaginary parts would be lost"):
        gk.matrix.Dense.from_numpy(ref, z).astype(np.float64)
    x = gk.matrix.Dense.zeros(ref, (2, 1))
    with pytest.raises(TypeError, match="imaginary parts would be lost"):
        x.copy_from(gk.matrix.Dense.from_numpy(ref, z))
    with pytest.raises(TypeError, match="the scalar"):
        x.scale(1j)
    # real to complex is fine: imaginary parts 0
    np.testing.assert_array_equal(gk.matrix.Dense.from_numpy(ref, np.ones(2)).astype(np.complex64).to_numpy(),
                                  np.ones((2, 1), np.complex64))


def test_solver_rejects_bad_systems(ref):
    crit = gk.stop.Iteration.build().with_max_iters(5)
    with pytest.raises(ValueError, match="square"):
        gk.solver.Cg.build().with_criteria(crit).on(ref).generate(
            gk.matrix.Csr.from_scipy(ref, np.ones((2, 3))))
    bad = poisson_2d(3)
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        gk.solver.Cg.build().with_criteria(crit).on(ref).generate(gk.matrix.Csr.from_scipy(ref, bad))
    with pytest.raises(TypeError, match="LinOp"):
        gk.solver.Cg.build().with_criteria(crit).on(ref).generate(poisson_2d(3))
    with pytest.raises(TypeError, match="criteria"):
        gk.solver.Cg.build().with_criteria(5).on(ref).generate(gk.matrix.Csr.from_scipy(ref, poisson_2d(3)))


def test_default_initial_guess(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(3))
    one_step = gk.stop.Iteration.build().with_max_iters(0)
    b = gk.matrix.Dense.from_numpy(ref, np.arange(9.0))
    for mode, expected in [("provided", np.full(9, 7.0)), ("zero", np.zeros(9)), ("rhs", np.arange(9.0))]:
        solver = gk.solver.Cg.build().with_criteria(one_step).with_default_initial_guess(mode).on(ref).generate(A)
        # no iterations: x is the initial guess the mode gives
        x = solver.apply(b, gk.matrix.Dense.full(ref, (9, 1), 7.0))
        np.testing.assert_array_equal(x.to_numpy()[:, 0], expected)
    with pytest.raises(ValueError, match="default_initial_guess"):
        gk.solver.Cg.build().with_criteria(one_step).with_default_initial_guess("random").on(ref).generate(A)


def test_a_solver_as_preconditioner_starts_from_zero(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(3))
    inner = gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(2))
    outer = gk.solver.Cg.build().with_preconditioner(inner).with_criteria(
        gk.stop.Iteration.build().with_max_iters(1)).on(ref).generate(A)
    assert outer.preconditioner.parameters.default_initial_guess == "zero"
    explicit = gk.solver.Cg.build().with_preconditioner(inner.with_default_initial_guess("provided")).with_criteria(
        gk.stop.Iteration.build().with_max_iters(1)).on(ref).generate(A)
    assert explicit.preconditioner.parameters.default_initial_guess == "provided"


def test_a_type_without_parameters_of_its_own_builds(ref):
    from ginkpy.core.base.factory import EnableBuild

    class Plain(EnableBuild):
        def __init__(self, factory, value):
            super().__init__(factory)
            self.value = value

    product = Plain.build().on(ref).generate(3)
    assert isinstance(product, Plain) and product.value == 3
    assert gk.solver.Cg.Parameters is not gk.solver.Bicgstab.Parameters
    assert gk.solver.Bicgstab.build().product is gk.solver.Bicgstab


def test_from_scipy_leaves_the_input_untouched(ref):
    import scipy.sparse as sp
    S = sp.csr_matrix((np.array([1.0, 2.0, 3.0], np.float32), np.array([2, 0, 1]), np.array([0, 3])), shape=(1, 3))
    before = S.indices.copy()
    A = gk.matrix.Csr.from_scipy(ref, S, dtype=np.float64)
    np.testing.assert_array_equal(S.indices, before)
    np.testing.assert_array_equal(A.to_scipy().toarray(), [[2.0, 3.0, 1.0]])


def test_b_and_x_must_differ(ref):
    A = gk.matrix.Csr.from_scipy(ref, poisson_2d(3))
    b = gk.matrix.Dense.from_numpy(ref, np.ones(9))
    with pytest.raises(ValueError, match="same matrix"):
        A.apply(b, b)


def test_parameters_are_checked_where_they_are_given():
    cases = [
        (lambda: gk.stop.ResidualNorm.build().with_reduction_factor("1e-8"), "reduction_factor"),
        (lambda: gk.stop.Iteration.build().with_max_iters(float("nan")), "max_iters"),
        (lambda: gk.stop.Iteration.build().with_max_iters(float("inf")), "max_iters"),
        (lambda: gk.solver.Gmres.build().with_krylov_dim(0), "krylov_dim"),
        (lambda: gk.solver.Idr.build().with_subspace_dim(0), "subspace_dim"),
        (lambda: gk.solver.Idr.build().with_kappa(2.0), "kappa"),
        (lambda: gk.solver.Ir.build().with_relaxation_factor(float("nan")), "relaxation_factor"),
        (lambda: gk.solver.Cg.build().with_default_initial_guess("guess"), "default_initial_guess"),
        (lambda: gk.preconditioner.Jacobi.build().with_max_block_size(64), "max_block_size"),
    ]
    for make, name in cases:
        with pytest.raises(ValueError, match=name):
            make()


def test_executor_names_are_checked():
    with pytest.raises(TypeError, match="string"):
        gk.executor(None)
    with pytest.raises(ValueError, match="unknown executor"):
        gk.executor("cuda")
