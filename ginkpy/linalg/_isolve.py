"""The solver functions of :mod:`ginkpy.linalg`, which describes their arguments and results."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.types import real_dtype
from ginkpy.core.log.logger import Logger
from ginkpy.core.matrix.dense import Dense, value_dtype
from ginkpy.core.matrix.identity import Identity
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.linalg._docs import RETURNS, scipy_door
from ginkpy.linalg._interface import aslinearoperator, host_operator, square_operator
from ginkpy.linalg._solver import Solver, is_pyopencl
from ginkpy.linalg._solver_cache import kept_solver

# SciPy's warning for a gmres callback without callback_type (its meaning of maxiter changes)
_CALLBACK_TYPE_WARNING = (
    "scipy.sparse.linalg.gmres called without specifying `callback_type`. The default value will be changed in"
    " a future release. For compatibility, specify a value for `callback_type` explicitly, e.g., "
    "``gmres(..., callback_type='pr_norm')``, or to retain the old behavior ``gmres(..., callback_type='legacy')``")


@scipy_door(
    "Solve A x = b with the conjugate gradient method, as ``scipy.sparse.linalg.cg``.",
    """Use it for symmetric (complex: Hermitian) positive definite A: Laplacians, FEM
    stiffness and mass matrices; M must be SPD too (``"jacobi"``, ``"ic"``, ``"ssor"``,
    ``"symmetric_gauss_seidel"``, ``"amg"``): a nonsymmetric M by name (``"ilut"``,
    ``"gauss_seidel"``, ``"sor"``, ``"isai"``) is a ValueError naming its symmetric twin, and
    a sparse or NumPy A seen to be nonsymmetric (compared with A^T on the host, up to 4
    million entries) a UserWarning. For other matrices use :func:`minres` (symmetric
    indefinite), :func:`bicgstab` or :func:`gmres`. Runs ``gk.solver.Cg`` on the executor.""",
    """
    >>> from ginkpy.linalg import cg
    >>> x, info = cg(A, b, rtol=1e-8, M="ic")          # as scipy.sparse.linalg.cg
    >>> x, info = cg(A, b, M="amg", executor="opencl")
    """)
def cg(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
       M: Any = None, callback: Callable | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    return _solve("cg", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback))


@scipy_door(
    "Solve A x = b with the flexible conjugate gradient method (``gk.solver.Fcg``).",
    """Use it for symmetric (Hermitian) positive definite A where the preconditioner changes
    between applications (an inner iterative solve, a nonsymmetric multigrid cycle); with a
    fixed SPD M it matches :func:`cg`. SciPy has no fcg.""",
    """
    >>> from ginkpy.linalg import fcg
    >>> x, info = fcg(A, b, rtol=1e-8, M="amg")
    >>> x, info = fcg(A, b, M=gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(5)))
    """)
def fcg(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
        M: Any = None, callback: Callable | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    return _solve("fcg", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback))


@scipy_door(
    "Solve A x = b with the biconjugate gradient method, as ``scipy.sparse.linalg.bicg``.",
    """Use it for general square A where A^H is at hand: A and M need their adjoints (matrices
    have them; a LinearOperator needs ``rmatvec``, else a NotImplementedError says so).
    :func:`bicgstab` and :func:`gmres` need none and usually converge more smoothly.""",
    """
    >>> from ginkpy.linalg import bicg
    >>> x, info = bicg(A, b, rtol=1e-8, M="jacobi")
    >>> x, info = bicg(scipy.sparse.linalg.aslinearoperator(A), b)   # rmatvec from A
    """)
def bicg(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
         M: Any = None, callback: Callable | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    return _solve("bicg", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback))


@scipy_door(
    "Solve A x = b with the biconjugate gradient stabilized method, as ``scipy.sparse.linalg.bicgstab``.",
    """Use it first for a general (nonsymmetric) square A: no transpose, little memory, two
    products by A and M per iteration; where it breaks down (info -1) or stagnates, use
    :func:`gmres`. ``M="ilu"`` is the usual preconditioner.""",
    """
    >>> from ginkpy.linalg import bicgstab
    >>> x, info = bicgstab(A, b, rtol=1e-8, M="ilu")
    >>> if info < 0: x, info = gk.linalg.gmres(A, b, rtol=1e-8, M="ilu")
    """)
def bicgstab(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
             M: Any = None, callback: Callable | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    return _solve("bicgstab", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback))


@scipy_door(
    "Solve A x = b with the conjugate gradient squared method, as ``scipy.sparse.linalg.cgs``.",
    """Use it for a general square A where :func:`bicgstab` breaks down and no transpose is at
    hand; it converges fast where it converges, but its residual may grow mid-solve.""",
    """
    >>> from ginkpy.linalg import cgs
    >>> x, info = cgs(A, b, rtol=1e-8)
    >>> x, info = cgs(A, b, M="jacobi", maxiter=200)
    """)
def cgs(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
        M: Any = None, callback: Callable | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    return _solve("cgs", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback))


@scipy_door(
    "Solve A x = b with the transpose-free quasi-minimal residual method, as ``scipy.sparse.linalg.tfqmr``.",
    """Use it for a general square A where no transpose is at hand and the residual of
    :func:`cgs` or :func:`bicgstab` oscillates: one product by A and M per iteration (a half
    step, as SciPy counts them), a smoothly falling residual. Runs ``gk.solver.Tfqmr``,
    right-preconditioned (SciPy applies M on the left of its products).""",
    """
    >>> from ginkpy.linalg import tfqmr
    >>> x, info = tfqmr(A, b, rtol=1e-8)
    >>> x, info = tfqmr(A, b, M="jacobi", callback=lambda xk: print(np.linalg.norm(b - A @ xk)))
    """,
    own={"rtol": """rtol, atol : float, default 1e-5 and 0.0
    Stop once TFQMR's bound tau sqrt(m) on ||b - A x|| is at most max(rtol ||b||, atol),
    confirmed with the true residual (SciPy's tfqmr stops on the bound alone, relative to
    ||b - A x0||: the same with x0 = 0).""",
         "maxiter": """maxiter : int, default None
    The limit of iterations (half steps); None: min(10000, 10 n), as SciPy's tfqmr.""",
         "show": """show : bool, default False
    Print how the solve ended, as SciPy's: converged or not, after how many iterations
    (nothing on a breakdown)."""})
