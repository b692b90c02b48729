"""Reference kernels of Ir. Columns whose stop status is nonzero are left untouched."""
from __future__ import annotations


def prepare(exec, r, z, status):
    # r = 0 in stopped columns;  z = r (the inner solver's initial guess)
    r.values[:, status != 0] = 0
    z.values[...] = r.values


def update(exec, omega, z, x, status):
    # x += omega z  (omega is 1 x 1)
    go = status == 0
    x.values[:, go] += omega.values[0, 0] * z.values[:, go]
