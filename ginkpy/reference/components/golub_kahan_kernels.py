"""Reference kernels of the Golub-Kahan bidiagonalization that Lsqr and Lsmr share
(core/solver/least_squares.py). Columns whose status is nonzero (stopped) are left untouched;
alpha is row 0 of the real state (rows x k), the squared norms are 1 x k Dense."""
from __future__ import annotations

import numpy as np


def bidiagonalize_u(exec, Av, u, state, status):
    # u = Av - alpha u
    go = status == 0
    u.values[:, go] = Av.values[:, go] - state.values[0, go] * u.values[:, go]


def bidiagonalize_v(exec, u, v, Atu, uu, status):
    # beta = sqrt(u . u);  where beta > 0: u = u / beta;  v = Atu / beta - beta v
    beta = np.sqrt(np.abs(uu.values[0].real))
    go = (status == 0) & (beta > 0)
    u.values[:, go] = u.values[:, go] / beta[go]
    v.values[:, go] = Atu.values[:, go] / beta[go] - beta[go] * v.values[:, go]