def tfqmr(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
          M: Any = None, callback: Callable | None = None, show: bool = False,
          executor: Any = None) -> tuple[np.ndarray, int]:
    if len(getattr(A, "shape", (0, 0))) == 2 and maxiter is None:
        maxiter = min(10000, 10 * max(A.shape[0], 1))
    return _solve("tfqmr", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback), loggers=(_ShowEnd("TFQMR"),) if show else ())


@scipy_door(
    "Solve A x = b with the quasi-minimal residual method, as ``scipy.sparse.linalg.qmr``.",
    """Use it for a general square A where A^H is at hand (matrices have it; a LinearOperator
    needs ``rmatvec``) and the residual of :func:`bicg` oscillates: QMR quasi-minimizes it, one
    product by A and one by A^H per iteration. :func:`tfqmr`, :func:`bicgstab` and
    :func:`gmres` need no adjoint.""",
    """
    >>> from ginkpy.linalg import qmr
    >>> x, info = qmr(A, b, rtol=1e-8)
    >>> x, info = qmr(A, b, M2="jacobi")        # right preconditioner (its adjoint too)
    """,
    own={"M1": """M1 : preconditioner, default None
    The left preconditioner of the Lanczos process, in any form ``M`` takes (a name, an
    operator, ...); it needs its adjoint M1^H. None: the identity.""",
         "M2": """M2 : preconditioner, default None
    The right preconditioner, as M1. SciPy's qmr with neither uses ``A.psolve`` where A has
    one; here A's ``psolve`` is not used.""",
         "maxiter": """maxiter : int, default None
    The iteration limit; None: 10 n, as SciPy's qmr."""},
    returns=RETURNS.replace("-1 a breakdown\n    of the method (a zero divisor)",
                            "a breakdown\n    of the method, as SciPy's qmr numbers them: -10 rho, -11 beta, "
                            "-12 gamma, -13 delta,\n    -14 epsilon, -15 xi"))
def qmr(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
        M1: Any = None, M2: Any = None, callback: Callable | None = None,
        executor: Any = None) -> tuple[np.ndarray, int]:
    options = {} if M1 is None else {"left_preconditioner": M1}
    return _solve("qmr", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M2, executor=executor,
                  observer=_solution_callback(callback), **options)


