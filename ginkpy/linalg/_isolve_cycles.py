"""ginkpy.linalg's lgmres and gcrotmk: SciPy's restarted methods whose ``maxiter`` counts
restart cycles of varying length (``gk.solver.Lgmres``, ``gk.solver.Gcrotmk``)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ginkpy.core.log.logger import Logger
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.linalg._docs import scipy_door
from ginkpy.linalg._isolve import _check_callable, _solve


def _cycles_solve(name: str, A: Any, b: Any, x0: Any, lengths: list[int], *, rtol: float, atol: float, maxiter: int,
                  M: Any, callback: Callable | None, executor: Any, loggers: tuple = (), before: Callable | None = None,
                  **parameters: Any) -> tuple[Any, int]:
    """SciPy's lgmres and gcrotmk count restart cycles: the solve's limit is the steps of
    ``maxiter`` cycles (``lengths``), its info ``maxiter`` where it ends unconverged, and the
    callback sees x0 and the x of each cycle's end."""
    if callback is not None:
        _check_callable(callback)
    steps = int(sum(lengths))
    ends = set(np.cumsum(lengths).tolist())
    observer = None if callback is None else (lambda x, b_norm: _CycleCallback(callback, x, ends))
    x, info = _solve(name, A, b, x0, rtol=rtol, atol=atol, maxiter=steps, M=M, executor=executor,
                     observer=observer, iterations_per_maxiter=1, loggers=loggers, before=before, **parameters)
    return x, maxiter if info == steps else info


def _check_count(value: Any, what: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"{what} must be an integer >= {least}, got {value!r}")
    return int(value)


@scipy_door(
    "Solve A x = b with the loose GMRES method LGMRES(m, k), as ``scipy.sparse.linalg.lgmres``.",
    """Use it for a general square A where restarted :func:`gmres` stalls after each restart:
    each cycle searches along the corrections of the last ``outer_k`` cycles too, which often
    saves many cycles. Runs ``gk.solver.Lgmres`` (flexible GMRES cycles on the device), with M
    left-preconditioned as SciPy's (``preconditioner_side="left"``: each cycle minimizes
    ||M (b - A x)||, the true residual decides); ``outer_v`` carries the augmentation vectors
    (v, M A v) from one solve to the next, as SciPy's.""",
    """
    >>> from ginkpy.linalg import lgmres
    >>> x, info = lgmres(A, b, rtol=1e-8, inner_m=20, outer_k=3)
    >>> x, info = lgmres(A, b, M="ilu", callback=lambda xk: print(np.linalg.norm(b - A @ xk)))
    """,
    own={"maxiter": """maxiter : int, default 1000
    The limit of restart cycles (outer iterations), as SciPy's; info is maxiter where the
    solve ends there unconverged.""",
         "callback": """callback : callable, default None
    Called as ``callback(xk)`` at the start of each restart cycle (x0, then the x of each
    cycle) and with the solution where the solve converged, as SciPy's (the solve reads x from
    the device each step while a callback is given).""",
         "inner_m": """inner_m : int, default 30
    The Krylov steps of each cycle (at most n).""",
         "outer_k": """outer_k : int, default 3
    The corrections of earlier cycles kept and searched along (0: flexible GMRES(inner_m)).""",
         "outer_v": """outer_v : list, default None
    Augmentation vectors (v, A v or None), as SciPy's: the solve starts with them (the newest
    ``outer_k``; A v computed where None) and on return the list holds the ones kept, oldest
    first, normalized (read from and written to the host once a solve).""",
         "store_outer_Av": """store_outer_Av : bool, default True
    As SciPy's, whether ``outer_v`` gets the products A v too (else None: computed again next
    time); the solve itself always keeps them on the device.""",
         "prepend_outer_v": """prepend_outer_v : bool, default False
    As SciPy's: the augmentation steps first in each cycle (``gk.solver.Lgmres``'s
    ``prepend_augmentation``), else after the Krylov steps."""})
