//! Scaled dot-product attention (PyTorch's `scaled_dot_product_attention`)
//! without materialising the scores: shaders/attention.wgsl runs an online
//! softmax over tiles of keys in workgroup memory; keys are cut into chunks
//! (to bound each invocation's loops, and in decode to spread a long KV
//! cache over the GPU: flash-decoding) whose partial results
//! shaders/attention_combine.wgsl merges.

mod aligned;
pub mod coop;
pub mod decode;

use crate::bail;
use crate::error::Result;
use crate::ops::elementwise::bf16::convert;
use crate::ops::elementwise::bf16_route::{uninit, widen, F32Scratch};
use crate::ops::spec::uniform::uniform;
use crate::ops::spec::{self, check_output, pack_i32, pack_u32, view_arg, Arg, Family, Launch, Sharing, TypeSlot};
use crate::ops::split::scratch;
use crate::ops::tensor::{broadcast_shapes, broadcast_strides, coalesce, expect_shape, same_device, DType, Tensor};
use crate::runtime::stream::StreamShared;

/// Largest head dim.
pub(crate) const MAX_HEAD_DIM: usize = 256;
/// Query rows per workgroup and keys per tile (shaders/attention.wgsl).
const BQ: usize = 8;
const BK: usize = 64;
/// Loop iterations one invocation may run in total (a software driver
/// stops loops after 65,535): chunks of keys are sized to stay below it.
const LOOP_BUDGET: usize = 40_000;
/// Workgroups a decode-sized problem is spread over, and the fewest keys
/// worth a chunk of their own.
const DECODE_TARGET_GROUPS: usize = 1024;
const MIN_SPLIT_KEYS: usize = 256;

const TYPES: &[TypeSlot] = &[TypeSlot { alias: "T", dtypes: &[DType::F32, DType::F16] }];
const ENTRIES: &[&str] = &["attention", "attention_partial"];

macro_rules! attention_family {
    ($file:literal, $mask:literal) => {
        Family {
            file: $file,
            source: concat!(
                include_str!("../../../shaders/attention_params.wgsl"),
                include_str!($mask),
                include_str!("../../../shaders/attention.wgsl")
            ),
            entries: ENTRIES,
            types: TYPES,
            overrides: &[],
            uniform: <AttentionParams as spec::Uniform>::layout,
        }
    };
}

/// The attention pass without a mask.
pub static FAMILY: Family = attention_family!("attention.wgsl", "../../../shaders/attention_mask_none.wgsl");
/// With an additive mask of the query's dtype.
pub static FAMILY_MASK_ADD: Family =
    attention_family!("attention.wgsl+mask_add", "../../../shaders/attention_mask_add.wgsl");
/// With a boolean (32-bit word) mask.
pub static FAMILY_MASK_BOOL: Family =
    attention_family!("attention.wgsl+mask_bool", "../../../shaders/attention_mask_bool.wgsl");
/// The pass that merges chunks.
pub static COMBINE_FAMILY: Family = Family {
    file: "attention_combine.wgsl",
    source: concat!(
        include_str!("../../../shaders/attention_params.wgsl"),
        include_str!("../../../shaders/attention_combine.wgsl")
    ),
    entries: &["attention_combine"],
    types: TYPES,
    overrides: &[],
    uniform: <AttentionParams as spec::Uniform>::layout,
};

