"""The docstrings of :mod:`ginkpy.linalg`'s solver functions, written once: each function's
docstring is its summary, when to use it, its Parameters (the shared ones below, in the order
of its signature, and its own), Returns, Notes and an example, in numpydoc form as SciPy's."""
from __future__ import annotations

import inspect
from typing import Callable

# the parameters every single-system function shares, by name ("atol" goes with "rtol")
SHARED = {
    "A": """A : {sparse matrix or array, ndarray, LinearOperator, LinOp}
    The n x n system matrix. A SciPy sparse matrix or a NumPy array is copied to the
    executor once (and kept for a later call with the same matrix object); a SciPy
    LinearOperator is applied on the host, its operands copied there and back each
    iteration; a ginkpy LinOp (``gk.matrix.Csr``, ...) is used where it lives.""",
    "b": """b : ndarray or pyopencl.array.Array
    The right-hand side, shape (n,) or (n, 1). A pyopencl array on the executor's context is
    used in place (x then comes back as one).""",
    "x0": """x0 : ndarray or "Mb", default None
    The initial guess (default zeros), or ``"Mb"`` for x0 = M b, as in SciPy.""",
    "rtol": """rtol, atol : float, default 1e-5 and 0.0
    Stop once ||b - A x|| <= max(rtol ||b||, atol), SciPy's test; either may be ``inf``
    (converged at once: x0 comes back with info 0, as SciPy's).""",
    "maxiter": """maxiter : int, default None
    The iteration limit; None: 10 n, as SciPy's.""",
    "M": """M : str, (str, dict), factory, LinOp, LinearOperator or sparse matrix, default None
    The preconditioner, an approximate inverse of A. A name: ``"jacobi"`` (scalar Jacobi,
    the diagonal), ``"block_jacobi"`` (Ginkgo's, blocks of up to 32 rows), ``"ilu"`` / ``"ic"``
    (incomplete factorizations that never fail where one exists), ``"ilut"`` (SciPy spilu's
    threshold ILU), ``"amg"`` (algebraic multigrid), any of
    ``gk.config.short_names("preconditioner")``, or ``"none"``; with options as
    ``("ilut", {"drop_tol": 1e-5})`` (``"ilut"`` takes SciPy spilu's ``drop_tol`` or ``droptol``
    and ``fill_factor``; other keys are the type's ``with_`` parameters). Or a ginkpy
    preconditioner factory or LinOp, or a SciPy operator or matrix applied as M r, all on the
    executor but the last: a diagonal sparse M (``scipy.sparse.diags(1 / A.diagonal())``) is
    scalar Jacobi with M's diagonal, fused as ``"jacobi"`` is; another sparse M is copied once
    and applied by SpMV; ``splu(A)`` / ``spilu(A)`` or ``LinearOperator(A.shape, lu.solve)``
    solves with its factors there; any other LinearOperator (PyAMG's ``aspreconditioner()``)
    runs on the host, one round trip per application (the solve then waits each iteration:
    the string forms are the fast ones).""",
    "callback": """callback : callable, default None
    Called as ``callback(xk)`` after each iteration with the current solution, as SciPy's:
    ``xk`` is the solver's live x, not a copy (a host buffer read one iteration behind the
    device, so the solve does not wait for it, and reused for a later iterate): a callback
    that keeps xk copies it (``xk.copy()``); writing into it changes nothing in the solve.""",
    "executor": """executor : Executor or str, default None
    Where to run: an executor or its name (``"reference"``, ``"opencl"``, ...); None:
    A's executor for a ginkpy LinOp, else ``gk.default_executor()``.""",
}

RETURNS = """x : ndarray or pyopencl.array.Array
    The solution, shape (n,), in the value type numpy promotes A, b and x0 to (a pyopencl
    array where b was one). Where the solve did not converge: the best iterate, never worse
    than x0.
info : int
    0: converged, the true residual b - A x (computed after the solve) meets the tolerance;
    > 0: the iteration limit ``maxiter`` came first (info is maxiter); < 0: -1 a breakdown
    of the method (a zero divisor), -2 the residual became NaN or infinite."""

