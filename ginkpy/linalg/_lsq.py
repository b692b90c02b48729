"""The least-squares functions of :mod:`ginkpy.linalg`: ``lsqr`` and ``lsmr`` with SciPy's
signatures and results, run by ``gk.solver.Lsqr`` / ``Lsmr`` on the executor.

Differences from SciPy's (SciPy's own tests, ``test_lsqr.py`` and ``test_lsmr.py``, run against
them in tests/linalg/test_scipy_lsqr_lsmr.py):

1. The value type follows :mod:`ginkpy.linalg`'s rule (float32 A and b solve in float32),
   where SciPy's lsqr and lsmr compute in float64 at least; the machine-precision tests
   (istop 4 to 6) use the value type's epsilon.
2. ``show=True`` prints SciPy's header and its closing summary, not a line per iteration (the
   iterations run on the device without the host seeing them).
3. ``lsqr``'s ``var`` of a complex system sums |d_k|^2 (SciPy's sums d_k^2, a complex value
   that is no variance).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.dense import Dense, check_convertible, value_dtype
from ginkpy.core.solver.lsmr import Lsmr
from ginkpy.core.solver.lsqr import Lsqr
from ginkpy.linalg._interface import as_executor, as_linop, host_operator

MESSAGES = ("The exact solution is  x = 0                              ",
            "Ax - b is small enough, given atol, btol                  ",
            "The least-squares solution is good enough, given atol     ",
            "The estimate of cond(Abar) has exceeded conlim            ",
            "Ax - b is small enough for this machine                   ",
            "The least-squares solution is good enough for this machine",
            "Cond(Abar) seems to be too large for this machine         ",
            "The iteration limit has been reached                      ")


def _operands(A: Any, b: Any, x0: Any, executor: Any) -> tuple:
    """(exec, A as a LinOp, b and x0 as Dense in the value type of A, b and x0) after SciPy's checks
    of shapes."""
    if len(getattr(A, "shape", (0, 0))) != 2:
        raise ValueError(f"A has shape {getattr(A, 'shape', None)}: expected 2-D, an m x n matrix or operator")
    exec, operator = as_executor(executor, A), host_operator(A)
    m, n = operator.shape
    b = np.atleast_1d(np.asarray(b))
    if b.ndim > 1:
        b = b.squeeze()
    if b.shape != (m,):
        raise ValueError(f"b has shape {np.shape(b)} but A is {m} x {n}: b must have m = {m} entries "
                         f"(shape ({m},) or ({m}, 1))")
    types = [value_dtype(b.dtype, "b")]
    if x0 is not None:
        x0 = np.atleast_1d(np.asarray(x0))
        if x0.ndim > 1:
            x0 = x0.squeeze()
        if x0.shape != (n,):
            raise ValueError(f"x0 has shape {np.shape(x0)} but A is {m} x {n}: x0 must have n = {n} entries")
        types.append(value_dtype(x0.dtype, "x0"))
    if isinstance(operator, LinOp):
        dtype = operator.dtype
        for what, t in zip(("b", "x0"), types):
            check_convertible(t, dtype, f"{what} (A, a ginkpy {type(operator).__name__}, has value type {dtype})")
    else:
        dtype = np.result_type(value_dtype(operator.dtype or np.float64, "A"), *types)
    dtype = exec.check_dtype(dtype)
    op = as_linop(operator, exec, dtype)
    b_d = Dense.from_numpy(exec, np.ascontiguousarray(b, dtype=dtype))
    x_d = Dense.zeros(exec, (n, 1), dtype) if x0 is None else Dense.from_numpy(exec, x0.astype(dtype))
    return exec, op, b_d, x_d


def _show_header(name: str, shape: tuple, lines: list) -> None:
    print(" ")
    print(f"{name}            Least-squares solution of  Ax = b")
    print(f"The matrix A has {shape[0]} rows and {shape[1]} columns")
    for line in lines:
        print(line)


def _show_end(name: str, istop: int, lines: list) -> None:
    print(" ")
    print(f"{name} finished")
    print(MESSAGES[istop])
    print(" ")
    for line in lines:
        print(line)
    print(" ")


def _solve(params: Any, A: Any, b: Any, x0: Any, executor: Any, show: bool, name: str,
           header: Any, names: tuple, summary: Any) -> tuple:
    """Generate ``params`` on A, solve from x0 (zeros where None) and read the result: x (n,),
    istop, itn, the estimates ``names`` and the solver's result; with ``show``, SciPy's header
    (``header(solver)``'s lines) and summary (``summary(istop, itn, *estimates)``'s lines)."""
    exec, op, b_d, x_d = _operands(A, b, x0, executor)
    solver = params.on(exec).generate(op)
    if show:
        _show_header(name, op.shape, header(solver))
    solver.apply_with_initial_guess(b_d, x_d, zero_guess=x0 is None)
    r = solver.result()
    istop, itn = int(r["istop"][0]), int(r["itn"][0])
    out = [float(r[n][0]) for n in names]
    if show:
        _show_end(name, istop, summary(istop, itn, *out))
    return x_d.to_numpy()[:, 0], istop, itn, out, r


def _lsqr_summary(istop: int, itn: int, r1norm: float, r2norm: float, anorm: float, acond: float,
                  arnorm: float, xnorm: float) -> list:
    """The closing lines of SciPy's lsqr with ``show``."""
    return [f"istop ={istop:8g}   r1norm ={r1norm:8.1e}   anorm ={anorm:8.1e}   arnorm ={arnorm:8.1e}",
            f"itn   ={itn:8g}   r2norm ={r2norm:8.1e}   acond ={acond:8.1e}   xnorm  ={xnorm:8.1e}"]


