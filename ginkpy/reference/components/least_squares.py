"""What the reference kernels of Lsqr and Lsmr share: one column of the real state as named
scalars, SciPy's stable Givens rotation and SciPy's stopping tests."""
from __future__ import annotations

import numpy as np


class ColumnState(dict):
    """Column c of a state Dense (rows x k) as {row name: scalar of the state's real type};
    ``store()`` writes the values back."""

    def __init__(self, state, c: int, rows: dict) -> None:
        values = state.values
        super().__init__({name: values[i, c] for name, i in rows.items()})
        self.values, self.c, self.rows, self.dtype = values, c, rows, values.dtype

    def store(self) -> None:
        for name, i in self.rows.items():
            self.values[i, self.c] = self[name]


def column_state(state, c: int, rows: dict) -> ColumnState:
    """Column ``c`` of ``state`` by the row names ``rows`` (name -> row)."""
    return ColumnState(state, c, rows)


def sym_ortho(a, b):
    """(c, s, r) with [c s; -s c] [a; b] = [r; 0] and r >= 0 (SciPy's ``_sym_ortho``, after
    Choi's thesis): stable where a or b is 0 or one is much larger."""
    if b == 0:
        return np.sign(a), 0 * a, abs(a)
    if a == 0:
        return 0 * b, np.sign(b), abs(b)
    if abs(b) > abs(a):
        tau = a / b
        s = np.sign(b) / np.sqrt(1 + tau * tau)
        return s * tau, s, b / s
    tau = b / a
    c = np.sign(a) / np.sqrt(1 + tau * tau)
    return c, c * tau, a / c


def istop_of(itn, iter_lim: int, test1, test2, test3, anorm, xnorm, bnorm, atol, btol,
             ctol) -> int:
    """SciPy's stopping tests of lsqr and lsmr on their estimates (test1 = ||r|| / ||b||, test2
    ~ ||A^H r|| / (||A|| ||r||), test3 ~ 1 / cond(A)), the later ones taking precedence:
    istop 1 to 7 (0: none holds)."""
    t1 = test1 / (1 + anorm * xnorm / bnorm)
    rtol = btol + atol * anorm * xnorm / bnorm
    istop = 0
    if itn >= iter_lim:
        istop = 7
    if 1 + test3 <= 1:
        istop = 6
    if 1 + test2 <= 1:
        istop = 5
    if 1 + t1 <= 1:
        istop = 4
    if test3 <= ctol:
        istop = 3
    if test2 <= atol:
        istop = 2
    if test1 <= rtol:
        istop = 1
    return istop