uniform! {
    /// The uniform of the attention families (shaders/attention_params.wgsl).
    pub struct AttentionParams = "Params" {
        pub batch_rank: u32,
        pub hkv: u32,
        pub group: u32,
        pub sq: u32,
        pub skv: u32,
        pub d: u32,
        pub kv_len: u32,
        pub has_lens: u32,
        pub rows: u32,
        pub chunk_keys: u32,
        pub chunks: u32,
        pub causal: u32,
        pub window: u32,
        pub scale: f32,
        pub want_lse: u32,
        pub row_tiles: u32,
        pub q_off: u32,
        pub k_off: u32,
        pub v_off: u32,
        pub o_off: u32,
        pub m_off: u32,
        pub lse_off: u32,
        pub lens_off: u32,
        pub bh_total: u32,
        pub q_h: i32,
        pub q_s: i32,
        pub q_d: i32,
        pub k_h: i32,
        pub k_s: i32,
        pub k_d: i32,
        pub v_h: i32,
        pub v_s: i32,
        pub v_d: i32,
        pub o_h: i32,
        pub o_s: i32,
        pub o_d: i32,
        pub m_h: i32,
        pub m_q: i32,
        pub m_k: i32,
        pub lse_h: i32,
        pub lse_s: i32,
        pub grid_row: u32,
        pub _pad1: u32,
        pub _pad2: u32,
        pub batch_shape: [[u32; 4]; 2],
        pub q_b: [[i32; 4]; 2],
        pub k_b: [[i32; 4]; 2],
        pub v_b: [[i32; 4]; 2],
        pub o_b: [[i32; 4]; 2],
        pub m_b: [[i32; 4]; 2],
        pub lse_b: [[i32; 4]; 2],
        pub lens_b: [[i32; 4]; 2],
    }
}

/// Which causal mask applies. Values are fixed.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttentionCausal {
    /// No causal mask.
    None = 0,
    /// Query i (of Sq) sees keys j <= i + L - Sq, L the valid keys:
    /// aligned to the bottom-right (FlashAttention, PyTorch's
    /// `causal_lower_right`), what decode and chunked prefill need.
    BottomRight = 1,
    /// Query i sees keys j <= i: aligned to the top-left, as PyTorch's
    /// `is_causal=True`. The same as BottomRight when Sq == L.
    TopLeft = 2,
}

impl AttentionCausal {
    pub fn from_u32(v: u32) -> Result<Self> {
        match v {
            0 => Ok(AttentionCausal::None),
            1 => Ok(AttentionCausal::BottomRight),
            2 => Ok(AttentionCausal::TopLeft),
            _ => bail!(InvalidArgument, "attention: unknown causal mode {v}"),
        }
    }
}

/// attention's settings (see `wgc_op_attention`).
#[derive(Clone, Copy, Debug)]
pub struct Attention {
    pub causal: AttentionCausal,
    /// 0: 1/sqrt(D).
    pub scale: f32,
    /// 0: no window; else a query at position i sees keys j > i - window.
    pub window: u32,
    /// 0: every key; else the first `kv_len` keys only.
    pub kv_len: u32,
}

/// attention's tensors: the optional ones are None where not given.
pub struct AttentionArgs<'a, 'b> {
    pub q: &'b Tensor<'a>,
    pub k: &'b Tensor<'a>,
    pub v: &'b Tensor<'a>,
    pub mask: Option<&'b Tensor<'a>>,
    pub kv_lens: Option<&'b Tensor<'a>>,
    pub out: &'b Tensor<'a>,
    pub lse: Option<&'b Tensor<'a>>,
}

/// How keys are cut into chunks: (keys per chunk, chunks).
pub(crate) fn plan_chunks(skv: usize, d: usize, rows: usize, bh: usize) -> (usize, usize) {
    let cols4 = d.div_ceil(4);
    let per_inv_items = (BQ * cols4).div_ceil(BK);
    // One tile's iterations: scores (d / 4 steps a row), maxima (16 a
    // row), p * v (a tile's keys per item), with margin for loop overhead.
    let per_tile = BQ * (cols4 + 4) + BQ * 17 + per_inv_items * BK + 16;
    let max_keys = ((LOOP_BUDGET - 4 * d) / per_tile).max(1) * BK;
    let row_tiles = rows.div_ceil(BQ);
    let mut chunks = skv.div_ceil(max_keys).max(1);
    // Few workgroups (decode): spread long caches over more chunks.
    let groups = row_tiles * bh;
    if groups * chunks < DECODE_TARGET_GROUPS {
        let want = DECODE_TARGET_GROUPS.div_ceil(groups).min(skv / MIN_SPLIT_KEYS).max(1);
        chunks = chunks.max(want);
    }
    let keys = skv.div_ceil(chunks).div_ceil(BK).max(1) * BK;
    (keys, skv.div_ceil(keys).max(1))
}

