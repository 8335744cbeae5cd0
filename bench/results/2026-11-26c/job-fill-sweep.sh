#!/usr/bin/env bash
# Decode fill sweep (route defaults) and repeated short processes of the cases with sporadic slowdowns.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
for r in 1 2; do for f in 132 264 528 1056; do
  SECONDS=0; WGC_GEMM_SKINNY_FILL=$f ./wgc_bench decode_f16 > $W/fill${f}_$r.jsonl 2>/dev/null; echo "fill $f run $r ${SECONDS}s"
done; done
for r in 1 2 3; do
  SECONDS=0; ./wgc_bench conv_f16_nhwc hgemm_4095 bgemm_4095 conv_f16_3x3_64 > $W/slow_$r.jsonl 2>/dev/null; echo "slow run $r ${SECONDS}s"
done
SECONDS=0; python3 torch_bench.py decode_f16 conv_f16_nhwc hgemm_4095 bgemm_4095 conv_f16_3x3_64 > $W/torch.jsonl 2>/dev/null; echo "torch ${SECONDS}s"
python3 - "$W" <<'PY'
import json,sys,glob,os
W=sys.argv[1]
def load(p):
    d={}
    for l in open(p):
        try: j=json.loads(l)
        except: continue
        if 'case' in j and 'ms' in j: d[j['case']]=j['ms']
    return d
t=load(W+'/torch.jsonl')
runs={os.path.basename(p)[:-6]:load(p) for p in sorted(glob.glob(W+'/*.jsonl')) if 'torch' not in p}
fills=[k for k in runs if k.startswith('fill')]
print('case', *fills, 'torch', sep=' | ')
for c in runs['fill264_1']:
    print(c, *['%.4f'%runs[f].get(c,float('nan')) for f in fills], '%.4f'%t.get(c,float('nan')), sep=' | ')
slows=[k for k in runs if k.startswith('slow')]
for c in runs['slow_1']:
    print(c, *['%.4f'%runs[f].get(c,float('nan')) for f in slows], '%.4f'%t.get(c,float('nan')), sep=' | ')
PY
cd $OUT && tar czf job.tgz w
