"""What every iterative solver shares: its parameters (criteria, preconditioner), the checks
on its system, its work vectors, and the IterationMonitor that runs its loop.

The loop runs on the device: the stopping thresholds are device values, the step kernels
check each column's residual norm against them and stop the column themselves, and the host
enqueues iterations without waiting for them. It reads the stop status back asynchronously
every few iterations (more as the solve goes on), so at most a few iterations are enqueued
after the last column stopped, and those leave stopped columns untouched.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any, Callable

import attrs
import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, one_of, parameters, variadic
from ginkpy.core.base.types import real_dtype
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.log.logger import SolveResult
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.identity import Identity
from ginkpy.core.stop.criterion import CriterionArgs, as_criterion_factory
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ResidualNorm
from ginkpy.core.stop.stop_state import StopState
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason
from ginkpy.core.stop.time import Time

INITIAL_GUESSES = ("provided", "zero", "rhs")
# the stop codes as plain ints (enum look-ups are slow in the per-read path)
_RUNNING, _CONVERGED, _LIMIT, _TIME, _BREAKDOWN, _DIVERGED, _PENDING = (
    int(StopReason[name]) for name in
    ("RUNNING", "CONVERGED", "ITERATION_LIMIT", "TIME_LIMIT", "BREAKDOWN", "DIVERGED", "PENDING"))
# norms outside [2^-SCALE_RANGE, 2^SCALE_RANGE] make a solve run on b and x scaled by a power of 2
# (exact), so that the sums of squares in its kernels neither underflow nor overflow
SCALE_RANGE = 60


def check_system_matrix(A: Any, exec, what: str = "system matrix") -> LinOp:
    """``A`` on ``exec`` after checking it is a square LinOp with finite values."""
    if not isinstance(A, LinOp):
        raise TypeError(f"the {what} must be a ginkpy LinOp (gk.matrix.Csr.from_scipy(exec, S)), "
                        f"not {type(A).__name__}")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"the {what} must be square, got {A.shape[0]} x {A.shape[1]}")
    exec.check_dtype(A.dtype)
    A = A.to_executor(exec)
    if hasattr(A, "is_finite") and not A.is_finite():
        raise ValueError(f"the {what} contains NaN or Inf values")
    return A


def generate_preconditioner(value: Any, A: LinOp, exec, what: str = "preconditioner",
                            initial_guess: str = "zero") -> LinOp:
    """The preconditioner LinOp from a parameter value: None (identity), a LinOp, or a factory.
    ``what`` names the parameter in errors (Ir builds its inner solver with this too).

    An iterative solver generated here starts each apply from ``initial_guess`` (x = 0 by
    default) unless its own parameters say otherwise (``with_default_initial_guess``), so that
    it acts as a fixed operator M, not as a continuation of its previous output.
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
        if isinstance(op, IterativeSolver):
            op.inner = True
        return op
    raise TypeError(f"{what} must be a factory, parameters or LinOp, not {type(value).__name__}")