@scipy_door(
    "Solve A x = b with the restarted GMRES method, as ``scipy.sparse.linalg.gmres``.",
    """Use it for a general square A where :func:`bicgstab` breaks down or stagnates: it
    minimizes the residual over each cycle and does not break down; a larger ``restart``
    converges in fewer iterations at more memory and work per iteration. With M it is
    left-preconditioned, as SciPy's (``gk.solver.Gmres``'s ``preconditioner_side="left"``): each
    cycle minimizes ||M (b - A x)|| to SciPy's inner tolerance and the true residual b - A x
    decides at its end; ``flexible=True`` is right-preconditioned (Ginkgo's).""",
    """
    >>> from ginkpy.linalg import gmres
    >>> x, info = gmres(A, b, rtol=1e-8, restart=50, M="ilu")
    >>> x, info = gmres(A, b, callback=print, callback_type="pr_norm")   # ||r|| / ||b|| each iteration
    >>> x, info = gmres(A, b, rtol=1e-8, restart=30, storage_precision="reduce1")
    """,
    own={"restart": """restart : int, default None
    The Krylov dimension: iterations per restart cycle (None: 20, as SciPy's; at most n).""",
         "maxiter": """maxiter : int, default None
    The limit of restart cycles (None: 10 n), or of inner iterations with
    ``callback_type="legacy"``, as SciPy's.""",
         "callback": """callback : callable, default None
    Called after each inner iteration with the relative residual norm estimate ||r|| / ||b||
    (a NumPy scalar; ``callback_type`` "pr_norm" or "legacy"), or after each restart cycle
    with the solution (``"x"``).""",
         "callback_type": """callback_type : {"x", "pr_norm", "legacy"}, default None
    What the callback gets (above); None with a callback is "legacy", with SciPy's
    DeprecationWarning that asks for it.""",
         "storage_precision": """storage_precision : {"reduce1", "reduce2", "keep"}, default None
    Not in SciPy: store the Krylov basis in a lower precision, Ginkgo's CbGmres:
    ``"reduce1"`` (float64 -> float32), ``"reduce2"`` (float16) or ``"keep"``; it halves or
    quarters the memory traffic of large systems, the arithmetic staying in the value type
    (None: the value type, plain Gmres).""",
         "flexible": """flexible : bool, default False
    Not in SciPy: flexible GMRES, for an M that changes between applications (an iterative
    solver with few iterations, a multigrid cycle); see ``gk.solver.Gmres``'s ``flexible``."""})
def gmres(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, restart: int | None = None,
          maxiter: int | None = None, M: Any = None, callback: Callable | None = None,
          callback_type: str | None = None, executor: Any = None, storage_precision: str | None = None,
          flexible: bool = False) -> tuple[np.ndarray, int]:
    if callback is not None and callback_type is None:
        warnings.warn(_CALLBACK_TYPE_WARNING, DeprecationWarning, stacklevel=2)
        callback_type = "legacy"
    if callback_type not in (None, "x", "pr_norm", "legacy"):
        raise ValueError(f"unknown callback_type {callback_type!r}: use 'x', 'pr_norm' or 'legacy'")
    callback_type = None if callback is None else callback_type
    if restart is None:
        restart = 20
    elif isinstance(restart, bool) or not isinstance(restart, (int, np.integer)) or restart < 1:
        raise ValueError(f"restart must be an integer >= 1, got {restart!r}")
    restart = int(min(restart, max(getattr(A, "shape", (restart,))[0], 1)))
    if callback_type == "x":
        observer = _solution_callback(callback, every=restart)
    else:
        observer = _residual_callback(callback)
    return _solve("gmres", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=observer, iterations_per_maxiter=1 if callback_type == "legacy" else None,
                  restart=restart, **_gmres_options(M, storage_precision, flexible))


def _gmres_options(M: Any, storage_precision: str | None, flexible: bool) -> dict:
    """gmres' solver options: the basis's storage precision (CbGmres), flexible GMRES (right-
    preconditioned), else with M left preconditioning, as SciPy's gmres (a right-preconditioned
    GMRES(m) can stall where SciPy's converges: nos6 with Gauss-Seidel)."""
    if flexible not in (True, False):
        raise ValueError(f"flexible must be True or False, got {flexible!r}")
    options = {} if storage_precision is None else {"storage_precision": storage_precision}
    if flexible:
        options["flexible"] = True
    elif M is not None:
        options["preconditioner_side"] = "left"
    return options


