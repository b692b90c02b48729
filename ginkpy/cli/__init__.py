"""The ``ginkpy`` command line, also run as ``python -m ginkpy``:

    ginkpy solve A.mtx [--rhs b.mtx] [--solver auto] [--preconditioner auto] [--executor opencl]
                       [--dtype float64] [--rtol 1e-8] [--max-iters N] [--krylov-dim K]
                       [--config solver.json] [--out x.mtx] [--plot c.png] [--profile]
                       (--preconditioner amg: algebraic multigrid; its hierarchy is printed;
                        jacobi is scalar Jacobi, block_jacobi Ginkgo's block-Jacobi;
                        --solver cb_gmres [--storage-precision reduce1|reduce2|keep]: GMRES with
                        the Krylov basis stored in float32 or float16)
    ginkpy info A.mtx
    ginkpy devices

``solve`` exits with 0 when every right-hand side converged, 1 when not, 2 on bad input. Its
summary says which solver and preconditioner ran and why, how each right-hand side ended and, when one did not
converge, the likely cause and what to try. On an OpenCL device the kernels are compiled (or
loaded from the disk cache) in a short warm-up solve first, so that the setup and solve times
are those of the work alone; the compile time is reported apart.

One module per part: ``command_line`` (the parser, :func:`main`), ``solve_command`` with
``solver_options``, ``auto_choice``, ``timed_solve``, ``direct_solve``, ``files``, ``progress``
and ``summary``; ``info_command``; ``devices_command``.
"""
from ginkpy.cli.command_line import main
from ginkpy.cli.info_command import info, matrix_info
from ginkpy.cli.progress import Progress
from ginkpy.cli.solve_command import solve

__all__ = ["Progress", "info", "main", "matrix_info", "solve"]
