"""OpenCL kernels of Lsmr (sources in lsmr_kernels.cl): step_1 and step_2 run one work-item
per column on the real state, update one per entry of the n x k vectors (initialize both).
The state's rows are compiled in from LSMR_ROWS (ROW_<NAME> defines)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.solver.lsmr import LSMR_ROWS
from ginkpy.opencl.launch import launch_1d

ROWS = {f"ROW_{name.upper()}": i for i, name in enumerate(LSMR_ROWS)}


def _launch(exec, name, dtype, work_items, *args):
    launch_1d(exec, __file__, name, dtype, work_items, *args, defines=ROWS)


def initialize(exec, v, h, hbar, x, bb, uu, vv, state, status):
    k = v.shape[1]
    _launch(exec, "initialize", v.dtype, max(v.values.size, k), np.int32(v.values.size), np.int32(k),
            np.int32(state.shape[0]), v.values.data, h.values.data, hbar.values.data, x.values.data, bb.values.data,
            uu.values.data, vv.values.data, state.values.data, status.data)


def step_1(exec, uu, vv, state, status, damp):
    k = state.shape[1]
    _launch(exec, "step_1", uu.dtype, k, np.int32(k), uu.values.data, vv.values.data, state.values.data,
            status.data, state.dtype.type(damp))


def update(exec, v, h, hbar, x, state, status):
    _launch(exec, "update", v.dtype, v.values.size, np.int32(v.values.size), np.int32(v.shape[1]), v.values.data,
            h.values.data, hbar.values.data, x.values.data, state.values.data, status.data)


def step_2(exec, xx, state, status, atol, btol, ctol, iter_lim):
    real, k = state.dtype.type, state.shape[1]
    _launch(exec, "step_2", xx.dtype, k, np.int32(k), xx.values.data, state.values.data, status.data, real(atol),
            real(btol), real(ctol), np.int32(min(iter_lim, np.iinfo(np.int32).max)))
