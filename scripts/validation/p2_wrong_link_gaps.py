#!/usr/bin/env python3
"""For each line link the P2 audits judged wrong (pipeline/tests/data/p2-audit/oracle and round3), how far the linked
commit lies from the reader's culprit (committer time, minutes; positive: the link is newer) and whether one author
wrote both: would counting a burst of commits (an agent's turn) as one change fix these links? Mirrors under
/work/.mirror/OWNER+NAME/repo. Prints "judged right-of-linked" then one line per wrong link."""
import csv, glob, subprocess, sys, os
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'pipeline', 'tests', 'data')
M=os.environ.get('MIRRORS', '/work/.mirror')
def info(repo, sha):
    d=f"{M}/{repo.replace('/','+')}/repo"
    try:
        out=subprocess.run(['git','-C',d,'show','-s','--format=%ct%x09%ae%x09%an',sha],capture_output=True,text=True).stdout.strip()
        t,e,n=out.split('\t'); return int(t),e,n
    except Exception: return None
rows=[]
for judged in glob.glob(DATA + '/p2-audit/round3/*.judged.csv')+glob.glob(DATA + '/p2-audit/oracle/*.judged.csv'):
    base=os.path.basename(judged).replace('.judged.csv','')
    vdir=os.path.dirname(judged).replace('oracle','validation') if 'oracle' in judged else os.path.dirname(judged)+'/validation'
    link={}
    for r in csv.DictReader(open(f"{vdir}/{base}.csv")):
        link[r['remedy']]=(r['failing'],r['detection'])
    for r in csv.DictReader(open(judged)):
        if r['is_fix']!='yes' or r['remedy'] not in link: continue
        failing,det=link[r['remedy']]
        if not det.startswith('fix-after-change') or not failing: continue
        intro=r['introducing'].strip()
        ok = intro and (failing.startswith(intro) or intro.startswith(failing))
        rows.append((r['repo'],r['remedy'][:10],failing[:10],intro[:10],ok,det))
print(len(rows), sum(1 for r in rows if r[4]))
for repo,rem,fail,intro,ok,det in rows:
    if ok or not intro: 
        if not intro: print(repo,rem,'no reader culprit',det)
        continue
    a=info(repo,fail); b=info(repo,intro)
    if not a or not b: print(repo,rem,'?'); continue
    print(f"{repo:35} {rem} link {fail} intro {intro} gap {(a[0]-b[0])/60:9.1f} min same_author={a[1]==b[1]} {det}")
