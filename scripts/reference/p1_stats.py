#!/usr/bin/env python3
"""Reference values for the P1 statistics core (`pipeline/src/stats/`).

Writes `pipeline/tests/data/p1_stats_reference.json`: deterministic fixtures (inputs) and the values an
independent implementation computes for them; `pipeline/tests/stats_reference.rs` checks the Rust code
against it.

Independence of each reference:
  * AUC: scikit-learn `roc_auc_score`.
  * DeLong variance: the O(m*n) structural-components definition (pairwise kernel matrix), not the
    Sun & Xu rank algorithm the Rust code uses.
  * Wilson: `statsmodels.stats.proportion.proportion_confint(method="wilson")`.
  * Newcombe difference (method 10): textbook formula from the two Wilson intervals, cross-checked against
    statsmodels `confint_proportions_2indep(method="newcomb")` and Newcombe's (1998) published example.
  * Katz ratio: textbook formula, cross-checked against statsmodels (`method="log", compare="ratio"`).
  * Brier: `sklearn.metrics.brier_score_loss`; average precision: `sklearn.metrics.average_precision_score`.
  * ROC curve: `sklearn.metrics.roc_curve(drop_intermediate=False)`.
  * ECE (equal-width and equal-mass) and the reliability tables: numpy, following the definitions.
  * Power / sample sizes: a Python transcription of the same formulas (checks arithmetic only).

Confidences are multiples of 1e-6 (k / 10**6, or k / 10 for the tied fixture), so their shortest decimal
form round-trips exactly through any JSON parser.

Requirements: pip install scikit-learn scipy numpy statsmodels
Run from the repository root (or anywhere): python3 scripts/reference/p1_stats.py
The output is byte-identical across runs (for the same library versions).
"""

import json
import math
from pathlib import Path

import numpy as np
import scipy
import sklearn
import statsmodels
from scipy.stats import norm
from sklearn.metrics import average_precision_score, brier_score_loss, roc_auc_score, roc_curve
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

ALPHA = 0.05
Z = float(norm.ppf(1 - ALPHA / 2))
BINS = 10
OUT = Path(__file__).resolve().parents[2] / "pipeline" / "tests" / "data" / "p1_stats_reference.json"


# ----------------------------------------------------------------------------------------------- fixtures


def fixtures():
    out = []
    # Tiny, hand-checkable: one tie across classes (0.4), a confidence of exactly 1.0 (last bin), an edge 0.3.
    out.append(
        {
            "name": "tiny",
            "confidence": [0.9, 0.8, 0.4, 0.4, 0.2, 1.0, 0.3],
            "correct": [True, True, True, False, False, True, False],
        }
    )
    # Heavy ties: confidences on the 0.1 grid (many exactly on bin edges).
    rng = np.random.default_rng(20260101)
    k = rng.integers(0, 11, size=500)
    conf = [int(v) / 10 for v in k]
    correct = [bool(u < 0.15 + 0.7 * c) for u, c in zip(rng.random(500), conf)]
    out.append({"name": "ties_0.1_grid", "confidence": conf, "correct": correct})
    # 2,000 rows, continuous, mildly over-confident.
    rng = np.random.default_rng(42)
    k = np.rint(rng.beta(5, 2, size=2000) * 1_000_000).astype(np.int64)
    conf = [int(v) / 1_000_000 for v in k]
    correct = [bool(u < c**1.3) for u, c in zip(rng.random(2000), conf)]
    out.append({"name": "n2000", "confidence": conf, "correct": correct})
    # Perfect separation.
    out.append(
        {
            "name": "perfect_separation",
            "confidence": [0.95, 0.9, 0.85, 0.7, 0.3, 0.25, 0.1],
            "correct": [True, True, True, True, False, False, False],
        }
    )
    # Degenerate: a single class (AUC undefined). All correct, and all wrong.
    rng = np.random.default_rng(7)
    k = rng.integers(0, 1_000_001, size=20)
    out.append(
        {
            "name": "single_class_all_correct",
            "confidence": [int(v) / 1_000_000 for v in k],
            "correct": [True] * 20,
        }
    )
    out.append(
        {
            "name": "single_class_all_wrong",
            "confidence": [0.6, 0.1, 0.35, 0.8, 0.8],
            "correct": [False] * 5,
        }
    )
    # One positive only (AUC undefined: fewer than 2 in a class; AP defined).
    out.append(
        {
            "name": "one_positive",
            "confidence": [0.6, 0.1, 0.35, 0.8, 0.5],
            "correct": [False, False, True, False, False],
        }
    )
    return out


# ------------------------------------------------------------------------------------------- statistics


def delong_structural(scores, labels):
    """DeLong (1988) variance by its definition: psi(x, y) = 1[x > y] + 1/2 1[x == y] over all pairs."""
    x = scores[labels]
    y = scores[~labels]
    m, n = len(x), len(y)
    psi = (x[:, None] > y[None, :]).astype(float) + 0.5 * (x[:, None] == y[None, :])
    v10 = psi.mean(axis=1)
    v01 = psi.mean(axis=0)
    auc = psi.mean()
    s10 = float(np.var(v10, ddof=1))
    s01 = float(np.var(v01, ddof=1))
    return float(auc), s10 / m + s01 / n


