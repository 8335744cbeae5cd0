// Convolution, pooling, norms, indexing and random numbers on Dawn
// (SwiftShader) against float64 references computed here.
import test from 'node:test';
import assert from 'node:assert/strict';
import { device } from './setup.mjs';
import { random, numel, assertClose } from './reference.mjs';

const f32 = (data, shape) => device.tensorF32(data, shape);

function convRef(x, [n, c, h, w], wt, [co, ci, kh, kw], bias, s, p, d) {
  const oh = Math.floor((h + 2 * p - d * (kh - 1) - 1) / s) + 1;
  const ow = Math.floor((w + 2 * p - d * (kw - 1) - 1) / s) + 1;
  const out = [];
  for (let b = 0; b < n; b++) for (let o = 0; o < co; o++) for (let y = 0; y < oh; y++) for (let z = 0; z < ow; z++) {
    let acc = bias ? bias[o] : 0;
    for (let i = 0; i < ci; i++) for (let u = 0; u < kh; u++) for (let v = 0; v < kw; v++) {
      const iy = y * s - p + u * d, ix = z * s - p + v * d;
      if (iy >= 0 && iy < h && ix >= 0 && ix < w) acc += x[((b * c + i) * h + iy) * w + ix] * wt[((o * ci + i) * kh + u) * kw + v];
    }
    out.push(acc);
  }
  return { out, shape: [n, co, oh, ow] };
}

test('conv2d: padding, stride, dilation, bias, odd sizes', async () => {
  for (const [xs, ws, s, p, d] of [[[1, 3, 7, 9], [5, 3, 3, 3], 1, 1, 1], [[2, 2, 11, 6], [3, 2, 2, 3], 2, 0, 1], [[1, 1, 9, 9], [2, 1, 3, 3], 1, 2, 2]]) {
    const x = random(numel(xs), 31), wt = random(numel(ws), 32), bias = random(ws[0], 33);
    const ref = convRef(x, xs, wt, ws, null, s, p, d);
    const y = device.conv2d(f32(x, xs), f32(wt, ws), [s], [p], [d], 1);
    assert.deepEqual(Array.from(y.shape), ref.shape);
    assertClose(await y.read(), ref.out, { rtol: 1e-4, atol: 1e-4, what: `conv ${xs} ${ws}` });
    const yb = device.conv2dBias(f32(x, xs), f32(wt, ws), f32(bias, [ws[0]]), [s], [p], [d], 1);
    assertClose(await yb.read(), convRef(x, xs, wt, ws, bias, s, p, d).out, { rtol: 1e-4, atol: 1e-4, what: 'conv with bias' });
  }
  assert.throws(() => device.conv2d(f32(random(27), [1, 3, 3, 3]), f32(random(8), [2, 1, 2, 2]), [1], [0], [1], 1), /shape mismatch|channels/i);
});

test('max and average pooling', async () => {
  const xs = [2, 3, 7, 5];
  const x = random(numel(xs), 41);
  const [k, s, p] = [3, 2, 1];
  const oh = Math.floor((7 + 2 * p - k) / s) + 1, ow = Math.floor((5 + 2 * p - k) / s) + 1;
  const mx = [], avg = [];
  for (let nc = 0; nc < 6; nc++) for (let y = 0; y < oh; y++) for (let z = 0; z < ow; z++) {
    let m = -Infinity, sum = 0;
    for (let u = 0; u < k; u++) for (let v = 0; v < k; v++) {
      const iy = y * s - p + u, ix = z * s - p + v;
      if (iy >= 0 && iy < 7 && ix >= 0 && ix < 5) { const e = x[(nc * 7 + iy) * 5 + ix]; m = Math.max(m, e); sum += e; }
    }
    mx.push(m); avg.push(sum / (k * k));
  }
  const t = f32(x, xs);
  const ym = device.pool2d('max', t, [k], [s], [p], false);
  assert.deepEqual(Array.from(ym.shape), [2, 3, oh, ow]);
  assertClose(await ym.read(), mx, { rtol: 0, atol: 0, what: 'max_pool2d' });
  assertClose(await device.pool2d('avg', t, [k], [s], [p], true).read(), avg, { rtol: 1e-5, atol: 1e-6, what: 'avg_pool2d' });
  assert.throws(() => device.pool2d('max', f32(random(4), [2, 2]), [2], [], [], false), /rank 2/);
  assert.throws(() => device.pool2d('median', t, [2], [], [], false), /unknown pooling/);
});

