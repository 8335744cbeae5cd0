#!/usr/bin/env bash
# Fill sweeps of the other split-K paths: matrix-vector (WGC_GEMV_FILL), tiled f32 (WGC_GEMM_TILED_FILL),
# square tensor-core tile and f16 convolution (WGC_GEMM_COOP_FILL).
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name --format=csv,noheader
GEMV="decode_f16_m1 decode_bf16_m1 decode_f32"
TILED="sgemm_3000 sgemm_8192x100 sgemm_512x512 decode_f32_m16 decode_f32_m32"
COOP="hgemm_1024 conv_f16_3x3_256_14 conv_f16_3x3_512_7 conv_f16_nhwc_3x3_512_7"
for f in 264 528 1024 2048; do SECONDS=0; WGC_GEMV_FILL=$f ./wgc_bench $GEMV > $W/gemv$f.jsonl 2>/dev/null; echo "gemv $f ${SECONDS}s"; done
for f in 264 396 528 1056; do SECONDS=0; WGC_GEMM_TILED_FILL=$f ./wgc_bench $TILED > $W/tiled$f.jsonl 2>/dev/null; echo "tiled $f ${SECONDS}s"; done
for f in 132 264 396 528; do SECONDS=0; WGC_GEMM_COOP_FILL=$f ./wgc_bench $COOP > $W/coop$f.jsonl 2>/dev/null; echo "coop $f ${SECONDS}s"; done
SECONDS=0; python3 torch_bench.py $GEMV $TILED $COOP > $W/torch.jsonl 2>/dev/null; echo "torch ${SECONDS}s"
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
def table(pre, fills):
    runs={f:load(W+'/'+pre+str(f)+'.jsonl') for f in fills}
    print(pre, *fills, 'torch', sep=' | ')
    for c in runs[fills[0]]:
        print(c, *['%.4f'%runs[f].get(c,float('nan')) for f in fills], '%.4f'%t.get(c,float('nan')), sep=' | ')
table('gemv',[264,528,1024,2048]); table('tiled',[264,396,528,1056]); table('coop',[132,264,396,528])
PY
cd $OUT && tar czf job.tgz w
