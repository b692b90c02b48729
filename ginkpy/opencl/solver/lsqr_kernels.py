"""OpenCL kernels of Lsqr (sources in lsqr_kernels.cl): initialize and step run one
work-item per column on the real state, update one per entry of the n x k vectors. The state's
rows are compiled in from LSQR_ROWS (ROW_<NAME> defines)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.solver.lsqr import LSQR_ROWS
from ginkpy.opencl.launch import launch_1d

ROWS = {f"ROW_{name.upper()}": i for i, name in enumerate(LSQR_ROWS)}


def _launch(exec, name, dtype, work_items, *args, calc_var=0):
    launch_1d(exec, __file__, name, dtype, work_items, *args, defines={**ROWS, "CALC_VAR": calc_var})


def initialize(exec, v, w, bb, uu, vv, state, status):
    k = v.shape[1]
    _launch(exec, "initialize", v.dtype, max(v.values.size, k), np.int32(v.values.size), np.int32(k),
            np.int32(state.shape[0]), v.values.data, w.values.data, bb.values.data, uu.values.data, vv.values.data,
            state.values.data, status.data)


def step(exec, uu, vv, ww, state, status, damp, atol, btol, ctol, iter_lim):
    real = state.dtype.type
    k = state.shape[1]
    _launch(exec, "lsqr_step", uu.dtype, k, np.int32(k), uu.values.data, vv.values.data, ww.values.data,
            state.values.data, status.data, real(damp), real(atol), real(btol), real(ctol),
            np.int32(min(iter_lim, np.iinfo(np.int32).max)))


def update(exec, v, w, x, var, state):
    _launch(exec, "update", v.dtype, v.values.size, np.int32(v.values.size), np.int32(v.shape[1]), v.values.data,
            w.values.data, x.values.data, (var or x).values.data, state.values.data,
            calc_var=int(var is not None))
