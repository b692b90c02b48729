"""SciPy-compatible doors into ginkpy: ``gk.linalg.cg(A, b)`` and the other solvers with the
signatures and results of ``scipy.sparse.linalg``, and :func:`aslinearoperator` to use ginkpy
operators inside SciPy. Switching from SciPy is one import:
``from ginkpy.linalg import cg`` instead of ``from scipy.sparse.linalg import cg``.

Every function takes SciPy's arguments with SciPy's meaning, plus ``executor=``:

A
    SciPy sparse matrix or array, NumPy array, SciPy LinearOperator (applied on the host, its
    operands copied there and back each iteration), or ginkpy LinOp; n x n.
b, x0
    Arrays of shape (n,) or (n, 1); x0 (default 0) is the initial guess.
rtol, atol
    Stop once ||b - A x|| <= max(rtol ||b||, atol).
maxiter
    Iteration limit (default 10 n; for ``gmres`` restart cycles, as in SciPy).
M
    Preconditioner: a SciPy LinearOperator, sparse matrix or array applied as an approximate
    inverse of A (M r), a ginkpy preconditioner factory or LinOp, or a name (``"jacobi"``,
    ``"ilu"``, ``"ic"``, ...: any of ``gk.config.short_names("preconditioner")``, or ``"none"``).
    A name gives that type's defaults, as in Ginkgo: ``"jacobi"`` is block-Jacobi with blocks of
    up to 32 consecutive rows (Ginkgo's supervariable agglomeration); scalar Jacobi, as SciPy
    users often build it, is ``M=gk.preconditioner.Jacobi.build().with_max_block_size(1)``.
callback
    Called as ``callback(xk)`` after each iteration with a copy of the current solution.
executor
    Where to run: an executor or its name; default ``A.executor`` for a ginkpy LinOp, else
    ``gk.default_executor()``.

The value type is float32 when A, b and x0 are all float32, else float64 (the type of a ginkpy
LinOp A). Each function returns ``(x, info)``: x of shape (n,), and info 0 when the true
residual b - A x (computed after the solve, not the solver's recurrence) meets the tolerance,
``maxiter`` when the iteration limit was reached, -1 on a breakdown of the method, -2 when the
residual became NaN or infinite.

Many small systems of one sparsity pattern: ``batched_cg(As, B)``, ``batched_bicgstab`` and
``batched_gmres`` solve them all in one launch (``gk.batch``), with SciPy's arguments per system
and X (N, n) and an info array (N,) back; :mod:`ginkpy.linalg._batch` describes them.
"""
from ginkpy.linalg._batch import batched_bicgstab, batched_cg, batched_gmres
from ginkpy.linalg._interface import aslinearoperator
from ginkpy.linalg._isolve import bicg, bicgstab, cg, cgs, fcg, gmres, idr, ir

__all__ = ["aslinearoperator", "batched_bicgstab", "batched_cg", "batched_gmres", "bicg", "bicgstab", "cg",
           "cgs", "fcg", "gmres", "idr", "ir"]
