"""Reference kernels of Gcrotmk."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason


def recycle(exec, cc, cr, cx, u, x, c_slot, u_slot, status):
    # per column, with cc = cx^H cx and cr = cx^H r:  where cc > 0:  c_slot = cx / sqrt(cc),
    # u_slot = u / sqrt(cc), x = x + (cr / cc) u (the step gamma u_slot, gamma = c_slot^H r);
    # elsewhere (no correction: a column that took no step in the cycle, or not finite) the slots
    # and x as they are (the pair there stays, orthonormal to the others);  a running
    # or pending column whose cc or cr is not finite (the cycle's correction overflowed) diverged
    norm2 = cc.values[0].real
    finite = np.isfinite(norm2) & np.isfinite(cr.values[0])
    ok = finite & (norm2 > 0)
    live = (status == StopReason.RUNNING) | (status == StopReason.PENDING)
    status[live & ~finite] = StopReason.DIVERGED
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inv = np.where(ok, 1 / np.sqrt(np.where(ok, norm2, 1)), 0).astype(x.dtype)
        gamma = np.where(ok, cr.values[0] / np.where(ok, norm2, 1), 0).astype(x.dtype)
        c_slot.values[:, ok] = cx.values[:, ok] * inv[ok]
        u_slot.values[:, ok] = u.values[:, ok] * inv[ok]
        x.values[:, ok] += gamma[ok] * u.values[:, ok]
