"""OpenCL ILU(0): the factorization runs on the host (the reference algorithm) at generate();
the factors are copied to the device, where the preconditioner applies them."""
from ginkpy.reference.factorization.ilu_kernels import factorize

__all__ = ["factorize"]
