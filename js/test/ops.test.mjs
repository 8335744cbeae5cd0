// The JavaScript package on Dawn (SwiftShader): each operator family against
// float64 references computed here, at sizes that cross tile edges, on
// strided views, and with bad input (exceptions carrying the library's message).
import test from 'node:test';
import assert from 'node:assert/strict';
import { device } from './setup.mjs';
import { random, numel, stridesOf, broadcastShape, at, assertClose } from './reference.mjs';

const f32 = (data, shape) => device.tensorF32(data, shape);

test('device reports its adapter and features', () => {
  assert.ok(device.adapterName.length > 0);
  assert.ok(Array.isArray(device.features));
});

test('upload and read round-trip, odd sizes', async () => {
  for (const shape of [[1], [7], [3, 5], [2, 3, 17]]) {
    const data = random(numel(shape), 3);
    assertClose(await f32(data, shape).read(), data, { rtol: 0, atol: 0, what: `${shape}` });
  }
  const ints = new Int32Array([-3, 0, 7, 2147483647, -2147483648]);
  assert.deepEqual(await device.tensorI32(ints, [5]).read(), ints);
  assert.deepEqual(await device.zeros([3, 3], 'u32').read(), new Uint32Array(9));
});

test('binary ops broadcast like NumPy', async () => {
  // Every op on one broadcast pair; add and mul on the other layouts (each
  // new kernel variant costs a pipeline compile on SwiftShader).
  const cases = [[[3, 1, 9], [4, 1]], [[5, 7], [7]], [[1], [33]], [[2, 3, 65], [2, 3, 65]]];
  const ops = { add: (x, y) => x + y, sub: (x, y) => x - y, mul: (x, y) => x * y, div: (x, y) => x / y,
    maximum: Math.max, minimum: Math.min };
  for (const [sa, sb] of cases) {
    const a = random(numel(sa), 5), b = random(numel(sb), 6);
    const ta = f32(a, sa), tb = f32(b, sb);
    const so = broadcastShape(sa, sb);
    const all = sa.length === 3 && sb.length === 2;
    for (const [name, f] of Object.entries(ops).filter(([n]) => all || n === 'add' || n === 'mul')) {
      const want = Array.from({ length: numel(so) }, (_, i) => f(at(a, sa, so, i), at(b, sb, so, i)));
      const out = device.binary(name, ta, tb);
      assert.deepEqual(Array.from(out.shape), so);
      assertClose(await out.read(), want, { what: `${name} ${sa} ${sb}` });
      out.release();
    }
    if (!all) continue;
    const lt = device.binary('lt', ta, tb);
    assert.equal(lt.dtype, 'u32');
    const wantLt = Array.from({ length: numel(so) }, (_, i) => (at(a, sa, so, i) < at(b, sb, so, i) ? 1 : 0));
    assert.deepEqual(Array.from(await lt.read()), wantLt);
  }
});

test('unary ops', async () => {
  const x = random(1000, 9);
  const t = f32(x, [1000]);
  const ops = { neg: (v) => -v, abs: Math.abs, exp: Math.exp, sin: Math.sin, tanh: Math.tanh,
    relu: (v) => Math.max(v, 0), sigmoid: (v) => 1 / (1 + Math.exp(-v)), silu: (v) => v / (1 + Math.exp(-v)) };
  for (const [name, f] of Object.entries(ops)) {
    // WGSL's accuracy: sin within 2^-11 absolute; the rest a few ULP.
    const atol = name === 'sin' ? 2 ** -11 : 1e-6;
    assertClose(await device.unary(name, t).read(), Array.from(x, f), { rtol: 1e-5, atol, what: name });
  }
});

function matmulRef(a, b, m, k, n) {
  const c = new Float64Array(m * n);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
    let s = 0;
    for (let p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
    c[i * n + j] = s;
  }
  return c;
}

test('matmul: odd sizes, batches, vectors', async () => {
  for (const [m, k, n] of [[1, 1, 1], [5, 7, 3], [33, 65, 17]]) {
    const a = random(m * k, m), b = random(k * n, n);
    const out = device.matmul(f32(a, [m, k]), f32(b, [k, n]));
    assert.deepEqual(Array.from(out.shape), [m, n]);
    assertClose(await out.read(), matmulRef(a, b, m, k, n), { rtol: 1e-4, atol: 1e-4 * Math.sqrt(k), what: `${m}x${k}x${n}` });
  }
  const a = random(2 * 4 * 6, 2), b = random(6 * 5, 3);
  const out = device.matmul(f32(a, [2, 4, 6]), f32(b, [6, 5]));
  assert.deepEqual(Array.from(out.shape), [2, 4, 5]);
  const want = [...matmulRef(a.subarray(0, 24), b, 4, 6, 5), ...matmulRef(a.subarray(24), b, 4, 6, 5)];
  assertClose(await out.read(), want, { rtol: 1e-4, atol: 1e-4 });
  const v = device.matmul(f32(a.subarray(0, 6), [6]), f32(b, [6, 5]));
  assert.deepEqual(Array.from(v.shape), [5]);
  assertClose(await v.read(), matmulRef(a.subarray(0, 6), b, 1, 6, 5), { rtol: 1e-4, atol: 1e-4 });
});

