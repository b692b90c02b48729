"""Kernels that several solvers or formats share (Ginkgo's core/components): reductions into
partial sums and the device side of the stopping check. Their kernels are
``ginkpy/<backend>/components/*_kernels.py``."""