test('layer norm and RMS norm', async () => {
  const [rows, cols] = [5, 37];
  const x = random(rows * cols, 51), w = random(cols, 52), b = random(cols, 53);
  const ln = [], lna = [], rms = [];
  for (let r = 0; r < rows; r++) {
    const row = x.subarray(r * cols, (r + 1) * cols);
    const mean = row.reduce((a, v) => a + v, 0) / cols;
    const v = row.reduce((a, e) => a + (e - mean) ** 2, 0) / cols;
    const ms = row.reduce((a, e) => a + e * e, 0) / cols;
    row.forEach((e, i) => {
      const n = (e - mean) / Math.sqrt(v + 1e-5);
      ln.push(n); lna.push(n * w[i] + b[i]); rms.push((e / Math.sqrt(ms + 1e-6)) * w[i]);
    });
  }
  const t = f32(x, [rows, cols]);
  assertClose(await device.layerNorm(t, 1, 1e-5).read(), ln, { rtol: 1e-4, atol: 1e-5, what: 'layer_norm' });
  assertClose(await device.layerNormAffine(t, f32(w, [cols]), f32(b, [cols]), 1, 1e-5).read(), lna, { rtol: 1e-4, atol: 1e-5, what: 'layer_norm affine' });
  assertClose(await device.rmsNorm(t, f32(w, [cols]), 1, 1e-6).read(), rms, { rtol: 1e-4, atol: 1e-5, what: 'rms_norm' });
  assert.throws(() => device.rmsNorm(t, f32(w.subarray(0, 5), [5]), 1, 1e-6), /shape mismatch/);
});

test('index_select along an axis, and out-of-range axes', async () => {
  const x = random(4 * 6, 61);
  const t = f32(x, [4, 6]);
  const idx = device.tensorI32(new Int32Array([3, 0, 3, 5, 1]), [5]);
  const y = device.indexSelect(t, 1, idx);
  assert.deepEqual(Array.from(y.shape), [4, 5]);
  const want = [];
  for (let r = 0; r < 4; r++) for (const j of [3, 0, 3, 5, 1]) want.push(x[r * 6 + j]);
  assertClose(await y.read(), want, { rtol: 0, atol: 0, what: 'index_select' });
  assert.throws(() => device.indexSelect(t, 2, idx), /axis/);
});

test('random: ranges, moments, reproducible by seed', async () => {
  const n = 4099;
  const u = await device.random([n], 'uniform', 7, -1, 3).read();
  assert.ok(u.every((v) => v >= -1 && v < 3), 'uniform in [-1, 3)');
  const mean = u.reduce((a, v) => a + v, 0) / n;
  assert.ok(Math.abs(mean - 1) < 0.1, `uniform mean ${mean}`);
  assert.deepEqual(await device.random([n], 'uniform', 7, -1, 3).read(), u);
  const g = await device.random([n], 'normal', 8, 2, 0.5).read();
  const gm = g.reduce((a, v) => a + v, 0) / n;
  const gs = Math.sqrt(g.reduce((a, v) => a + (v - gm) ** 2, 0) / n);
  assert.ok(Math.abs(gm - 2) < 0.05 && Math.abs(gs - 0.5) < 0.05, `normal mean ${gm}, std ${gs}`);
  assert.throws(() => device.random([3], 'cauchy', 1, 0, 1), /unknown distribution/);
});