def lsqr(A: Any, b: Any, damp: float = 0.0, atol: float = 1e-6, btol: float = 1e-6, conlim: float = 1e8,
         iter_lim: int | None = None, show: bool = False, calc_var: bool = False, x0: Any = None,
         executor: Any = None) -> tuple:
    """Find the least-squares solution of a large sparse system, as ``scipy.sparse.linalg.lsqr``.

    Minimizes ||b - A x||^2 + damp^2 ||x - x0||^2 (LSQR, Paige and Saunders) for an m x n A,
    overdetermined, underdetermined (the minimum-norm solution from x0 = 0) or square, real or
    complex, with ``gk.solver.Lsqr`` on the executor: one product by A and one by A^H per
    iteration, the scalar recurrences and the stopping tests on the device. Not a method of
    the CLI's ``--solver`` nor of :class:`ginkpy.linalg.Solver` (those solve square systems).

    Parameters
    ----------
    A : {sparse matrix or array, ndarray, LinearOperator, LinOp}
        The m x n matrix. A LinearOperator needs ``rmatvec`` (A^H products, on the host); a
        ginkpy LinOp needs ``conj_transpose()`` (``gk.matrix.Csr`` has it).
    b : array_like, shape (m,) or (m, 1)
        The right-hand side.
    damp : float, default 0.0
        The damping factor of the regularized problem.
    atol, btol : float, default 1e-6
        Stop where ||r|| <= btol ||b|| + atol ||A|| ||x|| (istop 1) or ||A^H r|| <= atol ||A|| ||r||
        (istop 2); 0 stops on machine precision (istop 4, 5).
    conlim : float, default 1e8
        Stop where the estimate of cond(A) exceeds it (istop 3; 0: 1/eps, istop 6).
    iter_lim : int, default None
        The iteration limit (istop 7); None: 2 n.
    show : bool, default False
        Print SciPy's header and closing summary (not a line per iteration).
    calc_var : bool, default False
        Estimate the diagonal of (A^H A + damp^2 I)^-1 (``var``).
    x0 : array_like, shape (n,), default None
        The initial guess (default zeros).
    executor : Executor or str, default None
        Where to run (None: A's executor for a ginkpy LinOp, else ``gk.default_executor()``).

    Returns
    -------
    x, istop, itn, r1norm, r2norm, anorm, acond, arnorm, xnorm, var
        As SciPy's: the solution (n,), why it stopped (0 x = 0 is exact, 1 ||r|| small enough,
        2 the least-squares solution good enough, 3 cond(A) above conlim, 4-6 the same at
        machine precision, 7 the iteration limit), the iterations, ||b - A x||,
        sqrt(||b - A x||^2 + damp^2 ||x - x0||^2), the estimates of ||A||, cond(A),
        ||A^H r|| and ||x||, and var (n,).

    Examples
    --------
    >>> from ginkpy.linalg import lsqr
    >>> x, istop, itn, r1norm = lsqr(A, b, damp=0.1, atol=1e-10, btol=1e-10)[:4]
    >>> x = lsqr(A, b, executor="opencl")[0]
    """
    params = Lsqr.build().with_damp(float(damp)).with_atol(float(atol)).with_btol(float(btol)) \
        .with_conlim(float(conlim)).with_calc_var(bool(calc_var))
    params = params if iter_lim is None else params.with_max_iters(int(iter_lim))
    header = (lambda solver: [f"damp = {damp:20.14e}   calc_var = {calc_var:8g}",
                              f"atol = {atol:8.2e}                 conlim = {conlim:8.2e}",
                              f"btol = {btol:8.2e}               iter_lim = {solver.max_iters:8g}"])
    x, istop, itn, out, r = _solve(params, A, b, x0, executor, show, "LSQR", header,
                                   ("r1norm", "r2norm", "anorm", "acond", "arnorm", "xnorm"), _lsqr_summary)
    return (x, istop, itn, *out, r["var"][:, 0])


