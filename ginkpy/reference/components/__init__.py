"""Reference kernels shared by several solvers."""
