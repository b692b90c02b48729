"""What the ranks of a distributed solve do together on the host: agree on errors, sum and
combine per-rank values so that every rank gets the same bits.

Sums over the ranks are allgathered and added in rank order on every rank (not an MPI
allreduce, whose algorithms may add in a different order on different ranks): every rank then
holds identical values, so the stopping checks the solvers make on the device give the same
verdict everywhere.
"""
from __future__ import annotations

from typing import Any

import numpy as np


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


def sum_over_ranks(comm: Any, values: np.ndarray) -> np.ndarray:
    """The sum of every rank's ``values`` (same shape and value type on every rank; real or
    complex), added in rank order: the same bits on every rank."""
    values = np.ascontiguousarray(values)
    if comm.size == 1:
        return values
    gathered = np.empty((comm.size,) + values.shape, values.dtype)
    comm.Allgather(values, gathered)
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
    gathered = np.empty((comm.size,) + norms.shape)
    comm.Allgather(np.ascontiguousarray(norms), gathered)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        scale = gathered.max(axis=0)
        safe = np.where((scale > 0) & np.isfinite(scale), scale, 1.0)
        combined = safe * np.sqrt(np.sum((gathered / safe) ** 2, axis=0))
        # a NaN or infinite part: the sum of the parts (NaN or Inf) as the norm
        bad = ~np.isfinite(gathered).all(axis=0)
    return np.where(bad, gathered.sum(axis=0), np.where(scale > 0, combined, 0.0))