def lgmres(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int = 1000,
           M: Any = None, callback: Callable | None = None, inner_m: int = 30, outer_k: int = 3,
           outer_v: list | None = None, store_outer_Av: bool = True, prepend_outer_v: bool = False,
           executor: Any = None) -> tuple[np.ndarray, int]:
    maxiter = _check_count(maxiter, "maxiter", 1)
    inner_m = min(_check_count(inner_m, "inner_m", 1), max(getattr(A, "shape", (inner_m,))[0], 1))
    outer_k = _check_count(outer_k, "outer_k", 0)
    if outer_v is not None and not isinstance(outer_v, list):
        raise TypeError(f"outer_v must be a list (or None), got {type(outer_v).__name__}")
    if not isinstance(prepend_outer_v, (bool, np.bool_)):
        raise ValueError(f"prepend_outer_v must be True or False, got {prepend_outer_v!r}")
    seeded, before = _given(outer_v if outer_k else None, outer_k, "set_augmentation")
    kept = _Kept("augmentation") if outer_v is not None else None
    lengths = [inner_m + min(c, outer_k) for c in range(seeded, seeded + maxiter)]
    x, info = _cycles_solve("lgmres", A, b, x0, lengths, rtol=rtol, atol=atol, maxiter=maxiter, M=M,
                            callback=callback, executor=executor, loggers=(kept,) if kept else (), before=before,
                            restart=inner_m, augmentation_dim=outer_k, prepend_augmentation=prepend_outer_v,
                            **({} if M is None else {"preconditioner_side": "left"}))
    if outer_v is not None:  # SciPy's: the vectors kept, oldest first, each normalized
        Z, W = kept.space
        nz = np.linalg.norm(Z, axis=0)
        outer_v[:] = [(Z[:, i] / nz[i], W[:, i] / nz[i] if store_outer_Av else None) for i in range(Z.shape[1])]
    return x, info


@scipy_door(
    "Solve A x = b with the GCROT(m, k) method, as ``scipy.sparse.linalg.gcrotmk``.",
    """Use it for a general square A where restarted :func:`gmres` stalls and memory for k
    more vector pairs is at hand: each cycle works orthogonally to the k directions that
    reduced the residual in earlier cycles. Runs ``gk.solver.Gcrotmk`` (flexible GMRES cycles
    on the device), right-preconditioned as SciPy's; ``CU`` carries the recycled space from one
    solve to the next, as SciPy's.""",
    """
    >>> from ginkpy.linalg import gcrotmk
    >>> x, info = gcrotmk(A, b, rtol=1e-8, m=20, k=10)
    """,
    own={"maxiter": """maxiter : int, default 1000
    The limit of restart cycles (outer iterations), as SciPy's; info is maxiter where the
    solve ends there unconverged.""",
         "callback": """callback : callable, default None
    Called as ``callback(xk)`` at the start of each restart cycle (x0, then the x of each
    cycle) and with the solution where the solve converged, as SciPy's.""",
         "m": """m : int, default 20
    The Krylov steps of a cycle once k pairs are kept (m + k in the first cycle).""",
         "k": """k : int, default None
    The recycled pairs kept (None: m).""",
         "CU": """CU : list, default None
    Recycled pairs (c, u) (c None: A u computed), as SciPy's: the solve starts from them
    (orthonormalized as SciPy's, x0 first stepping along them) and on return the list holds
    the pairs kept, oldest first, and (None, x), so that passing it to the next solve with the
    same matrix recycles the space (the pairs are read from and written to the host once a
    solve).""",
         "discard_C": """discard_C : bool, default False
    As SciPy's: leave c out of the pairs returned in ``CU`` (A u is computed again next time).""",
         "truncate": """truncate : {"oldest", "smallest"}, default "oldest"
    How a full recycled space makes room: drop the oldest pair, or keep the k - 1
    combinations the last cycle used most (an SVD on the host once a cycle), as SciPy's."""})