test('reductions over axes', async () => {
  const shape = [3, 37, 5];
  const x = random(numel(shape), 11);
  const t = f32(x, shape);
  const st = stridesOf(shape);
  const fold = (axis, init, f, fin = (v) => v) => {
    const outShape = shape.filter((_, i) => i !== axis);
    return Array.from({ length: numel(outShape) }, (_, o) => {
      const idx = []; let r = o;
      for (let i = outShape.length - 1; i >= 0; i--) { idx.unshift(r % outShape[i]); r = Math.floor(r / outShape[i]); }
      idx.splice(axis, 0, 0);
      let acc = init;
      for (let j = 0; j < shape[axis]; j++) {
        idx[axis] = j;
        acc = f(acc, x[idx.reduce((s, v, i) => s + v * st[i], 0)]);
      }
      return fin(acc);
    });
  };
  for (const axis of [0, 1, 2]) {
    assertClose(await device.reduce('sum', t, [axis], false).read(), fold(axis, 0, (a, v) => a + v), { rtol: 1e-5, atol: 1e-5, what: `sum ${axis}` });
    assertClose(await device.reduce('max', t, [axis], false).read(), fold(axis, -Infinity, Math.max), { what: `max ${axis}` });
    assertClose(await device.reduce('mean', t, [axis], false).read(), fold(axis, 0, (a, v) => a + v, (s) => s / shape[axis]), { what: `mean ${axis}` });
  }
  const all = device.reduce('sum', t, [], true);
  assert.deepEqual(Array.from(all.shape), [1, 1, 1]);
  assertClose(await all.read(), [x.reduce((a, v) => a + v, 0)], { rtol: 1e-5, atol: 1e-4 });
});

test('softmax and log-softmax along an axis', async () => {
  for (const [rows, cols] of [[1, 1], [4, 7], [3, 1025]]) {
    const x = random(rows * cols, cols);
    const want = [], wantLog = [];
    for (let r = 0; r < rows; r++) {
      const row = Array.from(x.subarray(r * cols, (r + 1) * cols));
      const m = Math.max(...row);
      const s = row.reduce((a, v) => a + Math.exp(v - m), 0);
      for (const v of row) { want.push(Math.exp(v - m) / s); wantLog.push(v - m - Math.log(s)); }
    }
    const t = f32(x, [rows, cols]);
    assertClose(await device.softmax(t, -1, false).read(), want, { rtol: 1e-5, atol: 1e-6, what: `softmax ${rows}x${cols}` });
    assertClose(await device.softmax(t, 1, true).read(), wantLog, { rtol: 1e-5, atol: 1e-5, what: `log_softmax ${rows}x${cols}` });
  }
});

test('strided views: transposed, broadcast, offset', async () => {
  const x = random(6 * 9, 21);
  const t = f32(x, [6, 9]);
  const tt = t.view([9, 6], [1, 9], 0);
  const want = Array.from({ length: 54 }, (_, i) => x[(i % 6) * 9 + Math.floor(i / 6)]);
  assertClose(await tt.read(), want, { rtol: 0, atol: 0, what: 'transposed read' });
  const doubled = device.binary('add', tt, tt);
  assertClose(await doubled.read(), want.map((v) => 2 * v), { what: 'transposed add' });
  const row = t.view([4, 9], [0, 1], 9);
  assertClose(await row.read(), Array.from({ length: 36 }, (_, i) => x[9 + (i % 9)]), { rtol: 0, atol: 0, what: 'broadcast row' });
  const b = random(6 * 5, 22);
  const mm = device.matmul(tt, f32(b, [6, 5]));
  assertClose(await mm.read(), matmulRef(Float32Array.from(want), b, 9, 6, 5), { rtol: 1e-4, atol: 1e-4, what: 'matmul of a transposed view' });
});

test('bad input throws with the library message', async () => {
  const a = f32(random(6), [2, 3]);
  assert.throws(() => device.binary('add', a, f32(random(2), [2])), /shape mismatch/);
  assert.throws(() => device.binary('frobnicate', a, a), /unknown binary op/);
  assert.throws(() => device.matmul(a, a), /shape mismatch|matmul/i);
  assert.throws(() => device.reduce('sum', a, [5], false), /axis 5 is out of range/);
  assert.throws(() => f32(random(5), [2, 3]), /shape mismatch/);
  assert.throws(() => a.view([3, 3], [3, 1], 0), /out of range|outside/);
  assert.throws(() => a.view([2], [1, 1], 0), /dims but/);
  assert.throws(() => device.zeros([2], 'f64'), /unknown dtype/);
  assert.throws(() => device.binary('add', a, device.tensorI32(new Int32Array(6), [2, 3])), /dtype/);
  const r = f32(random(3), [3]);
  r.release();
  assert.throws(() => device.unary('abs', r), /released/);
  await assert.rejects(r.read(), /released/);
});

test('f16 is refused where the adapter lacks shader-f16', async () => {
  const h = device.tensorF16Bits(new Uint16Array([0x3c00, 0x4000]), [2]);
  if (device.features.includes('shader-f16')) {
    assert.deepEqual(Array.from(await device.binary('add', h, h).read()), [0x4000, 0x4400]);
  } else {
    assert.throws(() => device.binary('add', h, h), /no f16 support/);
  }
});