@scipy_door(
    "Solve A x = b with the induced dimension reduction method IDR(s) (``gk.solver.Idr``).",
    """Use it for a general square A where :func:`bicgstab` stagnates: a larger shadow space
    converges in fewer iterations, at s + 1 products by A and M each. SciPy has no idr.""",
    """
    >>> from ginkpy.linalg import idr
    >>> x, info = idr(A, b, rtol=1e-8, subspace_dim=4)
    >>> x, info = idr(A, b, M="ilu")
    """,
    own={"subspace_dim": """subspace_dim : int, default 2
    s, the dimension of the shadow space."""})
def idr(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
        M: Any = None, callback: Callable | None = None, executor: Any = None,
        subspace_dim: int = 2) -> tuple[np.ndarray, int]:
    return _solve("idr", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback), subspace_dim=subspace_dim)


@scipy_door(
    "Solve A x = b with iterative refinement, x = x + omega M (b - A x) (``gk.solver.Ir``).",
    """Use it as a stationary iteration: Richardson's without M, the Jacobi iteration with
    ``M="jacobi"``, refinement around an approximate solver given as M (a multigrid cycle, a
    low-precision solve). It converges only where omega M approximates A^-1 well.""",
    """
    >>> from ginkpy.linalg import ir
    >>> x, info = ir(A, b, rtol=1e-6, M="jacobi")        # the Jacobi iteration
    >>> x, info = ir(A, b, M="amg", relaxation_factor=1.0)
    """,
    own={"relaxation_factor": """relaxation_factor : float, default 1.0
    omega."""})
def ir(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
       M: Any = None, callback: Callable | None = None, executor: Any = None,
       relaxation_factor: float = 1.0) -> tuple[np.ndarray, int]:
    return _solve("ir", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback), relaxation_factor=relaxation_factor)


@scipy_door(
    "Solve (A - shift I) x = b with the minimal residual method, as ``scipy.sparse.linalg.minres``.",
    """Use it for Hermitian (real: symmetric) A that may be indefinite (saddle points, shifted
    operators), where :func:`cg` breaks down; M must be Hermitian positive definite.""",
    """
    >>> from ginkpy.linalg import minres
    >>> x, info = minres(A, b, rtol=1e-8)              # A symmetric indefinite
    >>> x, info = minres(A, b, shift=0.5, M="jacobi")  # (A - 0.5 I) x = b
    """,
    own={"rtol": """rtol : float, default 1e-5
    Stop once ||b - A x|| <= rtol ||b|| (SciPy's minres stops on its own estimates
    ||r|| / (||A|| ||x||) and ||A r|| / (||A|| ||r||), weaker tests, so it may stop earlier
    with a larger residual). minres takes no atol, as SciPy's.""",
         "shift": """shift : float, default 0.0
    Solve (A - shift I) x = b (A itself is not changed).""",
         "maxiter": """maxiter : int, default None
    The iteration limit (None: 5 n, SciPy's default for minres).""",
         "M": """M : preconditioner, default None
    As the other functions take it, Hermitian positive definite (``"jacobi"`` needs a
    positive diagonal); an indefinite M gives info -1.""",
         "show": """show : bool, default False
    Print a summary: the problem, then ||r|| / ||b|| of the iterations (as they are read),
    then how the solve ended.""",
         "check": """check : bool, default False
    Check first that A and M are Hermitian (SciPy's test on a few products): a ValueError
    says which is not."""},
    returns=RETURNS.replace("of the method (a zero divisor)", "(A not Hermitian or M indefinite: SciPy raises a "
                            "ValueError there)"))
def minres(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, shift: float = 0.0, maxiter: int | None = None,
           M: Any = None, callback: Callable | None = None, show: bool = False, check: bool = False,
           executor: Any = None) -> tuple[np.ndarray, int]:
    for name, value in (("shift", shift),):
        if isinstance(value, (bool, str)) or not np.isscalar(value) or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if len(getattr(A, "shape", (0, 0))) == 2 and maxiter is None:
        maxiter = 5 * max(A.shape[0], 1)
    if executor is None and isinstance(host_operator(A), LinOp):
        executor = host_operator(A).executor
    A = _shifted(host_operator(A), shift)
    shown = (_Show(A.shape[0], shift, maxiter, rtol),) if show else ()
    return _solve("minres", A, b, x0, rtol=rtol, atol=0.0, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback), loggers=shown,
                  before=_check_hermitian if check else None)


