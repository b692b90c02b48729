"""New values of a multigrid hierarchy's system matrix on the same sparsity pattern (AmgX's
structure reuse, ``gk.solver.Multigrid.update``): what the values decide is recomputed, what
the pattern decides is kept.

Kept: every level's aggregates and transfer operators (R = P^T, P piecewise constant), the
levels' patterns, the schedules of the levels cycled through in one launch, the captured
cycle. Recomputed, top down, into the arrays the cycle reads: each level's matrix as the
Galerkin product R A P of the level above's new values (``Pgm.update``; a level of another
value type first takes the values converted), the built-in Jacobi smoothers' D^-1 and
relaxation, the smoothers given (their own ``update``, else generated anew), the coarsest
level's dense inverse (or its solver's update), the merged levels' packed arrays.
"""
from __future__ import annotations

from typing import Any, Callable

from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.precision import converted
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import check_values, updated_part


def update_hierarchy(mg: Any) -> bool:
    """Recompute the numeric parts of the Multigrid ``mg`` after new values of its system
    matrix; returns whether the launches recorded with it stay valid (False where a smoother
    was generated anew or a level's relaxation, an argument of its launches, changed)."""
    exec, params = mg.executor, mg.parameters
    check_values(mg.system_matrix)
    source = mg.system_matrix
    for level in mg.levels:
        if level.fine_op is not source:  # (a level of another value type works on a converted copy)
            level.fine_op.update_values(converted(source, level.fine_op.dtype).values)
        level.update()
        source = level.coarse_op
    valid = _update_smoothers(mg)
    checks = [(l, *exec.run("components.relaxation.jacobi_setup", A, mg.inv_diags[l]))
              for l, A in enumerate(mg.matrices[:-1]) if mg.inv_diags[l] is not None]
    omegas = mg._omegas(checks)
    merged = len(mg.levels) if mg.merged_from is None else mg.merged_from
    # (the relaxation of a level launched on its own is an argument of its recorded launches)
    valid &= omegas[:merged] == mg.omegas[:merged]
    mg.omegas = omegas
    coarsest = mg.coarsest_solver
    if isinstance(coarsest, Dense) and not params.coarsest_solver:
        # the built-in coarsest solve: A^-1 on the host again, into the same array
        host = exec.host
        exec.write(coarsest.values, host.run("solver.multigrid.dense_inverse", mg.matrices[-1].clone(host)))
    else:
        mg.coarsest_solver, ok = updated_part(coarsest, lambda: mg._make_coarsest_solver(mg.matrices[-1]), mg,
                                              "coarsest_solver")
        valid &= ok
    if mg.coarse is not None:
        # the levels cycled through in one launch: their packed values, D^-1 and omegas in place
        mg.coarse.omegas = mg.omegas[mg.merged_from:]
        exec.run("solver.multigrid.pack_coarse_levels", mg.coarse)
    return valid


def _update_smoothers(mg: Any) -> bool:
    """The smoothers given (pre, post, mid) of every level after its new values: updated, else
    generated anew as at generation; a post-smoother that is the pre-smoother (or its backward
    sweep) follows it."""
    params, valid = mg.parameters, True
    for l, A in enumerate(mg.matrices[:-1]):
        def make(what: str) -> Callable[[], LinOp]:
            return lambda: mg._smoother(mg._factory_of(getattr(params, what), l, what), A, what)
        old_pre, old_post = mg.pre_smoothers[l], mg.post_smoothers[l]
        pre, ok = _updated(mg, old_pre, make("pre_smoother"), "pre_smoother")
        valid &= ok
        if old_post is old_pre:
            post = pre
        elif pre is not None and old_post is not None and pre is not old_pre and hasattr(pre, "backward") \
                and not params.post_smoother:
            post, valid = pre.backward(), False  # (the backward sweep of a pre-smoother made anew)
        else:
            post, ok = _updated(mg, old_post, make("post_smoother") if params.post_smoother else
                                (lambda: pre.backward()), "post_smoother")
            valid &= ok
        mg.pre_smoothers[l], mg.post_smoothers[l] = pre, post
        mg.mid_smoothers[l], ok = _updated(mg, mg.mid_smoothers[l], make("mid_smoother"), "mid_smoother")
        valid &= ok
    return valid


def _updated(mg: Any, part: LinOp | None, regenerate: Callable[[], LinOp], what: str) -> tuple[LinOp | None, bool]:
    """A smoother after new values (None: the built-in sweeps, nothing to do)."""
    if part is None:
        return None, True
    return updated_part(part, regenerate, mg, what)