/// Which kernel a call takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// Tensor cores (coop.rs), with its entry point.
    Coop(&'static str),
    /// Flash-decoding with 16-byte loads (decode.rs).
    Decode,
    /// The portable kernel (shaders/attention.wgsl).
    Portable,
}

/// A call's kernel and how its keys are cut: (route, keys per chunk,
/// chunks, row tiles).
struct Plan {
    route: Route,
    chunk_keys: usize,
    chunks: usize,
    row_tiles: usize,
}

fn plan(dev: &crate::runtime::device::Device, a: &AttentionArgs) -> Plan {
    let r = a.q.rank();
    let batch: usize = a.q.shape[..r - 3].iter().product();
    let (hq, sq, d) = (a.q.shape[r - 3], a.q.shape[r - 2], a.q.shape[r - 1]);
    let (hkv, skv) = (a.k.shape[r - 3], a.k.shape[r - 2]);
    let (rows, bh) = ((hq / hkv) * sq, batch * hkv);
    if let Some((entry, bm)) = coop::entry(dev, a) {
        return Plan { route: Route::Coop(entry), chunk_keys: skv.max(1), chunks: 1, row_tiles: rows.div_ceil(bm) };
    }
    if decode::applies(a) {
        let set = &dev.settings().attention;
        let (chunk_keys, chunks) = decode::plan_chunks_with(
            skv,
            rows,
            bh,
            set.decode_groups.unwrap_or(decode::TARGET_GROUPS),
            set.decode_min_chunk.unwrap_or(decode::MIN_CHUNK),
        );
        return Plan { route: Route::Decode, chunk_keys, chunks, row_tiles: rows.div_ceil(decode::RB) };
    }
    let (chunk_keys, chunks) = plan_chunks(skv, d, rows, bh);
    Plan { route: Route::Portable, chunk_keys, chunks, row_tiles: rows.div_ceil(BQ) }
}