NOTES = """Complex systems run in complex arithmetic, as SciPy's (dot products conjugate their first
argument). :mod:`ginkpy.linalg` describes the value type rules and the deliberate
differences from SciPy; :class:`ginkpy.linalg.Solver` solves the same system again without
rebuilding anything."""


def scipy_door(summary: str, use: str, example: str, *, own: dict | None = None, returns: str = RETURNS,
               notes: str = NOTES) -> Callable:
    """A decorator that sets a solver function's numpydoc docstring: ``summary``, ``use`` (when
    to use it), Parameters in the order of its signature (``own`` entries first, then
    :data:`SHARED`'s), ``returns``, ``notes`` and ``example``."""
    own = own or {}

    def document(fn: Callable) -> Callable:
        entries = []
        for name in inspect.signature(fn).parameters:
            entry = own.get(name, SHARED.get(name))
            if entry is not None and entry not in entries:
                entries.append(entry)
        sections = [summary, use, "Parameters\n----------\n" + "\n".join(entries),
                    "Returns\n-------\n" + returns, "Notes\n-----\n" + notes,
                    "Examples\n--------\n" + inspect.cleandoc(example)]
        fn.__doc__ = "\n\n".join(inspect.cleandoc(s) for s in sections)
        return fn
    return document


# the batched functions' parameters (many systems of one sparsity pattern, SciPy's per system)
BATCHED = {
    "As": """As : list of sparse matrices, ndarray (N, n, n), (pattern, values), CSR arrays or batch matrix
    The N systems: N SciPy sparse matrices of one shape and stored pattern (a system whose
    pattern differs is an error naming it); a 3-D array (the pattern: every position nonzero
    in some system); ``(pattern, values)`` with a SciPy matrix giving the stored entries and
    values (N, nnz); ``(indptr, indices, values)`` (or SciPy's ``(data, indices, indptr)``); or
    a ``gk.batch.matrix``. Checked and gathered in one pass, sent in one transfer.""",
    "B": """B : ndarray
    (N, n): each system's right-hand side.""",
    "X0": """X0 : ndarray, default None
    (N, n): each system's initial guess (default zeros).""",
    "rtol": """rtol, atol : float, default 1e-5 and 0.0
    System i stops once ||b_i - A_i x_i|| <= max(rtol ||b_i||, atol).""",
    "maxiter": """maxiter : int, default None
    The iteration limit of every system; None: 10 n.""",
    "M": """M : str or batch preconditioner factory, default None
    None; ``"jacobi"`` (scalar Jacobi, the cheap choice for small systems); ``"block_jacobi"``
    (blocks of up to 32 rows); ``"ilu"`` (ILU(0) of each system: fewer iterations on harder
    ones, such as convection-diffusion); ``"isai"`` (the ILU(0) factors' approximate inverses,
    two products); or ``gk.batch.preconditioner.Jacobi.build()`` (``Ilu``, ``Isai``).""",
    "executor": """executor : Executor or str, default None
    Where to run (None: ``gk.default_executor()``).""",
}

BATCHED_RETURNS = """X : ndarray
    (N, n): each system's solution (x_i = 0 where b_i = 0, as SciPy answers).
info : ndarray of int
    (N,): SciPy's info per system: 0 converged (its true residual meets the tolerance),
    ``maxiter`` where the iteration limit came first, -1 a breakdown, -2 a residual that
    became NaN or infinite."""

BATCHED_NOTES = """All N systems are solved in one launch, one work-group per system (``gk.batch``): use
these where many small systems share a sparsity pattern (per-cell, per-element or per-model
problems); a single large system is faster with :func:`ginkpy.linalg.cg` and the others."""

