#!/usr/bin/env python3
"""Fill a P2 audit sheet's reader columns from oracle judgement files, by remedy sha.

    python3 scripts/validation/fill_audit_from_oracle.py SHEET.csv ORACLE.judged.csv [ORACLE ...] --out FILLED.csv

The sheet is what `phase0 p2 audit` writes; an oracle file has the columns repo, remedy, remedy_subject, is_fix,
introducing, days_before, bucket, confidence, evidence (one row per judged remedy, independent of any linker).
For every sheet row whose remedy has a judgement:

    is_failure = yes  when is_fix = yes and introducing is not `none`, else no
    failing_ok = yes / no  when introducing is a sha and the row names a failing change (it is that one, or an
                           abbreviation of it); empty for a row without one (nothing to judge);
                 empty when introducing is `unknown` or the row is not a failure
    bucket     = the oracle's bucket, `unclear` (or empty) -> ambiguous; empty when not a failure
    note       = "oracle <confidence>: <evidence>"

Rows with no judgement are left empty (`phase0 p2 --audit` counts them as unaudited), or dropped with
--only-judged (to turn a sheet of every failure, `phase0 p2 audit --per-stratum 1000000`, into a validation sheet);
judged remedies with no row are listed. Rows already filled are kept
unless --overwrite. Counts go to stderr. Exit 2 on bad input, naming the file and line; nothing is written then.
"""
import argparse
import csv
import re
import sys

SHA = re.compile(r"^[0-9a-f]{7,40}$")
READER = ("is_failure", "failing_ok", "bucket", "note")
BUCKETS = {"ci", "human-review", "self-reflection", "unclear", ""}


class InputError(Exception):
    pass


def read_oracle(path):
    judged = {}
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = {"remedy", "is_fix", "introducing", "bucket", "confidence", "evidence"} - set(reader.fieldnames or [])
        if missing:
            raise InputError(f"{path}:1: missing columns {sorted(missing)}")
        for row in reader:
            line = reader.line_num
            remedy = row["remedy"].strip().lower()
            is_fix = row["is_fix"].strip()
            introducing = row["introducing"].strip().lower()
            bucket = row["bucket"].strip()
            if not SHA.match(remedy):
                raise InputError(f"{path}:{line}: remedy {row['remedy']!r} is not a sha")
            if is_fix not in ("yes", "no"):
                raise InputError(f"{path}:{line}: is_fix {is_fix!r} is not yes or no")
            if introducing not in ("none", "unknown") and not SHA.match(introducing):
                raise InputError(f"{path}:{line}: introducing {introducing!r} is not a sha, none or unknown")
            if bucket not in BUCKETS:
                raise InputError(f"{path}:{line}: bucket {bucket!r} is not ci, human-review, self-reflection or unclear")
            if remedy in judged and judged[remedy][0] != row:
                raise InputError(f"{path}:{line}: remedy {remedy} is judged twice, differently ({judged[remedy][1]})")
            judged[remedy] = (row, f"{path}:{line}")
    return judged


def same_commit(a, b):
    return bool(a) and bool(b) and (a.startswith(b) or b.startswith(a))


def fill(row, judgement):
    is_fix = judgement["is_fix"].strip()
    introducing = judgement["introducing"].strip().lower()
    failure = is_fix == "yes" and introducing != "none"
    row["is_failure"] = "yes" if failure else "no"
    # A row whose failing change is not named (an unattributed fix) has no link to judge: precision is of the links
    # the tool made; a missed link is recall, which the self-check and VALIDATION.md report.
    if failure and introducing != "unknown" and row["failing"].strip():
        row["failing_ok"] = "yes" if same_commit(row["failing"].strip().lower(), introducing) else "no"
    else:
        row["failing_ok"] = ""
    bucket = judgement["bucket"].strip()
    row["bucket"] = ("ambiguous" if bucket in ("unclear", "") else bucket) if failure else ""
    evidence = " ".join(judgement["evidence"].split())
    row["note"] = f"oracle {judgement['confidence'].strip()}: {evidence}"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sheet")
    parser.add_argument("oracles", nargs="+")
    parser.add_argument("--out", required=True)
    parser.add_argument("--overwrite", action="store_true", help="replace reader columns already filled")
    parser.add_argument("--only-judged", action="store_true",
                        help="keep only the rows whose remedy has a judgement (a validation sheet of a whole run)")
    args = parser.parse_args(argv)
    try:
        judged = {}
        for path in args.oracles:
            for remedy, value in read_oracle(path).items():
                if remedy in judged and judged[remedy][0] != value[0]:
                    raise InputError(f"{value[1]}: remedy {remedy} is judged differently at {judged[remedy][1]}")
                judged[remedy] = value
        with open(args.sheet, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            columns = reader.fieldnames or []
            missing = {"remedy", "failing", *READER} - set(columns)
            if missing:
                raise InputError(f"{args.sheet}:1: missing columns {sorted(missing)}")
            rows = list(reader)
    except (InputError, OSError) as error:
        print(f"fill_audit_from_oracle: {error}", file=sys.stderr)
        return 2
    filled = kept = unjudged = 0
    for row in rows:
        judgement = judged.get(row["remedy"].strip().lower())
        if any(row[c].strip() for c in READER) and not args.overwrite:
            kept += 1
        elif judgement is None:
            unjudged += 1
        else:
            fill(row, judgement[0])
            filled += 1
    in_sheet = {row["remedy"].strip().lower() for row in rows}
    if args.only_judged:
        rows = [row for row in rows if row["remedy"].strip().lower() in judged]
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    dropped = " (dropped)" if args.only_judged else " (left empty)"
    print(f"{args.out}: {filled} rows filled, {unjudged} without a judgement{dropped}, {kept} already filled",
          file=sys.stderr)
    absent = sorted(remedy for remedy in judged if remedy not in in_sheet)
    if absent:
        # Judged remedies the run made no failure of (not detected as a fix, or skipped): not in the sheet.
        print(f"{len(absent)} judged remedies have no row in the sheet: {' '.join(r[:12] for r in absent)}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