fn check(stream: &StreamShared, a: &AttentionArgs, cfg: &Attention) -> Result<()> {
    let what = "attention";
    let dev = &stream.device;
    dev.check_alive()?;
    let mut all = vec![a.q, a.k, a.v, a.out];
    all.extend(a.mask.iter().copied().chain(a.kv_lens.iter().copied()).chain(a.lse.iter().copied()));
    same_device(dev, &all)?;
    let dt = a.q.dtype;
    if !matches!(dt, DType::F32 | DType::F16 | DType::BF16) {
        bail!(Unsupported, "{what}: {} tensors are not supported (f32, f16, bf16)", dt.wgsl());
    }
    dt.check_device_bf16(dev)?;
    for (name, t) in [("k", a.k), ("v", a.v), ("out", a.out)] {
        if t.dtype != dt {
            bail!(DtypeMismatch, "{what}: {name} is {}, q is {}", t.dtype.wgsl(), dt.wgsl());
        }
    }
    let r = a.q.rank();
    if r < 3 {
        bail!(InvalidArgument, "{what}: q must have rank 3 or more (..., heads, sequence, head dim)");
    }
    if a.k.rank() != r || a.v.rank() != r {
        bail!(ShapeMismatch, "{what}: q, k and v must have the same rank");
    }
    let batch = &a.q.shape[..r - 3];
    let (hq, sq, d) = (a.q.shape[r - 3], a.q.shape[r - 2], a.q.shape[r - 1]);
    let (hkv, skv) = (a.k.shape[r - 3], a.k.shape[r - 2]);
    if &a.k.shape[..r - 3] != batch {
        bail!(ShapeMismatch, "{what}: k's batch dims {:?} differ from q's {:?}", &a.k.shape[..r - 3], batch);
    }
    if a.k.shape[r - 1] != d {
        bail!(ShapeMismatch, "{what}: k's head dim {} differs from q's {d}", a.k.shape[r - 1]);
    }
    expect_shape(a.v, &a.k.shape, "v")?;
    expect_shape(a.out, &a.q.shape, "out")?;
    if d == 0 || d > MAX_HEAD_DIM {
        bail!(InvalidArgument, "{what}: head dim {d} (1 to {MAX_HEAD_DIM})");
    }
    if hkv == 0 || hq % hkv != 0 {
        bail!(ShapeMismatch, "{what}: q's {hq} heads are not a multiple of k's {hkv}");
    }
    if !cfg.scale.is_finite() {
        bail!(InvalidArgument, "{what}: scale must be finite (0 for 1/sqrt(head dim))");
    }
    if let Some(m) = a.mask {
        match m.dtype {
            DType::I32 | DType::U32 => {}
            t if t == dt => {}
            t => bail!(
                DtypeMismatch,
                "{what}: mask is {}: an additive mask has q's dtype ({}), a boolean one i32 or u32",
                t.wgsl(),
                dt.wgsl()
            ),
        }
        let full: Vec<usize> = batch.iter().copied().chain([hq, sq, skv]).collect();
        if m.rank() > r || broadcast_shapes(&[&m.shape, &full]).ok().as_deref() != Some(&full[..]) {
            bail!(ShapeMismatch, "{what}: mask {:?} does not broadcast to {:?}", m.shape, full);
        }
    }
    if let Some(l) = a.kv_lens {
        if !matches!(l.dtype, DType::I32 | DType::U32) {
            bail!(DtypeMismatch, "{what}: kv_lens is {} (i32 or u32)", l.dtype.wgsl());
        }
        expect_shape(l, batch, "kv_lens")?;
    }
    if let Some(l) = a.lse {
        if l.dtype != DType::F32 {
            bail!(DtypeMismatch, "{what}: lse is {} (f32)", l.dtype.wgsl());
        }
        expect_shape(l, &a.q.shape[..r - 1], "lse")?;
    }
    let mut inputs = vec![("q", a.q), ("k", a.k), ("v", a.v)];
    inputs.extend(a.mask.map(|m| ("mask", m)).into_iter().chain(a.kv_lens.map(|l| ("kv_lens", l))));
    check_output(what, a.out, &inputs, Sharing::Separate)?;
    if let Some(l) = a.lse {
        inputs.push(("out", a.out));
        check_output(what, l, &inputs, Sharing::Separate)?;
    }
    let bh = batch.iter().product::<usize>() * hkv;
    let rows = (hq / hkv) * sq;
    let Plan { chunks, row_tiles, .. } = plan(dev, a);
    let limit = dev.limits.max_compute_workgroups_per_dimension as usize;
    if row_tiles > limit || bh > limit || chunks > limit {
        bail!(TooLarge, "{what}: {rows} query rows a head, {bh} batch x heads: more workgroups than a grid dim holds");
    }
    let part_bytes = if chunks > 1 { bh * rows * chunks * (d + 2) * 4 } else { 0 };
    if part_bytes as u64 > dev.limits.max_storage_buffer_binding_size {
        bail!(
            TooLarge,
            "{what}: the {chunks} key chunks' partial results ({part_bytes} bytes) exceed one binding: \
             fewer batch entries or heads per call"
        );
    }
    Ok(())
}