def _solve(name: str, A: Any, b: Any, x0: Any, *, rtol: float, atol: float, maxiter: int | None, M: Any,
           executor: Any, observer: Callable[[Dense, float], Logger] | None = None,
           iterations_per_maxiter: int | None = None, loggers: tuple = (), before: Callable | None = None,
           **solver_parameters: Any) -> tuple[Any, int]:
    """Solve with the ginkpy solver ``name`` under SciPy's conventions, through a
    :class:`~ginkpy.linalg._solver.Solver`: the one kept from an earlier call on the same SciPy
    matrix with the same arguments (``kept_solver``), else a new one.

    ``observer(x, ||b||)`` gives a logger that reports iterations to the user's callback;
    ``loggers`` are attached too; ``before(solver, b)`` looks at the generated solver before
    it runs (minres' ``check``); ``solver_parameters`` are the method's own (restart,
    subspace_dim, relaxation_factor).
    """
    exec, operator = square_operator(A, executor)
    # (b and x0 are checked by the solver: here only their value types count)
    b_dtype = value_dtype(b.dtype if is_pyopencl(b) else np.asarray(b).dtype, "b")
    x0_dtype = None if x0 is None or isinstance(x0, str) else \
        value_dtype(x0.dtype if is_pyopencl(x0) else np.asarray(x0).dtype, "x0")
    if isinstance(operator, LinOp):
        dtype = operator.dtype
        for what, v in (("b", b_dtype), ("x0", x0_dtype)):
            if v is not None and np.dtype(v).kind == "c" and dtype.kind != "c":
                raise TypeError(f"{what} is complex but A, a ginkpy {type(operator).__name__}, has the real value type "
                                f"{dtype}: create A with a complex dtype (complex64 or complex128), or pass a real {what}")
    else:
        dtype = np.result_type(value_dtype(operator.dtype, "A"), b_dtype, *(() if x0_dtype is None else
                                                                                     (x0_dtype,)))
    dtype = exec.check_dtype(dtype)
    arguments = dict(rtol=rtol, atol=atol, maxiter=maxiter, **solver_parameters)
    if iterations_per_maxiter is not None:
        arguments["_iterations_per_maxiter"] = iterations_per_maxiter
    with kept_solver(A, exec, dtype, name, M, **arguments) as solver:
        if solver is None:
            solver = Solver(A, name, M=M, executor=exec, dtype=None if isinstance(operator, LinOp) else dtype,
                            **arguments)
        return solver._solve(b, x0, observer, loggers, before)


class _SolutionCallback(Logger):
    """Calls ``callback(xk)`` with the solution after every ``every``-th iteration and after the
    last one. The solve hands it x read one iteration behind the device (``wants_solution``), a
    host buffer that holds x during the call and is reused later, as SciPy's live x (a callback
    that keeps it copies it): the callback runs while the device computes the next iteration.

    With ``every`` > 1 (the restart cycles of GMRES) a cycle's solution is the x of the next
    iteration, or the final one at the end of the solve, since GMRES updates x only at the end
    of the cycle, after its last iteration.
    """

    wants_solution = True
    wants_iterations = False

    def __init__(self, callback: Callable, x: Dense, every: int = 1) -> None:
        self.callback, self.x, self.every = callback, x, every
        self.reported = 0

    def on_iteration_solution(self, solver, iteration, x) -> None:
        if self.every == 1:
            self.reported = iteration
            self.callback(x[:, 0])
        elif iteration > self.every and (iteration - 1) % self.every == 0:
            self.reported = iteration - 1
            self.callback(x[:, 0])

    def on_solve_complete(self, solver, result) -> None:
        if result.num_iterations > self.reported:
            self.reported = result.num_iterations
            self.callback(self.x.to_numpy()[:, 0])


def _solution_callback(callback: Callable | None, every: int = 1) -> Callable[[Dense, float], Logger] | None:
    if callback is None:
        return None
    _check_callable(callback)
    return lambda x, b_norm: _SolutionCallback(callback, x, every)


class _ResidualCallback(Logger):
    """Calls ``callback(||r|| / ||b||)`` after each iteration (gmres' ``callback_type="pr_norm"``
    and ``"legacy"``), the value a NumPy float64 scalar, as SciPy's."""

    def __init__(self, callback: Callable, b_norm: float) -> None:
        self.callback, self.b_norm = callback, b_norm

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        if iteration > 0:
            self.callback(np.float64(residual_norm[0]) / np.float64(self.b_norm))


