#!/usr/bin/python3
"""The coefficients of the vectorized GELU in include/ragpp/detail/nn.hpp (kGeluP, kGeluQ).

    /usr/bin/python3 scripts/fit_gelu.py [--clamp 5.6] [--degrees 5 5]

Fits r(x) = erf(x / sqrt 2) / 2 (so that GELU(x) = x (1/2 + r(x))) on [0, clamp] by an odd
rational x P(x^2) / Q(x^2), Q(0) = 1, minimising the largest absolute error: linearised
least squares (x P - f Q on a dense grid, weighted by 1 / Q of the previous step, Loeb's
method) with Lawson's reweighting towards the minimax, in a Chebyshev basis of x^2 / clamp^2
for conditioning; then prints the monomial coefficients in x^2 (as the kernel evaluates
them by Horner's rule) and the error in double, with the coefficients rounded to float.
Needs numpy (Debian's python3-numpy); the reference erf is Python's math.erf.
"""
import argparse
import math

import numpy as np
from numpy.polynomial import chebyshev, polynomial


def fit(a, b, clamp, iters=300):
    x = np.unique(np.concatenate([np.linspace(0, clamp, 20000), clamp * np.sin(np.linspace(0, np.pi / 2, 5000))]))
    f = np.array([math.erf(v / math.sqrt(2)) / 2 for v in x])
    v = 2 * (x / clamp) ** 2 - 1
    cheb = lambda k: np.cos(k * np.arccos(np.clip(v, -1, 1)))
    pb = np.stack([x * cheb(k) for k in range(a + 1)], 1)
    qb = np.stack([cheb(k) for k in range(b + 1)], 1)
    qprev, w, best = np.ones_like(x), np.ones_like(x) / len(x), None
    for _ in range(iters):
        A = np.hstack([pb, -f[:, None] * qb[:, 1:]])  # x P - f Q = f Q_0, Q's first coefficient 1
        W = np.sqrt(w) / qprev
        sol, *_ = np.linalg.lstsq(A * W[:, None], f * W, rcond=None)
        p_val, q_val = pb @ sol[:a + 1], qb @ np.concatenate([[1.0], sol[a + 1:]])
        err = p_val / q_val - f
        worst = np.max(np.abs(err))
        if best is None or worst < best[0]:
            best = (worst, sol.copy())
        qprev = q_val
        w = w * np.abs(err)
        w /= w.sum()
    return best


def monomial(cheb_coef, clamp):
    """Chebyshev series in v = 2 s / clamp^2 - 1 as a polynomial in s = x^2."""
    in_v = chebyshev.cheb2poly(cheb_coef)
    out = np.zeros(len(in_v))
    for k, c in enumerate(in_v):
        out[:k + 1] += c * polynomial.polypow([-1.0, 2.0 / clamp ** 2], k)[:k + 1]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clamp", type=float, default=5.6)
    ap.add_argument("--degrees", type=int, nargs=2, default=[5, 5], metavar=("P", "Q"))
    a = ap.parse_args()
    worst, sol = fit(a.degrees[0], a.degrees[1], a.clamp)
    p = monomial(sol[:a.degrees[0] + 1], a.clamp)
    q = monomial(np.concatenate([[1.0], sol[a.degrees[0] + 1:]]), a.clamp)
    p, q = p / q[0], q / q[0]
    x = np.linspace(0, a.clamp, 200001)
    ref = np.array([math.erf(v / math.sqrt(2)) / 2 for v in x])
    pf, qf = p.astype(np.float32).astype(float), q.astype(np.float32).astype(float)
    err_f = np.max(np.abs(x * np.polyval(pf[::-1], x * x) / np.polyval(qf[::-1], x * x) - ref))
    print(f"max |error| of r on [0, {a.clamp}]: {worst:.2e} (double), {err_f:.2e} (coefficients rounded to float)")
    print("1 - Phi(clamp) = %.2e" % (math.erfc(a.clamp / math.sqrt(2)) / 2))
    print("kGeluP = {" + ", ".join("%.9ef" % c for c in p) + "}")
    print("kGeluQ = {" + ", ".join("%.9ef" % c for c in q) + "}")


if __name__ == "__main__":
    main()
