#!/usr/bin/env bash
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name --format=csv,noheader
for t in test_bf16 test_gemv; do SECONDS=0; timeout 100 ./$t > $W/$t.log 2>&1; echo "$t rc=$? ${SECONDS}s: $(tail -1 $W/$t.log)"; done
OUT=$W timeout 170 ./compare_builds.sh old head decode_bf16 > $W/cmp.txt 2>&1
grep -E "wgc_bench|torch_bench" $W/cmp.txt
python3 - "$W" <<'PY'
import json,sys
W=sys.argv[1]
def load(p):
    d={}
    try:
        for l in open(p):
            try: j=json.loads(l)
            except: continue
            if 'case' in j and 'ms' in j: d[j['case']]=j['ms']
    except OSError: pass
    return d
t=load(W+'/torch.jsonl'); r={k:load(W+'/wgc_%s.jsonl'%k) for k in ['old_1','head_1','old_2','head_2']}
print('case | old | new | torch | old ratio | new ratio')
for c in r['old_1']:
    o=min(r['old_1'][c],r['old_2'].get(c,9)); n=min(r['head_1'].get(c,9),r['head_2'].get(c,9)); tt=t.get(c,float('nan'))
    print(c, '%.4f'%o, '%.4f'%n, '%.4f'%tt, '%.2f'%(tt/o), '%.2f'%(tt/n), sep=' | ')
PY
cd $OUT && tar czf job.tgz w
