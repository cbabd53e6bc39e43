#!/usr/bin/env python3
"""Reads the partitions of a pooled P2 run with DuckDB, as an analyst would, and checks them against phase0's table.

    pip install duckdb
    python3 scripts/check-partitions.py OUT      # OUT: the --out of `phase0 p2 --repo A --repo B` (or of phase0 pool
                                                 # over a directory of repo=<name>/ partitions)

DuckDB reads `OUT/repo=*/p2-failures.parquet` with Hive partitioning (the `repo` column comes from the directory
name, percent-decoded), counts the failures per repository and bucket, and the script compares those counts with
`OUT/p2-repositories.csv` and `OUT/p2-repositories.parquet` row by row. Exit 0 when they agree, 1 otherwise.
"""
import csv
import sys
from pathlib import Path

import duckdb


def main(out: Path) -> int:
    glob = str(out / "repo=*" / "p2-failures.parquet")
    counted = duckdb.sql(
        f"""
        select repo, count(*) as failures,
               count(*) filter (where bucket <> 'ambiguous') as classified,
               count(*) filter (where bucket = 'ci') as ci,
               count(*) filter (where bucket = 'human-review') as human_review,
               count(*) filter (where bucket = 'self-reflection') as self_reflection,
               count(*) filter (where bucket = 'ambiguous') as ambiguous
        from read_parquet('{glob}', hive_partitioning = true)
        group by repo order by repo
        """
    ).fetchall()
    columns = ["failures", "classified", "ci", "human_review", "self_reflection", "ambiguous"]
    with open(out / "p2-repositories.csv", newline="", encoding="utf-8") as f:
        table = {row["repository"]: row for row in csv.DictReader(f)}
    parquet = {
        row[0]: row[1:]
        for row in duckdb.sql(
            f"select repository, {', '.join(columns)} from read_parquet('{out / 'p2-repositories.parquet'}')"
        ).fetchall()
    }
    ok = True
    # A repository without failures has no rows in its partition's table, so DuckDB does not see it.
    for name, row in table.items():
        if name not in {r[0] for r in counted} and int(row["failures"]) != 0:
            print(f"{name}: in p2-repositories.csv with {row['failures']} failures, no rows in its partition")
            ok = False
    for repo, *counts in counted:
        expected = [int(table.get(repo, {}).get(c, -1)) for c in columns]
        if counts != expected or list(parquet.get(repo, ())) != expected:
            print(f"{repo}: DuckDB counts {counts}, p2-repositories.csv {expected}, .parquet {parquet.get(repo)}")
            ok = False
        else:
            print(f"{repo}: {dict(zip(columns, counts))}")
    print("agree" if ok else "DISAGREE")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
