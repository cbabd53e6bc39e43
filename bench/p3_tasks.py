"""Writes a synthetic upstream P3 JSONL export of N tasks (default 1,000,000) to PATH, deterministically.

    python3 bench/p3_tasks.py PATH [N]

4 in 5 tasks are done with a completion date in 2025, a fifth of them carry an outcome, every 17th a reopen
three days after completion, every 23rd a follow-up naming the next task.
"""
import json
import random
import sys

path = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
random.seed(3)
with open(path, "w") as f:
    for i in range(n):
        d = 1 + i % 300
        month, day = 1 + d // 31 % 12, 1 + d % 28
        done = i % 5 != 0
        row = {
            "id": f"T-{i}",
            "status": "done" if done else "in_progress",
            "completed_at": f"2025-{month:02d}-{day:02d}T10:00:00Z" if done else None,
            "outcome": random.choice([None, None, None, "right", "wrong"]),
            "reopened_at": [f"2025-{month:02d}-{1 + (d + 3) % 28:02d}T10:00:00Z"] if i % 17 == 0 else [],
            "followups": [f"T-{i + 1}"] if i % 23 == 0 else [],
        }
        f.write(json.dumps(row) + "\n")
