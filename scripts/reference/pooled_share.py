#!/usr/bin/env python3
"""Reference for P2's pooled share over repositories (pipeline/src/stats/cluster.rs), written apart from it.

The pooled share is the ratio estimator X/M over repositories (clusters); its interval is a design-effect Wilson
interval: the variance of the ratio by the CR3 cluster-robust estimator (each repository's residual x_i - p m_i
inflated by 1/(1 - m_i/M), close to the delete-one-repository jackknife), the design effect its ratio to the
binomial variance (never below 1), the Wilson score interval on the effective size M/deff with Student's t on
k - 1 degrees of freedom as the critical value (Korn and Graubard 1998's effective-size idea).

    python3 scripts/reference/pooled_share.py            # the reference values the Rust test pins
    python3 scripts/reference/pooled_share.py --coverage  # the coverage grid in docs/p2.md (slow: numpy, scipy)
"""
import sys

import numpy as np
from scipy import stats


def wilson(p, n, c, all_none, all_some):
    d = 1 + c * c / n
    center = (p + c * c / (2 * n)) / d
    half = c / d * np.sqrt(p * (1 - p) / n + c * c / (4 * n * n))
    lo = 0.0 if all_none else min(max(center - half, 0.0), 1.0)
    hi = 1.0 if all_some else min(max(center + half, 0.0), 1.0)
    return lo, hi


def pooled(x, m, alpha=0.05):
    x = np.asarray(x, dtype=float)
    m = np.asarray(m, dtype=float)
    keep = m > 0
    x, m = x[keep], m[keep]
    k = len(m)
    if k < 2:
        return None
    M, X = m.sum(), x.sum()
    p = X / M
    e = x - p * m
    h = m / M
    v = np.sum(e**2 / (1 - h) ** 2) / M**2
    v_srs = p * (1 - p) / M
    deff = max(1.0, v / v_srs) if v_srs > 0 else 1.0
    n_eff = M / deff
    c = stats.t.ppf(1 - alpha / 2, k - 1)
    lo, hi = wilson(p, n_eff, c, X == 0, X == M)
    return dict(estimate=p, lo=lo, hi=hi, design_effect=deff, effective_n=n_eff, critical=c, df=k - 1)


CASES = [
    ("five repositories, heterogeneous", [12, 40, 3, 150, 30], [200, 90, 60, 300, 45]),
    ("three, homogeneous", [10, 20, 30], [100, 200, 300]),
    ("two, one without self-reflection", [0, 8], [50, 40]),
    ("none self-reflection", [0, 0, 0], [10, 20, 30]),
]


def coverage(seed=20261126, sims=2000):
    rng = np.random.default_rng(seed)
    print("| repositories | true share | ICC | size spread (sigma) | coverage | interval below the share | above it | binomial Wilson as if independent |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for sigma in (0.5, 1.2):
        for k in (3, 5, 10, 20):
            for mu in (0.05, 0.3):
                for icc in (0.0, 0.02, 0.1, 0.3):
                    hits = below = above = naive = 0
                    for _ in range(sims):
                        m = np.maximum(5, np.round(rng.lognormal(np.log(200), sigma, size=k))).astype(int)
                        if icc > 0:
                            a, b = mu * (1 - icc) / icc, (1 - mu) * (1 - icc) / icc
                            p = rng.beta(a, b, size=k)
                        else:
                            p = np.full(k, mu)
                        x = rng.binomial(m, p)
                        r = pooled(x, m)
                        hits += r["lo"] <= mu <= r["hi"]
                        below += r["hi"] < mu
                        above += r["lo"] > mu
                        lo, hi = wilson(x.sum() / m.sum(), m.sum(), stats.norm.ppf(0.975), x.sum() == 0, x.sum() == m.sum())
                        naive += lo <= mu <= hi
                    print(f"| {k} | {mu} | {icc} | {sigma} | {hits / sims:.3f} | {below / sims:.3f} | {above / sims:.3f} | {naive / sims:.3f} |")


if __name__ == "__main__":
    if "--coverage" in sys.argv:
        coverage()
    else:
        for name, x, m in CASES:
            r = pooled(x, m)
            print(name, {k: float(f"{v:.12g}") for k, v in r.items()})