class Workspace:
    """A solver's work vectors for one right-hand-side shape and value type: made at the first
    apply of that shape and kept for the next ones, so nothing is allocated in the loop.
    Vectors of b's rows are made like b (``b.empty_like``: distributed for a distributed b)."""

    def __init__(self, exec, like: Dense) -> None:
        self.exec, self.shape, self.dtype, self.like = exec, like.shape, np.dtype(like.dtype), like
        self.items: dict[str, Any] = {}

    def get(self, name: str, make: Callable[[], Any]) -> Any:
        item = self.items.get(name)
        if item is None:
            item = self.items[name] = make()
        return item

    def vector(self, name: str, rows: int | None = None, cols: int | None = None) -> Dense:
        """An n x k Dense (or rows x cols), zero at first (the initial guess of an iterative
        preconditioner that writes into it)."""
        n, k = self.shape
        cols = k if cols is None else cols
        if rows is None:
            return self.get(name, lambda: self.like.empty_like((n, cols)).fill(0.0))
        return self.get(name, lambda: Dense.zeros(self.exec, (rows, cols), self.dtype))

    def norms(self, name: str = "norms") -> Dense:
        """A 1 x k Dense of the real type of the value type, for norms (by default those the
        monitor reads)."""
        return self.get(name, lambda: Dense.zeros(self.exec, (1, self.shape[1]), real_dtype(self.dtype)))

    def vectors(self, *names: str) -> list[Dense]:
        return [self.vector(name) for name in names]

    def scalars(self, *names: str, rows: int = 1) -> list[Dense]:
        """rows x k Dense each (one value per column)."""
        return [self.vector(name, rows=rows) for name in names]

    def partials(self, name: str, count: int = 1) -> Dense:
        """The partial sums of ``count`` reductions per column (their kernel gives them its shape)."""
        return self.vector(name, rows=1, cols=count * self.shape[1])

    def array(self, name: str, shape: tuple[int, ...], dtype) -> Any:
        """A raw executor array (int32 counts, uint8 flags)."""
        return self.get(name, lambda: self.exec.alloc(shape, dtype))


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
    """Base of the Krylov solvers. ``apply(b, x)`` solves A x = b with x as the initial guess.

    ``with_default_initial_guess`` as in Ginkgo: ``"provided"`` (x as given; the default for a
    solver applied directly), ``"zero"`` (the default for a solver used as a preconditioner or
    inner solver) or ``"rhs"`` (x = b).

    Without an Iteration or Time criterion the solver adds an iteration limit of
    max(1000, 10 n), as SciPy's default ``maxiter``, so that no solve can run forever.

    Work vectors are kept between applies of the same shape; one solver object runs one apply
    at a time (concurrent applies from several threads wait for each other).
    """

    Parameters = PreconditionedParameters

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
        # an inner solver (a preconditioner, a smoother) gets its input from the solver around it
        self.inner = False

    def workspace(self, b: Dense) -> Workspace:
        """The work vectors for right-hand sides shaped as ``b`` (kept for the next apply)."""
        ws = self._workspace
        if ws is None or ws.shape != b.shape or ws.dtype != b.dtype:
            ws = self._workspace = Workspace(self.executor, b)
        return ws

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        if b.global_shape[0] == 0 or b.shape[1] == 0:
            return
        with self._apply_lock:
            guess = self.parameters.default_initial_guess
            if guess == "zero":
                x.fill(0.0)
            elif guess == "rhs":
                x.copy_from(b)
            self._solve(b, x, zero_guess=guess == "zero")

    def _solve(self, b: Dense, x: Dense, zero_guess: bool) -> None:
        raise NotImplementedError

    @property
    def _diagonal_preconditioner(self) -> Dense | None:
        """D^-1 (n x 1) when the preconditioner is scalar Jacobi, which the step kernels apply
        themselves (no launch of its own); None otherwise."""
        return getattr(self.preconditioner, "inverse_diagonal", None)

    def _precondition(self, b: Dense, x: Dense, M: LinOp | None = None) -> Dense:
        """M b (M the preconditioner unless given): computed into x, or b itself when M is the
        identity (saves a copy per iteration; callers only read the result)."""
        M = self.preconditioner if M is None else M
        if isinstance(M, Identity):
            return b
        M.apply(b, x)
        return x

    def _check(self, monitor: "IterationMonitor", r: Dense) -> None:
        """The stopping check on ||r|| on the device (two launches), for solvers whose steps do
        not compute the norm themselves; nothing when the solve runs blind."""
        if monitor.needs_norms:
            rr = monitor.ws.partials("rr")
            self.executor.run("components.reduction.dots", r, r, None, rr)
            self.system_matrix.reduce_sums(rr)
            self.executor.run("components.stop.check", rr, monitor.stop)

    def _residual(self, b: Dense, x: Dense, r: Dense) -> Dense:
        # r = b - A x
        r.copy_from(b)
        self.system_matrix.apply(-1.0, x, 1.0, r)
        return r


