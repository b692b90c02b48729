"""What the reorderings share: ``Type.build().on(exec).generate(A)`` gives a
:class:`~ginkpy.core.matrix.permutation.Permutation` (Ginkgo's experimental reorder interface,
where the factory generates the permutation itself).

An ordering is a graph algorithm, sequential by nature: it runs on the host through
``exec.host.run`` (vectorized numpy, one step per level or round, never a loop over rows) on
every executor, and its index array is then copied to the executor. ``mode`` says how the
permutation is meant to be applied (``gk.matrix.permute``): ``"symmetric"`` (P A P^T) for the
fill and bandwidth reducing orderings, ``"rows"`` (P A) for Mc64.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.factory import EnableBuild, Factory
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.checks import system_csr
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.permutation import Permutation


class Reordering(EnableBuild):
    """Base of the reorderings; a subclass implements :meth:`_compute` (the host index array)."""

    mode = "symmetric"

    def __new__(cls, factory: Factory, system_matrix: LinOp) -> Permutation:  # type: ignore[misc]
        # the factory's product is the permutation itself, as in Ginkgo's reorder interface
        exec = factory.executor
        A = system_csr(system_matrix, exec, cls.__name__)
        host = exec.host
        perm = cls._compute(host, A.to_executor(host), factory.parameters)
        return Permutation(exec, exec.from_host(np.asarray(perm, np.int32)))

    @classmethod
    def _compute(cls, host: Executor, A: Csr, parameters) -> np.ndarray:
        raise NotImplementedError
