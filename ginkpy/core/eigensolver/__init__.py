"""Eigensolvers: :class:`~ginkpy.core.eigensolver.lobpcg.Lobpcg`."""
