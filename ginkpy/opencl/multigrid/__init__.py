"""OpenCL kernels of the multigrid levels."""
