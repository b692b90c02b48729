"""The summary of ``ginkpy solve``: which solver and preconditioner ran, how each right-hand
side ended, the times, and for a solve that fell short the likely cause and what to try."""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.cli.info_command import symmetric_kind
from ginkpy.core.stop.solve_result import SolveResult
from ginkpy.core.stop.stopping_status import StopReason

COLUMN_ROWS = 10  # right-hand sides listed one per row in the summary (the others summarised)


def preconditioner_key(params: Any) -> str:
    """Where a solver takes the preconditioner: Ir has none, its inner solver plays that part
    (--solver ir --preconditioner jacobi is the Jacobi iteration), as in gk.linalg.ir."""
    return "solver" if "solver" in attrs.fields_dict(type(params)) else "preconditioner"


def describe(params: Any) -> str:
    """``Cg, preconditioner Jacobi``: the solver type and what it applies as its preconditioner."""
    key = preconditioner_key(params)
    value = getattr(params, key)
    name = "none" if value is None else getattr(value, "product", type(value)).__name__
    if _preconditioner_name(params) in ("jacobi", "block_jacobi"):
        name += " (scalar)" if _preconditioner_name(params) == "jacobi" else " (blocks)"
    krylov = f" ({params.krylov_dim})" if "krylov_dim" in attrs.fields_dict(type(params)) else ""
    side = "left " if value is not None and getattr(params, "preconditioner_side", "right") == "left" else ""
    return f"{params.product.__name__}{krylov}, {side}{'inner solver' if key == 'solver' else key} {name}"


def _preconditioner_name(params: Any) -> str:
    """The --preconditioner name of what the solver applies ("none", "jacobi", "ilu", ...)."""
    value = getattr(params, preconditioner_key(params))
    if value is None:
        return "none"
    product = getattr(value, "product", type(value))
    if product.__name__ == "Jacobi":
        return "jacobi" if getattr(value, "max_block_size", None) == 1 else "block_jacobi"
    factorization = getattr(getattr(value, "factorization", None), "product", None)
    if product.__name__ == "Ilu" and factorization is not None and factorization.__name__ == "Ilut":
        return "ilut"
    if product.__name__ == "Multigrid":
        return "amg"
    # the command line's name of these parameters (gauss_seidel, ssor, isai, ...), the spelled-out one first
    from ginkpy.config import short_names
    named = [name for name, known in short_names("preconditioner").items() if _same(known.build(), value)]
    return min(named, key=lambda name: ("_" not in name, name)) if named else product.__name__.lower()


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # (parameters holding arrays)
        return False


# what to try after a preconditioner that did not do: stronger ones the command line has (ILU-type
# for a nonsymmetric system, ilut's pivoting where ILU(0) fails, algebraic multigrid)
_STRONGER = {"none": ("ilu", "amg"), "jacobi": ("ilu", "amg"), "block_jacobi": ("ilu", "amg"),
             "ilu": ("ilut", "amg"), "ilu0_exact": ("ilut", "amg"), "isai": ("ilu", "amg"),
             "ilut": ("amg",), "amg": ("ilut",)}
_STRONGER_SPD = {"none": ("ic", "amg"), "jacobi": ("ic", "amg"), "block_jacobi": ("ic", "amg"),
                 "ic": ("amg",), "ic0_exact": ("amg",), "amg": ("ic",)}
_STRONGER_SPD_DEFAULT = ("ic", "amg")  # (after the symmetric sweeps, SPD ISAI, ...)


def _stronger(params: Any, spd: bool, zero_diagonal: bool) -> list[str]:
    """Preconditioners to try instead of the one ``params`` applies, stronger and different
    from it; ILU-type ones first where the diagonal has zeros (they add the missing entries)."""
    used = _preconditioner_name(params)
    table = _STRONGER_SPD if spd and not zero_diagonal else _STRONGER
    default = _STRONGER_SPD_DEFAULT if table is _STRONGER_SPD else ("ilu", "amg")
    options = [name for name in table.get(used, default) if name != used]
    return options or ["amg" if used != "amg" else "ilut"]


def _either(names: list[str]) -> str:
    """``--preconditioner ilu or --preconditioner amg``."""
    return " or ".join(f"--preconditioner {name}" for name in names)



def _relative(result: SolveResult) -> np.ndarray:
    return result.residual_norm / np.where(result.rhs_norm > 0, result.rhs_norm, 1.0)


