"""Tests of fill_audit_from_oracle.py: `python3 -m unittest discover -s scripts/validation`."""
import csv
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

sys.path.insert(0, os.path.dirname(__file__))
import fill_audit_from_oracle as fill  # noqa: E402

SHEET_COLUMNS = ["repo", "remedy", "failing", "tool_bucket", "is_failure", "failing_ok", "bucket", "note"]
ORACLE_COLUMNS = ["repo", "remedy", "remedy_subject", "is_fix", "introducing", "days_before", "bucket", "confidence",
                  "evidence"]
A, B, C, D, E = ("a" * 40, "b" * 40, "c" * 40, "d" * 40, "e" * 40)
F1, F2 = ("1" * 40, "2" * 40)


def write(path, columns, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)


class Fill(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.sheet = os.path.join(self.dir.name, "sheet.csv")
        self.oracle = os.path.join(self.dir.name, "o.judged.csv")
        self.out = os.path.join(self.dir.name, "out.csv")
        write(self.sheet, SHEET_COLUMNS, [
            ["o/r", A, F1, "ci", "", "", "", ""],
            ["o/r", B, F1, "ci", "", "", "", ""],
            ["o/r", C, F2, "ci", "", "", "", ""],
            ["o/r", D, F2, "ci", "", "", "", ""],
            ["o/r", E, F2, "ci", "no", "", "", "mine"],
        ])

    def run_fill(self, oracle_rows, *extra):
        write(self.oracle, ORACLE_COLUMNS, oracle_rows)
        err = io.StringIO()
        with redirect_stderr(err):
            code = fill.main([self.sheet, self.oracle, "--out", self.out, *extra])
        return code, err.getvalue()

    def test_fills_by_remedy_and_leaves_the_rest(self):
        code, err = self.run_fill([
            ["o/r", A, "s", "yes", F1[:12], "1", "self-reflection", "high", "blame of  the line"],
            ["o/r", B, "s", "yes", "unknown", "", "unclear", "low", "x"],
            ["o/r", C, "s", "no", "none", "", "", "high", "a feature"],
            ["o/r", E, "s", "yes", F2, "0", "ci", "high", "y"],
        ])
        self.assertEqual(code, 0)
        self.assertEqual(err.strip(), f"{self.out}: 3 rows filled, 1 without a judgement (left empty), 1 already filled")
        rows = list(csv.DictReader(open(self.out)))
        got = [(r["is_failure"], r["failing_ok"], r["bucket"], r["note"]) for r in rows]
        self.assertEqual(got, [
            ("yes", "yes", "self-reflection", "oracle high: blame of the line"),
            ("yes", "", "ambiguous", "oracle low: x"),
            ("no", "", "", "oracle high: a feature"),
            ("", "", "", ""),
            ("no", "", "", "mine"),
        ])

    def test_bad_oracle_values_name_the_line(self):
        code, err = self.run_fill([["o/r", A, "s", "maybe", "none", "", "", "high", "x"]])
        self.assertEqual(code, 2)
        self.assertIn("o.judged.csv:2: is_fix 'maybe' is not yes or no", err)
        self.assertFalse(os.path.exists(self.out))


if __name__ == "__main__":
    unittest.main()
