#!/usr/bin/env bash
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name --format=csv,noheader
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv,noheader -lms 100 > $W/clocks.txt &
CLK=$!
SLOW="conv_f16_nhwc hgemm_4095 bgemm_4095 conv_f16_3x3_64"
for r in 1 2; do
  for wu in default 1500; do
    echo "start cold $wu $r $(date +%H:%M:%S.%N)" >> $W/marks.txt
    if [ $wu = default ]; then e="X=1"; else e="WGC_BENCH_WARMUP_MS=$wu"; fi
    SECONDS=0; env __GL_SHADER_DISK_CACHE=0 $e ./wgc_bench $SLOW > $W/cold_${wu}_$r.jsonl 2>$W/cold_${wu}_$r.err; echo "cold $wu run $r ${SECONDS}s"
    echo "end cold $wu $r $(date +%H:%M:%S.%N)" >> $W/marks.txt
  done
done
kill $CLK
for f in 132 264 528 1056; do
  SECONDS=0; WGC_GEMM_SKINNY_FILL=$f ./wgc_bench decode_bf16 > $W/bf16fill${f}.jsonl 2>/dev/null; echo "bf16 fill $f ${SECONDS}s"
done
for f in 264 528 1056; do
  SECONDS=0; WGC_GEMM_SPIRV=1 WGC_GEMM_SKINNY_FILL=$f ./wgc_bench decode_f16_m8 decode_f16_m16 decode_f16_m32 > $W/rAfill${f}.jsonl 2>/dev/null; echo "routeA fill $f ${SECONDS}s"
done
SECONDS=0; WGC_GEMM_SKINNY_FILL=512 ./wgc_bench decode_f16_m8 decode_f16_m16 decode_f16_m32 > $W/fill512.jsonl 2>/dev/null; echo "fill 512 ${SECONDS}s"
SECONDS=0; python3 torch_bench.py decode_bf16 decode_f16_m8 decode_f16_m16 decode_f16_m32 $SLOW > $W/torch.jsonl 2>/dev/null; echo "torch ${SECONDS}s"
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
def table(prefix):
    runs={os.path.basename(p)[:-6]:load(p) for p in sorted(glob.glob(W+'/'+prefix+'*.jsonl'))}
    keys=list(runs)
    print('case', *keys, 'torch', sep=' | ')
    for c in runs[keys[0]]:
        print(c, *['%.4f'%runs[f].get(c,float('nan')) for f in keys], '%.4f'%t.get(c,float('nan')), sep=' | ')
for p in ['cold','bf16fill','rAfill','fill512']: table(p)
PY
cat $W/marks.txt
cd $OUT && tar czf job.tgz w