def auc_reference(scores, labels):
    n_pos = int(labels.sum())
    n_neg = int((~labels).sum())
    if n_pos < 2 or n_neg < 2:
        return {"defined": False, "n_pos": n_pos, "n_neg": n_neg}
    value = float(roc_auc_score(labels.astype(int), scores))
    pair_auc, var = delong_structural(scores, labels)
    assert abs(pair_auc - value) < 1e-12, (pair_auc, value)
    se = math.sqrt(var)
    return {
        "defined": True,
        "n_pos": n_pos,
        "n_neg": n_neg,
        "value": value,
        "variance": var,
        "se": se,
        "ci": [min(max(value - Z * se, 0.0), 1.0), min(max(value + Z * se, 0.0), 1.0)],
    }


def table_rows(groups, conf, corr, edges=None):
    rows = []
    for g, idx in enumerate(groups):
        if len(idx) == 0:
            continue
        c = conf[idx]
        rows.append(
            {
                "lo": edges[g] if edges is not None else float(c.min()),
                "hi": edges[g + 1] if edges is not None else float(c.max()),
                "n": int(len(idx)),
                "mean_confidence": float(c.mean()),
                "accuracy": float(corr[idx].mean()),
            }
        )
    return rows


def reliability_equal_width(conf, corr):
    edges = [k / BINS for k in range(BINS + 1)]
    # Bin k = [edges[k], edges[k+1]); the last bin also takes 1.0.
    b = np.minimum(np.searchsorted(np.array(edges), conf, side="right") - 1, BINS - 1)
    groups = [np.flatnonzero(b == k) for k in range(BINS)]
    return table_rows(groups, conf, corr, edges)


def reliability_equal_mass(conf, corr):
    order = np.argsort(conf, kind="stable")
    return table_rows(np.array_split(order, BINS), conf, corr)


def ece(rows):
    total = sum(r["n"] for r in rows)
    if total == 0:
        return None
    return float(sum(r["n"] * abs(r["accuracy"] - r["mean_confidence"]) for r in rows) / total)


def fixture_expected(fx):
    conf = np.array(fx["confidence"], dtype=float)
    corr = np.array(fx["correct"], dtype=bool)
    width = reliability_equal_width(conf, corr)
    mass = reliability_equal_mass(conf, corr)
    return {
        "auc": auc_reference(conf, corr),
        "brier": float(brier_score_loss(corr.astype(int), conf, pos_label=1)),
        "ece_equal_width": ece(width),
        "ece_equal_mass": ece(mass),
        "reliability_equal_width": width,
        "reliability_equal_mass": mass,
        "average_precision": float(average_precision_score(corr.astype(int), conf)) if corr.any() else None,
        "roc_curve": roc_points(conf, corr),
    }


def roc_points(conf, corr):
    """sklearn's roc_curve without dropping intermediate points; its first point is (0, 0)."""
    if corr.all() or not corr.any():
        return None
    fpr, tpr, _ = roc_curve(corr.astype(int), conf, drop_intermediate=False)
    return [[float(f), float(t)] for f, t in zip(fpr, tpr)]


def wilson(x, n):
    if n == 0:
        return None
    lo, hi = proportion_confint(x, n, alpha=ALPHA, method="wilson")
    return {"estimate": x / n, "lo": float(lo), "hi": float(hi)}


def newcombe(x1, n1, x2, n2):
    a, b = wilson(x1, n1), wilson(x2, n2)
    if a is None or b is None:
        return None
    p1, p2 = a["estimate"], b["estimate"]
    d = p1 - p2
    lo = d - math.sqrt((p1 - a["lo"]) ** 2 + (b["hi"] - p2) ** 2)
    hi = d + math.sqrt((a["hi"] - p1) ** 2 + (p2 - b["lo"]) ** 2)
    sm = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff", alpha=ALPHA)
    assert abs(sm[0] - lo) < 1e-12 and abs(sm[1] - hi) < 1e-12, (sm, lo, hi)
    return {"estimate": d, "lo": lo, "hi": hi}


def katz(x1, n1, x2, n2):
    if x1 == 0 or x2 == 0 or n1 == 0 or n2 == 0:
        return None
    r = (x1 / n1) / (x2 / n2)
    se = math.sqrt(1 / x1 - 1 / n1 + 1 / x2 - 1 / n2)
    lo, hi = r * math.exp(-Z * se), r * math.exp(Z * se)
    sm = confint_proportions_2indep(x1, n1, x2, n2, method="log", compare="ratio", alpha=ALPHA)
    assert abs(sm[0] - lo) < 1e-12 * hi and abs(sm[1] - hi) < 1e-12 * hi, (sm, lo, hi)
    return {"estimate": r, "lo": lo, "hi": hi}


