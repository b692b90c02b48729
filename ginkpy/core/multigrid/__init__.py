"""Multigrid levels: the coarsening of a matrix and its restriction and prolongation."""
