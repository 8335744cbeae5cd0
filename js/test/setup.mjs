// Node has no WebGPU: put Dawn (the `webgpu` package) where wgpu's WebGPU
// backend looks for it (a global `Window` marks a window context, whose
// `navigator.gpu` it uses), then load the package from its bytes.
import { readFile } from 'node:fs/promises';
import { create, globals } from 'webgpu';
import init, * as wgc from '../pkg/wgcompute.js';

Object.assign(globalThis, globals);
globalThis.Window ??= class Window {};
globalThis.navigator = { gpu: create([]) };

const wasm = await readFile(new URL('../pkg/wgcompute_bg.wasm', import.meta.url));
await init({ module_or_path: wasm });

export { wgc };
export const device = await wgc.Device.create();
