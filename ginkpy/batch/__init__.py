"""Batched solves: many small systems of one sparsity pattern, solved in one launch (Ginkgo's
``gko::batch``): ``gk.batch.matrix.Csr``, ``Ell``, ``Dense``, ``gk.batch.MultiVector``,
``gk.batch.solver.Cg``, ``Bicgstab``, ``Gmres``, ``gk.batch.preconditioner.Jacobi``, ``Ilu``, ``Isai`` and
``gk.batch.log.BatchConvergence``."""
from ginkpy.batch import log, matrix, preconditioner, solver
from ginkpy.core.batch.batch_lin_op import BatchLinOp
from ginkpy.core.batch.multi_vector import MultiVector

__all__ = ["BatchLinOp", "MultiVector", "log", "matrix", "preconditioner", "solver"]
