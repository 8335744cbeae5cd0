#!/usr/bin/env bash
# Round 10, call 2 (H100). The skinny tiles with one step of loads in flight (n1k64p1,
# n2k32p1) and WGC_GEMM_TILED_RM4 are in not-kept-rm4-tiles-and-one-step-prefetch.patch;
# "old" is the library of 04dfdff. Decode at 32 rows (K splits for 448/896
# workgroups, one step of loads in flight), SGEMM with 256 x 128 tiles
# against the default and the previous library.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
for t in n1k64p1 n2k32p1; do
  SECONDS=0; WGC_GEMM_SPIRV=1 WGC_GEMM_SKINNY_TILE=$t ./test_gemm_f16 > $W/test_$t.txt 2>&1; echo "test_gemm_f16 $t: exit $? (${SECONDS}s)"; tail -1 $W/test_$t.txt
done
SECONDS=0; WGC_GEMM_TILED_RM4=1 ./test_matmul > $W/test_matmul_rm4.txt 2>&1; echo "test_matmul rm4: exit $? (${SECONDS}s)"; tail -1 $W/test_matmul_rm4.txt
CASES="decode_f16_m32"
for r in 1 2; do
  for v in "default" "WGC_GEMM_SKINNY_FILL=448" "WGC_GEMM_SKINNY_FILL=896" "WGC_GEMM_SPIRV=1" "WGC_GEMM_SPIRV=1 WGC_GEMM_SKINNY_TILE=n1k64p1" "WGC_GEMM_SPIRV=1 WGC_GEMM_SKINNY_TILE=n2k32p1" "WGC_GEMM_SPIRV=1 WGC_GEMM_SKINNY_TILE=n1k64p1 WGC_GEMM_SKINNY_FILL=448"; do
    tag=$(echo "$v" | tr -c 'A-Za-z0-9\n' '_')
    e=""; [ "$v" = default ] || e="$v"
    SECONDS=0; env $e ./wgc_bench $CASES > $W/wgc_${tag}_$r.jsonl 2>$W/wgc_${tag}_$r.err; echo "[$v] run $r: exit $? (${SECONDS}s)"
  done
done
S="sgemm_f32 sgemm_linear sgemm_4095 bmm_f32 qk_bmm_f32 conv_3x3_64_56"
for r in 1 2; do for v in old default "WGC_GEMM_TILED_RM4=1"; do
  tag=$(echo "$v" | tr -c 'A-Za-z0-9\n' '_'); e=""; [ "$v" = default ] || [ "$v" = old ] || e="$v"
  lp=$LD_LIBRARY_PATH; [ "$v" = old ] && lp="$here/old:$LD_LIBRARY_PATH"
  SECONDS=0; env LD_LIBRARY_PATH=$lp $e ./wgc_bench $S > $W/sg_${tag}_$r.jsonl 2>$W/sg_${tag}_$r.err; echo "sgemm [$v] run $r: exit $? (${SECONDS}s)"
done; done
SECONDS=0; python3 torch_bench.py $CASES $S > $W/torch.jsonl 2>$W/torch.err; echo "torch ${SECONDS}s"
python3 - "$W" <<'PY'
import json,sys,glob,os
W=sys.argv[1]
def load(p):
    d={}
    for l in open(p):
        try: j=json.loads(l)
        except: continue
        if 'case' in j and 'ms' in j: d[j['case']]=j['ms'] if j.get('check','ok')=='ok' else float('nan')
    return d
t=load(W+'/torch.jsonl')
runs={os.path.basename(p)[:-6]:load(p) for p in sorted(glob.glob(W+'/wgc_*.jsonl'))+sorted(glob.glob(W+'/sg_*.jsonl'))}
names=sorted(runs)
for pre in ('wgc_','sg_'):
    ns=[n for n in names if n.startswith(pre)]
    print('case', *ns, 'torch', sep=' | ')
    for c in sorted(set().union(*[runs[n] for n in ns])):
        print(c, *['%.4f'%runs[n].get(c,float('nan')) for n in ns], '%.4f'%t.get(c,float('nan')), sep=' | ')
PY
cd $OUT && tar czf job.tgz w