/// attention: validate everything, then record (bf16 through f32 scratch).
pub fn attention(stream: &StreamShared, a: &AttentionArgs, cfg: &Attention) -> Result<()> {
    check(stream, a, cfg)?;
    if a.out.numel() == 0 {
        return Ok(());
    }
    if a.q.dtype != DType::BF16 {
        return record(stream, a, cfg);
    }
    let wide = |t: &Tensor| widen(stream, t, false);
    if decode::applies(a) {
        // Decode reads the bf16 cache as it is: only q, an additive mask and
        // out (a few rows) go through f32.
        let q = wide(a.q)?;
        let mask: Option<F32Scratch> = match a.mask {
            Some(m) if m.dtype == DType::BF16 => Some(wide(m)?),
            _ => None,
        };
        let out = uninit(stream, &a.out.shape)?;
        let (qv, ov) = (q.view(), out.view());
        let mv = mask.as_ref().map(F32Scratch::view);
        let wa = AttentionArgs {
            q: &qv,
            k: a.k,
            v: a.v,
            mask: mv.as_ref().or(a.mask),
            kv_lens: a.kv_lens,
            out: &ov,
            lse: a.lse,
        };
        record(stream, &wa, cfg)?;
        return convert(stream, &ov, a.out);
    }
    let (q, k, v) = (wide(a.q)?, wide(a.k)?, wide(a.v)?);
    let mask: Option<F32Scratch> = match a.mask {
        Some(m) if m.dtype == DType::BF16 => Some(wide(m)?),
        _ => None,
    };
    let out = uninit(stream, &a.out.shape)?;
    let (qv, kv, vv, ov) = (q.view(), k.view(), v.view(), out.view());
    let mv = mask.as_ref().map(F32Scratch::view);
    let wa = AttentionArgs {
        q: &qv,
        k: &kv,
        v: &vv,
        mask: mv.as_ref().or(a.mask),
        kv_lens: a.kv_lens,
        out: &ov,
        lse: a.lse,
    };
    record(stream, &wa, cfg)?;
    convert(stream, &ov, a.out)
}

