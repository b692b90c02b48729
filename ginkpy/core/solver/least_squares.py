"""What Lsqr and Lsmr share: the parameters of a least-squares solve (damp, atol, btol,
conlim, the iteration limit), A^H made once at generate, the Golub-Kahan bidiagonalization's
vectors and the loop that enqueues iterations and polls the stop status asynchronously.

Both methods (Paige and Saunders' LSQR, Fong and Saunders' LSMR, as SciPy's ``lsqr`` and
``lsmr``) minimize ||b - A x||^2 + damp^2 ||x - x0||^2 for a rectangular m x n A. Their
iterations start with the same bidiagonalization step (Golub and Kahan)::

    beta u = A v - alpha u          (u: m rows)
    alpha v = A^H u - beta v        (v: n rows)

and then update x by recurrences in real scalars (rotations, norm and condition estimates,
SciPy's stopping tests) that one work-item per column computes on the device: an iteration
is a fixed list of launches with no host read, captured once and replayed. Each column's
``istop`` (SciPy's meaning, 0 to 7) and the scalar estimates live in a real ``state`` array
on the device (rows x k: one row per quantity, see ``LSQR_ROWS`` / ``LSMR_ROWS``); its
status (0 running, 1 stopped) is read back every few iterations without waiting, and the
state once at the end (:meth:`LeastSquaresSolver.result`).

The square-system machinery (residual norm criteria confirmed with the true residual,
loggers, the CLI's ``--solver`` and ``gk.linalg.Solver``, whose systems are square) does not
apply: these solvers are reached through ``gk.solver`` (and so Ginkgo's JSON configuration can
name them, ``solver::Lsqr``, as any gk.solver type) and ``gk.linalg.lsqr`` / ``lsmr``.
"""
from __future__ import annotations

import threading
import time
from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, integer, number, one_of, parameters, variadic
from ginkpy.core.base.factory import Parameters as BaseParameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.loop.replays import Replays
from ginkpy.core.solver.workspace import Workspace
from ginkpy.core.stop.criterion import as_criterion_factory
from ginkpy.core.stop.iteration import Iteration

# rows of the state both methods share: the bidiagonalization's alpha (A^H u - beta v = alpha v),
# then istop and the iteration count of each column
ALPHA, ISTOP, ITN = 0, 1, 2
MAX_INTERVAL = 32   # iterations between two reads of the stop status at most
READ_PERIOD = 1e-3  # seconds of iterations between two reads at most


def adjoint(A: LinOp, who: str) -> LinOp:
    """A^H (A^T for real values), formed once: ``conj_transpose()`` (a device copy of a Csr),
    else ``transpose()`` for real values; a TypeError naming what is missing otherwise."""
    if hasattr(A, "conj_transpose"):
        return A.conj_transpose()
    if A.dtype.kind != "c" and hasattr(A, "transpose"):
        return A.transpose()
    raise TypeError(f"{who} needs A^H (products by the adjoint of A), and {type(A).__name__} has no "
                    f"conj_transpose(): give a gk.matrix.Csr (or a SciPy LinearOperator with rmatvec through "
                    f"gk.linalg.{who.lower()})")


