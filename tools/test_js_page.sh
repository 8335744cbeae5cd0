#!/bin/sh
# The example page (js/example/index.html) in headless Chromium on
# SwiftShader: serve js/, open the page at a small size, and wait for its
# "check: ok" (matmul against the CPU, softmax rows summing to one) in the
# console log. Called by tools/test_js.sh after the package is built.
set -eu
cd "$(dirname "$0")/.."
chrome=${WGC_CHROMIUM:-$(command -v chromium-headless-shell || echo /usr/lib/chromium/chromium-headless-shell)}
[ -x "$chrome" ] || { echo "test-js: chromium-headless-shell not found" >&2; exit 1; }
port=${WGC_PAGE_PORT:-8765}
log=build/js-page.log
mkdir -p build
python3 -m http.server "$port" --bind 127.0.0.1 -d js >/dev/null 2>&1 &
server=$!
sleep 1
# WebGPU is behind flags on Linux; SwiftShader is Chromium's own Vulkan.
"$chrome" --no-sandbox --disable-gpu-sandbox --enable-unsafe-webgpu --enable-unsafe-swiftshader \
    --enable-features=Vulkan --use-vulkan=swiftshader --use-webgpu-adapter=swiftshader \
    --enable-logging=stderr --v=0 "http://127.0.0.1:$port/example/?n=64" >"$log" 2>&1 &
browser=$!
i=0
while [ $i -lt 90 ] && ! grep -q '"check: ' "$log"; do
    sleep 1
    i=$((i + 1))
done
kill "$browser" "$server" 2>/dev/null || true
wait "$browser" "$server" 2>/dev/null || true
sed -n 's/.*INFO:CONSOLE[^"]*"\(.*\)", source.*/page: \1/p' "$log"
grep -q '"check: ok"' "$log" || { echo "test-js: the example page did not report check: ok (see $log)" >&2; exit 1; }
