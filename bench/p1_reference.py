#!/usr/bin/env python3
"""The reference tools `phase0 p1` is benchmarked against: read a P1 corpus (JSONL) and compute
scikit-learn's roc_auc_score, nothing else. Used by bench/p1.sh; prints the AUC so the runs can be compared.

Usage: python3 bench/p1_reference.py polars|pandas CORPUS
Requirements: pip install polars pandas scikit-learn
"""

import sys

from sklearn.metrics import roc_auc_score


def main() -> None:
    engine, path = sys.argv[1], sys.argv[2]
    if engine == "polars":
        import polars as pl

        frame = pl.read_ndjson(path)
        auc = roc_auc_score(frame["correct"].to_numpy(), frame["confidence"].to_numpy())
    elif engine == "pandas":
        import pandas as pd

        frame = pd.read_json(path, lines=True)
        auc = roc_auc_score(frame["correct"].to_numpy(), frame["confidence"].to_numpy())
    else:
        sys.exit(f"unknown engine {engine!r}")
    print(f"{engine}: AUC {auc:.6f}")


if __name__ == "__main__":
    main()