fn record(stream: &StreamShared, a: &AttentionArgs, cfg: &Attention) -> Result<()> {
    let dev = &stream.device;
    let r = a.q.rank();
    let batch: Vec<usize> = a.q.shape[..r - 3].to_vec();
    let (hq, sq, d) = (a.q.shape[r - 3], a.q.shape[r - 2], a.q.shape[r - 1]);
    let (hkv, skv) = (a.k.shape[r - 3], a.k.shape[r - 2]);
    let group = hq / hkv;
    let rows = group * sq;
    let bdims = r - 3;

    // Batch dims, coalesced over every tensor (absent ones: zero strides).
    let full: Vec<usize> = batch.iter().copied().chain([hq, sq, skv]).collect();
    let m_strides = a.mask.map(|m| broadcast_strides(m, &full)).unwrap_or_else(|| vec![0; r]);
    let zero = vec![0isize; bdims];
    let lse_strides = a.lse.map(|l| l.strides.clone()).unwrap_or_else(|| vec![0; r - 1]);
    let lens_strides = a.kv_lens.map(|l| l.strides.clone()).unwrap_or_else(|| zero.clone());
    let per = [
        a.q.strides[..bdims].to_vec(),
        a.k.strides[..bdims].to_vec(),
        a.v.strides[..bdims].to_vec(),
        a.out.strides[..bdims].to_vec(),
        m_strides[..bdims].to_vec(),
        lse_strides[..bdims].to_vec(),
        lens_strides,
    ];
    let (bshape, bstrides) = coalesce(&batch, &per);
    let bh = batch.iter().product::<usize>() * hkv;
    let Plan { route, chunk_keys, chunks, row_tiles } = plan(dev, a);

    let (qa, q_off) = view_arg("q", a.q);
    let (ka, k_off) = view_arg("k", a.k);
    let (va, v_off) = view_arg("v", a.v);
    let (oa, o_off) = view_arg("out", a.out);
    let lse_dummy;
    let (la, lse_off) = match a.lse {
        Some(l) => view_arg("lse", l),
        None => {
            lse_dummy = scratch(dev, 4)?;
            (Arg::whole("lse", &lse_dummy), 0)
        }
    };
    let lens_dummy;
    let (na, lens_off) = match a.kv_lens {
        Some(l) => view_arg("lens", l),
        None => {
            lens_dummy = scratch(dev, 4)?;
            (Arg::whole("lens", &lens_dummy), 0)
        }
    };
    let mask_arg = a.mask.map(|m| view_arg("mask", m));
    let scale = if cfg.scale == 0.0 { 1.0 / (d as f32).sqrt() } else { cfg.scale };
    let kv_len = if cfg.kv_len == 0 { skv } else { (cfg.kv_len as usize).min(skv) };
    // A replay may give another kv_len up to the keys bound (0: all).
    let _replay = stream.replay_scalars(|| {
        let all = skv as u32;
        vec![crate::ops::replay_scalars::count("kv_len", "kv_len", cfg.kv_len, 0, all, move |v| {
            if v == 0.0 || v > all as f64 {
                all
            } else {
                v as u32
            }
        })]
    });
    let (groups_1d, grid_row) =
        crate::ops::grid::grid_1d((bh * rows * d) as u64, 64, dev.limits.max_compute_workgroups_per_dimension);
    let s = |t: &Tensor, i: usize| t.strides[i] as i32;
    let lse_s = |i: usize| a.lse.map_or(0, |l| l.strides[i] as i32);
    let params = AttentionParams {
        batch_rank: bshape.len() as u32,
        hkv: hkv as u32,
        group: group as u32,
        sq: sq as u32,
        skv: skv as u32,
        d: d as u32,
        kv_len: kv_len as u32,
        has_lens: a.kv_lens.is_some() as u32,
        rows: rows as u32,
        chunk_keys: chunk_keys as u32,
        chunks: chunks as u32,
        causal: cfg.causal as u32,
        window: cfg.window,
        scale,
        want_lse: a.lse.is_some() as u32,
        row_tiles: row_tiles as u32,
        q_off,
        k_off,
        v_off,
        o_off,
        m_off: mask_arg.map_or(0, |m| m.1),
        lse_off,
        lens_off,
        bh_total: bh as u32,
        q_h: s(a.q, r - 3),
        q_s: s(a.q, r - 2),
        q_d: s(a.q, r - 1),
        k_h: s(a.k, r - 3),
        k_s: s(a.k, r - 2),
        k_d: s(a.k, r - 1),
        v_h: s(a.v, r - 3),
        v_s: s(a.v, r - 2),
        v_d: s(a.v, r - 1),
        o_h: s(a.out, r - 3),
        o_s: s(a.out, r - 2),
        o_d: s(a.out, r - 1),
        m_h: m_strides[r - 3] as i32,
        m_q: m_strides[r - 2] as i32,
        m_k: m_strides[r - 1] as i32,
        lse_h: lse_s(r - 3),
        lse_s: lse_s(r - 2),
        grid_row,
        _pad1: 0,
        _pad2: 0,
        batch_shape: pack_u32(&bshape, 1),
        q_b: pack_i32(&bstrides[0]),
        k_b: pack_i32(&bstrides[1]),
        v_b: pack_i32(&bstrides[2]),
        o_b: pack_i32(&bstrides[3]),
        m_b: pack_i32(&bstrides[4]),
        lse_b: pack_i32(&bstrides[5]),
        lens_b: pack_i32(&bstrides[6]),
    };
    let mask_dtype = a.mask.map(|m| m.dtype);
    let family = match (route, mask_dtype) {
        (Route::Coop(entry), m) => coop::family(entry, m),
        (Route::Decode, m) => decode::family(dev, m),
        (Route::Portable, None) => &FAMILY,
        (Route::Portable, Some(DType::I32 | DType::U32)) => &FAMILY_MASK_BOOL,
        (Route::Portable, Some(_)) => &FAMILY_MASK_ADD,
    };
    let (whole, partial) = match route {
        Route::Coop(entry) => (entry, ""),
        Route::Decode => ("attention_decode", "attention_decode_partial"),
        Route::Portable => ("attention", "attention_partial"),
    };
    let t = [a.q.dtype];
    let groups = [row_tiles as u32, bh as u32, chunks as u32];
    let decode_overrides = [
        if a.k.dtype == DType::BF16 { 1.0 } else { 0.0 },
        if dev.settings().attention.decode_spread { 1.0 } else { 0.0 },
    ];
    let overrides: &[f64] = match route {
        Route::Decode => &decode_overrides,
        _ => &[],
    };
    if route != Route::Portable {
        // The vectorised kernels read K and V as 16-byte words too.
        let (k4, _) = view_arg("k4", a.k);
        let (v4, _) = view_arg("v4", a.v);
        if chunks == 1 {
            let variant = family.variant(whole, &t, overrides);
            return match mask_arg {
                None => spec::record(stream, &Launch { variant, params, args: [qa, k4, v4, oa, la, na], groups }),
                Some((ma, _)) => {
                    spec::record(stream, &Launch { variant, params, args: [qa, k4, v4, oa, la, na, ma], groups })
                }
            };
        }
        let part = stream.ordered_scratch((bh * rows * chunks * (d + 2) * 4) as u64)?;
        let pa = Arg::whole("part", &part);
        let variant = family.variant(partial, &t, overrides);
        match mask_arg {
            None => spec::record(stream, &Launch { variant, params, args: [qa, k4, v4, pa, na], groups })?,
            Some((ma, _)) => spec::record(stream, &Launch { variant, params, args: [qa, k4, v4, pa, na, ma], groups })?,
        }
        let variant = COMBINE_FAMILY.variant("attention_combine", &t, &[]);
        return spec::record(stream, &Launch { variant, params, args: [pa, oa, la], groups: groups_1d });
    }
    if chunks == 1 {
        let variant = family.variant("attention", &t, &[]);
        return match mask_arg {
            None => spec::record(stream, &Launch { variant, params, args: [qa, ka, va, oa, la, na], groups }),
            Some((ma, _)) => {
                spec::record(stream, &Launch { variant, params, args: [qa, ka, va, oa, la, na, ma], groups })
            }
        };
    }
    let part = stream.ordered_scratch((bh * rows * chunks * (d + 2) * 4) as u64)?;
    let pa = Arg::whole("part", &part);
    let variant = family.variant("attention_partial", &t, &[]);
    match mask_arg {
        None => spec::record(stream, &Launch { variant, params, args: [qa, ka, va, pa, na], groups })?,
        Some((ma, _)) => spec::record(stream, &Launch { variant, params, args: [qa, ka, va, pa, na, ma], groups })?,
    }
    let variant = COMBINE_FAMILY.variant("attention_combine", &t, &[]);
    spec::record(stream, &Launch { variant, params, args: [pa, oa, la], groups: groups_1d })
}

#[cfg(test)]
mod tests {
    use super::plan_chunks;

    #[test]
    fn chunks_cover_the_keys_and_split_decode() {
        for &(skv, d, rows, bh) in &[(37, 80, 37, 6), (4096, 128, 4, 8), (8192, 256, 8192, 64), (0, 64, 1, 1)] {
            let (keys, chunks) = plan_chunks(skv, d, rows, bh);
            assert!(keys % 64 == 0 && keys * chunks >= skv && chunks >= 1);
            assert!(skv == 0 || keys * (chunks - 1) < skv, "an empty chunk for {skv}");
        }
        // One sequence of 32k keys, 8 KV heads: spread over many chunks.
        assert!(plan_chunks(32768, 128, 4, 8).1 >= 64);
    }
}
