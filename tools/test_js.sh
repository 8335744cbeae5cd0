#!/bin/sh
# The browser build's tests (./run test-js; ./run test calls it): build the
# library for wasm32-unknown-unknown, generate the JavaScript package with
# wasm-bindgen (js/pkg), and run js/test under Node with Dawn (the npm
# package `webgpu`) on SwiftShader, the software Vulkan driver Debian's
# chromium-headless-shell ships. Installs what is missing (the Rust target,
# wasm-bindgen's CLI at the crate's version into build/js-tools, the npm
# packages into js/node_modules, and, as root with apt-get, Node and the
# Debian package); fails, saying what is missing, where it cannot. Ends
# with the example page run in headless Chromium (tools/test_js_page.sh).
set -eu
cd "$(dirname "$0")/.."
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"

fail() {
    echo "test-js: $*" >&2
    exit 1
}

apt_install() {
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q
        apt-get install -y -q --no-install-recommends "$@"
    else
        fail "missing $*: install it (e.g. sudo apt-get install $*) and run again"
    fi
}

# The Rust target.
if ! rustc --print target-libdir --target wasm32-unknown-unknown 2>/dev/null | xargs test -d; then
    command -v rustup >/dev/null 2>&1 || fail "the wasm32-unknown-unknown target is missing and rustup is not there to add it"
    rustup target add wasm32-unknown-unknown
fi

# wasm-bindgen's CLI must be the version of the crate in Cargo.lock.
version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
[ -n "$version" ] || fail "no wasm-bindgen in Cargo.lock"
tools=build/js-tools
bindgen="$tools/bin/wasm-bindgen"
if [ ! -x "$bindgen" ] || [ "$("$bindgen" --version)" != "wasm-bindgen $version" ]; then
    echo "test-js: installing wasm-bindgen-cli $version into $tools (a few minutes, once)"
    # --locked first; a registry mirror that lacks one of the locked
    # versions gets the newest compatible ones instead.
    cargo install -q wasm-bindgen-cli --version "=$version" --locked --root "$tools" ||
        cargo install -q wasm-bindgen-cli --version "=$version" --root "$tools" ||
        fail "could not install wasm-bindgen-cli $version"
fi

# Node (18 or later: the test runner and FinalizationRegistry) and npm.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
fi
node -e 'process.exit(+process.versions.node.split(".")[0] >= 18 ? 0 : 1)' || fail "Node 18 or later is needed, found $(node --version)"

# SwiftShader, from Debian's chromium-headless-shell (the file itself is in
# chromium-common, which it depends on).
swiftshader_icd() {
    dpkg -S vk_swiftshader_icd.json 2>/dev/null | sed -n 's/^[^:]*: //p' | head -n 1
}
icd=${WGC_SWIFTSHADER_ICD:-$(swiftshader_icd)}
if [ -z "$icd" ]; then
    apt_install chromium-headless-shell
    icd=$(swiftshader_icd)
fi
[ -f "$icd" ] || fail "SwiftShader's Vulkan ICD ($icd) not found"

cargo build -q --release --lib --target wasm32-unknown-unknown
"$bindgen" --target web --weak-refs --out-dir js/pkg --out-name wgcompute \
    target/wasm32-unknown-unknown/release/wgcompute.wasm
(cd js && npm ci --no-audit --no-fund --loglevel=error)
# Dawn's Vulkan loader finds SwiftShader through the ICD file alone.
VK_ICD_FILENAMES="$icd" node --test js/test/*.test.mjs
# The example page in headless Chromium (its own SwiftShader).
tools/test_js_page.sh
