"""SciPy-compatible doors into ginkpy: ``gk.linalg.cg(A, b)`` and the other solvers with the
signatures and results of ``scipy.sparse.linalg``, and :func:`aslinearoperator` to use ginkpy
operators inside SciPy. Switching from SciPy is one import:
``from ginkpy.linalg import cg`` instead of ``from scipy.sparse.linalg import cg``.

Every function takes SciPy's arguments with SciPy's meaning, plus ``executor=`` (where to
run); ``help(ginkpy.linalg.cg)`` and the others describe each argument, the results and the
info values. A may be a SciPy sparse matrix or array, a NumPy array, a SciPy
LinearOperator or a ginkpy LinOp; M a SciPy operator or matrix, a ginkpy preconditioner, or
a name (``M="ilu"``, ``"amg"``, ...; ``(name, options)`` sets the type's parameters).

The value type is that of A, b and x0 together, as numpy promotes them: float32 when all are
float32, complex64 when they are float32 or complex64 and one is complex, complex128 when one
is complex and another float64 or complex128, else float64 (the type of a ginkpy LinOp A,
which must then be complex for a complex b). Complex systems run in complex arithmetic, as
SciPy's: dot products conjugate their first argument, ``bicg`` and ``qmr`` use the adjoint A^H
(a LinearOperator's ``rmatvec``), ``cg`` needs A Hermitian positive definite. ``cg``, ``minres``
(and Solver's ``"pipecg"``) refuse a nonsymmetric M given by name (``M="ilut"``,
``"gauss_seidel"``, ``"sor"``, ``"isai"``) with a ValueError naming the symmetric one; ``cg``,
``fcg`` and ``minres`` warn (UserWarning) where a sparse or NumPy A is seen to be nonsymmetric
(not Hermitian). Each function returns ``(x, info)``: x of shape (n,), and info 0 when the true
residual b - A x (computed after the solve, not the solver's recurrence) meets the tolerance,
``maxiter`` when the iteration limit was reached, -1 on a breakdown of the method (``qmr``: -10 to
-15, which one, as SciPy's), -2 when the
residual became NaN or infinite.

Deliberate differences from SciPy (SciPy's own tests of these functions,
``scipy/sparse/linalg/_isolve/tests/test_iterative.py``, pass against them but for these;
tests/linalg/test_scipy_suite.py runs them):

1. ``gmres`` with M is left-preconditioned, as SciPy's (the cycle minimizes M (b - A x) to
   SciPy's inner tolerance, the true residual decides at each restart), but the residual norms
   given to its callback (``"pr_norm"``, ``"legacy"``) estimate b - A x relative to ||b|| (the
   estimate of M (b - A x) scaled to the true residual at each restart): with M = 1e-3 I SciPy's
   are 1e-3 times ours (SciPy's ``TestGMRES::test_callback``). Without M, or with
   ``flexible=True``, it is right-preconditioned (Ginkgo's Gmres).
2. ``gmres`` with a singular M (a defective preconditioner) stops at the breakdown of its
   Krylov space with info -1 (SciPy: ``maxiter``) and x correct up to rounding outside M's null
   space: SciPy's ``TestGMRES::test_defective_precond_breakdown`` compares an entry that is 0 in
   exact arithmetic with zero tolerance, where PoCL's rounding leaves 4e-170 (the reference
   executor's update rounds to 0, as SciPy's).
3. ``qmr`` takes M1 or M2 alone (the other the identity; SciPy needs both or neither).
4. ``tfqmr`` is right-preconditioned (SciPy's applies M on the left of its products and
   stops on its bound, which with M need not bound b - A x); its rtol is relative to ||b||
   (SciPy's tfqmr: to ||b - A x0||, the same for x0 = 0).
5. ``lgmres`` with M is left-preconditioned, as SciPy's (``gcrotmk`` right-preconditioned, as
   SciPy's); its ``outer_v`` and ``gcrotmk``'s ``CU`` are SciPy's (read from and written to the host once a
   solve). Both count ``maxiter`` in restart cycles and call ``callback`` at the start of each
   cycle, as SciPy's, but check the residual after the last cycle too: a solve that converges
   there has info 0 and a last callback with the solution (SciPy's: info ``maxiter``, no
   callback).

``minres(A, b, x0, *, rtol, shift, maxiter, M, callback, show, check)`` has SciPy's minres
signature (no ``atol``; ``maxiter`` default 5 n; ``shift`` solves (A - shift I) x = b; ``check``
refuses a non-symmetric A or M; ``show`` prints the solve); it stops at ||b - A x|| <= rtol
||b|| where SciPy's minres stops on weaker estimates, and a breakdown (A not symmetric, M
indefinite) is info -1 where SciPy raises.

Solving many times: :class:`Solver` is a solver built once and applied to many right-hand sides,
in the spirit of SciPy's ``factorized(A)`` and PyAMG's ``ml.solve(b)``: the matrix is copied to
the executor, the preconditioner generated and the iteration captured once, and each
``solve(b, x0=None)`` returns ``(x, info)`` paying only its iterations and b in, x out.
``solver.update(A_new)`` takes new values of A on the same sparsity pattern in one copy and
recomputes the preconditioner numerically, keeping its structure (Jacobi's blocks, ILU/IC
patterns and level sets, ISAI patterns, multigrid aggregates; AmgX's structure reuse); a new
pattern is a ValueError. A Solver is a SciPy LinearOperator whose product is a solve, so it
can be SciPy's or PyAMG's ``M``::

    solver = ginkpy.linalg.Solver(A, "cg", M="amg", rtol=1e-8)   # method, M and keywords as cg's
    for step in range(steps):
        x, info = solver.solve(b, x0=x)                           # x0 optional
        A.data[:] = new_values(step)                               # same pattern ...
        solver.update(A)                                           # ... new values
    scipy.sparse.linalg.gmres(A, b, M=ginkpy.linalg.Solver(A, "cg", M="amg", rtol=1e-2))

The functions keep what they build, too: ``cg(A, b)`` called again with the same SciPy CSR or
CSC matrix object and the same arguments reuses the Solver of the call before (of at most
:data:`~ginkpy.linalg._solver_cache.CACHED_MATRICES` matrices, dropped with the matrix). Whether A
changed is checked on the host at every call, its arrays compared in full with a copy kept
of them (bitwise, in parallel chunks); where only the values changed the Solver takes them
as ``update`` does (its preconditioner's structure kept), any other change builds anew. An M
given as ginkpy parameters or a factory, or as a SciPy operator, is built anew at every call
(the caller may change it). ``clear_cache()`` drops what is kept.

Device-resident data: b and x0 may be ``pyopencl.array.Array`` on the executor's OpenCL
context, used where they are (no host copy; x0 is not changed); x then comes back as a
pyopencl array of shape (n,). An array of another context is a ValueError naming both
devices (``gk.matrix.Dense.from_pyopencl`` describes when a copy is made).

Direct solves: ``spsolve(A, b)``, ``splu(A)`` (an object with ``.solve(b)``) and ``factorized(A)``
(a function ``solve(b)``), SciPy's names and arguments, by ``gk.solver.Direct``
(:mod:`ginkpy.linalg._dsolve`); ``spilu(A, drop_tol, fill_factor, ...)``, SciPy's threshold ILU
(gk.factorization.Ilut, the factors of SciPy's spilu) with ``solve(b, trans)`` on the executor,
also usable as ``M`` (``gmres(A, b, M=spilu(A))``, applied on the device);
``spsolve_triangular(A, b, lower)`` by ``gk.solver.LowerTrs`` /
``UpperTrs``' exact substitution (:mod:`ginkpy.linalg._trsolve`).

Least squares: ``lsqr(A, b, damp, atol, btol, conlim, iter_lim, show, calc_var, x0)`` and
``lsmr(A, b, damp, atol, btol, conlim, maxiter, show, x0)``, SciPy's signatures and result
tuples, for rectangular (m > n, m < n) or square, damped, real or complex A, by
``gk.solver.Lsqr`` / ``Lsmr`` (:mod:`ginkpy.linalg._lsq` lists the differences from SciPy).

Eigenpairs: ``lobpcg(A, X, B, M, Y, tol, maxiter, largest, ...)``, SciPy's signature and
returns, by gk.eigensolver.Lobpcg (:mod:`ginkpy.linalg._lobpcg`): the block vectors on the
executor, ``M`` any preconditioner the solvers take (``M="amg"``); per iteration two small
downloads (residual norms with two k x k Gram matrices; the Rayleigh-Ritz Gram matrices, whose
eigenproblem of size at most 3k is solved on the host). SciPy's test_lobpcg.py passes against
it but for extended precision (refused, as everywhere) and SciPy's in-place-update warning.

Many small systems of one sparsity pattern: ``batched_cg(As, B)``, ``batched_bicgstab`` and
``batched_gmres`` solve them all in one launch (``gk.batch``), with SciPy's arguments per system
and X (N, n) and an info array (N,) back; :mod:`ginkpy.linalg._batch` describes them.
"""
import importlib