# Single systems up to this many rows run as a batch of one (one launch for the whole solve) on
# an OpenCL device where the criteria, the preconditioner and the loggers allow: below this size
# the normal loop is bound by its launches and its per-solve costs (the capture of its
# launches). GINKPY_SMALL_SYSTEMS=0 turns it off. `python benchmarks/bench_small.py` measures
# the per-iteration crossover (2026-11-23): on the H100 the loop's iteration is faster from about
# 6000 rows for Cg and Bicgstab (3000 in complex128), but whole solves of a few dozen iterations
# still favour the batch of one up to 16384 rows (bench_solve: 3D Poisson 22^3 8.4 ms as a batch
# of one, 51 ms through the loop); Gmres's long solves favour the loop from about 10^4 rows in
# complex128. On PoCL the batch of one wins to 32768 rows in real types, but its complex kernels
# vectorize poorly there (5x the real time at 10^4 rows), so complex Cg and Bicgstab take it
# only to 2048. Keys: (device kind, "gmres" or "short" for the other methods, complex values).
SMALL_SYSTEM_ROWS = {("gpu", "short", False): 16384, ("gpu", "short", True): 16384,
                     ("gpu", "gmres", False): 16384, ("gpu", "gmres", True): 8192,
                     ("cpu", "short", False): 32768, ("cpu", "short", True): 2048,
                     ("cpu", "gmres", False): 32768, ("cpu", "gmres", True): 16384}


def small_system_kernel(solver: IterativeSolver, monitor: "IterationMonitor", method: str,
                        krylov_dim: int = 0) -> bool:
    """Solve a small single system in one launch by the batched kernel of ``method`` (a batch of
    one: ``gk.batch``'s solvers), where it applies: an OpenCL device, one right-hand side still
    running, a Csr matrix of at most SMALL_SYSTEM_ROWS rows (per device, method and value kind), Iteration and ResidualNorm criteria,
    no preconditioner or Jacobi, and no logger that wants every iteration. The result is what the
    normal loop would report (the true residual confirms convergence); SolveResult.method says
    which ran. Returns False where it does not apply (the normal loop runs)."""
    exec, A, M = solver.executor, solver.system_matrix, solver.preconditioner
    if not exec.asynchronous or os.environ.get("GINKPY_SMALL_SYSTEMS") == "0" or monitor.blind:
        return False
    from ginkpy.core.matrix.csr import Csr
    from ginkpy.core.preconditioner.jacobi import Jacobi
    limit = SMALL_SYSTEM_ROWS["cpu" if exec.info.is_cpu else "gpu", "gmres" if method == "gmres" else "short",
                              np.dtype(solver.dtype).kind == "c"]
    if not (isinstance(A, Csr) and A.shape[0] <= limit and monitor.k == 1 and monitor.running
            and not monitor.log_iterations and not monitor.sync and monitor.time_limit == np.inf
            and monitor.max_iters < np.iinfo(np.int32).max and isinstance(M, (Identity, Jacobi))
            and all(issubclass(c.parameters.product, (Iteration, ResidualNorm)) for c in solver.criteria)):
        return False
    from ginkpy.core.batch.solver.single_system import solve_single
    logging.getLogger("ginkpy").debug("%s: %d rows solved in one launch (a batch of one)", type(solver).__name__,
                                      A.shape[0])
    threshold = float(max(monitor.threshold[0], 0.0))
    result = solve_single(method, A, monitor.b, monitor.x, int(monitor.max_iters), threshold,
                          None if isinstance(M, Identity) else M, krylov_dim=krylov_dim or 30)
    monitor.adopt(result.iterations, result.residual_norm, result.reason)
    return True


def fixed_iterations(solver: IterativeSolver) -> int | None:
    """How many iterations a solve runs when only Iteration criteria can stop it and no logger
    watches it (then no residual is needed and nothing is read back); None otherwise."""
    if solver.loggers:
        return None
    counts = [c.parameters.max_iters for c in solver.criteria if c.parameters.product is Iteration]
    if len(counts) != len(solver.criteria) or any(not isinstance(m, (int, np.integer)) or m < 0 for m in counts):
        return None
    return int(min(counts))


def right_preconditioned(solver: IterativeSolver) -> tuple[LinOp, Dense | None, LinOp | None]:
    """(AM, diag, M) for a right-preconditioned solver: AM = A D^-1, made once, and diag = D^-1
    when the preconditioner is scalar Jacobi and A can scale its columns (the step kernels then
    apply D^-1 themselves); else AM = A, diag None and M the preconditioner (None: none)."""
    A, M = solver.system_matrix, solver.preconditioner
    if isinstance(M, Identity):
        return A, None, None
    diag = solver._diagonal_preconditioner
    if diag is None or not hasattr(A, "scale_columns"):
        return A, None, M
    if getattr(solver, "_scaled_matrix", None) is None:
        solver._scaled_matrix = A.scale_columns(diag)
    return solver._scaled_matrix, diag, None


