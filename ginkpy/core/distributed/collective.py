"""What the ranks of a distributed solve do together on the host: agree on errors, sum and
combine per-rank values so that every rank gets the same bits, and wait for one another.

Sums over the ranks are allgathered and added in rank order on every rank (not an MPI
allreduce, whose algorithms may add in a different order on different ranks): every rank then
holds identical values, so the stopping checks the solvers make on the device give the same
verdict everywhere. Every wait for other ranks goes through :class:`Collective`, which also
listens for an error another rank reports (:meth:`Collective.report`): a rank that fails in the
middle of a solve makes every other rank raise instead of waiting for it forever.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import time
from typing import Any, Iterator

import numpy as np

ERROR_TAG = 16      # the MPI tag of error reports (HALO_TAG 15: the halo exchange)
ERROR_BYTES = 4096  # the longest error report
GRACE = 2.0         # seconds a rank that learnt of another's error still waits for its exchange


def mpi() -> Any:
    """mpi4py's MPI module, or an ImportError that says how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as err:  # pragma: no cover - depends on the installation
        raise ImportError("gk.distributed needs mpi4py and an MPI library: pip install \"ginkpy[mpi]\" "
                          "(mpi4py and MPICH), then run under mpiexec") from err
    return MPI


def check_comm(comm: Any) -> Any:
    """``comm`` if it is an mpi4py intracommunicator, else a TypeError."""
    MPI = mpi()
    if not isinstance(comm, MPI.Intracomm):
        raise TypeError(f"comm must be an mpi4py communicator (mpi4py.MPI.COMM_WORLD), not {type(comm).__name__}")
    return comm


def raise_together(comm: Any, error: BaseException | str | None, kind: type = ValueError) -> None:
    """Raise on every rank when any rank has an ``error`` (an exception or a message; None: no
    error here), naming the ranks and their messages: bad input stops every rank, none waits for
    the others in a collective call forever. The error type is the first failing rank's when it
    is a ValueError or TypeError, else ``kind``."""
    if isinstance(error, BaseException):
        mine = (type(error).__name__, str(error))
    else:
        mine = None if error is None else (kind.__name__, str(error))
    errors = comm.allgather(mine)
    failed = [(rank, e) for rank, e in enumerate(errors) if e is not None]
    if not failed:
        return
    names = {"ValueError": ValueError, "TypeError": TypeError}
    cls = names.get(failed[0][1][0], kind)
    if len({message for _, (_, message) in failed}) == 1:
        ranks = ", ".join(str(rank) for rank, _ in failed)
        message = f"on rank{'s' if len(failed) > 1 else ''} {ranks}: {failed[0][1][1]}"
    else:
        message = "; ".join(f"on rank {rank}: {message}" for rank, (_, message) in failed)
    if isinstance(error, BaseException):
        raise cls(message) from error
    raise cls(message)


def mixed_value_types_hint(dtypes: list) -> str:
    """What to do when the ranks pass different value types (their numpy type strings): the
    fix for real and complex values mixed across the ranks (complex on some, real on others,
    as when only some ranks' rows have an imaginary part), else nothing."""
    kinds = {np.dtype(t).kind for t in dtypes}
    if "c" in kinds and len(kinds) > 1:
        return (": some ranks pass complex values and others real ones; pass the same dtype on every rank "
                "(dtype=np.complex128 or np.complex64)")
    return ""


def _error_class(name: str, kind: type = RuntimeError) -> type:
    return {"ValueError": ValueError, "TypeError": TypeError}.get(name, kind)


