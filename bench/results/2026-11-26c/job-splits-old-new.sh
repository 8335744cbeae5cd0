#!/usr/bin/env bash
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name --format=csv,noheader
for t in test_gemm_f16 test_bf16 test_gemv test_matmul; do SECONDS=0; timeout 200 ./$t > $W/$t.log 2>&1; echo "$t rc=$? ${SECONDS}s: $(tail -1 $W/$t.log)"; done
KN="decode_f16_m8_k4096_n14336_kn decode_f16_m16_k4096_n14336_kn decode_f16_m32_k4096_n14336_kn decode_f16_m8_k14336_n4096_kn decode_f16_m16_k14336_n4096_kn decode_f16_m32_k14336_n4096_kn decode_bf16_m8_k14336_n4096_kn decode_bf16_m16_k14336_n4096_kn decode_bf16_m32_k14336_n4096_kn"
NK="decode_f16_m8_k4096_n14336_nk decode_f16_m16_k4096_n14336_nk decode_f16_m32_k4096_n14336_nk decode_f16_m8_k14336_n4096_nk decode_f16_m16_k14336_n4096_nk decode_f16_m32_k14336_n4096_nk decode_bf16_m8_k4096_n14336_nk decode_bf16_m16_k4096_n14336_nk decode_bf16_m32_k4096_n14336_nk"
for r in 1 2; do
  SECONDS=0; { WGC_GEMM_SKINNY_FILL=264 ./wgc_bench $KN; WGC_GEMM_SKINNY_FILL=528 ./wgc_bench $NK; } > $W/old_$r.jsonl 2>/dev/null; echo "old run $r ${SECONDS}s"
  SECONDS=0; ./wgc_bench $KN $NK > $W/new_$r.jsonl 2>/dev/null; echo "new run $r ${SECONDS}s"
done
for r in 1 2; do
  SECONDS=0; __GL_SHADER_DISK_CACHE=0 ./wgc_bench conv_f16_nhwc hgemm_4095 bgemm_4095 conv_f16_3x3_64 > $W/cold_$r.jsonl 2>/dev/null; echo "cold run $r ${SECONDS}s"
done
SECONDS=0; python3 torch_bench.py $KN $NK conv_f16_nhwc hgemm_4095 bgemm_4095 conv_f16_3x3_64 > $W/torch.jsonl 2>/dev/null; echo "torch ${SECONDS}s"
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
def table(prefixes):
    runs={os.path.basename(p)[:-6]:load(p) for pre in prefixes for p in sorted(glob.glob(W+'/'+pre+'*.jsonl'))}
    keys=list(runs)
    print('case', *keys, 'torch', sep=' | ')
    for c in runs[keys[0]]:
        print(c, *['%.4f'%runs[f].get(c,float('nan')) for f in keys], '%.4f'%t.get(c,float('nan')), sep=' | ')
table(['old','new']); table(['cold'])
PY
cd $OUT && tar czf job.tgz w
