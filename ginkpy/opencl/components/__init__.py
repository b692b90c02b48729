"""OpenCL kernels shared by several solvers."""
