"""Reference kernels of Gcrotmk."""
from __future__ import annotations

import numpy as np


def recycle(exec, cc, cr, cx, u, x, c_slot, u_slot):
    # per column, with cc = cx^H cx and cr = cx^H r:  where cc > 0:  c_slot = cx / sqrt(cc),
    # u_slot = u / sqrt(cc), x = x + (cr / cc) u (the step gamma u_slot, gamma = c_slot^H r);
    # elsewhere (no correction, or not finite) c_slot = u_slot = 0 and x as it is
    norm2 = cc.values[0].real
    ok = np.isfinite(norm2) & (norm2 > 0) & np.isfinite(cr.values[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(ok, 1 / np.sqrt(np.where(ok, norm2, 1)), 0).astype(x.dtype)
        gamma = np.where(ok, cr.values[0] / np.where(ok, norm2, 1), 0).astype(x.dtype)
    c_slot.values[...] = np.where(ok, cx.values * inv, 0)
    u_slot.values[...] = np.where(ok, u.values * inv, 0)
    x.values[:, ok] += gamma[ok] * u.values[:, ok]
