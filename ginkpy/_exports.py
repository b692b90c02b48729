"""The public names of ginkpy's namespaces (``gk.solver``, ``gk.matrix``, ...), in one table.

Each namespace module reads its names from here with one call (:func:`face_attributes`), and
each name loads its module at its first use (``core/base/lazy.py``), so that ``import ginkpy``
stays fast (issue 33: at most 0.15 s on two cores) and ``dir()``, ``__all__`` and tab completion
list every name before any is loaded.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from ginkpy.core.base.lazy import lazy_attributes

# the names of each namespace ginkpy.<face>: a name is defined in the module
# ginkpy.core.<face>.<the name in snake case> (LowerTrs: ginkpy.core.solver.lower_trs) unless
# ELSEWHERE names another module of ginkpy.core.<face>
FACES = {
    "factorization": "Cholesky Ic Ilu Ilut Lu ParIc ParIct ParIlu ParIlut",
    "log": "Convergence Logger ProfilerHook SolveResult SolverProgress Stream",
    "matrix": "Coo Csr Dense Ell Hybrid Identity Permutation Sellp permute",
    "multigrid": "Pgm",
    "preconditioner": "GaussSeidel GeneralIsai Ic Ilu Isai Jacobi LowerIsai Sor SpdIsai UpperIsai",
    "solver": ("Bicg Bicgstab CbGmres Cg Cgs Chebyshev Direct Fcg Gcr Gcrotmk Gmres Idr Ir Lgmres LowerTrs "
               "Lsmr Lsqr Minres Multigrid PipeCg Qmr ScaledReordered Tfqmr UpperTrs"),
    "stop": "ImplicitResidualNorm Iteration ResidualNorm StopReason Time",
}

# "<face>.<name>": the module of ginkpy.core.<face> that defines a name not named after it
ELSEWHERE = {
    "log.SolveResult": "logger",
    "matrix.permute": "permutation",
    "preconditioner.GeneralIsai": "isai",
    "preconditioner.LowerIsai": "isai",
    "preconditioner.SpdIsai": "isai",
    "preconditioner.UpperIsai": "isai",
    "stop.ImplicitResidualNorm": "residual_norm",
    "stop.StopReason": "stopping_status",
}


def snake_case(name: str) -> str:
    """``name`` in snake case, the module name of a concept (``LowerTrs`` -> ``lower_trs``)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def exports(face: str) -> dict[str, str]:
    """Each public name of ``ginkpy.<face>`` mapped to the module that defines it.

    Parameters
    ----------
    face : str
        A key of ``FACES`` (``"solver"``).

    Returns
    -------
    dict of str to str
        ``{"Cg": "ginkpy.core.solver.cg", ...}``, as ``lazy_attributes`` takes it.

    Examples
    --------
    >>> exports("stop")["StopReason"]
    'ginkpy.core.stop.stopping_status'
    """
    return {name: f"ginkpy.core.{face}.{ELSEWHERE.get(f'{face}.{name}', snake_case(name))}"
            for name in FACES[face].split()}


def face_attributes(namespace: dict) -> tuple[Callable[[str], Any], Callable[[], list], list[str]]:
    """A namespace module's ``__getattr__``, ``__dir__`` and ``__all__``, from its row of ``FACES``.

    Parameters
    ----------
    namespace : dict
        The namespace module's ``globals()`` (its ``__name__`` is ``ginkpy.<face>``).

    Returns
    -------
    tuple
        ``(__getattr__, __dir__, __all__)``, to assign at the module's top level.

    Examples
    --------
    >>> __getattr__, __dir__, __all__ = face_attributes(globals())     # in ginkpy/solver.py
    """
    names = exports(namespace["__name__"].rpartition(".")[2])
    return (*lazy_attributes(namespace, names), sorted(names))
