"""Identity: x = b. The preconditioner of a solver that was given none."""
from __future__ import annotations

from ginkpy.core.base.lin_op import LinOp


class Identity(LinOp):
    def _apply_impl(self, b, x) -> None:
        x.copy_from(b)

    def transpose(self) -> "Identity":
        """I^T = I."""
        return self

    def conj_transpose(self) -> "Identity":
        """I^H = I."""
        return self