def lsmr(A: Any, b: Any, damp: float = 0.0, atol: float = 1e-6, btol: float = 1e-6, conlim: float = 1e8,
         maxiter: int | None = None, show: bool = False, x0: Any = None, executor: Any = None) -> tuple:
    """Find the least-squares solution of a large sparse system, as ``scipy.sparse.linalg.lsmr``.

    Minimizes ||b - A x||^2 + damp^2 ||x - x0||^2 (LSMR, Fong and Saunders: ||A^H r| decreases
    monotonically, so it may stop earlier than :func:`lsqr`) for an m x n A, real or complex,
    with ``gk.solver.Lsmr`` on the executor: one product by A and one by A^H per iteration,
    the scalar recurrences and the stopping tests on the device. Not a method of the CLI's
    ``--solver`` nor of :class:`ginkpy.linalg.Solver` (those solve square systems).

    Parameters
    ----------
    A : {sparse matrix or array, ndarray, LinearOperator, LinOp}
        The m x n matrix (a LinearOperator needs ``rmatvec``).
    b : array_like, shape (m,) or (m, 1)
        The right-hand side.
    damp, atol, btol, conlim : float
        As :func:`lsqr`'s.
    maxiter : int, default None
        The iteration limit (istop 7); None: min(m, n), SciPy's.
    show : bool, default False
        Print SciPy's header and closing summary (not a line per iteration).
    x0 : array_like, shape (n,), default None
        The initial guess (default zeros).
    executor : Executor or str, default None
        Where to run.

    Returns
    -------
    x, istop, itn, normr, normar, norma, conda, normx
        As SciPy's: the solution (n,), why it stopped (istop as :func:`lsqr`'s), the
        iterations, and the estimates of ||b - A x||, ||A^H (b - A x)||, ||A||, cond(A) and
        ||x|| (the damped problem's, where damp > 0).

    Examples
    --------
    >>> from ginkpy.linalg import lsmr
    >>> x, istop, itn, normr, normar = lsmr(A, b, atol=1e-10, btol=1e-10)[:5]
    """
    params = Lsmr.build().with_damp(float(damp)).with_atol(float(atol)).with_btol(float(btol)) \
        .with_conlim(float(conlim))
    if maxiter is not None:
        params = params.with_max_iters(int(maxiter))
    x, istop, itn, out, _ = _solve(
        params, A, b, x0, executor, show, "LSMR",
        lambda solver: [f"damp = {damp:20.14e}", f"atol = {atol:8.2e}                 conlim = {conlim:8.2e}",
                        f"btol = {btol:8.2e}             maxiter = {solver.max_iters:8g}"],
        ("normr", "normar", "norma", "conda", "normx"),
        lambda istop, itn, normr, normar, norma, conda, normx: [
            f"istop ={istop:8g}    normr ={normr:8.1e}", f"    normA ={norma:8.1e}    normAr ={normar:8.1e}",
            f"itn   ={itn:8g}    condA ={conda:8.1e}", f"    normx ={normx:8.1e}"])
    return (x, istop, itn, *out)