class LeastSquaresSolver(EnableBuild, LinOp):
    """Base of :class:`~ginkpy.core.solver.lsqr.Lsqr` and :class:`~ginkpy.core.solver.lsmr.Lsmr`:
    a LinOp of shape n x m (A's transposed shape) whose ``apply(b, x)`` computes the
    least-squares solution of A x = b from x (the correction from x minimizes the damped
    problem). Not used itself.

    Parameters
    ----------
    (set with ``with_<name>`` on ``Lsqr.build()`` / ``Lsmr.build()``)
    damp : float, default 0.0
        The damping: minimize ||b - A x||^2 + damp^2 ||x - x0||^2 (Tikhonov regularization).
    atol, btol : float, default 1e-6
        SciPy's stopping tolerances: stop where ||r|| <= btol ||b|| + atol ||A|| ||x|| (istop 1)
        or ||A^H r|| <= atol ||A|| ||r|| (istop 2); 0 stops on machine precision (4, 5).
    conlim : float, default 1e8
        Stop where the estimate of cond(A) exceeds it (istop 3); 0: 1/eps (istop 6).
    max_iters : int, default None
        The iteration limit (istop 7); None: SciPy's default (Lsqr 2 n, Lsmr min(m, n)).
    criteria : gk.stop.Iteration, default none
        Another way to give the iteration limit (Ginkgo style); the smallest limit wins.
        Residual norm criteria do not apply (use atol and btol).
    default_initial_guess : {"provided", "zero"}, default "provided"
        Where each apply starts: the given x (SciPy's x0) or 0.
    """

    @parameters
    class Parameters(BaseParameters):
        damp: float = attrs.field(default=0.0, validator=number(min=0.0))
        atol: float = attrs.field(default=1e-6, validator=number(min=0.0))
        btol: float = attrs.field(default=1e-6, validator=number(min=0.0))
        conlim: float = attrs.field(default=1e8, validator=number(min=0.0, allow_inf=True))
        max_iters: int | None = attrs.field(default=None, validator=integer(min=0, optional=True))
        criteria: tuple = variadic()
        default_initial_guess: str = attrs.field(default="provided", validator=one_of("provided", "zero"))

    ROWS = 3           # rows of the state (set by each method)
    RESULTS: dict = {}  # result name -> state row (set by each method)

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        name = type(self).__name__
        if not isinstance(system_matrix, LinOp):
            raise TypeError(f"{name} is generated on a ginkpy LinOp (gk.matrix.Csr.from_scipy(exec, S)), "
                            f"not {type(system_matrix).__name__}")
        exec.check_dtype(system_matrix.dtype)
        A = system_matrix.to_executor(exec)
        if hasattr(A, "is_finite") and not A.is_finite():
            raise ValueError(f"the matrix A of {name} contains NaN or Inf values")
        m, n = A.shape
        LinOp.__init__(self, exec, (n, m), A.dtype)
        self.system_matrix = A
        self.system_matrix_adjoint = adjoint(A, name)
        self.max_iters = self._iteration_limit(exec)
        self._workspace: Workspace | None = None
        self._state: Dense | None = None
        self._lock = threading.Lock()

    def _iteration_limit(self, exec) -> int:
        """The smallest of max_iters (SciPy's default where None) and the Iteration criteria."""
        limits = [self.parameters.max_iters if self.parameters.max_iters is not None else self.default_max_iters()]
        for value in self.parameters.criteria:
            factory = as_criterion_factory(value, exec)
            if factory.parameters.product is not Iteration:
                raise ValueError(f"{type(self).__name__} stops on its own tests (SciPy's istop): give with_atol, "
                                 f"with_btol, with_conlim and with_max_iters (or gk.stop.Iteration), not "
                                 f"{factory.parameters.product.__name__}")
            if factory.parameters.max_iters is None:
                raise ValueError("Iteration needs with_max_iters(N) with an integer N >= 0")
            limits.append(factory.parameters.max_iters)
        return int(min(limits))

    def default_max_iters(self) -> int:
        """SciPy's iteration limit where none is given."""
        raise NotImplementedError

    # -- apply -------------------------------------------------------------------------------
    def _apply_impl(self, b: Dense, x: Dense) -> None:
        self._run(b, x, self.parameters.default_initial_guess == "zero")

    def apply_with_initial_guess(self, b: Dense, x: Dense, zero_guess: bool) -> Dense:
        """Solve from x, or from 0 where ``zero_guess`` (x is then not read); returns x."""
        self._check_operands(b, x)
        exec = self.executor
        b_local, x_local = b.to_executor(exec), x.to_executor(exec)
        self._run(b_local, x_local, zero_guess)
        if x_local is not x:
            x.copy_from(x_local)
        return x

    def _run(self, b: Dense, x: Dense, zero_guess: bool) -> None:
        if b.shape[1] == 0:
            return
        for what, v in (("b", b), ("x", x)):
            if not zero_guess or what == "b":
                if not v.is_finite():
                    raise ValueError(f"{what} contains NaN or Inf values")
        with self._lock:
            ws = self._workspace
            if ws is None or ws.shape != b.shape or ws.dtype != b.dtype:
                ws = self._workspace = Workspace(self.executor, b)
            self._solve(ws, b, x, zero_guess)

    def _start(self, ws: Workspace, b: Dense, x: Dense, zero_guess: bool) -> tuple:
        """The workspace's vectors set up for a solve: b and x copied in, u = b - A x, the stop
        status running, the state zero. Returns (b, x, u, v, Av, Atu, bb, uu, vv, state, status)."""
        exec, A = self.executor, self.system_matrix
        (m, n), k = A.shape, b.shape[1]
        b_ws, u, Av = ws.vectors("b", "u", "Av")
        x_ws, v, Atu = (ws.vector(name, rows=n) for name in ("x", "v", "Atu"))
        bb, uu, vv = ws.scalars("bb", "uu", "vv")
        state = ws.get("state", lambda: Dense(exec, exec.alloc((self.ROWS, k), real_dtype(b.dtype))))
        status = ws.array("status", (k,), np.uint8)
        exec.write(status, np.zeros(k, np.uint8))
        state.fill(0.0)
        b_ws.copy_from(b)
        # u = b - A x
        u.copy_from(b_ws)
        if zero_guess:
            x_ws.fill(0.0)
        else:
            x_ws.copy_from(x)
            if m and n:
                A.apply(-1.0, x_ws, 1.0, u)
        b_ws.compute_conj_dot(b_ws, bb)
        # beta = ||u||, u = u / beta;  v = A^H u / beta (v = 0 first: the step of an iteration)
        v.fill(0.0)
        u.compute_conj_dot(u, uu)
        self._bidiagonalize_v(u, v, Atu, uu, status)
        v.compute_conj_dot(v, vv)
        self._state = state
        return b_ws, x_ws, u, v, Av, Atu, bb, uu, vv, state, status

    def _bidiagonalize_v(self, u: Dense, v: Dense, Atu: Dense, uu: Dense, status: Any) -> None:
        # Atu = A^H u;  beta = sqrt(u . u);  where beta > 0: u = u / beta, v = Atu / beta - beta v
        self.system_matrix_adjoint.apply(u, Atu)
        self.executor.run("components.golub_kahan.bidiagonalize_v", u, v, Atu, uu, status)

    def _bidiagonalize(self, u: Dense, v: Dense, Av: Dense, Atu: Dense, uu: Dense, vv: Dense, state: Dense,
                       status: Any) -> None:
        """One step of the bidiagonalization in the running columns: beta u = A v - alpha u,
        alpha v = A^H u - beta v (v left unscaled: the method's step divides by alpha); uu and
        vv get the squared norms."""
        # Av = A v;  u = Av - alpha u;  uu = u . u
        self.system_matrix.apply(v, Av)
        self.executor.run("components.golub_kahan.bidiagonalize_u", Av, u, state, status)
        u.compute_conj_dot(u, uu)
        self._bidiagonalize_v(u, v, Atu, uu, status)
        v.compute_conj_dot(v, vv)

    def _loop(self, ws: Workspace, iteration, status: Any) -> None:
        """Enqueue iterations until every column stopped: the device stops each column itself
        (at the latest at its iteration limit). The host reads the status without waiting,
        every few iterations (the interval doubles up to MAX_INTERVAL, or what READ_PERIOD
        seconds of iterations take), and takes a read in at the next one; on the host the
        status is known at once."""
        exec = self.executor
        host = ws.get("status_host", lambda: exec.host_array(status.shape, np.uint8))
        replays = ws.get("replays", lambda: Replays(exec))
        pending, interval, next_read = None, 1, 1
        last = (time.perf_counter(), 0)
        for it in range(1, self.max_iters + 1):
            if exec.none_running(status):
                return
            replays.enqueue("body", iteration)
            if it < next_read:
                continue
            exec.flush()
            if pending is not None:
                if pending is not True:
                    pending.wait()
                if host.all():
                    return
            # the status after iteration it, on its way to the host
            pending = exec.read_async([status], [host]) or True
            now = time.perf_counter()
            per_iteration = (now - last[0]) / max(it - last[1], 1)
            last = (now, it)
            interval = min(2 * interval, MAX_INTERVAL, max(1, int(READ_PERIOD / max(per_iteration, 1e-9))))
            next_read = it + interval

    def _finish(self, x_ws: Dense, x: Dense) -> None:
        """x copied out to the caller's vector."""
        if x_ws is not x:
            x.copy_from(x_ws)

    def result(self) -> dict:
        """SciPy's diagnostics of the last apply, per column: ``istop`` and ``itn`` (int arrays)
        and the method's norm estimates (float arrays of k values; Lsqr's ``var`` n x k), as
        :func:`ginkpy.linalg.lsqr` / ``lsmr`` return them. Empty before the first apply.

        Examples
        --------
        >>> solver.apply(b, x)
        >>> solver.result()["istop"]     # array([1]): ||b - A x|| small enough, given atol, btol
        """
        if self._state is None:
            return {}
        state = self.executor.to_host(self._state.values).astype(np.float64)
        out = {name: state[row].copy() for name, row in self.RESULTS.items()}
        out["istop"] = state[ISTOP].astype(np.int64)
        out["itn"] = state[ITN].astype(np.int64)
        return out

    def _solve(self, ws: Workspace, b: Dense, x: Dense, zero_guess: bool) -> None:
        raise NotImplementedError
