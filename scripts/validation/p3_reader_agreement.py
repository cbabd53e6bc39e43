#!/usr/bin/env python3
"""Agreement of two readers of the same P3 sample: the confusion of their `genuine` judgements and Cohen's kappa
(scikit-learn; `unclear` counts as not genuine, as the precision does).

    p3_reader_agreement.py FIRST_DIR SECOND_DIR

Each directory holds <owner>+<name>.judged.csv sheets of the same samples, row for row.
"""
import collections
import csv
import glob
import os
import sys

from sklearn.metrics import cohen_kappa_score

first, second = sys.argv[1], sys.argv[2]
pairs = []
for path in sorted(glob.glob(os.path.join(first, "*.judged.csv"))):
    with open(path, newline="", encoding="utf-8") as f:
        a = list(csv.DictReader(f))
    with open(os.path.join(second, os.path.basename(path)), newline="", encoding="utf-8") as f:
        b = list(csv.DictReader(f))
    assert [(r["task"], r["signal"], r["commit"]) for r in a] == [(r["task"], r["signal"], r["commit"]) for r in b], path
    pairs += [(x["genuine"], y["genuine"], x["repo"], x["task"]) for x, y in zip(a, b)]
for (x, y), n in sorted(collections.Counter((x, y) for x, y, _, _ in pairs).items()):
    print(f"first {x:8s} second {y:8s} {n}")
print(f"agree {sum(x == y for x, y, _, _ in pairs)} of {len(pairs)}")
binary = lambda v: "yes" if v == "yes" else "no"
print(f"kappa (unclear = no) {cohen_kappa_score([binary(x) for x, *_ in pairs], [binary(y) for _, y, *_ in pairs]):.3f}")
for x, y, repo, task in pairs:
    if x != y:
        print(f"differ {repo} {task}: {x} / {y}")
