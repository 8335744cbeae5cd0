#!/bin/sh
# On the GPU machine, from the folder that holds handoff_probe and this script (.gpu/):
# finds a libcublasLt (PyTorch's wheel ships one), runs the probe, then PyTorch on the
# same products. Prints JSON lines; the probe's exit status is echoed last.
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${WGC_CUBLASLT:-}" ]; then
  WGC_CUBLASLT=$(python3 -c "import glob, os, torch; d = os.path.dirname(os.path.dirname(torch.__file__)); print((sorted(glob.glob(d + '/nvidia/**/libcublasLt.so*', recursive=True)) + [''])[0])" 2>/dev/null)
  [ -n "$WGC_CUBLASLT" ] || WGC_CUBLASLT=$(timeout 20 find / -name 'libcublasLt.so*' -not -path '/proc/*' 2>/dev/null | head -1)
fi
export WGC_CUBLASLT
echo "{\"probe\":\"run\",\"cublaslt_path\":\"$WGC_CUBLASLT\"}"
# Its folder and the wheel's other CUDA library folders, in case it needs one of them.
if [ -n "$WGC_CUBLASLT" ]; then
  libs=$(dirname "$WGC_CUBLASLT")
  for d in "$(dirname "$libs")"/../*/lib; do [ -d "$d" ] && libs="$libs:$d"; done
  export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
timeout 90 "$here/handoff_probe" "$@"
status=$?
timeout 60 python3 "$here/torch_linear.py"
echo "{\"probe\":\"exit\",\"handoff_probe_status\":$status}"
