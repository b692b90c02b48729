"""What :mod:`ginkpy.linalg`'s functions and :class:`~ginkpy.linalg.Solver` make of SciPy's ``M``:
a ginkpy preconditioner from a name (``M="ilu"``), ``(name, options)``, ginkpy parameters or
a factory, or an operator (a SciPy operator or matrix, a ginkpy LinOp) applied as M r."""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.config import Preset, short_names, with_options
from ginkpy.core.base.executor import Executor
from ginkpy.core.base.factory import Factory, Parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.linalg._interface import ScipyOperator, as_linop


def preconditioner(M: Any, A: LinOp, exec: Executor, dtype: np.dtype) -> Any:
    """The solver's preconditioner parameter from any form of SciPy's ``M`` or a ginkpy one."""
    if M is None:
        return None
    if isinstance(M, str) or (isinstance(M, tuple) and len(M) == 2 and isinstance(M[0], str)):
        return named_preconditioner(*((M, {}) if isinstance(M, str) else M), A)
    if isinstance(M, (Parameters, Factory)):
        return M
    M = as_linop(M, exec, dtype, "M")
    if M.shape != A.shape:
        raise ValueError(f"M is {M.shape[0]} x {M.shape[1]} but A is {A.shape[0]} x {A.shape[1]}: M must be "
                         f"an approximate inverse of A of the same shape")
    if hasattr(M, "is_finite") and not M.is_finite():
        raise ValueError("M contains NaN or Inf values")
    return M


def named_preconditioner(name: str, options: Any, A: LinOp) -> Any:
    """The parameters of the preconditioner named ``name`` (``M="ilu"``), with ``options`` (a
    dict: ``M=("ilut", {"drop_tol": 1e-5})``), a preset's keywords or ``with_`` parameters."""
    names = short_names("preconditioner")
    key = name.lower()
    if key == "none" and not options:
        return None
    if key not in names:
        raise ValueError(f"unknown preconditioner {name!r}: use one of {', '.join([*sorted(names), 'none'])}")
    if not isinstance(options, dict):
        raise TypeError(f"M=({name!r}, options): options must be a dict of parameters, not {type(options).__name__}")
    if isinstance(A, ScipyOperator):
        raise ValueError(f"M={name!r} is built from the entries of A, which a LinearOperator does not "
                         f"expose: pass A as a sparse matrix or array, or M as an operator")
    try:
        return names[key].build(**options) if isinstance(names[key], Preset) else \
            with_options(names[key].build(), options)
    except ValueError as err:
        if "has no parameter" not in str(err):
            raise
        # where another name takes the key (M=("ilu", {"drop_tol": ...}) means "ilut"), say so
        elsewhere = sorted({f"M=({other!r}, {{{option!r}: ...}})" for option in options
                            for other, known in names.items() if other != key and isinstance(known, Preset)
                            and known.takes(option)})
        raise ValueError(f"M=({name!r}, {options!r}): {err}" +
                         (f"; did you mean {' or '.join(elsewhere)}?" if elsewhere else "")) from None
