"""What every iterative solver shares: its parameters (criteria, preconditioner, initial
guess), its preconditioner made from a parameter value, its workspace, and the apply that
hands each solve to an :class:`~ginkpy.core.solver.loop.monitor.IterationMonitor`.

A solver subclasses :class:`IterativeSolver` and writes ``_solve(monitor)``: its vectors from
``monitor.ws``, ``monitor.start(r)``, its setup launches, and its steps handed to
``monitor.run`` (DEVELOPERS.md, "A solver").
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Callable

import attrs

from ginkpy.core.base.checks import check_system_matrix
from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, one_of, parameters, variadic
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.precision import MixedPrecision
from ginkpy.core.base.program_signature import program_signature
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.identity import Identity
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.small_system import SOLVERS as SMALL_SYSTEM_METHODS
from ginkpy.core.solver.workspace import Workspace
from ginkpy.core.stop.combined import Combined
from ginkpy.core.stop.criterion import as_criterion_factory
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.solve_result import SolveResult
from ginkpy.core.stop.time import Time

INITIAL_GUESSES = ("provided", "zero", "rhs")


def generate_preconditioner(value: Any, A: LinOp, exec, what: str = "preconditioner",
                            initial_guess: str = "zero") -> LinOp:
    """The preconditioner LinOp from a parameter value: None (identity), a LinOp, or a factory.
    ``what`` names the parameter in errors (Ir builds its inner solver with this too).

    An iterative solver generated here starts each apply from ``initial_guess`` (x = 0 by
    default) unless its own parameters say otherwise (``with_default_initial_guess``), so that
    it acts as a fixed operator M, not as a continuation of its previous output; it is marked
    ``inner`` (its b and x belong to the solver around it).
    """
    if value is None:
        return Identity(exec, A.shape, A.dtype)
    if isinstance(value, LinOp):
        if value.shape != A.shape:
            raise ValueError(f"{what} is {value.shape[0]} x {value.shape[1]}, the system {A.shape[0]} x {A.shape[1]}")
        return value.to_executor(exec)
    if isinstance(value, (Parameters, Factory)):
        factory = value.on(exec) if isinstance(value, Parameters) else value
        params = factory.parameters
        if not issubclass(params.product, LinOp):
            raise TypeError(f"{what} must build an operator (a preconditioner or solver: gk.preconditioner.Jacobi."
                            f"build(), gk.solver.Cg.build()...), but {params.product.__name__} builds none")
        if isinstance(params, IterativeParameters) and params.default_initial_guess is None:
            factory = attrs.evolve(params, default_initial_guess=initial_guess).on(factory.executor)
        if A.distributed and not issubclass(params.product, IterativeSolver):
            # a preconditioner of a distributed matrix: the matrix makes it (Jacobi, Ilu on each rank's block)
            op = A.generate_preconditioner(factory)
        else:
            op = factory.generate(A)
        # (a product of another value type is applied through a MixedPrecision operator)
        solver = getattr(op, "operator", op) if isinstance(op, MixedPrecision) else op
        if isinstance(solver, IterativeSolver):
            solver.inner = True
        return op
    raise TypeError(f"{what} must be a factory, parameters or LinOp, not {type(value).__name__}")


def _size_class(exec, A: LinOp) -> str:
    """Where A's rows lie against the device's crossovers of the batch of one (a small system is
    solved by other programs than the loop's): part of a solver's program signature."""
    limits = sorted({exec.small_system_rows(method, A.dtype) for method in SMALL_SYSTEM_METHODS})
    return f" size {sum(A.shape[0] > limit for limit in limits)}"


def updated_part(part: LinOp, regenerate: Callable[[], LinOp], owner: Any, what: str) -> tuple[LinOp, bool]:
    """A part generated on a system matrix (a preconditioner, an inner solver, a smoother)
    after new values of that matrix: its own ``update()`` where it has one, with whether the
    launches recorded with it stay valid; else (no update, or NotImplementedError from it)
    ``regenerate()``, with one ``logging`` line, and False."""
    update = getattr(part, "update", None)
    why = "it has no values update"
    if update is not None:
        try:
            return part, bool(update())
        except NotImplementedError as err:
            why = str(err)
    logging.getLogger("ginkpy").info("%s: its %s %s is generated anew (%s)", type(owner).__name__, what,
                                     type(part).__name__, why)
    return regenerate(), False


def check_values(A: LinOp) -> None:
    """Refuse new values of a system matrix that are not finite (a ValueError), as generation
    refuses them."""
    if hasattr(A, "is_finite") and not A.is_finite():
        raise ValueError("the system matrix contains NaN or Inf values (after its values update)")


@parameters
class IterativeParameters(Parameters):
    """What every iterative solver takes: stopping criteria and the initial guess rule."""

    criteria: tuple = variadic()
    default_initial_guess: str | None = attrs.field(default=None,
                                                    validator=attrs.validators.optional(one_of(*INITIAL_GUESSES)))


@parameters
class PreconditionedParameters(IterativeParameters):
    """What a preconditioned iterative solver takes besides: the preconditioner."""

    preconditioner: Any = None


class IterativeSolver(EnableBuild, LinOp):
    """Base of the iterative solvers: ``apply(b, x)`` solves A x = b with x as the initial guess
    and the solution in x. Not used itself: use ``gk.solver.Cg``, ``Gmres``, ...

    Parameters
    ----------
    (set with ``with_<name>`` on ``Solver.build()``)
    criteria : stopping criteria, default none
        ``gk.stop.Iteration``, ``ResidualNorm``, ``Time``: each column stops at the first met.
        Without an Iteration or Time criterion the solver adds an iteration limit of
        max(1000, 10 n), as SciPy's default ``maxiter``, so that no solve runs forever.
    preconditioner : factory, parameters or LinOp, default None (none)
        M, generated on the system matrix (solvers that take one).
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        As in Ginkgo: x as given (the default for a solver applied directly), x = 0 (the
        default for a solver used as a preconditioner or inner solver) or x = b.

    Work vectors are kept between applies of the same shape; one solver object runs one apply
    at a time (concurrent applies from several threads wait for each other).

    Examples
    --------
    >>> solver = gk.solver.Cg.build().with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """

    Parameters = PreconditionedParameters
    confirms_on_device = False  # the solver confirms converged columns itself, on the device (Gmres)
    keeps_best_iterate = True   # the monitor keeps copies of the best iterate (not where it never gets worse)

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        A = check_system_matrix(system_matrix, exec)
        LinOp.__init__(self, exec, A.shape, A.dtype)
        self.system_matrix = A
        if isinstance(self.parameters, PreconditionedParameters):
            self.preconditioner = generate_preconditioner(self.parameters.preconditioner, A, exec)
        else:
            self.preconditioner = Identity(exec, A.shape, A.dtype)
        self.criteria = [as_criterion_factory(c, exec) for c in self.parameters.criteria]
        for c in self.criteria:
            if c.parameters.product is Iteration and c.parameters.max_iters is None:
                raise ValueError("Iteration needs with_max_iters(N) with an integer N >= 0")
        if not any(issubclass(c.parameters.product, (Iteration, Time)) for c in self.criteria):
            self.criteria.append(Iteration.build().with_max_iters(max(1000, 10 * A.global_shape[0])).on(exec))
        self._workspace: Workspace | None = None
        self._apply_lock = threading.Lock()
        self._scaled_matrix: LinOp | None = None
        # an inner solver (a preconditioner, a smoother) gets its input from the solver around it
        self.inner = False
        # the programs its applies use, built now (recorded by the first apply of each shape of
        # b of an earlier solver of this signature, in this process or an earlier one; the
        # recording: EnableBuild._recording_programs)
        self._program_signature = program_signature(self.parameters, A) + _size_class(exec, A)
        exec.prepare_programs(self._program_signature)

    def workspace(self, b: Dense) -> Workspace:
        """The work vectors for right-hand sides shaped as ``b`` (kept for the next apply)."""
        ws = self._workspace
        if ws is None or ws.shape != b.shape or ws.dtype != b.dtype:
            ws = self._workspace = Workspace(self.executor, b)
        return ws

    @property
    def fixed_iterations(self) -> int | None:
        """How many iterations a solve runs when only Iteration criteria can stop it and no
        logger watches it (then no residual is needed and nothing is read back); None otherwise."""
        return None if self.loggers else Combined(self.criteria).fixed_iterations

    @property
    def reads_initial_guess(self) -> bool:
        """Whether a plain ``apply(b, x)`` starts from the x it is given (default initial guess
        "provided", a solver applied directly): an operator applying it in another value type
        converts x in too (:class:`ginkpy.core.base.precision.MixedPrecision`)."""
        return getattr(self.parameters, "default_initial_guess", None) in (None, "provided")

    # -- apply -------------------------------------------------------------------------------
    def _apply_impl(self, b: Dense, x: Dense) -> None:
        if b.global_shape[0] == 0 or b.shape[1] == 0:
            return
        with self._apply_lock, self.system_matrix.collective_errors(outermost=not self.inner):
            self._monitored_solve(b, x, self.parameters.default_initial_guess)

    def apply_with_initial_guess(self, b: Dense, x: Dense, zero_guess: bool) -> Dense:
        """Solve A x = b from x, or from 0 where ``zero_guess`` (x is then not read and no
        product A x is made), whatever the default initial guess (Ginkgo's
        ``apply_with_initial_guess``); returns x. How a door that takes an optional x0
        (``gk.linalg.Solver.solve``) and Multigrid (for its smoothers) apply a solver."""
        self._check_operands(b, x)
        if b.global_shape[0] == 0 or b.shape[1] == 0:
            return x
        exec = self.executor
        b_local, x_local = b.to_executor(exec), x.to_executor(exec)
        with self._apply_lock, self._recording_programs(b_local):
            self._monitored_solve(b_local, x_local, "zero" if zero_guess else "provided")
        if x_local is not x:
            x.copy_from(x_local)
        return x

    # -- new values of the system matrix ----------------------------------------------------------
    def update(self) -> bool:
        """Follow new values of the system matrix, written in place on the same sparsity pattern
        (``A.update_values(...)``, ``A.copy_values_from(S)``): what depends on them is
        recomputed, every symbolic part kept (the preconditioner's :meth:`update`: block
        structures, factor patterns and level sets, multigrid aggregates), and so is the
        captured iteration, where the launches it recorded stay valid.

        A preconditioner the solver generated without an ``update`` of its own is generated
        anew (one ``logging`` line says so); one given as an operator is the caller's and is
        left as it is. Returns whether the launches recorded with this solver (in its own
        captured iterations, or in those of a solver around it) stay valid: False where a part
        made new arrays or new launch arguments, and the solver captures its iteration again at
        its next apply.

        Examples
        --------
        >>> solver = gk.solver.Cg.build().with_preconditioner(M).on(exec).generate(A)
        >>> A.copy_values_from(S_next)      # same pattern, new values
        >>> solver.update()                 # Jacobi/ILU/AMG recomputed numerically only
        """
        A = self.system_matrix
        check_values(A)
        valid = True
        value = self.parameters.preconditioner if isinstance(self.parameters, PreconditionedParameters) else None
        if isinstance(value, (Parameters, Factory)):
            self.preconditioner, valid = updated_part(
                self.preconditioner, lambda: generate_preconditioner(value, A, self.executor), self, "preconditioner")
        if self._scaled_matrix is not None:
            diag = self._diagonal_preconditioner
            if diag is None:  # (the preconditioner is no longer scalar Jacobi)
                self._scaled_matrix, valid = None, False
            else:
                # A D^-1 again, into the same arrays
                self.executor.run("matrix.csr.scale_columns", A, diag, self._scaled_matrix.values)
        if not valid:
            self._forget_captures()
        return valid

    def _forget_captures(self) -> None:
        """Drop the captured iterations (a part of them made new arrays): captured again at
        the next apply."""
        if self._workspace is not None:
            self._workspace.items.pop("replays", None)

    def _monitored_solve(self, b: Dense, x: Dense, guess: str | None) -> SolveResult:
        """One solve of A x = b from ``guess`` ("provided" or None: x; "zero"; "rhs": b): the
        solver's ``_solve`` run by a monitor, which then reports how it ended."""
        monitor = IterationMonitor(self, b, x, guess)
        self._solve(monitor)
        return monitor.finish()

    def _solve(self, monitor: IterationMonitor) -> None:
        """The method: vectors from ``monitor.ws``, ``monitor.start(r)``, setup, then the steps
        handed to ``monitor.run``."""
        raise NotImplementedError

    # -- what the methods share ------------------------------------------------------------------
    @property
    def _diagonal_preconditioner(self) -> Dense | None:
        """D^-1 (n x 1) when the preconditioner is scalar Jacobi, which the step kernels apply
        themselves (no launch of its own); None otherwise."""
        return getattr(self.preconditioner, "inverse_diagonal", None)

    def _right_preconditioned(self) -> tuple[LinOp, Dense | None, LinOp | None]:
        """(AM, diag, M) for a right-preconditioned method: AM = A D^-1, made once, and diag =
        D^-1 when the preconditioner is scalar Jacobi and A can scale its columns (the step
        kernels then apply D^-1 themselves); else AM = A, diag None and M the preconditioner
        (None: none)."""
        A, M = self.system_matrix, self.preconditioner
        if isinstance(M, Identity):
            return A, None, None
        diag = self._diagonal_preconditioner
        if diag is None or not hasattr(A, "scale_columns"):
            return A, None, M
        if self._scaled_matrix is None:
            self._scaled_matrix = A.scale_columns(diag)
        return self._scaled_matrix, diag, None

    def _precondition(self, b: Dense, x: Dense, M: LinOp | None = None) -> Dense:
        """M b (M the preconditioner unless given): computed into x, or b itself when M is the
        identity (saves a copy per iteration; callers only read the result)."""
        M = self.preconditioner if M is None else M
        if isinstance(M, Identity):
            return b
        M.apply(b, x)
        return x