class Collective:
    """What the ranks of one communicator have in flight on the host: the reductions whose
    partial sums are on their way from the device (:meth:`post_pending` sends them once they
    arrived), and the error channel: a receive posted for the report of any rank that failed
    (:meth:`report`), which every wait for other ranks (:meth:`wait`) listens to. One per
    communicator (:meth:`of`).

    Errors belong to a solve: the solves on a communicator are counted alike on every rank
    (:meth:`solve`), and a report of an earlier solve (from ranks that all failed together),
    or one that arrives outside a solve, is dropped.
    """

    _of: dict = {}

    def __init__(self, comm: Any) -> None:
        self.comm = comm
        self.pending: list = []  # reductions whose partial sums are being read (Reduction.post to come)
        self.reductions: dict = {}  # the Reductions made so far (reduction.reduction_of)
        self.solves = 0          # outermost solves started on this communicator
        self.solving = False     # whether one runs
        self._error: Exception | None = None  # the error another rank reported in this solve
        # what the ranks exchanged: reductions (each one Iallgather) and halo exchanges
        self.counters = {"reductions": 0, "exchanges": 0}
        self._buffer = bytearray(ERROR_BYTES)
        self._status = mpi().Status()
        self._listen()
        atexit.register(self._close)  # before mpi4py's MPI_Finalize (registered earlier, run later)

    @classmethod
    def of(cls, comm: Any) -> "Collective":
        """The Collective of ``comm`` (made at the first call on each rank)."""
        key = mpi().Comm.py2f(comm)
        collective = cls._of.get(key)
        if collective is None:
            collective = cls._of[key] = cls(comm)
        return collective

    def _close(self) -> None:
        """Withdraw the receive of error reports, and take those not received (at exit)."""
        MPI = mpi()
        if MPI.Is_finalized():
            return
        if self._request != MPI.REQUEST_NULL:
            self._request.Cancel()
            self._request.Wait()
        # reports of errors that every rank raised at once, never waited for
        while self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=ERROR_TAG):
            self.comm.Recv([self._buffer, MPI.BYTE], source=MPI.ANY_SOURCE, tag=ERROR_TAG)

    def _listen(self) -> None:
        self._request = self.comm.Irecv([self._buffer, mpi().BYTE], source=mpi().ANY_SOURCE, tag=ERROR_TAG)

    def post_pending(self) -> None:
        """Send the partial sums of the reductions started so far (each waits for its read)."""
        while self.pending:
            self.pending.pop(0).post()

    def wait(self, requests: list) -> None:
        """Wait for the MPI ``requests`` to complete. Where a rank reports an error of this
        solve meanwhile (or reported one before), wait GRACE seconds more and raise it unless
        they complete: a rank that failed alone never sends what they wait for, while ranks
        that all fail at once (an error every rank finds) still finish their exchange and raise
        their own error."""
        MPI = mpi()
        requests = [self._request] + list(requests)
        left = sum(r != MPI.REQUEST_NULL for r in requests[1:])
        if self._error is not None and left:
            self._grace(requests[1:])
            return
        while left:
            index = MPI.Request.Waitany(requests, self._status)
            if index != 0:
                left -= 1
                continue
            self._received()
            requests[0] = self._request
            if self._error is not None:
                self._grace(requests[1:])
                return

    def _grace(self, requests: list) -> None:
        """Wait up to GRACE seconds for ``requests``, else raise the error reported."""
        MPI = mpi()
        deadline = time.perf_counter() + GRACE
        while not MPI.Request.Testall(requests):
            if time.perf_counter() > deadline:
                raise self._error
            time.sleep(1e-3)

    def _received(self) -> None:
        """Take in an error report (kept when it is of this solve) and listen again."""
        source, count = self._status.Get_source(), self._status.Get_count(mpi().BYTE)
        solve, name, message = json.loads(bytes(self._buffer[:count]).decode())
        self._listen()
        if self.solving and solve == self.solves and self._error is None:
            self._error = _error_class(name)(f"on rank {source}: {message}")
            self._error.from_other_rank = True

    def report(self, error: BaseException) -> None:
        """Tell every other rank that this one failed with ``error`` (they raise it at their
        next wait for the others)."""
        if self.comm.size == 1:
            return
        text = json.dumps([self.solves, type(error).__name__, f"{type(error).__name__}: {error}"])
        data = text.encode()[:ERROR_BYTES]
        if len(data) < len(text.encode()):  # cut short: keep it valid JSON
            data = json.dumps([self.solves, type(error).__name__, str(error)[:ERROR_BYTES // 2]]).encode()
        for rank in range(self.comm.size):
            if rank != self.comm.rank:
                self.comm.Send([data, mpi().BYTE], dest=rank, tag=ERROR_TAG)

    @contextlib.contextmanager
    def solve(self, outermost: bool) -> Iterator[None]:
        """Around a solve on this communicator: the outermost solve is counted, and an error
        raised in it is reported to the other ranks (not one they reported to this rank)."""
        if not outermost:
            yield
            return
        self.solves += 1
        self.solving, self._error = True, None
        try:
            yield
        except Exception as err:
            if not getattr(err, "from_other_rank", False):
                self.report(err)
            raise
        finally:
            self.solving = False
        if self._error is not None:  # another rank failed after this one's last wait for it
            raise self._error


def wait_for(exec, event: Any) -> None:
    """Wait for a read or write of ``exec`` (``read_async``'s event; None: done). On a GPU the
    host polls the event after handing the queue to the device, as the wait for a reduction or
    a halo exchange is short and on the iteration's critical path; elsewhere (a CPU device,
    whose threads the polling would take) it blocks."""
    if event is None:
        return
    if not exec.device_choices().polls_waits:
        event.wait()
        return
    exec.flush()
    while not exec.read_done(event):
        pass


def sum_over_ranks(comm: Any, values: np.ndarray) -> np.ndarray:
    """The sum of every rank's ``values`` (same shape and value type on every rank; real or
    complex), added in rank order: the same bits on every rank."""
    values = np.ascontiguousarray(values)
    if comm.size == 1:
        return values
    return add_in_rank_order(allgather(comm, values))


def allgather(comm: Any, values: np.ndarray) -> np.ndarray:
    """Every rank's ``values`` (contiguous, the same shape and type on every rank), stacked in
    rank order; waits through :class:`Collective` (an error on another rank raises here)."""
    gathered = np.empty((comm.size,) + values.shape, values.dtype)
    Collective.of(comm).wait([comm.Iallgather(values, gathered)])
    return gathered


def add_in_rank_order(gathered: np.ndarray) -> np.ndarray:
    """gathered[0] + gathered[1] + ... (the same bits on every rank)."""
    total = gathered[0].copy()
    for part in gathered[1:]:
        total += part
    return total


def any_over_ranks(comm: Any, flags: np.ndarray) -> np.ndarray:
    """``flags`` (booleans) or-ed over the ranks."""
    flags = np.asarray(flags, dtype=bool)
    if comm.size == 1:
        return flags
    return sum_over_ranks(comm, flags.astype(np.int32)) > 0


def norm_over_ranks(comm: Any, norms: np.ndarray) -> np.ndarray:
    """The Euclidean norms of vectors split over the ranks from each rank's norms of its part
    (float64, per column): sqrt(sum_r n_r^2) scaled by the largest n_r, so that it neither
    overflows nor underflows where the parts' norms do not; NaN or Inf parts give NaN or Inf."""
    norms = np.asarray(norms, dtype=np.float64)
    if comm.size == 1:
        return norms
    gathered = allgather(comm, np.ascontiguousarray(norms))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        scale = gathered.max(axis=0)
        safe = np.where((scale > 0) & np.isfinite(scale), scale, 1.0)
        combined = safe * np.sqrt(np.sum((gathered / safe) ** 2, axis=0))
        # a NaN or infinite part: the sum of the parts (NaN or Inf) as the norm
        bad = ~np.isfinite(gathered).all(axis=0)
    return np.where(bad, gathered.sum(axis=0), np.where(scale > 0, combined, 0.0))