@attrs.define
class _Read:
    """A read of the device's stop state on its way to the host."""

    arrays: list
    event: Any
    iteration: int


class IterationMonitor:
    """The loop of one solve, shared by every solver.

    At the start: robust norms of b (and x), b and x scaled by powers of 2 when those are far
    from 1, r = b - A x (``monitor.residual``), the thresholds of the criteria per column on the
    device (:class:`StopState`). Then :meth:`run` enqueues iterations (one iteration captured
    once and replayed, see ``Executor.capture``) and reads the stop state every few
    iterations without waiting; a column the device reports converged is confirmed with the
    true residual b - A x (and, if that fails, resumed with it as its residual). Loggers get
    every iteration's residual norms, in order, at each read.

    Only a logger that needs the live solution after every iteration (``needs_solution``, as
    SciPy's ``callback(xk)``) makes the solve read after every iteration; that costs a host
    round trip per iteration.
    """

    MAX_INTERVAL = 64    # iterations between two reads at most (StopState keeps 256 in its history)
    method = "loop"      # how the solve ran (SolveResult.method)
    reads_each_iteration = False  # an iteration reads from the device itself (not replayable)
    READ_PERIOD = 1e-3   # seconds of iterations between two reads at most

    def __init__(self, solver: IterativeSolver, b: Dense, x: Dense, zero_guess: bool = False,
                 confirmed_on_device: bool = False) -> None:
        self.solver, self.x = solver, x
        exec = self.exec = solver.executor
        ws = self.ws = solver.workspace(b)
        k = b.shape[1]
        self.k = k
        self.iteration = 0
        self.confirmed_on_device = confirmed_on_device
        self._start = time.perf_counter()
        factories = solver.criteria
        products = [c.parameters.product for c in factories]
        self.max_iters = min([int(c.parameters.max_iters) for c in factories if c.parameters.product is Iteration]
                             or [np.iinfo(np.int64).max])
        self.time_limit = min([float(c.parameters.time_limit) for c in factories if c.parameters.product is Time]
                              or [np.inf])
        has_norm_criterion = any(issubclass(p, ResidualNorm) for p in products)
        loggers = solver.loggers
        self.log_iterations = any(getattr(lg, "wants_iterations", True) for lg in loggers)
        # a distributed solve reads after every iteration, so that every rank stops at the same one
        self.sync = any(getattr(lg, "needs_solution", False) for lg in loggers) or solver.system_matrix.distributed
        # an inner solver without a residual criterion, a time limit or loggers has nothing to
        # read back: it runs max_iters iterations blind (so the solver around it can capture it)
        self.blind = solver.inner and not (has_norm_criterion or self.time_limit < np.inf or loggers)
        self.stop = ws.get("stop", lambda: StopState(exec, k, b.dtype))
        self.scale = np.ones(k)
        self.b = b
        self.zero_guess = zero_guess
        self.x0 = None
        if self.blind:
            self.rhs_norm = np.full(k, np.nan)
            self.needs_norms = False
            return
        self.needs_norms = True
        # ||b|| and ||x|| without underflow or overflow; b = 0 columns have x = 0 as their answer
        b_norm = _host(exec, b.compute_norm2(ws.norms()))
        if not np.isfinite(b_norm).all():
            raise ValueError("the right-hand side b contains NaN or Inf values")
        x_norm = np.zeros(k) if zero_guess else _host(exec, x.compute_norm2(ws.norms()))
        if not np.isfinite(x_norm).all():
            raise ValueError("the initial guess x contains NaN or Inf values")
        self.zero_rhs = b_norm == 0
        size = np.maximum(b_norm, x_norm)
        exponent = np.where((size > 0) & ((size < 2.0 ** -SCALE_RANGE) | (size > 2.0 ** SCALE_RANGE)),
                            -np.round(np.log2(np.where(size > 0, size, 1))), 0)
        self.scale = np.ldexp(1.0, exponent.astype(int))
        self.rhs_norm = b_norm
        if (self.scale != 1).any():
            self.b = ws.vector("b_scaled")
            self.b.copy_from(b)
            self.b.scale(self.scale)
            x.scale(self.scale)
        if self.zero_rhs.any():
            x.scale(np.where(self.zero_rhs, 0.0, 1.0))
        self.zero_guess = zero_guess or bool(self.zero_rhs.all())
        # the initial guess, to give back a column that diverges
        self.x0 = None
        if not self.zero_guess:
            self.x0 = ws.vector("x0")
            self.x0.copy_from(x)

    # -- the start ---------------------------------------------------------------------------
    def residual(self, r: Dense) -> Dense:
        """r = b - A x (b scaled as the solve runs it; no product when x is zero)."""
        if self.zero_guess:
            r.copy_from(self.b)
        else:
            self.solver._residual(self.b, self.x, r)
        return r

    def start(self, r: Dense) -> None:
        """Set up the device stopping state from the initial residual r = b - A x."""
        k, exec = self.k, self.exec
        self.residual_vector = r
        self.host_status = np.zeros(k, STATUS_DTYPE)
        self.confirmed = np.zeros(k, bool)
        self.checks = np.zeros(k, np.int64)    # checks per column (a breakdown counts as one)
        self.recorded = np.zeros(k, np.int64)  # checks in the device's history
        self.emitted = 0
        self.lag = 0  # iterations the most lagging column waited for its confirmation
        self.replaced: dict[tuple[int, int], float] = {}
        self._pending: _Read | None = None
        self._interval, self._next_read = 1, 1
        self._last_issue = (time.perf_counter(), 0)
        # the parts of an iteration, captured at their first run in this apply (they hold x and b)
        self._replays: dict[Any, tuple] = {}
        if self.blind:
            self.norms = np.full(k, np.nan)
            self.threshold = np.full(k, -1.0)
            self.stop.reset(self.host_status, self.threshold, self.max_iters)
            return
        r_norm = _host(exec, r.compute_norm2(self.ws.norms()))
        if not np.isfinite(r_norm).all():
            raise ValueError("the initial residual b - A x is not finite (NaN or Inf): A x overflows for the "
                             "initial guess x; start from a smaller x (or x = 0)")
        scale = self.scale
        args = CriterionArgs(self.solver.system_matrix, self.rhs_norm, r_norm / scale)
        thresholds = [c.generate(args).threshold for c in self.solver.criteria
                      if issubclass(c.parameters.product, ResidualNorm)]
        self.threshold = np.max(thresholds, axis=0) * scale if thresholds else np.full(k, -1.0)
        self.norms = r_norm
        # b = 0: x = 0 is the answer, at once
        self.host_status = np.where(self.zero_rhs, _CONVERGED, self.host_status)
        self.confirmed[:] = self.zero_rhs
        self.norms[self.zero_rhs] = 0
        if self._time_up():  # a time limit of 0: no iteration
            met = r_norm <= self.threshold
            self.host_status = np.where(self.host_status == _RUNNING, np.where(met, _CONVERGED, _TIME),
                                        self.host_status).astype(STATUS_DTYPE)
            self.confirmed |= met
        real = real_dtype(self.solver.dtype)
        device_threshold = self.threshold.astype(real)
        # a threshold that rounds up in the real type would let a norm above it pass
        device_threshold = np.where(device_threshold > self.threshold,
                                    np.nextafter(device_threshold, -np.inf, dtype=real), device_threshold)
        self.stop.reset(self.host_status, device_threshold, self.max_iters)

    # -- the loop ----------------------------------------------------------------------------
    @property
    def loop_limit(self) -> int:
        """Iterations the host enqueues at most. Each column stops itself on the device after
        ``max_iters`` iterations of its own; a column that waited for its confirmation lags the
        loop by the iterations it waited (``lag``), and in Gmres a column converged on its
        estimate idles until the end of its cycle, so that loop may run longer (only where a
        residual criterion can be met on an estimate)."""
        if self.confirmed_on_device and not self.blind and (self.threshold >= 0).any():
            return 2 * self.max_iters + 2 * self.MAX_INTERVAL + 100
        return self.max_iters + self.lag

    @property
    def host_status(self) -> np.ndarray:
        """The stop status per column as far as the host knows (read-only: set it whole)."""
        return self._host_status

    @host_status.setter
    def host_status(self, status: np.ndarray) -> None:
        self._host_status = np.asarray(status, dtype=STATUS_DTYPE)
        self._host_status.flags.writeable = False
        self._codes = frozenset(int(c) for c in np.unique(self._host_status))

    @property
    def running(self) -> bool:
        """Whether a column still runs, as far as the host knows."""
        return _RUNNING in self._codes or _PENDING in self._codes

    def has_status(self, reason: StopReason) -> bool:
        """Whether a column has the status ``reason``, as far as the host knows."""
        return int(reason) in self._codes

    def replay(self, key: Any, fn: Callable[[], None]) -> None:
        """Run ``fn``, a part of an iteration: the first time captured (``Executor.capture``),
        later replayed, unless it read from the device (then it runs itself each time)."""
        replays = self._replays
        entry = replays.get(key)
        if entry is None or (entry[0] is None and entry[1] < 2):
            tries = 0 if entry is None else entry[1]
            replays[key] = (self.exec.capture(fn), tries + 1)
            # an iteration that reads from the device (a host operator) waits for it anyway:
            # then the stop state is read at once too, so that no iteration runs past the last
            self.reads_each_iteration = replays[key][0] is None
        else:
            (entry[0] or fn)()

    def run(self, body: Callable[[], None], resume: Callable[[Any], None] | None = None) -> None:
        """Enqueue iterations of ``body`` until every column stopped (each column stops itself on
        the device at its iteration limit). The body ends with the stopping check of its
        residual, so that after iteration t the check of iteration t is recorded with x_t.

        ``resume(columns)`` restarts the columns (a uint8 device mask) that got the true residual
        as their r after a failed confirmation (without it only r is replaced).
        """
        while True:
            while self.running and self.iteration < self.loop_limit:
                self.replay("body", body)
                self.iteration += 1
                self.next(resume)
            if self.running and self.iteration >= self.loop_limit:
                self.exec.run("components.stop.stop_running", self.stop, _LIMIT)
            if not self.settle(resume):
                return

    def next(self, resume: Callable[[], None] | None = None) -> None:
        """After enqueueing an iteration: take in the last read of the stop state once it has
        arrived, and start the next read when due. Reads start every ``interval`` iterations,
        which doubles from 1 up to MAX_INTERVAL or to what the iterations take in READ_PERIOD,
        and the host waits for a read only when the next one is due: so it never runs more than
        two intervals ahead of what it knows. With a ``needs_solution`` logger: a read after
        every iteration, waited for."""
        if self.blind:
            return
        if self.sync:
            self._absorb(self._issue_read(final=True), resume)
            return
        self.exec.flush()
        pending = self._pending
        due = (self.iteration >= self._next_read or self.reads_each_iteration
               or self.exec.none_running(self.stop.status))
        if pending is not None and (due or (self.exec.asynchronous and self.exec.read_done(pending.event))):
            self._pending = None
            self._absorb(pending, resume)
        if due and self._pending is None and self.running:
            if not self.exec.asynchronous or self.reads_each_iteration:  # the read is there at once
                self._absorb(self._issue_read(), resume)
                return
            self._pending = self._issue_read()
            # the time an iteration takes, measured since the last read started
            now = time.perf_counter()
            per_iteration = (now - self._last_issue[0]) / max(self.iteration - self._last_issue[1], 1)
            self._last_issue = (now, self.iteration)
            cap = max(1, min(self.MAX_INTERVAL, int(self.READ_PERIOD / max(per_iteration, 1e-9))))
            self._interval = min(2 * self._interval, cap)
            self._next_read = self.iteration + self._interval

    def poll(self) -> None:
        """Read the stop state now where that costs nothing extra (on the host, or where each
        iteration reads from the device anyway); elsewhere the reads of :meth:`next` suffice."""
        if self.blind or not (self.sync or self.reads_each_iteration or not self.exec.asynchronous):
            return
        if self._pending is not None:
            self._absorb(self._pending, None)
            self._pending = None
        self._absorb(self._issue_read(final=self.sync), None)

    def settle(self, resume: Callable[[], None] | None = None) -> bool:
        """Read the final stop state (waiting for it). True when a column was resumed by a failed
        confirmation and the loop must go on."""
        if self.blind:
            self.host_status = np.full(self.k, _LIMIT)
            self.checks[:] = self.iteration + 1
            return False
        if self._pending is not None:
            self._absorb(self._pending, resume)
            self._pending = None
        self._absorb(self._issue_read(final=True), resume)
        return self.running and self.iteration < self.loop_limit

    def _issue_read(self, final: bool = False) -> _Read:
        """Start reading the stop status into host arrays of the workspace (page-locked: the
        host does not wait), with the check counts and the history when a logger wants every
        iteration's norms or at the end (for the iteration counts and final norms)."""
        stop, exec = self.stop, self.exec
        into = self.ws.get("read", lambda: [exec.host_array(a.shape, a.dtype)
                                            for a in (stop.status, stop.checks, stop.history.values)])
        count = 3 if final or self.log_iterations else 1
        event = exec.read_async([stop.status, stop.checks, stop.history.values][:count], into[:count])
        return _Read(into[:count] + [None] * (3 - count), event, self.iteration)

    def _absorb(self, read: _Read, resume) -> None:
        """Take in a read of the stop state: time limit, confirmations, logger events."""
        if read.event is not None:
            read.event.wait()
        status, checks, history = read.arrays
        status = status.copy()
        new = (status == _CONVERGED) & ~self.confirmed
        if checks is None and new.any() and not self.confirmed_on_device:
            checks = self.exec.to_host(self.stop.checks)  # a confirmation needs them
        if checks is not None:
            # a breakdown stops its column in the middle of an iteration: that iteration counts,
            # with the residual norm of the last check (the column's r did not change)
            self.recorded = np.maximum(self.recorded, checks)
            self.checks = np.maximum(self.checks, checks + (status == _BREAKDOWN))
        if new.any():
            if self.confirmed_on_device:
                self.confirmed |= new
            else:
                status = self._confirm(new, status, checks, resume)
        self.host_status = np.where((self.host_status == _RUNNING) | (self.host_status == _PENDING),
                                    status, self.host_status).astype(STATUS_DTYPE)
        if self.running and self._time_up():
            self.exec.run("components.stop.stop_running", self.stop, _TIME)
            self.host_status = np.where(self.host_status == _RUNNING, _TIME, self.host_status)
        if history is not None:
            self._emit(history)

    def _time_up(self) -> bool:
        """Whether the time limit has passed (on any rank of a distributed system)."""
        if self.time_limit == np.inf:
            return False
        up = np.array([time.perf_counter() - self._start >= self.time_limit])
        return bool(self.solver.system_matrix.reduce_flags(up)[0])

    def _confirm(self, new: np.ndarray, status: np.ndarray, checks: np.ndarray, resume) -> np.ndarray:
        """Check the columns ``new`` (converged on the device) against the true residual."""
        ws = self.ws
        r_true = ws.vector("r_true")
        self.solver._residual(self.b, self.x, r_true)
        true_norms = _host(self.exec, r_true.compute_norm2(ws.norms()))
        ok = new & (true_norms <= self.threshold)
        failed = new & ~ok
        self.confirmed |= ok
        for c in np.flatnonzero(new):
            self.replaced[(int(checks[c]) - 1, int(c))] = float(true_norms[c])
        if failed.any():
            # on with the true residual as r, unless at the iteration limit
            at_limit = failed & (checks - 1 >= self.max_iters)
            status[failed] = np.where(at_limit[failed], _LIMIT, _RUNNING)
            device_status = self.exec.to_host(self.stop.status)
            device_status[failed] = status[failed]
            self.exec.write(self.stop.status, device_status)
            if (failed & ~at_limit).any():
                resumed = failed & ~at_limit
                self.lag = max(self.lag, int((self.iteration - (checks[resumed] - 1)).max()))
                # residual replacement: the true residual goes on as the columns' r
                mask = ws.array("mask", (self.k,), STATUS_DTYPE)
                self.exec.write(mask, (failed & ~at_limit).astype(STATUS_DTYPE))
                self.exec.run("matrix.dense.copy_columns", r_true, self.residual_vector, mask)
                if resume is not None:
                    resume(mask)
        return status

    def _emit(self, history: np.ndarray) -> None:
        """Logger events for the iterations every running column has completed (without loggers
        that want them: only the last norms, for the result)."""
        running = (self.host_status == _RUNNING) | (self.host_status == _PENDING)
        # a column converged on an estimate has its last check replaced by the true residual later
        settled = self.checks - (self.host_status == _PENDING)
        done = int(settled[running].min()) if running.any() else int(self.checks.max(initial=0))
        done = max(done, 1)  # iteration 0 (the initial residual) even when every column stopped before
        rows = history.shape[0]
        if not self.log_iterations:
            last = self.recorded - 1
            has = last >= 0
            norms = np.where(has, history[np.maximum(last, 0) % rows, np.arange(self.k)].astype(np.float64), self.norms)
            for (it, c), value in list(self.replaced.items()):
                if it == last[c]:
                    norms[c] = value
                if it <= last[c]:
                    del self.replaced[(it, c)]
            self.norms = norms
            self.emitted = max(self.emitted, done)
            return
        for t in range(self.emitted, done):
            has = t < self.recorded
            norms = np.where(has, history[t % rows].astype(np.float64), self.norms)
            for (it, c), value in list(self.replaced.items()):
                if it == t:
                    norms[c] = value
                    del self.replaced[(it, c)]
            self.norms = norms
            status = np.where(t < self.checks - 1, _RUNNING, self.host_status).astype(STATUS_DTYPE)
            self.solver._log("on_iteration_complete", t, norms / self.scale, status)
        self.emitted = max(self.emitted, done)

    def adopt(self, iterations: int, norm: float, reason: StopReason) -> None:
        """Take over how a solve by another path (a batch of one) ended, for :meth:`finish`."""
        self.method = "batch of one"
        self.checks = np.array([iterations + 1])
        self.norms = np.array([float(norm)])
        self.host_status = np.array([int(reason)])

    # -- the end -----------------------------------------------------------------------------
    residual_vector: Dense | None = None

    def finish(self) -> SolveResult:
        """Undo the scaling, give back the initial guess of columns that diverged to NaN or Inf,
        and report how the solve ended to the loggers."""
        exec, x, k = self.exec, self.x, self.k
        # x may hold NaN or Inf where the residual does not show it (a column of A that is 0):
        # such a column gets its initial guess back, as one that diverged (is_finite and
        # reduce_flags are collective on a distributed system)
        if not self.blind and not x.is_finite():
            finite = ~self.solver.system_matrix.reduce_flags(~np.isfinite(exec.to_host(x.values)).all(axis=0))
            restore = ~finite
            self.host_status = np.where(restore, _DIVERGED, self.host_status)
            if restore.any():
                mask = self.ws.array("mask", (k,), STATUS_DTYPE)
                exec.write(mask, restore.astype(STATUS_DTYPE))
                exec.run("matrix.dense.copy_columns", self.ws.vector("zeros") if self.x0 is None else self.x0, x, mask)
                self.norms = np.where(restore, self._initial_norms(), self.norms)
        if (self.scale != 1).any():
            x.scale(1 / self.scale)
        iterations = np.maximum(self.checks - 1, 0)
        result = SolveResult(iterations, self.norms / self.scale, [StopReason(s) for s in self.host_status],
                             time.perf_counter() - self._start, self.rhs_norm.copy(),
                             self.threshold / self.scale, self.method)
        self.solver._log("on_solve_complete", result)
        return result

    def _initial_norms(self) -> np.ndarray:
        r = self.ws.vector("r_true")
        if self.x0 is None:
            r.copy_from(self.b)
        else:
            self.solver._residual(self.b, self.x0, r)
        return _host(self.exec, r.compute_norm2(self.ws.norms()))


def _host(exec, d: Dense) -> np.ndarray:
    """A 1 x k Dense as k float64 host values."""
    return exec.to_host(d.values)[0].astype(np.float64)