# Count pairs (x1, n1) = high-confidence subset, (x2, n2) = whole corpus, plus edge cases.
PROPORTION_CASES = [
    (56, 70, 48, 80),  # Newcombe (1998) example: method 10 gives 0.0524 to 0.3339
    (0, 10, 3, 30),
    (10, 10, 25, 30),
    (0, 0, 5, 10),
    (912, 1000, 7400, 10000),
    (1, 1, 1, 2),
    (3, 40, 3, 40),
]


def proportion_case(x1, n1, x2, n2):
    return {
        "x1": x1,
        "n1": n1,
        "x2": x2,
        "n2": n2,
        "wilson1": wilson(x1, n1),
        "wilson2": wilson(x2, n2),
        "newcombe_difference": newcombe(x1, n1, x2, n2),
        "katz_ratio": katz(x1, n1, x2, n2),
    }


def p1_subset_case(fx, cut=0.9):
    """The P1 lift: rows with confidence >= cut against all rows."""
    conf = np.array(fx["confidence"])
    corr = np.array(fx["correct"])
    high = conf >= cut
    return proportion_case(int(corr[high].sum()), int(high.sum()), int(corr.sum()), len(corr))


# -------------------------------------------------------------------------------------------- power


def hm_factor(a, kappa):
    q1 = a / (2 - a)
    q2 = 2 * a * a / (1 + a)
    return (q2 - a * a) + (q1 - a * a) / kappa


def auc_size(exact, kappa):
    n_pos = math.ceil(exact)
    n_neg = math.ceil(kappa * n_pos)
    return {"positives_exact": exact, "positives": n_pos, "n_neg": n_neg, "total": n_pos + n_neg}


def auc_test_case(target, threshold, kappa, alpha, power):
    za, zb = norm.ppf(1 - alpha), norm.ppf(power)
    num = za * math.sqrt(hm_factor(threshold, kappa)) + zb * math.sqrt(hm_factor(target, kappa))
    exact = float((num / (target - threshold)) ** 2)
    return {"target": target, "threshold": threshold, "kappa": kappa, "alpha": alpha, "power": power} | auc_size(
        exact, kappa
    )


def auc_ci_case(a, w, kappa, alpha):
    z = norm.ppf(1 - alpha / 2)
    exact = float(z * z * hm_factor(a, kappa) / (w * w))
    return {"auc": a, "half_width": w, "kappa": kappa, "alpha": alpha} | auc_size(exact, kappa)


def prop_test_case(p1, p0, alpha, power):
    za, zb = norm.ppf(1 - alpha), norm.ppf(power)
    num = za * math.sqrt(p0 * (1 - p0)) + zb * math.sqrt(p1 * (1 - p1))
    exact = float((num / (p1 - p0)) ** 2)
    return {"p1": p1, "p0": p0, "alpha": alpha, "power": power, "exact": exact, "n": math.ceil(exact)}


def prop_ci_case(p, w, alpha):
    z = norm.ppf(1 - alpha / 2)
    exact = float(z * z * p * (1 - p) / (w * w))
    return {"p": p, "half_width": w, "alpha": alpha, "exact": exact, "n": math.ceil(exact)}


def power_cases():
    return {
        "auc_test": [
            auc_test_case(0.70, 0.60, 1.0, 0.05, 0.8),
            auc_test_case(0.75, 0.60, 0.25, 0.05, 0.8),
            auc_test_case(0.65, 0.60, 3.0, 0.025, 0.9),
        ],
        "auc_ci": [
            auc_ci_case(0.70, 0.05, 1.0, 0.05),
            auc_ci_case(0.65, 0.02, 0.4, 0.05),
        ],
        "proportion_test": [
            prop_test_case(0.80, 0.70, 0.05, 0.8),
            prop_test_case(0.95, 0.90, 0.025, 0.9),
        ],
        "proportion_ci": [
            prop_ci_case(0.5, 0.05, 0.05),
            prop_ci_case(0.83, 0.01, 0.01),
        ],
    }


# --------------------------------------------------------------------------------------------- main


def main():
    # Sanity check against Newcombe's (1998) published interval for 56/70 vs 48/80.
    ex = newcombe(56, 70, 48, 80)
    assert round(ex["lo"], 4) == 0.0524 and round(ex["hi"], 4) == 0.3339, ex

    fxs = fixtures()
    doc = {
        "generator": "scripts/reference/p1_stats.py",
        "versions": {
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__,
            "statsmodels": statsmodels.__version__,
        },
        "alpha": ALPHA,
        "z": Z,
        "fixtures": [fx | {"expected": fixture_expected(fx)} for fx in fxs],
        "proportions": [proportion_case(*c) for c in PROPORTION_CASES]
        + [p1_subset_case(fx) for fx in fxs if fx["name"] in ("ties_0.1_grid", "n2000")],
        "power": power_cases(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