def gcrotmk(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int = 1000,
            M: Any = None, callback: Callable | None = None, m: int = 20, k: int | None = None, CU: list | None = None,
            discard_C: bool = False, truncate: str = "oldest", executor: Any = None) -> tuple[np.ndarray, int]:
    maxiter = _check_count(maxiter, "maxiter", 1)
    if truncate not in ("oldest", "smallest"):
        raise ValueError(f"Invalid value for 'truncate': {truncate!r}: use 'oldest' or 'smallest'")
    if CU is not None and not isinstance(CU, list):
        raise TypeError(f"CU must be a list (or None), got {type(CU).__name__}")
    m = min(_check_count(m, "m", 1), max(getattr(A, "shape", (m,))[0], 1))
    k = m if k is None else _check_count(k, "k", 0)
    seeded, before = _given([(u, None if discard_C else c) for c, u in CU] if CU else None, max(k, 1),
                            "set_recycled_space")
    kept = _Kept("recycled_space") if CU is not None else None
    lengths = [m + max(k - min(c, max(k, 1)), 0) for c in range(seeded, seeded + maxiter)]
    x, info = _cycles_solve("gcrotmk", A, b, x0, lengths, rtol=rtol, atol=atol, maxiter=maxiter, M=M,
                            callback=callback, executor=executor, loggers=(kept,) if kept else (), before=before,
                            restart=m, recycle_dim=k, truncate=truncate)
    if CU is not None:  # SciPy's: the pairs kept, oldest first, and the solution
        C, U = kept.space
        CU[:] = [(None if discard_C else C[:, i].copy(), U[:, i].copy()) for i in range(U.shape[1])]
        CU.append((None, x.copy()))
    return x, info


def _given(vectors: list | None, most: int, method: str) -> tuple[int, Callable | None]:
    """SciPy's vectors given to a solve, pairs (v, A v or None) (lgmres' outer_v; gcrotmk's CU as
    (u, c)): how many the solve starts with (the newest ``most``), and what hands them to the
    solver before it runs, ``solver.<method>(V, AV)`` (AV where every A v is given, else None:
    computed on the device)."""
    if not vectors:
        return 0, None
    V = np.stack([np.asarray(v).ravel() for v, _ in vectors], axis=1)
    AV = None if any(av is None for _, av in vectors) else np.stack([np.asarray(av).ravel() for _, av in vectors],
                                                                     axis=1)
    return min(V.shape[1], most), lambda solver, b: getattr(solver, method)(V, AV)


class _Kept(Logger):
    """Takes the solver's kept vectors at the end of a solve: ``solver.<what>()`` (lgmres'
    ``outer_v``: "augmentation", gcrotmk's ``CU``: "recycled_space")."""

    wants_iterations = False
    space = None

    def __init__(self, what: str) -> None:
        self.what = what

    def on_solve_complete(self, solver, result) -> None:
        self.space = getattr(solver, self.what)()


class _CycleCallback(Logger):
    """Calls ``callback(xk)`` with x0 and with x after each restart cycle (the steps ``ends``
    end one) but the last, and with the final x where the solve converged: SciPy's lgmres and
    gcrotmk callback, called at the start of each cycle and where the check passes."""

    wants_solution = True
    wants_iterations = False

    def __init__(self, callback: Callable, x: Dense, ends: set) -> None:
        self.callback, self.x, self.ends = callback, x, ends
        self.reported = -1

    def on_iteration_solution(self, solver, iteration, x) -> None:
        # (x read at step t + 1 is the x of the cycle that ended at step t; at step 1, x0)
        if iteration == 1 or iteration - 1 in self.ends:
            self.reported = iteration - 1
            self.callback(x[:, 0])

    def on_solve_complete(self, solver, result) -> None:
        # the solution, where the solve converged (x0 alone where it took no step); SciPy calls
        # the callback at the start of each cycle, so not with the x of an unconverged last cycle
        if result.num_iterations > self.reported and result.stop_reasons[0] == StopReason.CONVERGED:
            self.reported = result.num_iterations
            self.callback(self.x.to_numpy()[:, 0])
