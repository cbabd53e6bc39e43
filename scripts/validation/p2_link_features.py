#!/usr/bin/env python3
"""Features of the line links the P2 audits judged (VALIDATION.md, "P2: a share-of-lines rule, tried"): for every
fix of pipeline/tests/data/p2-audit/{validation,round3/validation}/*.csv that version 3 linked on line evidence
(`lines` or `adjacent`) and a reader judged (failing_ok yes/no), read from the bare mirrors under /work/.mirror:
the share of the fix's removed lines that positional blame (`git blame -w` in the fix's parent) gives to the linked
commit (`cov`), commits touching the fix's files within an hour / six hours of it, the number of commits of the
7-day window among the blamed ones, and the link's age. Prints one JSON line per link, then precision per rule.

    p2_link_features.py [OUT.json]
"""
import csv,glob,subprocess,os,re,sys,collections,json
BASE=os.path.join(os.path.dirname(os.path.abspath(__file__)),'..','..','pipeline','tests','data','p2-audit')
def mirror(repo):
    b='/work/.mirror/'+repo.replace('/','+')
    return b+'/repo' if os.path.isdir(b+'/repo') else b
def git(m,*a):
    return subprocess.run(['git','-C',m,*a],capture_output=True,text=True,errors='replace').stdout
rows=[]
for d,tag in [('validation','oracle'),('round3/validation','round3')]:
    for f in sorted(glob.glob(os.path.join(BASE,d,'*.csv'))):
        for r in csv.DictReader(open(f)):
            if r['failing_ok'] in ('yes','no') and r['evidence'] in ('lines','adjacent'):
                r['set']=tag; rows.append(r)
out=[]
for r in rows:
    m=mirror(r['repo']); fix=r['remedy']; bad=r['failing']
    t_fix=int(git(m,'log','-1','--format=%ct',fix).strip())
    t_bad=int(git(m,'log','-1','--format=%ct',bad).strip())
    a_fix=git(m,'log','-1','--format=%ae',fix).strip(); a_bad=git(m,'log','-1','--format=%ae',bad).strip()
    files=[l for l in git(m,'diff-tree','--no-commit-id','-r','--name-only','--no-renames',fix+'^',fix).split('\n') if l and not l.startswith('.beads/')]
    # commits touching fix files in window
    win=git(m,'log','--format=%H %ct',f'--since={t_fix-7*86400}',f'--until={t_fix}',fix+'^','--',*files).split('\n')
    win=[(l.split()[0],int(l.split()[1])) for l in win if l]
    burst=[h for h,t in win if h!=bad and abs(t-t_bad)<=3600]
    burst6=[h for h,t in win if h!=bad and abs(t-t_bad)<=6*3600]
    # removed lines of fix, blame in parent
    diff=git(m,'diff','-U0','-w','--no-renames',fix+'^',fix,'--',*files)
    cur=None; ranges=collections.defaultdict(list)
    for l in diff.split('\n'):
        if l.startswith('--- '): cur=l[6:] if l.startswith('--- a/') else None
        mm=re.match(r'@@ -(\d+)(?:,(\d+))? ',l)
        if mm and cur:
            s=int(mm.group(1)); n=int(mm.group(2)) if mm.group(2) is not None else 1
            if n>0: ranges[cur].append((s,s+n-1))
    blamed=collections.Counter()
    for fpath,rs in ranges.items():
        args=[]
        for s,e in rs[:200]: args+=['-L',f'{s},{e}']
        b=git(m,'blame','-w','--line-porcelain',*args,fix+'^','--',fpath)
        for l in b.split('\n'):
            if re.match(r'^[0-9a-f]{40} ',l): blamed[l[:40]]+=1
    tot=sum(blamed.values())
    inwin=set(h for h,t in win)
    bl_in={h:c for h,c in blamed.items() if h in inwin}
    out.append(dict(set=r['set'],repo=r['repo'],ok=r['failing_ok'],ev=r['evidence'],age_h=(t_fix-t_bad)/3600,
        same_author=a_fix==a_bad,n_win=len(win),burst1h=len(burst),burst6h=len(burst6),removed=tot,
        cov=(blamed.get(bad,0)/tot if tot else 0),n_blamed_inwin=len(bl_in),pos_ok=(max(blamed,key=blamed.get)==bad if blamed else False),
        bad_is_fix=bool(re.match(r'(?i)^(fix|hotfix)',git(m,'log','-1','--format=%s',bad)))))
    print(json.dumps(out[-1]),flush=True)
if len(sys.argv)>1:
    json.dump(out,open(sys.argv[1],'w'))
def rule(name,pred):
    for s in ('oracle','round3'):
        sub=[x for x in out if x['set']==s]; kept=[x for x in sub if pred(x)]
        ok=sum(x['ok']=='yes' for x in kept)
        print(f"{name:28s} {s:7s} right {ok}/{len(kept)} of {sum(x['ok']=='yes' for x in sub)}/{len(sub)}")
rule('version 3',lambda x:True)
for th in (0.5,0.75,1.0):
    rule(f'cov >= {th}',lambda x,th=th:x['cov']>=th-1e-9)
rule('no other commit within 1h',lambda x:x['burst1h']==0)
rule('one blamed commit in window',lambda x:x['n_blamed_inwin']==1)