from ginkpy.linalg._interface import aslinearoperator
from ginkpy.linalg._isolve import bicg, bicgstab, cg, cgs, fcg, gmres, idr, ir, minres, qmr, tfqmr
from ginkpy.linalg._isolve_cycles import gcrotmk, lgmres
from ginkpy.linalg._solver import Solver
from ginkpy.linalg._solver_cache import clear_cache

# imported at first use: the batched and direct solvers need modules an iterative solve does
# not (a fresh process's first solve would pay for their import)
_LAZY = {"batched_bicgstab": "_batch", "batched_cg": "_batch", "batched_gmres": "_batch",
         "factorized": "_dsolve", "lobpcg": "_lobpcg", "lsmr": "_lsq", "lsqr": "_lsq", "spilu": "_dsolve",
         "splu": "_dsolve", "spsolve": "_dsolve",
         "spsolve_triangular": "_trsolve"}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ginkpy.linalg' has no attribute {name!r}")
    return getattr(importlib.import_module(f"ginkpy.linalg.{module}"), name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["Solver", "aslinearoperator", "batched_bicgstab", "batched_cg", "batched_gmres", "bicg", "bicgstab", "cg",
           "cgs", "clear_cache", "factorized", "fcg", "gcrotmk", "gmres", "idr", "ir", "lgmres", "lobpcg", "lsmr",
           "lsqr", "minres", "qmr", "spilu", "splu", "spsolve", "spsolve_triangular", "tfqmr"]