def _residual_callback(callback: Callable | None) -> Callable[[Dense, float], Logger] | None:
    if callback is None:
        return None
    _check_callable(callback)
    return lambda x, b_norm: _ResidualCallback(callback, b_norm)


def _check_callable(callback: Any) -> None:
    if not callable(callback):
        raise TypeError(f"callback must be callable, not {type(callback).__name__}")


def _shifted(A: Any, shift: float) -> Any:
    """A - shift I for any form of A that :func:`host_operator` gives (a ginkpy matrix through
    SciPy; another ginkpy LinOp and a LinearOperator as SciPy operators)."""
    if shift == 0:
        return A
    n = A.shape[0]
    if isinstance(A, LinOp):
        A = A.to_scipy() if hasattr(A, "to_scipy") else aslinearoperator(A)
    if isinstance(A, np.ndarray):
        return A - shift * np.eye(n)
    if sp.issparse(A):
        return sp.csr_matrix(A) - shift * sp.identity(n, format="csr")
    import scipy.sparse.linalg as spla  # (where a LinearOperator is given: see _interface)
    return A - shift * spla.aslinearoperator(sp.identity(n, format="csr"))


def _check_hermitian(solver: Any, b: Dense) -> None:
    """SciPy minres' ``check``: A and M Hermitian, judged on y = M b: w = A y must give
    w . w = y . A w, and y . y = b . M y, each within (s + eps) eps^(1/3) of s = w . w or y . y."""
    A, M = solver.system_matrix, solver.preconditioner
    eps = np.finfo(real_dtype(A.dtype)).eps
    preconditioned = not isinstance(M, Identity)

    def close(s, t):
        return abs(s - t) <= (s + eps) * eps ** (1 / 3)

    def dot(u, v):
        return complex(np.vdot(u.to_numpy(), v.to_numpy()))

    y = M.apply(b, b.empty_like()) if preconditioned else b
    w = A.apply(y, y.empty_like())
    if not close(dot(w, w).real, dot(y, A.apply(w, w.empty_like()))):
        raise ValueError("minres(check=True): A is not symmetric (Hermitian): y . A (A y) differs from "
                         "(A y) . (A y); minres needs a symmetric A (use gmres or bicgstab otherwise)")
    if preconditioned and not close(dot(y, y).real, dot(b, M.apply(y, y.empty_like()))):
        raise ValueError("minres(check=True): the preconditioner M is not symmetric (Hermitian): "
                         "b . M (M b) differs from (M b) . (M b); give minres a symmetric positive definite M")


class _Show(Logger):
    """minres' ``show``: the problem, ||r|| / ||b|| of each iteration as the solve reads it, and
    how it ended, printed."""

    def __init__(self, n: int, shift: float, maxiter: int, rtol: float) -> None:
        print("Enter minres.   Solution of symmetric Ax = b")
        print(f"Enter minres.   n      =  {n:3g}     shift  =  {shift:23.14e}")
        print(f"Enter minres.   itnlim =  {maxiter:3g}     rtol   =  {rtol:11.2e}")
        print()
        print("   Itn     rnorm / bnorm")
        self.b_norm = None

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        if self.b_norm is None:
            self.b_norm = float(residual_norm[0]) or 1.0  # iteration 0: ||r0|| = ||b|| from x0 = 0
        print(f"{iteration:6g}   {float(residual_norm[0]) / self.b_norm:12.5e}")

    def on_solve_complete(self, solver, result) -> None:
        print()
        print(f"Exit  minres.   {result.stop_reasons[0]}: {int(result.iterations[0])} iterations, "
              f"rnorm = {float(result.residual_norm[0]):12.4e}")


class _ShowEnd(Logger):
    """``show`` of SciPy's tfqmr: one line saying how the solve ended (none on a breakdown)."""

    wants_iterations = False

    def __init__(self, name: str) -> None:
        self.name = name

    def on_solve_complete(self, solver, result) -> None:
        iterations, reason = int(result.iterations[0]), result.stop_reasons[0]
        if reason == StopReason.CONVERGED:
            print(f"{self.name}: Linear solve converged due to reach TOL iterations {iterations}")
        elif reason != StopReason.BREAKDOWN:  # (SciPy says nothing on a breakdown)
            print(f"{self.name}: Linear solve not converged due to reach MAXIT iterations {iterations}")
