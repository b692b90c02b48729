"""IterationMonitor: the loop of one solve, shared by every iterative solver.

A solver hands the monitor its steps; the monitor alone runs them. The loop runs on the
device: the stopping thresholds are device values, the step kernels check each column's
residual norm against them and stop the column themselves, and the host enqueues iterations
without waiting for them. It reads the stop status back asynchronously every few iterations
(more as the solve goes on), so at most a few iterations are enqueued after the last column
stopped, and those leave stopped columns untouched.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Iterator

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.loop.best_iterate import BestIterate
from ginkpy.core.solver.loop.read_modes import read_mode
from ginkpy.core.solver.loop.replays import Replays, kept_replays
from ginkpy.core.solver.loop.scaling import host_norms, power_of_two_scale
from ginkpy.core.solver.loop.solution_reads import SolutionReads
from ginkpy.core.solver.loop.stop_reader import Read, StopReader
from ginkpy.core.stop.combined import Combined
from ginkpy.core.stop.criterion import CriterionArgs
from ginkpy.core.stop.solve_result import SolveResult
from ginkpy.core.stop.stop_state import StopState
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason

RUNNING, CONVERGED, LIMIT = (int(r) for r in (StopReason.RUNNING, StopReason.CONVERGED, StopReason.ITERATION_LIMIT))
Resume = Callable[[Any], None]


class IterationMonitor:
    """The loop of one solve (one ``apply``) of an iterative solver.

    The solver's ``_solve(monitor)`` takes its vectors from ``monitor.ws`` (kept across
    applies), computes on ``monitor.b`` and ``monitor.x`` (the system as the loop runs it),
    calls :meth:`start` with its residual vector, enqueues its setup, and hands its steps to
    :meth:`run` (or :meth:`run_restarted`). The solver's base class ends the solve
    (:meth:`finish`).

    At the start: robust norms of b (and x), b and x scaled by powers of 2 when those are far
    from 1, r = b - A x, the thresholds of the criteria per column on the device
    (:class:`StopState`). Then :meth:`run` enqueues iterations (one iteration captured once and
    replayed, see ``Executor.capture``) and reads the stop state every few iterations without
    waiting; a column the device reports converged is confirmed with the true residual
    b - A x (and, if that fails, resumed with it as its residual). Loggers get every
    iteration's residual norms, in order, at each read.

    How it reads the stop state is its read mode (``read_modes.py``), chosen at the start:
    blind, every iteration, iterates, host, asynchronous or collective.

    What a solve keeps in the solver's workspace for the next apply of the same shape and
    value type: its vectors, its stop state and its captured iterations (keyed by the vectors
    they hold). So that the iterations of one apply replay those of the last, a solver applied
    by its user runs on the workspace's b and x (the caller's copied in, one launch each, and x
    copied out at the end); an inner solver (a preconditioner, a smoother) runs on the b and x
    the solver around it gives, the same vectors at every apply (and so does a solve whose
    logger reads the live x).

    Parameters
    ----------
    solver : IterativeSolver
        The solver whose apply this is.
    b, x : Dense
        The right-hand sides and the initial guess, which receives the solution.
    guess : {"provided", "zero", "rhs"} or None, default None
        Where the solve starts: x (None or "provided"), 0 (x is not read; its norm and the
        product A x are skipped) or b.

    Examples
    --------
    >>> def _solve(self, monitor):                 # in a solver
    ...     r = monitor.ws.vector("r")
    ...     monitor.start(r)                       # r = b - A x, the thresholds
    ...     monitor.run(lambda: self._step(r, monitor))
    """

    MAX_INTERVAL = 64    # iterations between two reads at most (StopState keeps 256 in its history)
    READ_PERIOD = 1e-3   # seconds of iterations between two reads at most

    def __init__(self, solver, b: Dense, x: Dense, guess: str | None = None) -> None:
        self.solver = solver
        exec = self.exec = solver.executor
        self.A = solver.system_matrix
        ws = self.ws = solver.workspace(b)
        self.k = k = b.shape[1]
        self.iteration = 0
        self.method = "loop"  # how the solve ran (SolveResult.method)
        self.confirmed_on_device = solver.confirms_on_device
        self._start = time.perf_counter()
        criteria = self.criteria = Combined(solver.criteria)
        self.max_iters, self.time_limit = criteria.max_iters, criteria.time_limit
        loggers = self.loggers = solver.loggers
        self.log_iterations = any(getattr(lg, "wants_iterations", True) for lg in loggers)
        # a logger that reads the live x after every iteration makes the loop run on the caller's x
        # and wait for each iteration. A logger that wants x after every iteration (SciPy's
        # callback(xk)) gets a copy, read one iteration behind the device
        self.needs_solution = any(getattr(lg, "needs_solution", False) for lg in loggers)
        self.sync = self.needs_solution
        # a system over several ranks (gk.distributed) takes every host decision alike on every
        # rank, so that all run the same iterations: reads are due by iteration counts and a
        # time per iteration the ranks agree on, and taken in when due, not when they arrived
        self.collective = self.A.collective_loop
        self.solution_loggers = [lg for lg in loggers if getattr(lg, "wants_solution", False)]
        self.solutions: SolutionReads | None = None  # (made when the loop starts)
        # an inner solver without a residual criterion, a time limit or loggers has nothing to
        # read back: it runs max_iters iterations blind (so the solver around it can capture it)
        self.blind = solver.inner and not (criteria.has_residual_norm or self.time_limit < np.inf or loggers)
        self.reads_each_iteration = False  # an iteration reads from the device itself (not replayable)
        self.stop = ws.get("stop", lambda: StopState(exec, k, b.dtype))
        stop = self.stop
        def into(slot):  # made at the first read: a solve that needs none (a batch of one) makes none
            return ws.get(("read", slot), lambda: [exec.host_array(a.shape, a.dtype)
                                                   for a in (stop.status, stop.checks, stop.history.values)])
        self.reader = StopReader(exec, stop, into, self.log_iterations, self.MAX_INTERVAL, self.READ_PERIOD,
                                 agree=self.A.reduce_max if self.collective else None)
        self.replays: Replays | None = None  # the captured parts of the iteration (at the first one)
        self.zero_guess = guess == "zero"
        self.scale = np.ones(k)
        self.rhs_norm = np.full(k, np.nan)
        # iterations the most lagging column waited for its confirmation; whether ws.norms() holds ||b||
        self.lag, self._rhs_norms_held = 0, False
        self._take_system(b, x, guess)
        if not self.blind:
            self._scale_system()
        self.reads = read_mode(self)  # how the loop reads its stop state (read_modes.py)

    def _take_system(self, b: Dense, x: Dense, guess: str | None) -> None:
        """The b and x the loop runs on (the workspace's for a solver applied by its user, the
        given ones for an inner solver), x set to the initial guess; ``x0``: where the initial
        guess stays (to give back a column that diverges), ``out``: where x goes at the end."""
        self.out = None
        if self.solver.inner or self.needs_solution:
            # the vectors of the solver around it (the same at every apply), or those a logger
            # watches: the loop runs on them
            self.b, self.x = b, x
            if guess == "zero":
                x.fill(0.0)
            elif guess == "rhs":
                x.copy_from(b)
            self.x0 = None
            if not (self.zero_guess or self.blind):
                self.x0 = self.ws.vector("x0")
                self.x0.copy_from(x)
            return
        # the caller's vectors, copied in: the captured iterations hold the workspace's
        ws = self.ws
        self.b, self.x, self.out = ws.vector("b"), ws.vector("x"), x
        self.b.copy_from(b)
        if guess == "zero":
            self.x.fill(0.0)
        else:
            self.x.copy_from(b if guess == "rhs" else x)
        self.x0 = None if self.zero_guess else b if guess == "rhs" else x

    def _scale_system(self) -> None:
        """||b|| and ||x|| without underflow or overflow; b and x scaled by powers of 2 where
        they are far from 1; b = 0 columns get x = 0 (their answer)."""
        exec, ws, b, x = self.exec, self.ws, self.b, self.x
        b_norm = host_norms(exec, b.compute_norm2(ws.norms()))
        if not np.isfinite(b_norm).all():
            raise ValueError(self._not_finite("the right-hand side b", b, "scale the system down"))
        x_norm = np.zeros(self.k) if self.zero_guess else host_norms(exec, x.compute_norm2(ws.norms()))
        if not np.isfinite(x_norm).all():
            raise ValueError(self._not_finite("the initial guess x", x, "start from a smaller x (or x = 0)"))
        self.zero_rhs = b_norm == 0
        self.scale = power_of_two_scale(b_norm, x_norm, b.dtype)
        self.rhs_norm, self._rhs_norms_held = b_norm, self.zero_guess  # (start() reuses ||b|| for r = b)
        if (self.scale != 1).any():
            if self.out is None:  # the caller's b is not to be changed
                self.b = ws.vector("b_scaled")
                self.b.copy_from(b)
            self.b.scale(self.scale)
            x.scale(self.scale)
        if self.zero_rhs.any():
            x.scale(np.where(self.zero_rhs, 0.0, 1.0))
        self.zero_guess = self.zero_guess or bool(self.zero_rhs.all())

    def _not_finite(self, what: str, v: Dense, advice: str) -> str:
        """Why the norm of ``v`` is not finite: NaN or Inf entries, or finite ones too large."""
        if not v.is_finite():
            return f"{what} contains NaN or Inf values"
        return (f"{what} is too large: its norm overflows {real_dtype(v.dtype)} (entries near "
                f"{np.finfo(real_dtype(v.dtype)).max:.1e} or many large ones); {advice}")

    # -- what a solver calls ------------------------------------------------------------------
    def residual(self, r: Dense, x: Dense | None = None) -> Dense:
        """r = b - A x (b and x of the solve as the loop runs it; another x if given)."""
        r.copy_from(self.b)
        self.A.apply(-1.0, self.x if x is None else x, 1.0, r)
        return r

    def check(self, r: Dense) -> None:
        """The stopping check on ||r|| on the device (two launches), for solvers whose steps do
        not compute the norm themselves; nothing when the solve runs blind."""
        if not self.blind:
            rr = self.ws.partials("rr")
            self.exec.run("components.reduction.dots", r, r, None, rr)
            self.A.reduce_sums(rr)
            self.exec.run("components.stop.check", rr, self.stop)

    def start(self, r: Dense) -> None:
        """r = b - A x (no product when x is zero), and the device stopping state from it: the
        thresholds of the criteria per column, b = 0 columns converged at once."""
        k, exec = self.k, self.exec
        self.residual_vector = r
        if self.zero_guess:
            r.copy_from(self.b)
        else:
            self.residual(r)
        status = np.zeros(k, STATUS_DTYPE)
        self.best = BestIterate(exec, self.ws, self.stop, self.x, self.solver.keeps_best_iterate and not self.blind)
        if self.blind:
            self.reader.reset(status, np.full(k, np.nan))
            self.threshold = np.full(k, -1.0)
            self.stop.reset(status, self.threshold, self.max_iters)
            return
        # from x = 0, r = b: its norms are read already (and held in ws.norms(): no x norm was taken)
        held = self._rhs_norms_held and (self.scale == 1).all()
        r_norm = self.rhs_norm.copy() if held else host_norms(exec, r.compute_norm2(self.ws.norms()))
        self.best.start(self.ws.norms(), r_norm)
        scale = self.scale
        with np.errstate(over="ignore"):
            unscaled = r_norm / scale
        if not np.isfinite(unscaled).all():
            raise ValueError(f"the initial residual b - A x overflows {real_dtype(self.solver.dtype)}: A x is too "
                             f"large for the initial guess x (b and x are finite); start from a smaller x (or x = 0)")
        args = CriterionArgs(self.A, self.rhs_norm, unscaled)
        self.threshold = self.criteria.thresholds(args) * scale
        # b = 0: x = 0 is the answer, at once
        r_norm[self.zero_rhs] = 0
        self.initial_norms = r_norm.copy()
        self.reader.reset(np.where(self.zero_rhs, CONVERGED, status), r_norm)
        self.reader.confirmed[:] = self.zero_rhs
        if self._time_up():  # a time limit of 0: no iteration
            met = r_norm <= self.threshold
            host = self.reader.host_status
            self.reader.host_status = np.where(host == RUNNING, np.where(met, CONVERGED, StopReason.TIME_LIMIT), host)
            self.reader.confirmed |= met
        real = real_dtype(self.solver.dtype)
        device_threshold = self.threshold.astype(real)
        # a threshold that rounds up in the real type would let a norm above it pass
        device_threshold = np.where(device_threshold > self.threshold,
                                    np.nextafter(device_threshold, -np.inf, dtype=real), device_threshold)
        self.stop.reset(self.reader.host_status, device_threshold, self.max_iters)

    @property
    def norms(self) -> np.ndarray:
        """The last residual norm per column the host knows (after :meth:`start`: ||r_0||)."""
        return self.reader.norms

    def adopt(self, result: SolveResult) -> None:
        """Take the :class:`~ginkpy.core.stop.solve_result.SolveResult` of a solve made another
        way (the batch of one, :mod:`ginkpy.core.solver.small_system`) as this solve's end."""
        self.method = result.method
        self.reader.checks = result.iterations + 1
        self.reader.norms = result.residual_norm
        self.reader.host_status = result.codes

    # -- the loop ----------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """Whether a column still runs, as far as the host knows."""
        return self.reader.running

    def has_status(self, reason: StopReason) -> bool:
        """Whether a column has the status ``reason``, as far as the host knows."""
        return self.reader.has_status(reason)

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

    def run(self, iteration: Callable, resume: Resume | None = None, steps: Iterator | None = None) -> None:
        """Enqueue iterations until every column stopped (each column stops itself on the
        device at its iteration limit).

        ``iteration()`` enqueues one iteration, a fixed list of launches (no host read, no
        allocation, no branch on device values): captured at its first run, replayed later.
        It ends with the stopping check of its residual, so that after iteration t the check
        of iteration t is recorded with x_t. With ``steps`` (an iterator of per-iteration
        parameters, as Chebyshev's coefficients) each iteration is ``iteration(next(steps))``,
        run itself each time.

        ``resume(columns)`` restarts the columns (a uint8 device mask) that got the true
        residual as their r after a failed confirmation (without it only r is replaced).
        """
        self.reads.start(resume)
        while True:
            while self.running and self.iteration < self.loop_limit:
                if steps is None:
                    self._replay("body", iteration)
                else:
                    iteration(next(steps))
                self.iteration += 1
                self.best.sample(self.iteration)
                self._next(resume)
            if self.running and self.iteration >= self.loop_limit:
                self.exec.run("components.stop.stop_running", self.stop, LIMIT)
            if not self._settle(resume):
                return

    def run_restarted(self, length: int | Callable[[], int], step: Callable[[int, bool], None],
                      rotate: Callable[[int], None], end_cycle: Callable[[int], None],
                      step_key: Callable[[int], Any] | None = None,
                      end_key: Callable[[int], Any] | None = None) -> None:
        """Enqueue restart cycles of at most ``length`` inner iterations until every column
        stopped (Gmres). ``step(j, rotate)`` enqueues inner iteration j, first finishing step
        j - 1 (its Givens rotation) where ``rotate``; ``rotate(j)`` finishes step j alone;
        ``end_cycle(j)`` ends a cycle after inner iteration j (the update of x, the true
        residual, the next cycle's start; the device confirms converged columns there).
        Steps and ends are captured and replayed as :meth:`run`'s iterations, a step by
        ``step_key(j)``: what its launches and their buffers depend on (Gmres reads j from the
        device: (j == 0, j % 2), three captures a solve, not one per j); by j itself where None;
        an end by ``end_key(j)`` (None: one capture). ``length`` may be a function, called (not
        captured) once before each cycle for that cycle's length (Lgmres, Gcrotmk: cycles that
        grow or shrink with their augmentation or recycled vectors)."""
        self.reads.start()
        while True:
            while self.running and self.iteration < self.loop_limit:
                cycle_length = length() if callable(length) else length
                j = self._cycle(cycle_length, step, rotate, step_key or (lambda j: j))
                # (after a break in the cycle, the rotation of step j ran already: again it does nothing)
                if j == cycle_length - 1:
                    self._replay(("end", end_key(j)) if end_key else "end", lambda: end_cycle(j))
                else:  # a cycle cut short (once a solve): where depends on when the host read
                    end_cycle(j)
                self._poll()
            if self.running and self.iteration >= self.loop_limit:
                self.exec.run("components.stop.stop_running", self.stop, LIMIT)
            if not self._settle():
                return

    def _cycle(self, length: int, step, rotate, step_key: Callable[[int], Any]) -> int:
        """The inner iterations of one cycle (step j captured by step_key(j)); returns the last one run."""
        for j in range(length):
            if j > 0 and self.reads_each_iteration:
                # each iteration waits for the host anyway (a host operator): the rotation of step
                # j - 1 and its check first, so that no product follows the last iteration
                rotate(j - 1)
                self._poll()
                if not self.has_status(RUNNING):
                    return j - 1
                step(j, False)
            else:
                self._replay(("step", step_key(j)), lambda j=j: step(j, True))
            self.iteration += 1
            self._next()
            if not self.has_status(RUNNING) or self.iteration >= self.loop_limit:
                return j
        return length - 1

    def _replay(self, key: Any, part: Callable[[], None]) -> None:
        """Run a part of an iteration: captured at its first run (in this apply or an earlier
        one on the same vectors), replayed later."""
        replays = self.replays
        if replays is None:
            replays = self.replays = kept_replays(self.ws, self.exec, (self.blind, self.max_iters), self.b, self.x)
        replays.enqueue(key, part)
        self.reads_each_iteration = replays.reads

    # -- reading the stop state (how: the read mode, read_modes.py) --------------------------
    def _next(self, resume: Resume | None = None) -> None:
        """After enqueueing an iteration: the read mode takes in what arrived and reads when due."""
        self.reads.after_iteration(resume)

    def _poll(self) -> None:
        """At a cycle's end: the read mode reads now where that costs nothing extra."""
        self.reads.poll()

    def _settle(self, resume: Resume | None = None) -> bool:
        """The final read (waited for). True when a column was resumed by a failed confirmation
        and the loop must go on."""
        return self.reads.settle(resume)

    def make_solution_reads(self) -> SolutionReads:
        """The reads of x for the loggers of every iterate (at the first iteration)."""
        return SolutionReads(self.exec, self.ws, self.x, self.solution_loggers)

    def _take_solution(self, read: tuple | None, resume: Resume | None) -> None:
        """Take in a solution read (``SolutionReads``): the stop state, then x to its loggers."""
        if read:
            ran = self.running  # (as the reads before this one tell: else the iteration ran for none)
            self._absorb(read[0], resume)
            if ran:
                self.solutions.emit(self.solver, read, self.scale)

    def _absorb(self, read: Read, resume: Resume | None) -> None:
        """Take in a read of the stop state: confirmations, time limit, logger events."""
        reader = self.reader

        def unconfirmed(status):
            return (status == CONVERGED) & ~reader.confirmed

        status, checks, history = reader.receive(
            read, lambda status: not self.confirmed_on_device and unconfirmed(status).any())
        new = unconfirmed(status)
        if new.any():
            if self.confirmed_on_device:
                reader.confirmed |= new
            else:
                status = self._confirm(new, status, checks, resume)
        reader.merge(status)
        if self.running and self._time_up():
            self.exec.run("components.stop.stop_running", self.stop, StopReason.TIME_LIMIT)
            reader.host_status = np.where(reader.host_status == RUNNING, StopReason.TIME_LIMIT, reader.host_status)
        if history is not None:
            reader.emit(history, self._log_iteration if self.log_iterations else None)

    def _log_iteration(self, iteration: int, norms: np.ndarray, status: np.ndarray) -> None:
        for logger in self.loggers:
            logger.on_iteration_complete(self.solver, iteration, norms / self.scale, status)

    def _time_up(self) -> bool:
        """Whether the time limit has passed (on any rank of a distributed system)."""
        if self.time_limit == np.inf:
            return False
        up = np.array([time.perf_counter() - self._start >= self.time_limit])
        return bool(self.A.reduce_flags(up)[0])

    def _confirm(self, new: np.ndarray, status: np.ndarray, checks: np.ndarray, resume: Resume | None) -> np.ndarray:
        """Check the columns ``new`` (converged on the device) against the true residual; a
        column that fails goes on with the true residual as its r (``resume`` restarts it)."""
        ws, exec, reader = self.ws, self.exec, self.reader
        r_true = self.residual(ws.vector("r_true"))
        true_norms = host_norms(exec, r_true.compute_norm2(ws.norms()))
        ok = new & (true_norms <= self.threshold)
        failed = new & ~ok
        reader.confirmed |= ok
        for c in np.flatnonzero(new):
            reader.replaced[(int(checks[c]) - 1, int(c))] = float(true_norms[c])
        if not failed.any():
            return status
        # on with the true residual as r, unless at the iteration limit
        at_limit = failed & (checks - 1 >= self.max_iters)
        status[failed] = np.where(at_limit[failed], LIMIT, RUNNING)
        device_status = exec.to_host(self.stop.status)
        device_status[failed] = status[failed]
        exec.write(self.stop.status, device_status)
        resumed = failed & ~at_limit
        if resumed.any():
            self.lag = max(self.lag, int((self.iteration - (checks[resumed] - 1)).max()))
            # residual replacement: the true residual goes on as the columns' r
            mask = ws.array("mask", (self.k,), STATUS_DTYPE)
            exec.write(mask, resumed.astype(STATUS_DTYPE))
            exec.run("matrix.dense.copy_columns", r_true, self.residual_vector, mask)
            if resume is not None:
                resume(mask)
        return status

    # -- the end -----------------------------------------------------------------------------
    def finish(self) -> SolveResult:
        """The honest end: a column that did not converge returns the best of its last x, its
        best kept iterate and x0 (x0 also where x is not finite: diverged); then the scaling is
        undone, x copied out, and the loggers told how the solve ended."""
        exec, x, reader = self.exec, self.x, self.reader
        use_x0 = None
        if not self.blind:
            # x may hold NaN or Inf where the residual does not show it (a column of A that is 0):
            # that column diverged
            finite = self._finite_columns(x)
            reader.host_status = np.where(finite, reader.host_status, StopReason.DIVERGED)
            use_x0, reader.norms = self.best.choose(reader.host_status, reader.norms, self.initial_norms,
                                                    self._true_norms, self._finite_columns, finite)
        if (self.scale != 1).any():
            x.scale(1 / self.scale)
        if use_x0 is not None and use_x0.any():
            mask = self.ws.array("mask", (self.k,), STATUS_DTYPE)
            exec.write(mask, use_x0.astype(STATUS_DTYPE))
            exec.run("matrix.dense.copy_columns", self.ws.vector("zeros") if self.x0 is None else self.x0, x, mask)
        if self.out is not None:
            self.out.copy_from(x)
        result = SolveResult(np.maximum(reader.checks - 1, 0), reader.norms / self.scale, reader.host_status,
                             time.perf_counter() - self._start, self.rhs_norm.copy(), self.threshold / self.scale,
                             self.method)
        for logger in self.loggers:
            logger.on_solve_complete(self.solver, result)
        return result

    def _finite_columns(self, x: Dense) -> np.ndarray:
        """Per column: no NaN or Inf entry (one launch and read; the whole x read only where some
        entry is not finite; collective on a distributed system)."""
        if x.is_finite():
            return np.ones(self.k, bool)
        return ~self.A.reduce_flags(~np.isfinite(self.exec.to_host(x.values)).all(axis=0))

    def _true_norms(self, x: Dense) -> np.ndarray:
        """||b - A x|| per column (a blocking read)."""
        r = self.residual(self.ws.vector("r_true"), x)
        return host_norms(self.exec, r.compute_norm2(self.ws.norms()))
