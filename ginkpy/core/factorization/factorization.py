"""What the incomplete factorizations share: A ~ F1 F2 as two Csr factors, applied as a product.

As Ginkgo's factorizations (a Composition of the factors), the object is a LinOp:
``apply(b, x)`` computes x = F1 (F2 b). The preconditioners Ilu and Ic solve with the factors.
"""
from __future__ import annotations

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import check_system_matrix


class Factorization(EnableBuild, LinOp):
    """Base of Ilu and Ic: ``generate(A)`` runs the kernel ``kernel`` on A (converted to Csr when
    in another sparse format) and keeps the two factors.

    ``factors`` is the pair (F1, F2) with A ~ F1 F2.
    """

    kernel: str = ""  # the factorization kernel, set by each subclass

    @parameters
    class Parameters(Parameters):
        """No parameters yet (Ginkgo's ILU(0)/IC(0) have none that change the result)."""

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        A = check_system_matrix(system_matrix, exec)
        if not isinstance(A, Csr) and hasattr(A, "to_csr"):
            A = A.to_csr()  # Coo, Ell, Sellp, Hybrid
        if not isinstance(A, Csr):
            raise TypeError(f"{type(self).__name__} factorizes a sparse matrix, not {type(A).__name__}: "
                            f"convert it with gk.matrix.Csr.from_scipy or Csr.from_dense")
        LinOp.__init__(self, exec, A.shape, A.dtype)
        # the exact factorizations are sequential: they run on the host, the factors move to exec
        host = exec.host
        arrays = host.run(self.kernel, A.to_executor(host))
        self.factors = tuple(Csr(host, A.shape, *arrays[i:i + 3]).to_executor(exec) for i in (0, 3))

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        first, second = self.factors
        # x = F1 (F2 b)
        tmp = b.empty_like()
        second.apply(b, tmp)
        first.apply(tmp, x)
