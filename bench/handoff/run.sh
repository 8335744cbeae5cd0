#!/bin/sh
# On the GPU machine, from the folder that holds handoff_probe and this script (.gpu/):
# finds a libcublasLt (PyTorch's wheel ships one), runs the probe, then PyTorch on the
# same products. Prints JSON lines; the probe's exit status is echoed last.
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${WGC_CUBLASLT:-}" ]; then
  WGC_CUBLASLT=$(python3 -c "import glob, os, torch; d = os.path.dirname(os.path.dirname(torch.__file__)); print((sorted(glob.glob(d + '/nvidia/**/libcublasLt.so*', recursive=True)) + [''])[0])" 2>/dev/null)
  [ -n "$WGC_CUBLASLT" ] || WGC_CUBLASLT=$(find / -name 'libcublasLt.so*' -not -path '/proc/*' 2>/dev/null | head -1)
fi
export WGC_CUBLASLT
echo "{\"probe\":\"run\",\"cublaslt_path\":\"$WGC_CUBLASLT\"}"
[ -n "$WGC_CUBLASLT" ] && export LD_LIBRARY_PATH="$(dirname "$WGC_CUBLASLT")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
timeout 90 "$here/handoff_probe" "$@"
status=$?
timeout 60 python3 "$here/torch_linear.py"
echo "{\"probe\":\"exit\",\"handoff_probe_status\":$status}"
