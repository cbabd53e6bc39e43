#!/usr/bin/env python3
"""Reads a report's Parquet table with pyarrow and compares it with the CSV written beside it (issue 21).

    python3 scripts/check-parquet.py reports/p3/p3-tasks.parquet [reports/p2/p2-failures.parquet ...]

For each TABLE.parquet: the column names and order equal the CSV header of TABLE.csv, every row holds the CSV's
values (null is an empty cell, booleans `true`/`false`, a list joined with `;`), and the schema's types are
printed. Exit 1 on the first difference. Needs pyarrow (`pip install pyarrow`); the Rust tests read the same files
with polars (pipeline/tests/parquet.rs).
"""
import csv
import sys

import pyarrow.parquet as pq


def cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ";".join(cell(v) for v in value)
    return str(value)


def check(path):
    table = pq.read_table(path)
    with open(path[: -len(".parquet")] + ".csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    if table.column_names != header:
        sys.exit(f"{path}: columns {table.column_names} but the CSV has {header}")
    parquet_rows = [[cell(v) for v in row.values()] for row in table.to_pylist()]
    if len(parquet_rows) != len(rows):
        sys.exit(f"{path}: {len(parquet_rows)} rows but the CSV has {len(rows)}")
    for number, (got, want) in enumerate(zip(parquet_rows, rows), start=2):
        if got != want:
            sys.exit(f"{path}: CSV line {number}: {got} != {want}")
    meta = pq.ParquetFile(path).metadata
    print(f"{path}: {len(rows)} rows like the CSV, {meta.num_row_groups} row group(s), created by {meta.created_by!r}")
    for field in table.schema:
        print(f"  {field.name}: {field.type}{'' if field.nullable else ' not null'}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        check(path)
