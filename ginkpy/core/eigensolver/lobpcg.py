"""Lobpcg: the locally optimal block preconditioned conjugate gradient eigensolver (A. V.
Knyazev, SIAM J. Sci. Comput. 23, 2001; the variant of SciPy's ``lobpcg``) for the extreme
eigenpairs of a Hermitian A x = lambda B x, B Hermitian positive definite.

The block vectors (X, its residuals R, the preconditioned residuals W, the directions P, and
their products with A and B) are Dense n x k blocks on the executor: the products with A, B
and the preconditioner M are applied to all k columns at once, the Gram matrices U^H V are
device block dot products (Dense.compute_gram), and the Ritz vectors are formed with small
k x k coefficient matrices by device products. Only the small matrices travel: per
iteration two downloads, (1) the residual norms with the B-Gram matrices of W and P (for their
Cholesky B-orthonormalization), (2) the Gram matrices of the Rayleigh-Ritz step (at most
3k x 3k), whose dense generalized eigenproblem is solved on the host (scipy.linalg.eigh); and
the coefficient matrices go back. Converged columns are soft-locked: their W and P leave the
Rayleigh-Ritz basis (the preconditioner still runs on all k columns: one fixed block size,
nothing allocated after the first iteration) until the others' steps carry their residual above
tol again (SciPy's lock is for good, and can end the iteration with such a column unconverged).
P is dropped for a step (a restart) where its columns are nearly dependent, and the final
Rayleigh-Ritz rotation is kept only where it keeps the converged residuals below tol.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.linalg as sla

from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.types import real_dtype
from ginkpy.core.matrix.dense import Dense


class LobpcgResult:
    """What :meth:`Lobpcg.solve` found: ``eigenvalues`` (k, in the order asked), ``X`` (Dense
    n x k, B-orthonormal eigenvectors), ``residual_norms`` (k), ``iterations``, ``converged``
    and the histories ``lambda_history``, ``residual_norms_history`` (one row per iteration,
    SciPy's lists)."""

    def __init__(self, eigenvalues, X, residual_norms, iterations, converged, lambda_history, residual_history):
        self.eigenvalues, self.X, self.residual_norms = eigenvalues, X, residual_norms
        self.iterations, self.converged = iterations, converged
        self.lambda_history, self.residual_norms_history = lambda_history, residual_history


def _indices(values: np.ndarray, num: int, largest: bool) -> np.ndarray:
    """The indices of the ``num`` largest (descending) or smallest (ascending) values."""
    order = np.argsort(values)
    return order[:-num - 1:-1] if largest else order[:num]


def _inverse_cholesky(gram: np.ndarray, rcond: float = 0.0) -> np.ndarray | None:
    """R^-1 for gram = R^H R (R upper), or None where gram is not positive definite or the
    smallest eigenvalue of its unit-diagonal scaling is below ``rcond`` (columns so nearly
    dependent that V R^-1 would be far from orthonormal). Factored on that scaling, so that
    columns of unlike norms lose no accuracy (SciPy normalizes its columns likewise)."""
    diagonal = np.real(np.diag(gram))
    if diagonal.size and not np.all(diagonal > 0):
        return None
    scale = 1.0 / np.sqrt(diagonal)
    scaled = gram * scale[:, None] * scale[None, :]
    try:
        if rcond > 0 and np.linalg.eigvalsh(scaled)[0] < rcond:
            return None
        return scale[:, None] * sla.inv(sla.cholesky(scaled))
    except (sla.LinAlgError, ValueError):
        return None


def report_nonhermitian(matrix: np.ndarray, name: str) -> None:
    """Warn (UserWarning) where ``matrix`` is not Hermitian to about 10 machine epsilons."""
    difference = np.linalg.norm(matrix - matrix.conj().T, 1)
    tol = 10 * np.finfo(matrix.dtype).eps
    tol = max(tol, tol * np.linalg.norm(matrix, 1))
    if difference > tol:
        warnings.warn(f"Matrix {name} of the type {matrix.dtype} is not Hermitian: condition: {difference} < {tol} "
                      f"fails.", UserWarning, stacklevel=6)


class Lobpcg:
    """LOBPCG for the ``k`` extreme eigenpairs of A x = lambda B x (k the columns of the
    initial block X), with optional preconditioner M (approximating A^-1 on the wanted
    eigenspace) and constraints Y (iterate B-orthogonally to Y's columns).

    Parameters
    ----------
    A : LinOp
        Hermitian, n x n.
    B : LinOp, optional
        Hermitian positive definite (default: the identity).
    M : LinOp, optional
        The preconditioner, applied to the k residuals at once (x = 0 start).
    Y : Dense, optional
        n x c constraints, full rank.
    tol : float, optional
        Residual norm ||A x - lambda B x|| at which a column has converged (default:
        sqrt(eps) n, SciPy's).
    maxiter : int, default 20
    largest : bool, default True
        The largest eigenvalues, else the smallest.
    restart_control : int, default 20
        Restart (recompute A X, B X) when the mean residual norm grows 2**restart_control-fold
        over the smallest seen.
    verbosity : int, default 0
        Print each iteration's eigenvalues and residual norms where positive.

    Examples
    --------
    >>> solver = Lobpcg(A, M=jacobi, tol=1e-8, maxiter=200, largest=False)
    >>> result = solver.solve(gk.matrix.Dense.from_numpy(exec, X0))
    >>> result.eigenvalues, result.X.to_numpy()
    """

    def __init__(self, A: LinOp, B: LinOp | None = None, M: LinOp | None = None, Y: Dense | None = None,
                 tol: float | None = None, maxiter: int = 20, largest: bool = True, restart_control: int = 20,
                 verbosity: int = 0) -> None:
        self.A, self.B, self.M, self.Y = A, B, M, Y
        self.exec, self.dtype, self.n = A.executor, A.dtype, A.shape[0]
        self.tol = tol if tol is not None and tol > 0 else np.sqrt(np.finfo(self.dtype).eps) * self.n
        self.maxiter, self.largest = int(maxiter), bool(largest)
        self.restart_control, self.verbosity = restart_control, verbosity
        self._small: dict[str, Dense] = {}
        if Y is not None:
            self._setup_constraints()

    # -- device helpers ----------------------------------------------------------------------
    def _dense(self, key: str, shape: tuple[int, int], dtype: Any = None) -> Dense:
        """A small Dense kept by name (made at its first use, reused after)."""
        d = self._small.get(key)
        if d is None or d.shape != shape:
            d = self._small[key] = Dense.empty(self.exec, shape, dtype or self.dtype)
        return d

    def _upload(self, key: str, host: np.ndarray) -> Dense:
        """The small host matrix in the Dense kept as ``key``: a copy the host does not wait for
        (the queue runs in order: after the work that read the Dense before, before the work
        that reads it next; the copy's event holds the host array until it is done)."""
        d = self._dense(key, host.shape)
        self.exec.write_async(d.values, np.array(host, dtype=self.dtype, order="C"))  # (a copy of its own)
        return d

    def _download(self, *denses: Dense) -> list[np.ndarray]:
        """One transfer of several small Dense to the host."""
        out = self.exec.to_host(*(d.values for d in denses))
        return [np.asarray(o) for o in (out if len(denses) > 1 else (out,))]

    def _grams(self, pairs: dict[str, tuple[Dense, Dense]]) -> dict[str, np.ndarray]:
        """U^H V for each named pair, computed on the device and downloaded together."""
        for key, (u, v) in pairs.items():
            u.compute_gram(v, self._dense("gram_" + key, (u.shape[1], v.shape[1])))
        hosts = self._download(*(self._small["gram_" + key] for key in pairs))
        return dict(zip(pairs, hosts))

    def _apply(self, op: LinOp | None, v: Dense, out: Dense) -> Dense:
        """out = op v (v itself for the identity)."""
        if op is None:
            return v
        op.apply(v, out)
        return out

    # -- constraints ---------------------------------------------------------------------------
    def _setup_constraints(self) -> None:
        Y = self.Y
        self.BY = self._apply(self.B, Y, Y.empty_like())
        YBY = self._grams({"yby": (Y, self.BY)})["yby"]
        try:
            inverse = sla.cho_solve(sla.cho_factor(YBY), np.eye(YBY.shape[0]))
        except sla.LinAlgError as err:
            raise ValueError("Linearly dependent constraints: Y^H B Y is singular (give Y of full column "
                             "rank)") from err
        self.YBY_inverse = Dense.from_numpy(self.exec, inverse, self.dtype)

    def _constrain(self, v: Dense) -> None:
        """v = v - Y (Y^H B Y)^-1 (B Y)^H v, on the device."""
        c, k = self.Y.shape[1], v.shape[1]
        g = self.BY.compute_gram(v, self._dense("ybv", (c, k)))
        t = self._dense("ybv_solved", (c, k))
        self.YBY_inverse.apply(g, t)
        self.Y.apply(self._minus_one, t, self._one, v)

    # -- the iteration -------------------------------------------------------------------------
    def _b(self, name: str) -> Dense:
        """The block B V of the block named (V itself without B)."""
        return self.v["B" + name] if self.B is not None else self.v[name]

    def _families(self) -> tuple[str, ...]:
        return ("", "A", "B") if self.B is not None else ("", "A")

    def _start(self, X: Dense) -> np.ndarray:
        """Allocate the blocks, constrain and B-orthonormalize X, and its first Rayleigh-Ritz
        step; returns the Ritz values."""
        exec, dtype = self.exec, self.dtype
        self._one = Dense.from_numpy(exec, np.ones((1, 1)), dtype)
        self._minus_one = Dense.from_numpy(exec, -np.ones((1, 1)), dtype)
        names = ["X", "AX", "R", "W", "AW", "P", "AP", "tmp1", "tmp2", "best"]
        names += ["BX", "BW", "BP"] if self.B is not None else []
        self.v = {name: X.empty_like() for name in names}
        v = self.v
        v["X"].copy_from(X)
        if self.Y is not None:
            self._constrain(v["X"])
        # X = X R^-1 with X^H B X = R^H R
        BX = self._apply(self.B, v["X"], self._b("X"))
        inverse = _inverse_cholesky(self._grams({"xbx": (v["X"], BX)})["xbx"])
        if inverse is None:
            raise ValueError("Linearly dependent initial approximations: X^H B X is not positive definite "
                             "(give X of full column rank, e.g. random columns)")
        self._times([v[f + "X"] for f in (("", "B") if self.B is not None else ("",))], inverse)
        self.A.apply(v["X"], v["AX"])
        lam, vectors = sla.eigh(self._grams({"xax": (v["X"], v["AX"])})["xax"], check_finite=False)
        ii = _indices(lam, X.shape[1], self.largest)
        self._times([v[f + "X"] for f in self._families()], vectors[:, ii])
        return lam[ii]

    def _times(self, blocks: list[Dense], c: np.ndarray) -> None:
        """block = block C for each block (C small, uploaded once), through tmp1."""
        coef = self._upload("coef", c)
        for block in blocks:
            block.apply(coef, self.v["tmp1"])
            block.copy_from(self.v["tmp1"])

    def _residuals(self, lam: np.ndarray, with_p: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """R = A X - B X diag(lam) and W = M R made B-orthogonal to X (and to Y), on the device;
        returns (one download) R's column norms, W^H B W and, with_p, P^H B P."""
        v, k = self.v, lam.size
        # R = A X - B X diag(lam)
        v["R"].copy_from(v["AX"])
        v["R"].sub_scaled(self._upload("lambda", lam[None, :]), self._b("X"))
        norms = v["R"].compute_norm2(self._dense("norms", (1, k), real_dtype(self.dtype)))
        # W = M R
        if self.M is not None:
            v["W"].fill(0.0)
            self.M.apply(v["R"], v["W"])
        else:
            v["W"].copy_from(v["R"])
        if self.Y is not None:
            self._constrain(v["W"])
        # W = W - X (B X)^H W
        g = self._b("X").compute_gram(v["W"], self._dense("xbw_project", (k, k)))
        v["X"].apply(self._minus_one, g, self._one, v["W"])
        BW = self._apply(self.B, v["W"], self._b("W"))
        grams = [v["W"].compute_gram(BW, self._dense("wbw_norm", (k, k)))]
        if with_p:
            grams.append(v["P"].compute_gram(self._b("P"), self._dense("pbp_norm", (k, k))))
        out = self._download(norms, *grams)
        return out[0][0], out[1], (out[2] if with_p else None)

    def _normalize(self, name: str, active: np.ndarray, inverse: np.ndarray, families: tuple[str, ...]) -> None:
        """V = V T for the blocks of ``name`` (W, P) in ``families``: T is the inverse Cholesky
        factor on the active columns, zero on the others."""
        k = self.v["X"].shape[1]
        t = np.zeros((k, k), dtype=inverse.dtype)
        t[np.ix_(active, active)] = inverse
        self._times([self.v[f + name] for f in families], t)

    def _gram_pairs(self, restart: bool, explicit: bool) -> dict[str, tuple[Dense, Dense]]:
        v = self.v
        pairs = {"xaw": (v["X"], v["AW"]), "waw": (v["W"], v["AW"])}
        if explicit:
            pairs.update(xax=(v["X"], v["AX"]), xbx=(v["X"], self._b("X")), wbw=(v["W"], self._b("W")),
                         xbw=(v["X"], self._b("W")))
        if not restart:
            pairs.update(xap=(v["X"], v["AP"]), wap=(v["W"], v["AP"]), pap=(v["P"], v["AP"]),
                         xbp=(v["X"], self._b("P")), wbp=(v["W"], self._b("P")))
            if explicit:
                pairs["pbp"] = (v["P"], self._b("P"))
        return pairs

    def _rayleigh_ritz(self, lam: np.ndarray, active: np.ndarray, restart: bool, explicit: bool,
                       iteration: int) -> tuple | None:
        """The Rayleigh-Ritz step on span [X, W_active, P_active]: its Gram matrices from the
        device (one download), the dense eigenproblem on the host. Returns (Ritz values,
        coefficients of X, W, P (None on a restart)), or None where eigh failed."""
        k, a = lam.size, active
        g = self._grams(self._gram_pairs(restart, explicit))
        sym = (lambda m: (m + m.conj().T) / 2) if explicit else (lambda m: m)
        dtype = g["xaw"].dtype
        xax = sym(g["xax"]) if explicit else np.diag(lam).astype(dtype)
        xbx = g["xbx"] if explicit else np.eye(k, dtype=dtype)
        wbw = g["wbw"][np.ix_(a, a)] if explicit else np.eye(a.size, dtype=dtype)
        xbw = g["xbw"][:, a] if explicit else np.zeros((k, a.size), dtype=dtype)
        xaw, waw = g["xaw"][:, a], sym(g["waw"][np.ix_(a, a)])
        solved = None
        if not restart:
            pap = sym(g["pap"][np.ix_(a, a)])
            pbp = g["pbp"][np.ix_(a, a)] if explicit else np.eye(a.size, dtype=dtype)
            xap, wap, xbp, wbp = g["xap"][:, a], g["wap"][np.ix_(a, a)], g["xbp"][:, a], g["wbp"][np.ix_(a, a)]
            gram_a = np.block([[xax, xaw, xap], [xaw.conj().T, waw, wap], [xap.conj().T, wap.conj().T, pap]])
            gram_b = np.block([[xbx, xbw, xbp], [xbw.conj().T, wbw, wbp], [xbp.conj().T, wbp.conj().T, pbp]])
            solved = self._eigh(gram_a, gram_b, iteration, warn=self.verbosity > 0)
        if solved is None:
            restart = True
            gram_a = np.block([[xax, xaw], [xaw.conj().T, waw]])
            gram_b = np.block([[xbx, xbw], [xbw.conj().T, wbw]])
            solved = self._eigh(gram_a, gram_b, iteration, warn=True)
            if solved is None:
                return None
        values, vectors = solved
        ii = _indices(values, k, self.largest)
        vectors = vectors[:, ii]
        cw = np.zeros((k, k), dtype=vectors.dtype)
        cw[a] = vectors[k:k + a.size]
        cp = None
        if not restart:
            cp = np.zeros((k, k), dtype=vectors.dtype)
            cp[a] = vectors[k + a.size:]
        return values[ii], vectors[:k], cw, cp

    def _eigh(self, gram_a: np.ndarray, gram_b: np.ndarray, iteration: int, warn: bool):
        if self.verbosity:
            report_nonhermitian(gram_a, "gramA")
            report_nonhermitian(gram_b, "gramB")
        try:
            return sla.eigh(gram_a, gram_b, check_finite=False)
        except (sla.LinAlgError, ValueError) as err:
            if warn:
                warnings.warn(f"eigh failed at iteration {iteration} with error\n{err}\n", UserWarning, stacklevel=6)
            return None

    def _update(self, cx: np.ndarray, cw: np.ndarray, cp: np.ndarray | None) -> None:
        """P = W C_W + P C_P and X = X C_X + P in each family (V, A V, B V), on the device."""
        v = self.v
        cx, cw = self._upload("cx", cx), self._upload("cw", cw)
        cp = None if cp is None else self._upload("cp", cp)
        for f in self._families():
            pp, new = v["tmp1"], v["tmp2"]
            v[f + "W"].apply(cw, pp)
            if cp is not None:
                v[f + "P"].apply(self._one, cp, self._one, pp)
            v[f + "X"].apply(cx, new)
            new.add_scaled(self._one, pp)
            v["tmp1"], v["tmp2"] = v[f + "P"], v[f + "X"]
            v[f + "P"], v[f + "X"] = pp, new

    def _residual_norms(self, lam: np.ndarray) -> np.ndarray:
        """||A x_j - lam_j B x_j|| for each column (one download)."""
        R = self.v["R"]
        R.copy_from(self.v["AX"])
        R.sub_scaled(self._upload("lambda", lam[None, :]), self._b("X"))
        return self._download(R.compute_norm2(self._dense("norms", (1, lam.size), real_dtype(self.dtype))))[0][0]

    def solve(self, X: Dense) -> LobpcgResult:
        """The k = X.shape[1] extreme eigenpairs, from the initial block X (n x k, full rank;
        not changed)."""
        k = X.shape[1]
        if self.verbosity:
            constraints = "No constraints" if self.Y is None else \
                f"{self.Y.shape[1]} constraint{'s' if self.Y.shape[1] > 1 else ''}"
            print(f"Solving {'standard' if self.B is None else 'generalized'} eigenvalue problem with"
                  f"{'out' if self.M is None else ''} preconditioning\n\nmatrix size {self.n}\nblock size {k}\n\n"
                  f"{constraints}\n\n")
        lam = self._start(X)
        lam_hist = np.zeros((self.maxiter + 3, k), dtype=lam.dtype)
        res_hist = np.zeros((self.maxiter + 3, k), dtype=real_dtype(self.dtype))
        lam_hist[0] = lam
        smallest, best = np.inf, self.maxiter
        restart, forced, explicit = True, False, False
        iteration = -1
        while iteration < self.maxiter:
            iteration += 1
            norms, wbw, pbp = self._residuals(lam, with_p=iteration > 0)
            res_hist[iteration] = norms
            mean = np.sum(np.abs(norms)) / k
            if mean < smallest:
                smallest, best = mean, iteration
                self.v["best"].copy_from(self.v["X"])
            elif mean > 2.0 ** self.restart_control * smallest:
                forced = True  # (A X, B X drifted: computed anew)
                self.A.apply(self.v["X"], self.v["AX"])
                self._apply(self.B, self.v["X"], self._b("X"))
            # soft locking: a converged column leaves the basis, and comes back where the Rayleigh-Ritz
            # steps of the others carried its residual above tol again (SciPy's sticky lock ends the
            # iteration with such a column unconverged)
            active = norms > self.tol
            if self.verbosity:
                print(f"iteration {iteration}\ncurrent block size: {active.sum()}\neigenvalue(s):\n{lam}\n"
                      f"residual norm(s):\n{norms}")
            if not active.any():
                break
            a = np.flatnonzero(active)
            if not self._orthonormalize(a, wbw, pbp, iteration, norms):
                break
            if iteration > 0:
                restart = forced or self._p_failed
            # once the residuals are small, the Gram matrices are computed, not assumed
            explicit = explicit or norms.max() <= (1.0 if self.dtype in (np.float32, np.complex64)
                                                   else np.sqrt(np.finfo(self.dtype).eps))
            step = self._rayleigh_ritz(lam, a, restart, explicit, iteration)
            if step is None:
                break
            lam, cx, cw, cp = step
            lam_hist[iteration + 1] = lam
            self._update(cx, cw, cp)
        return self._finish(lam, iteration, smallest, best, lam_hist, res_hist)

    def _orthonormalize(self, a: np.ndarray, wbw: np.ndarray, pbp: np.ndarray | None, iteration: int,
                        norms: np.ndarray) -> bool:
        """B-orthonormalize the active W (then A W = A W) and P; False where W's fails (the
        iteration ends, as SciPy's). Sets ``_p_failed`` where P's failed (a restart)."""
        inverse = _inverse_cholesky(wbw[np.ix_(a, a)])
        if inverse is None:
            warnings.warn(f"Failed at iteration {iteration} with accuracies {norms}\n not reaching the requested "
                          f"tolerance {self.tol}.", UserWarning, stacklevel=5)
            return False
        self._normalize("W", a, inverse, ("", "B") if self.B is not None else ("",))
        self.A.apply(self.v["W"], self.v["AW"])
        self._p_failed = True
        if pbp is not None:
            # P's columns nearly dependent (a column back in the basis after soft locking brings
            # a direction made of the others'): dropped, a restart, as where Cholesky fails
            inverse = _inverse_cholesky(pbp[np.ix_(a, a)], rcond=np.sqrt(np.finfo(self.dtype).eps))
            if inverse is not None:
                self._normalize("P", a, inverse, self._families())
                self._p_failed = False
        return True

    def _final_ritz(self, k: int, rotate: bool) -> np.ndarray:
        """X = the best iterate (constrained) with A X and B X anew; rotate: its Ritz vectors (a
        Rayleigh-Ritz step on X alone), else its own columns, ordered by their Rayleigh
        quotients. Returns the values, in the order asked."""
        v = self.v
        v["X"].copy_from(v["best"])
        if self.Y is not None:
            self._constrain(v["X"])
        self.A.apply(v["X"], v["AX"])
        self._apply(self.B, v["X"], self._b("X"))
        g = self._grams({"xax": (v["X"], v["AX"]), "xbx": (v["X"], self._b("X"))})
        if not rotate:
            values, vectors = np.real(np.diag(g["xax"])) / np.real(np.diag(g["xbx"])), np.eye(k)
        else:
            if self.verbosity:
                report_nonhermitian(g["xax"], "gramA")
                report_nonhermitian(g["xbx"], "gramB")
            try:
                values, vectors = sla.eigh((g["xax"] + g["xax"].conj().T) / 2, (g["xbx"] + g["xbx"].conj().T) / 2,
                                           check_finite=False)
            except (sla.LinAlgError, ValueError) as err:
                raise ValueError("eigh has failed in lobpcg postprocessing") from err
        ii = _indices(values, k, self.largest)
        self._times([v[f + "X"] for f in self._families()], vectors[:, ii])
        return values[ii]

    def _finish(self, lam, iteration, smallest, best, lam_hist, res_hist) -> LobpcgResult:
        """After the loop: the best iterate, constrained, and a last Rayleigh-Ritz step on it
        alone (its eigenvectors B-orthonormal to rounding)."""
        v, k = self.v, lam.size
        norms = self._residual_norms(lam)
        lam_hist[iteration + 1], res_hist[iteration + 1] = lam, norms
        mean = np.sum(np.abs(norms)) / k
        # the last iterate where it converged (an earlier one of smaller mean residual may not have)
        converged = bool(np.max(np.abs(norms)) <= self.tol)
        if mean < smallest or converged:
            smallest, best = min(mean, smallest), iteration + 1
            v["best"].copy_from(v["X"])
        if np.max(np.abs(norms)) > self.tol:
            warnings.warn(f"Exited at iteration {iteration} with accuracies \n{norms}\nnot reaching the requested "
                          f"tolerance {self.tol}.\nUse iteration {best} instead with accuracy \n{smallest}.\n",
                          UserWarning, stacklevel=5)
        lam = self._final_ritz(k, rotate=True)
        norms = self._residual_norms(lam)
        if np.max(np.abs(norms)) > self.tol and converged:
            # the rotation by the last Rayleigh-Ritz step lifted a residual above tol: the converged
            # iterate's own columns instead (B-orthonormal to the rounding of the iteration)
            lam = self._final_ritz(k, rotate=False)
            norms = self._residual_norms(lam)
        lam_hist[best + 1], res_hist[best + 1] = lam, norms
        if np.max(np.abs(norms)) > self.tol:
            warnings.warn(f"Exited postprocessing with accuracies \n{norms}\nnot reaching the requested tolerance "
                          f"{self.tol}.", UserWarning, stacklevel=5)
        if self.verbosity:
            print(f"Final postprocessing eigenvalue(s):\n{lam}\nFinal residual norm(s):\n{norms}")
        return LobpcgResult(lam, v["X"], norms, iteration, bool(np.max(np.abs(norms)) <= self.tol),
                            list(lam_hist[:best + 2]), list(res_hist[:best + 2]))