def outcome_rows(result: SolveResult) -> list[tuple[str, str]]:
    """iterations, residual and stopped rows; with several right-hand sides, what each ended
    with (one row per column up to COLUMN_ROWS, then the ones that did not converge)."""
    relative = _relative(result)
    k = len(result.stop_reasons)
    if k == 1:
        return [("iterations", str(result.num_iterations)),
                ("residual", f"{result.residual_norm[0]:.3e} (relative {relative[0]:.3e})"),
                ("stopped", result.stop_reasons[0].describe())]
    worst = int(np.argmax(relative))
    counts = {}
    for reason in result.stop_reasons:
        counts[reason.describe()] = counts.get(reason.describe(), 0) + 1
    stopped = (f"{result.stop_reasons[0].describe()} (all {k} columns)" if len(counts) == 1
               else ", ".join(f"{c} {name}" for name, c in counts.items()) + f" (of {k} columns)")
    rows = [("iterations", f"{result.num_iterations} (the most of any column; fewest {int(result.iterations.min())})"),
            ("residual", f"relative {relative[worst]:.3e} at worst (column {worst}), best {relative.min():.3e}"),
            ("stopped", stopped)]
    listed = range(k) if k <= COLUMN_ROWS else [j for j in range(k) if not result.converged[j]][:COLUMN_ROWS]
    for j in listed:
        rows.append((f"column {j}", f"{int(result.iterations[j])} iterations, relative residual "
                                    f"{relative[j]:.3e}, {result.stop_reasons[j].describe()}"))
    if k > COLUMN_ROWS and len(listed) < k - int(result.converged.sum()):
        rows.append(("columns", f"... and {k - int(result.converged.sum()) - len(listed)} more that did not converge"))
    return rows


def time_rows(times: dict[str, float], iterations: int, profile: bool, warm_up_iterations: int) -> list[tuple[str, str]]:
    """The time row (setup, solve, rate, compile apart) or, with --profile, one row per phase
    (``warm_up_iterations``: how many iterations the warm-up that compiled the kernels ran)."""
    solve = times["solve"]
    rate = f"{iterations / solve:.0f} iterations/s" if solve > 0 and iterations else "no iterations"
    if not profile:
        text = f"setup {times['generate']:.3f} s, solve {solve:.3f} s ({rate})"
        if "compile" in times:
            text += f"; kernels compiled or loaded from cache in {times['compile']:.2f} s more"
        return [("time", text)]
    compile_ = (f"{times['compile']:.3f} s   kernels compiled or loaded from the disk cache (a "
                f"{warm_up_iterations}-iteration warm-up of {times['warm-up']:.3f} s, less the work it repeated)"
                if "compile" in times else "none      the reference executor runs numpy/scipy")
    per = f", {1e3 * solve / iterations:.3f} ms per iteration" if iterations else ""
    return [("device", f"{times['device']:.3f} s   executor opened"),
            ("read", f"{times['read']:.3f} s   Matrix Market file(s) parsed on the host"),
            ("transfer", f"{times['transfer']:.3f} s   matrix and right-hand sides to the executor"),
            ("compile", compile_),
            ("generate", f"{times['generate']:.3f} s   solver and preconditioner set up"),
            ("solve", f"{solve:.3f} s   {iterations} iterations, {rate}{per}")]


