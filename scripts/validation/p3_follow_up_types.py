#!/usr/bin/env python3
"""The type of each judged follow-up (wrong.follow-up rows of every P3 reading), read from the task file at the
signal's commit on the bare mirrors under /work/.mirror, against its judgement: how often a follow-up of each type
was genuine. `?`: the follow-up is not in the task file at that commit (or the mirror lacks the blob).

    cd pipeline/tests/data && python3 ../../../scripts/validation/p3_follow_up_types.py [READING_DIR ...]

Without arguments, every p3-audit* reading. VALIDATION.md's figures for the readings before version 8's candidate
(29 of 49 bugs genuine, 8 of 50 others): p3-audit p3-audit-v3 p3-audit-v4 p3-audit-v5 p3-audit-v6-dev p3-audit-v6
p3-audit-v7.
"""
import csv,glob,os,json,subprocess,collections,sys
def mirror(repo):
    b='/work/.mirror/'+repo.replace('/','+')
    return b+'/repo' if os.path.isdir(b+'/repo') else b
c=collections.Counter(); seen=set()
dirs = sys.argv[1:] or sorted(glob.glob('p3-audit*'))
for s in sorted(f for d in dirs for f in glob.glob(os.path.join(d, '*.sample.csv'))):
    j=s.replace('.sample.csv','.judged.csv')
    if not os.path.exists(j): continue
    S=list(csv.DictReader(open(s))); J=list(csv.DictReader(open(j)))
    for a,b in zip(S,J):
        if a['signal']!='wrong.follow-up': continue
        fu=a['detail'].replace('follow-up ','').strip()
        key=(a['repo'],a['task'],fu)
        if key in seen: continue
        seen.add(key)
        m=mirror(a['repo']); typ='?'
        for path in ('.beads/issues.jsonl','.beads/beads.jsonl'):
            out=subprocess.run(['git','-C',m,'show',f"{a['commit']}:{path}"],capture_output=True,text=True,errors='replace').stdout
            for line in out.splitlines():
                if f'"id":"{fu}"' in line or f'"id": "{fu}"' in line:
                    try: d=json.loads(line); typ=d.get('issue_type') or d.get('type') or '-'; 
                    except Exception: pass
                    break
            if typ!='?': break
        c[(typ,b['genuine'])]+=1
for k,v in sorted(c.items()): print(k,v)
