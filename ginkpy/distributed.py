"""Distributed solves over MPI (mpi4py): row-partitioned matrices and vectors on which the
solvers of ``gk.solver`` run unchanged, one rank per device (Ginkgo's ``experimental::distributed``).

``Partition`` says which rank owns which rows; ``Matrix.from_scipy(exec, comm, rows, partition)``
takes each rank's rows, ``Vector.from_numpy(exec, comm, rows, partition)`` its part of a vector;
``preconditioner.Schwarz`` is additive Schwarz with any local solver. Needs ``pip install "ginkpy[mpi]"``
and a run under ``mpiexec``.
"""
from ginkpy.core.distributed import preconditioner
from ginkpy.core.distributed.matrix import Matrix
from ginkpy.core.distributed.partition import Partition
from ginkpy.core.distributed.vector import Vector

__all__ = ["Matrix", "Partition", "Vector", "preconditioner"]