def hints(result: SolveResult, history: list, params: Any, suits_cg: bool, kind: str,
           dtype: np.dtype, zero_diagonal: np.ndarray, empty_rows: np.ndarray | None = None) -> list[str]:
    """For each way some column stopped short of convergence: the likely cause and what to try,
    naming only options the command line has and none that just failed (``zero_diagonal``: the
    rows whose diagonal entry is zero or not stored; ``empty_rows``: the rows without a nonzero
    entry, which make the matrix singular: said first, apart)."""
    empty_rows = np.empty(0, np.int64) if empty_rows is None else np.asarray(empty_rows)
    if empty_rows.size and not np.all(np.asarray(result.stop_reasons) == StopReason.CONVERGED):
        return [_singular(empty_rows), *hints(result, history, params, suits_cg, kind, dtype,
                                              np.setdiff1d(zero_diagonal, empty_rows))]
    name = params.product.__name__
    used = _preconditioner_name(params)
    relative_history = np.array(history, dtype=np.float64) / np.where(result.rhs_norm > 0, result.rhs_norm, 1.0)
    relative = _relative(result)
    eps = float(np.finfo(dtype).eps)
    k = len(result.stop_reasons)
    spd = suits_cg and name in ("Cg", "Fcg", "PipeCg")
    stronger = _either(_stronger(params, spd, zero_diagonal.size > 0))
    # zero diagonal entries defeat Jacobi (it cannot invert them) and an unpreconditioned start
    zeros = _zeros(zero_diagonal, used)
    found = []
    unsymmetric = _unsymmetric_hint(params, suits_cg, result)
    if unsymmetric is not None:
        return [unsymmetric]
    for reason in sorted(set(result.stop_reasons) - {StopReason.CONVERGED}):
        columns = [j for j in range(k) if result.stop_reasons[j] == reason]
        where = "" if k == 1 else f"column{'s' if len(columns) > 1 else ''} {', '.join(map(str, columns[:8]))}" \
                                  f"{', ...' if len(columns) > 8 else ''}: "
        worst = max(columns, key=lambda j: relative[j])
        if name in ("Cg", "Fcg", "PipeCg") and not suits_cg:
            other = ("--solver minres", "Minres") if symmetric_kind(kind) else ("--solver bicgstab or gmres", "Bicgstab")
            text = (f"{name} needs a symmetric positive definite matrix and this one is {kind}: "
                    f"use {other[0]} (or leave --solver out: auto picks {other[1]} here)")
        elif reason == StopReason.BREAKDOWN:
            text = _breakdown(name, zeros, stronger, relative[worst])
        elif reason == StopReason.DIVERGED:
            text = _diverged(name, zeros, stronger, suits_cg)
        elif name == "Chebyshev" and reason != StopReason.TIME_LIMIT and relative[worst] >= 100 * eps:
            # (its preconditioner is scalar Jacobi or none: stronger ones need a Krylov solver)
            text = ("Chebyshev converges only as fast as the bounds of its spectrum allow, and takes only scalar "
                    f"Jacobi or no preconditioner: use --solver {'cg' if suits_cg else 'gmres'} (leave --solver out "
                    f"for auto's choice), which takes {_either(_stronger(params, suits_cg, zero_diagonal.size > 0))}")
        elif reason == StopReason.TIME_LIMIT:
            text = ("the time limit of the configuration came before the tolerance: raise the Time criterion's "
                    "time_limit in the --config file (or remove it)")
        else:
            text = _limit(params, relative_history[:, worst], int(result.iterations[worst]), relative[worst], dtype,
                          zeros, stronger)
        found.append(where + text)
    return found


def _breakdown(name: str, zeros: str, stronger: str, relative: float) -> str:
    """The hint for a breakdown of solver ``name`` (``relative``: the worst column's residual
    over ||b||)."""
    text = {"Cg": "a zero p^T A p or rho: the matrix or the preconditioner is not positive definite; "
                  "try --solver gmres",
            "PipeCg": "a zero or negative (u, A u) - beta gamma / alpha: the matrix or the preconditioner is "
                      "not positive definite (or the recurrence lost its accuracy); try --solver cg or gmres",
            **{gmres: f"a zero divisor: the matrix may be singular (see ginkpy info); {zeros}try {stronger}"
               for gmres in ("Gmres", "Lgmres", "Gcrotmk")},
            "Minres": "v^T M v < 0 or a singular T: the matrix is not symmetric or the preconditioner "
                      "not positive definite; try --solver gmres"}.get(
        name, "a zero divisor (such as rho = r_hat^T r): Bicg, Bicgstab, Cgs, Idr, Qmr and Tfqmr can break "
              "down on indefinite or nonsymmetric systems; try --solver gmres, which does not")
    text = f"{name} broke down: {text}"
    if relative > 1:
        text += f" (the residual is {relative:.1e} ||b||, worse than x = 0)"
    return text


def _diverged(name: str, zeros: str, stronger: str, suits_cg: bool) -> str:
    """The hint for a residual of solver ``name`` that became NaN or infinite."""
    if name == "Ir":
        return ("the residual became NaN or infinite: Ir (a Richardson iteration) converges only where its "
                f"inner solver approximates A^-1 well; {zeros}try {stronger}, or a Krylov --solver such as "
                f"{'cg' if suits_cg else 'bicgstab'}")
    return ("the residual became NaN or infinite: the matrix may be singular or badly scaled, or the "
            f"preconditioner unstable; {zeros}try {stronger}" +
            ("" if name in ("Gmres", "Lgmres", "Gcrotmk") else " or --solver gmres"))


