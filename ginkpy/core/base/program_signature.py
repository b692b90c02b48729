"""The program signature of a generated operator: what decides which device programs its apply
uses, as one stable string (issue 30, "builds up front").

An executor records the programs an operator's first apply used under its signature
(:meth:`Executor.record_programs <ginkpy.core.base.executor.Executor.record_programs>`) and
builds every program recorded for a signature when another operator of that signature is
generated (:meth:`Executor.prepare_programs`), in the generating thread, so that no apply
meets a build. The signature is the operator's type and value type, the system matrix's type,
and the tree of its parameters (stopping criteria, preconditioner, inner solvers) reduced to
what chooses kernels: types, strings, flags and whether a count is 0, 1 or more. Tolerances,
iteration limits and other numbers do not count (``gk.linalg``'s default maxiter is 10 n: a
signature that held it would differ for every matrix size); a solver adds which side of the
device's batch-of-one crossovers its rows lie (``solver_base.py``). Two operators whose programs
differ under one signature (other shapes, another SpMV strategy) share a record that holds
both: a superset, built once, never a wrong program.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.lin_op import LinOp


def program_signature(params: Any, A: LinOp) -> str:
    """The signature of the operator that ``params`` (a parameter object) generate on the
    system matrix ``A``:
    ``"Cg[float64](criteria=(...),preconditioner=Jacobi(...)) on Csr"``."""
    return f"{params.product.__name__}[{np.dtype(A.dtype)}]({_fields(params)}) on {type(A).__name__}"


def _fields(params: Any) -> str:
    return ",".join(f"{field.name}={_canonical(getattr(params, field.name))}" for field in attrs.fields(type(params)))


def _canonical(value: Any) -> str:
    """``value`` reduced to what may choose programs (a stable string)."""
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, (int, np.integer)):
        return str(value) if value in (0, 1) else "n"  # a count: none, one or several
    if isinstance(value, (float, np.floating, complex, np.complexfloating)):
        return "~"  # a tolerance, a factor: a kernel argument, never a program
    if isinstance(value, LinOp):  # an operator given as it is: its own generate prepared its programs
        return f"{type(value).__name__}[{np.dtype(value.dtype)}]"
    if hasattr(value, "parameters") and hasattr(value, "executor") and attrs.has(type(value.parameters)):
        value = value.parameters  # a factory: its parameters
    if attrs.has(type(value)) and hasattr(value, "product"):  # parameters (``Type.build()``)
        name = value.product.__name__ if value.product is not None else type(value).__qualname__
        return f"{name}({_fields(value)})"
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_canonical(v) for v in value) + ")"
    if isinstance(value, (np.dtype, type)):
        return str(np.dtype(value)) if isinstance(value, np.dtype) else value.__name__
    return type(value).__name__
