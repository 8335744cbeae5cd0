// Float64 references and helpers for the tests: seeded random data,
// row-major indexing with NumPy broadcasting, and a tolerance check.

export function random(n, seed = 1) {
  let s = seed >>> 0 || 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    out[i] = (s / 4294967296) * 4 - 2;
  }
  return out;
}

export const numel = (shape) => shape.reduce((a, b) => a * b, 1);

export function stridesOf(shape) {
  const s = new Array(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

export function broadcastShape(a, b) {
  const r = Math.max(a.length, b.length);
  const out = [];
  for (let i = 0; i < r; i++) {
    const x = a[a.length - r + i] ?? 1, y = b[b.length - r + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) throw new Error('no broadcast');
    out.push(Math.max(x, y));
  }
  return out;
}

// The element of (data, shape) that output index `idx` of `outShape` reads.
export function at(data, shape, outShape, idx) {
  let off = 0, stride = 1;
  for (let i = outShape.length - 1, j = shape.length - 1; j >= 0; i--, j--) {
    const d = shape[j];
    const k = Math.floor(idx / stridesOf(outShape)[i]) % outShape[i];
    off += (d === 1 ? 0 : k) * stride;
    stride *= d;
  }
  return data[off];
}

export function assertClose(got, want, { rtol = 1e-5, atol = 1e-5, what = '' } = {}) {
  if (got.length !== want.length) throw new Error(`${what}: ${got.length} values, expected ${want.length}`);
  for (let i = 0; i < want.length; i++) {
    const g = got[i], w = want[i];
    if (Number.isNaN(w) ? !Number.isNaN(g) : !(Math.abs(g - w) <= atol + rtol * Math.abs(w))) {
      throw new Error(`${what}: element ${i} is ${g}, expected ${w}`);
    }
  }
}
