"""What the incomplete factorizations share: A ~ F1 F2 as two Csr factors, applied as a product.

As Ginkgo's factorizations (a Composition of the factors), the object is a LinOp:
``apply(b, x)`` computes x = F1 (F2 b). The preconditioners Ilu and Ic solve with the factors.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.checks import check_system_matrix
from ginkpy.core.base.executor import Executor
from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import INDEX_DTYPE, Csr
from ginkpy.core.matrix.dense import Dense


def system_csr(system_matrix: LinOp, exec: Executor, who: str) -> Csr:
    """The system matrix as a checked Csr on ``exec`` (square, finite; other sparse formats are
    converted)."""
    A = check_system_matrix(system_matrix, exec)
    if not isinstance(A, Csr) and hasattr(A, "to_csr"):
        A = A.to_csr()  # Coo, Ell, Sellp, Hybrid
    if not isinstance(A, Csr):
        raise TypeError(f"{who} needs a sparse matrix, not {type(A).__name__}: "
                        f"convert it with gk.matrix.Csr.from_scipy or Csr.from_dense")
    return A


def with_pattern_power(A: Csr, power: int) -> Csr:
    """A on the pattern of |A|^power (zeros where A has none), computed on the host (SciPy's
    sparse product); A itself for power 1."""
    if power == 1:
        return A
    exec, host = A.executor, A.executor.host
    arrays = host.run("components.sparsity.power_pattern", A.to_executor(host), power)
    return Csr(exec, A.shape, *(exec.from_host(a) for a in arrays))


def like(factor: Csr) -> Csr:
    """A Csr with ``factor``'s pattern (shared) and new, uninitialized values."""
    return Csr(factor.executor, factor.shape, factor.row_ptrs, factor.col_idxs,
               factor.executor.alloc((factor.nnz,), factor.dtype))


def row_indices(factor: Csr):
    """The row of every stored entry (COO row indices), on the factor's executor."""
    rows = factor.executor.alloc((factor.nnz,), INDEX_DTYPE)
    factor.executor.run("components.format_conversion.convert_ptrs_to_idxs", factor.row_ptrs, rows)
    return rows


def check_pivots(factor: Csr, lower: bool, name: str, hint: str) -> None:
    """Refuse factors with a zero or non-finite pivot (naming the first such row) or overflowed
    values."""
    row = factor.executor.run("factorization.factorization.find_invalid_pivot", factor, lower)
    if row >= 0:
        raise ValueError(f"{name} breaks down: the pivot of row {row} is zero or not finite; {hint}")
    if not factor.is_finite():
        raise ValueError(f"the {name} factors overflow {np.dtype(factor.dtype)} (a tiny pivot): "
                         f"use float64, or scale the matrix")


class Factorization(EnableBuild, LinOp):
    """Base of the factorizations: ``generate(A)`` converts A to Csr (from another sparse
    format) and keeps the two factors that :meth:`_factorize` computes.

    ``factors`` is the pair (F1, F2) with A ~ F1 F2.
    """

    @parameters
    class Parameters(Parameters):
        """No parameters (Ginkgo's exact ILU(0)/IC(0) have none that change the result)."""

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        A = system_csr(system_matrix, factory.executor, type(self).__name__)
        LinOp.__init__(self, factory.executor, A.shape, A.dtype)
        self.factors = self._factorize(A)

    def _factorize(self, A: Csr) -> tuple[Csr, Csr]:
        raise NotImplementedError

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        first, second = self.factors
        # x = F1 (F2 b)
        tmp = b.empty_like()
        second.apply(b, tmp)
        first.apply(tmp, x)


def moved_factors(exec: Executor, shape: tuple[int, int], arrays: tuple) -> tuple[Csr, Csr]:
    """The two factors from the host kernels' CSR arrays (the first's three, then the
    second's), moved to ``exec``."""
    host = exec.host
    return tuple(Csr(host, shape, *arrays[i:i + 3]).to_executor(exec) for i in (0, 3))
