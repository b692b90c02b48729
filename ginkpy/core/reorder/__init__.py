"""Reorderings (Ginkgo's experimental::reorder): ``generate(A)`` gives a gk.matrix.Permutation."""
