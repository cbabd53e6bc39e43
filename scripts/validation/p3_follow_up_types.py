#!/usr/bin/env python3
"""The type of each judged follow-up (wrong.follow-up rows of every P3 reading), read from the task file at the
signal's commit on the bare mirrors under /work/.mirror, against its judgement: how often a follow-up of each type
was genuine. `?`: the follow-up is not in the task file at that commit (or the mirror lacks the blob).

    cd pipeline/tests/data && python3 ../../../scripts/validation/p3_follow_up_types.py
"""
import csv,glob,os,json,subprocess,collections
def mirror(repo):
    b='/work/.mirror/'+repo.replace('/','+')
    return b+'/repo' if os.path.isdir(b+'/repo') else b
c=collections.Counter(); seen=set()
for s in sorted(glob.glob('p3-audit*/*.sample.csv')):
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
