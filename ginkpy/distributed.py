"""Distributed solves over MPI (mpi4py): row-partitioned matrices and vectors on which the
solvers of ``gk.solver`` run unchanged, one rank per device (Ginkgo's ``experimental::distributed``).

``Partition`` says which rank owns which rows; ``Matrix.from_scipy(exec, comm, rows, partition)``
takes each rank's rows, ``Vector.from_numpy(exec, comm, rows, partition)`` its part of a vector;
``preconditioner.Schwarz`` is additive Schwarz with any local solver; ``executor_for_rank`` gives
each rank its device. Needs ``pip install "ginkpy[mpi]"`` and a run under ``mpiexec``.
"""
import os
from typing import Any

from ginkpy.core.base.executor import Executor, executor
from ginkpy.core.distributed import preconditioner
from ginkpy.core.distributed.collective import check_comm, mpi
from ginkpy.core.distributed.matrix import Matrix
from ginkpy.core.distributed.partition import Partition
from ginkpy.core.distributed.vector import Vector

__all__ = ["Matrix", "Partition", "Vector", "executor_for_rank", "preconditioner"]


def executor_for_rank(comm: Any, name: str = "opencl") -> Executor:
    """This rank's executor: ``"reference"``, or for ``"opencl"`` one device per rank: entry
    r mod m of ``GINKPY_RANK_DEVICES`` (m ``<platform>:<device>`` specs, comma-separated) for the
    node-local rank r; else ``GINKPY_OPENCL_DEVICE`` (every rank on that device); else the node's
    GPUs, node-local rank modulo their count; else the default OpenCL device. Collective.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator; every rank of it calls this.
    name : {"opencl", "reference"}, default "opencl"
        The kind of executor.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> exe = gk.distributed.executor_for_rank(MPI.COMM_WORLD)      # one GPU per rank
    >>> exe.info.name
    """
    check_comm(comm)
    local_rank = comm.Split_type(mpi().COMM_TYPE_SHARED).rank
    if name == "reference":
        return executor("reference")
    if name != "opencl":
        raise ValueError(f"executor_for_rank takes 'reference' or 'opencl', not {name!r}")
    from ginkpy.opencl.devices import gpu_specs
    specs = [s.strip() for s in os.environ.get("GINKPY_RANK_DEVICES", "").split(",") if s.strip()]
    if not specs and not os.environ.get("GINKPY_OPENCL_DEVICE"):
        specs = gpu_specs()
    return executor(f"opencl:{specs[local_rank % len(specs)]}" if specs else "opencl")