def _limit(params: Any, history: np.ndarray, iterations: int, relative: float, dtype: np.dtype, zeros: str,
           stronger: str) -> str:
    """The hint for a column stopped by the iteration limit (or at its value type's precision):
    ``history`` its relative residuals, ``iterations`` those it ran, ``relative`` its last
    residual over ||b||."""
    if relative < 100 * float(np.finfo(dtype).eps):
        return (f"the residual reached {dtype}'s precision ({relative:.1e} ||b||) above the "
                f"tolerance: use a larger --rtol" + wider(dtype, " or "))
    if _stagnated(history, iterations):
        dim = getattr(params, "krylov_dim", None)
        return ("the iteration limit came with the residual stagnating (less than 2x smaller over the last "
                f"quarter of the iterations): {zeros}try " +
                (f"a larger Krylov dimension (--krylov-dim {2 * dim}), " if dim else
                 "--solver gmres with a large --krylov-dim (such as 100), ") + stronger)
    if iterations == 0:
        return ("the iteration limit is 0 (--max-iters 0), so no iteration ran: allow some with --max-iters "
                f"1000, or leave --max-iters out for the default max(1000, 10 n); {zeros}add {stronger} to need fewer")
    return ("the iteration limit came while the residual was still falling: allow more with "
            f"--max-iters {2 * iterations}; {zeros}add {stronger} to need fewer")


def _zeros(zero_diagonal: np.ndarray, used: str) -> str:
    """What zero diagonal entries do to no preconditioner or Jacobi, as a hint's first clause."""
    if not (zero_diagonal.size and used in ("none", "jacobi", "block_jacobi")):
        return ""
    count = "1 diagonal entry is" if zero_diagonal.size == 1 else f"{zero_diagonal.size} diagonal entries are"
    return (f"{count} zero or not stored (the first in row {int(zero_diagonal[0])}), "
            f"{'which Jacobi cannot invert' if used != 'none' else 'which --preconditioner ilu handles'}: ")


def _unsymmetric_hint(params: Any, suits_cg: bool, result: SolveResult) -> str | None:
    """The one hint where a solver for SPD systems (Cg, PipeCg, Minres) that fell short of the
    tolerance on an SPD-like matrix applies a nonsymmetric preconditioner (a forward sweep, a
    general ISAI, ILUT), which stalls or breaks it down whatever else is done: its symmetric
    twin (gk.linalg's rule: ``cg(M="gauss_seidel")`` is refused there); None otherwise."""
    from ginkpy.linalg._spd import nonsymmetric_preconditioner
    name = params.product.__name__
    if name not in ("Cg", "PipeCg", "Minres") or not suits_cg or \
            all(r == StopReason.CONVERGED for r in result.stop_reasons):
        return None
    found = nonsymmetric_preconditioner(getattr(params, preconditioner_key(params)))
    if found is None:
        return None
    why, instead = found
    return (f"{name} needs a symmetric positive definite preconditioner and {_preconditioner_name(params)} is not "
            f"symmetric ({why}): use --preconditioner {instead} (its symmetric twin), or --solver fcg, which takes a "
            f"nonsymmetric one")


def _singular(empty_rows: np.ndarray) -> str:
    """What an empty row (no nonzero entry) does to A x = b, and how to mend the matrix."""
    count = "1 row is" if empty_rows.size == 1 else f"{empty_rows.size} rows are"
    return (f"{count} empty (no nonzero entry; the first is row {int(empty_rows[0])}), so the matrix is singular: "
            "A x = b has no solution unless b is 0 in those rows (and then x is not unique there), and no solver or "
            "preconditioner changes that; fix the matrix (assemble the missing entries, at least the diagonal one, "
            "such as 1 where x is fixed) or remove the empty rows and their columns")


def _stagnated(relative: np.ndarray, iterations: int) -> bool:
    """Did the residual fall less than 2x over the last quarter of the iterations (at least 5)?"""
    if iterations < 8 or relative.shape[0] <= iterations:
        return False
    back = max(5, iterations // 4)
    earlier, last = relative[iterations - back], relative[iterations]
    return bool(np.isfinite(last) and last > 0.5 * earlier)



def wider(dtype: np.dtype, prefix: str) -> str:
    """The advice to solve in double precision, for a single-precision value type."""
    wide = {np.dtype(np.float32): "float64", np.dtype(np.complex64): "complex128"}.get(np.dtype(dtype))
    return f"{prefix}--dtype {wide}" if wide else ""
