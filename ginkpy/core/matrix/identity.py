"""Identity: x = b. The preconditioner of a solver that was given none."""
from __future__ import annotations

from ginkpy.core.base.lin_op import LinOp


class Identity(LinOp):
    """The identity operator I of ``shape`` (Ginkgo's ``matrix::Identity``): ``apply(b, x)``
    copies b into x.

    Use it where an operator is required but nothing should happen: the preconditioner of a
    solver built without one is an Identity.

    Parameters
    ----------
    exec : Executor
        Where it applies.
    shape : tuple of int
        (n, n).
    dtype : dtype
        The value type of the vectors it applies to.

    Examples
    --------
    >>> I = gk.matrix.Identity(exec, (3, 3), np.float64)
    >>> x = I.apply(b, x)                       # x = b
    >>> solver.preconditioner                    # Identity where none was given
    """

    def _apply_impl(self, b, x) -> None:
        x.copy_from(b)

    def transpose(self) -> "Identity":
        """I^T = I."""
        return self

    def conj_transpose(self) -> "Identity":
        """I^H = I."""
        return self
