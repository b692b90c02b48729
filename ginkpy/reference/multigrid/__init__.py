"""Reference kernels of the multigrid levels."""
