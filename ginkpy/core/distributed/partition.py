"""Partition: which rank owns which rows of a distributed matrix or vector (Ginkgo's
``experimental::distributed::Partition``), as contiguous ranges in rank order: rank r owns the
global rows ``offsets[r] .. offsets[r + 1] - 1`` (none when the two are equal).

A partition is a plain host object, the same on every rank; building one from per-rank sizes
needs the communicator (each rank knows only its own).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.executor import executor
from ginkpy.core.distributed.collective import check_comm, raise_together


class Partition:
    """Contiguous row ranges per rank (Ginkgo's ``experimental::distributed::Partition``): rank
    r owns rows offsets[r] .. offsets[r + 1] - 1 of the distributed matrices and vectors.

    Use :meth:`uniform` for rows split evenly, or give the offsets where the ranks' shares
    should differ (a faster device taking more rows).

    Parameters
    ----------
    offsets : array of int
        num_parts + 1 nondecreasing integers from 0 to N.

    Examples
    --------
    >>> partition = gk.distributed.Partition.uniform(1000, comm)
    >>> first, end = partition.range(comm.rank)
    >>> gk.distributed.Partition([0, 600, 1000])        # two ranks, uneven
    """

    def __init__(self, offsets: Any) -> None:
        offsets = np.asarray(offsets)
        if offsets.ndim != 1 or offsets.size < 2 or offsets.dtype.kind not in "iu":
            raise ValueError(f"a Partition needs offsets [0, o_1, ..., n] (one more than the ranks, integers), "
                             f"got {offsets!r}")
        offsets = offsets.astype(np.int64)
        if offsets[0] != 0 or (np.diff(offsets) < 0).any():
            raise ValueError(f"Partition offsets must start at 0 and never decrease (rank r owns rows "
                             f"offsets[r] .. offsets[r + 1] - 1), got {offsets.tolist()}")
        self.offsets = offsets
        self.offsets.flags.writeable = False

    # -- creation ----------------------------------------------------------------------------
    @classmethod
    def from_local_sizes(cls, comm: Any, local_size: int) -> "Partition":
        """Each rank owns ``local_size`` rows, the ranks in order (collective: every rank calls it)."""
        check_comm(comm)
        error = None
        if isinstance(local_size, bool) or not isinstance(local_size, (int, np.integer)) or local_size < 0:
            error = f"local_size must be an integer >= 0, got {local_size!r}"
        raise_together(comm, error)
        sizes = comm.allgather(int(local_size))
        return cls(np.concatenate([[0], np.cumsum(sizes)]))

    @classmethod
    def uniform(cls, n: int, comm_or_parts: Any) -> "Partition":
        """n rows split as evenly as possible over the ranks of a communicator (or a number of
        parts): the first n mod p ranks own one row more."""
        parts = comm_or_parts if isinstance(comm_or_parts, (int, np.integer)) else check_comm(comm_or_parts).size
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"Partition.uniform needs a number of rows n >= 0, got {n!r}")
        if parts < 1:
            raise ValueError(f"Partition.uniform needs at least one part, got {parts}")
        sizes = np.full(parts, n // parts, np.int64)
        sizes[: n % parts] += 1
        return cls(np.concatenate([[0], np.cumsum(sizes)]))

    @classmethod
    def from_mapping(cls, mapping: Any, num_parts: int) -> "Partition":
        """From a row-to-rank map (``mapping[i]`` the rank of row i), whose ranks never decrease
        along the rows: each rank's rows are one contiguous range, in rank order."""
        mapping = np.asarray(mapping)
        if mapping.ndim != 1 or (mapping.size and mapping.dtype.kind not in "iu"):
            raise ValueError("a row-to-rank mapping is a 1-D integer array (mapping[i] = the rank of row i)")
        if isinstance(num_parts, bool) or not isinstance(num_parts, (int, np.integer)) or num_parts < 1:
            raise ValueError(f"num_parts must be an integer >= 1, got {num_parts!r}")
        offsets, error = executor("reference").host.run("distributed.partition.build_from_mapping", mapping,
                                                        int(num_parts))
        if error:
            raise ValueError(f"Partition.from_mapping: {error}")
        return cls(offsets)

    # -- queries -----------------------------------------------------------------------------
    @property
    def num_parts(self) -> int:
        """The number of ranks."""
        return self.offsets.size - 1

    @property
    def global_size(self) -> int:
        """The number of rows of all ranks together."""
        return int(self.offsets[-1])

    def range(self, rank: int) -> tuple[int, int]:
        """(first, end): the rows ``first .. end - 1`` that ``rank`` owns."""
        if not 0 <= rank < self.num_parts:
            raise ValueError(f"rank {rank} is not in this partition of {self.num_parts} ranks")
        return int(self.offsets[rank]), int(self.offsets[rank + 1])

    def local_size(self, rank: int) -> int:
        """The number of rows ``rank`` owns."""
        first, end = self.range(rank)
        return end - first

    def owners(self, rows: Any) -> np.ndarray:
        """The rank owning each of the global ``rows`` (int array)."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= self.global_size):
            raise ValueError(f"rows must be in 0 .. {self.global_size - 1}")
        return executor("reference").host.run("distributed.partition.find_owners", self.offsets, rows)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Partition) and np.array_equal(self.offsets, other.offsets)

    def __hash__(self) -> int:
        return hash(self.offsets.tobytes())

    def __repr__(self) -> str:
        sizes = np.diff(self.offsets).tolist()
        shown = sizes if len(sizes) <= 8 else sizes[:8] + ["..."]
        return f"Partition({self.global_size} rows, {self.num_parts} ranks, sizes {shown})"
