#!/usr/bin/env python3
"""Two features of judged follow-ups (wrong.follow-up rows of every P3 reading) against their judgement, to see
whether either separates genuine follow-ups from planned work before any rule is written (VALIDATION.md, "P3: two
follow-up features, looked at"):

- defect words in the follow-up's title (fix, bug, broken, regression, crash, error, fail, wrong, missing, ...),
  by the follow-up's type (bug or other), read from the task file at the signal's commit on the bare mirrors under
  /work/.mirror (`?`: not found there);
- whether the follow-up was filed in a batch: another sampled follow-up of the same task in the same commit
  (`batch`), another sampled follow-up of any task in that commit (`shared commit`), or neither (`alone`).

    cd pipeline/tests/data && python3 ../../../scripts/validation/p3_follow_up_features.py [READING_DIR ...]

Without arguments, every p3-audit* reading. Each follow-up is counted once (repository, task, follow-up id).
"""
import collections, csv, glob, json, os, re, subprocess, sys

DEFECT = re.compile(
    r"\b(fix|fixes|fixed|bug|bugs|broken|breaks|break|regression|regress|crash|crashes|error|errors|fail|fails|"
    r"failing|failure|wrong|incorrect|missing|doesn't|does not|not working|leak|panic|flaky|race)\b",
    re.I,
)


def mirror(repo):
    base = '/work/.mirror/' + repo.replace('/', '+')
    return base + '/repo' if os.path.isdir(base + '/repo') else base


def task_at(repo, commit, task_id):
    for path in ('.beads/issues.jsonl', '.beads/beads.jsonl'):
        out = subprocess.run(['git', '-C', mirror(repo), 'show', f'{commit}:{path}'], capture_output=True,
                             text=True, errors='replace').stdout
        for line in out.splitlines():
            if f'"id":"{task_id}"' in line or f'"id": "{task_id}"' in line:
                try:
                    return json.loads(line)
                except ValueError:
                    return None
    return None


words, batches, seen = collections.Counter(), collections.Counter(), set()
dirs = sys.argv[1:] or sorted(glob.glob('p3-audit*'))
for sample in sorted(f for d in dirs for f in glob.glob(os.path.join(d, '*.sample.csv'))):
    judged = sample.replace('.sample.csv', '.judged.csv')
    if not os.path.exists(judged):
        continue
    rows = list(zip(csv.DictReader(open(sample)), csv.DictReader(open(judged))))
    follow_ups = [(a, b) for a, b in rows if a['signal'] == 'wrong.follow-up']
    same_task = collections.Counter((a['repo'], a['task'], a['commit']) for a, _ in follow_ups)
    same_commit = collections.Counter((a['repo'], a['commit']) for a, _ in follow_ups)
    for a, b in follow_ups:
        follow_up = a['detail'].replace('follow-up ', '').strip()
        key = (a['repo'], a['task'], follow_up)
        if key in seen:
            continue
        seen.add(key)
        genuine = b['genuine']
        task = task_at(a['repo'], a['commit'], follow_up)
        if task is None:
            words[('?', '?', genuine)] += 1
        else:
            kind = 'bug' if (task.get('issue_type') or task.get('type')) == 'bug' else 'other'
            words[(kind, 'defect words' if DEFECT.search(task.get('title', '')) else 'plain', genuine)] += 1
        if same_task[(a['repo'], a['task'], a['commit'])] > 1:
            batch = 'batch'
        elif same_commit[(a['repo'], a['commit'])] > 1:
            batch = 'shared commit'
        else:
            batch = 'alone'
        batches[(batch, genuine)] += 1

print('type, title, judgement: follow-ups')
for key, n in sorted(words.items()):
    print(' ', ', '.join(key) + ':', n)
print('filed, judgement: follow-ups')
for key, n in sorted(batches.items()):
    print(' ', ', '.join(key) + ':', n)
