// The C++ API: RAII reference counting, exceptions and error codes, tensor
// views, operators against CPU references, kernels, streams and events.
#include <wgcompute.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "check.hpp"

static const char *SCALE = R"(
struct Params { n: u32, factor: f32 }
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> p: Params;
@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < p.n) { x[id.x] = x[id.x] * p.factor; }
}
)";

static void handles_count_references(const wgc::Device &device) {
    uint64_t before = device.memory_stats().live_bytes;
    {
        wgc::Buffer a = wgc::Buffer::create(device, 256);
        CHECK(device.memory_stats().live_bytes > before);
        wgc::Buffer copy = a;  // retain
        a.reset();             // one release: the copy still works
        CHECK(!a);
        std::vector<float> in(64, 3.0f), out(64, 0.0f);
        copy.write(in);
        copy.read(out);
        CHECK(out[63] == 3.0f);
        wgc::Buffer moved = std::move(copy);
        CHECK(!copy && moved);
        moved = moved;  // self-assignment keeps the reference
        CHECK(moved.size() == 256);
        wgc::Buffer other = wgc::Buffer::create(device, 64);
        other = moved;  // releases other's buffer, retains moved's
        CHECK(other.get() == moved.get());
    }
    CHECK(device.memory_stats().live_bytes == before);  // every reference released once
}

static void errors_throw_with_status_and_message(const wgc::Device &device, const wgc::Stream &stream) {
    wgc::Tensor a = wgc::Tensor::empty(device, WGC_DTYPE_F32, {2, 3});
    wgc::Tensor b = wgc::Tensor::empty(device, WGC_DTYPE_F32, {4});
    bool thrown = false;
    try {
        wgc::add(stream, a, b, a);
    } catch (const wgc::Error &e) {
        thrown = true;
        CHECK(e.status() == WGC_ERROR_SHAPE_MISMATCH);
        CHECK(!e.message().empty());
        CHECK(std::strncmp(e.what(), "WGC_ERROR_SHAPE_MISMATCH: ", 26) == 0);
        CHECK(e.code() == wgc::make_error_code(WGC_ERROR_SHAPE_MISMATCH));
    }
    CHECK(thrown);
    try {
        wgc::Kernel::create(device, "fn broken( {", "main");
        CHECK(false);
    } catch (const wgc::Error &e) {
        CHECK(e.status() == WGC_ERROR_SHADER_COMPILATION);
    }
}

static void error_codes_do_not_throw(const wgc::Device &device) {
    std::error_code ec;
    wgc::Buffer none = wgc::Buffer::create(device, 0, WGC_BUFFER_USAGE_STORAGE, ec);
    CHECK(!none);
    CHECK(ec.value() == WGC_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(ec.category().name()) == "wgcompute");
    CHECK(ec.message() == "WGC_ERROR_INVALID_ARGUMENT");
    CHECK(!wgc::last_error_message().empty());
    wgc::Buffer ok = wgc::Buffer::create(device, 16, WGC_BUFFER_USAGE_STORAGE, ec);
    CHECK(ok && !ec);
    std::vector<float> data(8);
    ok.read(data, 0, ec);  // 32 bytes from a 16-byte buffer
    CHECK(ec.value() == WGC_ERROR_OUT_OF_RANGE);
}

static void operators_on_views(const wgc::Device &device, const wgc::Stream &stream) {
    const int M = 5, K = 7, N = 3;
    std::vector<float> a(K * M), b(K * N);  // a is stored transposed (K x M)
    for (int i = 0; i < K * M; i++) a[i] = std::sin(0.3f * i);
    for (int i = 0; i < K * N; i++) b[i] = std::cos(0.2f * i);
    wgc::Tensor ta = wgc::Tensor::empty(device, WGC_DTYPE_F32, {K, M});
    wgc::Tensor tb = wgc::Tensor::empty(device, WGC_DTYPE_F32, {K, N});
    wgc::Tensor tc = wgc::Tensor::empty(device, WGC_DTYPE_F32, {M, N});
    ta.write(a);
    tb.write(b);
    wgc::matmul(stream, ta.transposed(), tb, tc);  // a view, no copy
    std::vector<float> c = tc.to_vector<float>();
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double ref = 0;
            for (int k = 0; k < K; k++) ref += static_cast<double>(a[k * M + i]) * b[k * N + j];
            CHECK_NEAR(c[i * N + j], ref, 1e-5);
        }

    // Broadcast add of a row, then the sum of each column of a reversed slice.
    wgc::Tensor row = wgc::Tensor::empty(device, WGC_DTYPE_F32, {N});
    row.write(std::vector<float>{10, 20, 30});
    wgc::Tensor sum = wgc::Tensor::empty(device, WGC_DTYPE_F32, {M, N});
    wgc::add(stream, tc, row.broadcast_to({M, N}), sum);
    wgc::Tensor cols = wgc::Tensor::empty(device, WGC_DTYPE_F32, {N});
    const int32_t axis0[] = {0};
    wgc::reduce(stream, WGC_REDUCE_OP_SUM, sum.slice(0, M - 1, -1, -2), axis0, 0, cols);  // rows 4, 2, 0
    std::vector<float> got = cols.to_vector<float>();
    for (int j = 0; j < N; j++) {
        double ref = 0;
        for (int i = M - 1; i >= 0; i -= 2) ref += c[i * N + j] + 10.0 * (j + 1);
        CHECK_NEAR(got[j], ref, 1e-4);
    }

    // Outputs need no zeros: uninitialised memory is written completely.
    wgc::Tensor soft = wgc::Tensor::uninit(device, WGC_DTYPE_F32, {M, N});
    wgc::softmax(stream, tc, -1, soft);
    std::vector<float> s = soft.to_vector<float>();
    for (int i = 0; i < M; i++) CHECK_NEAR(s[i * N] + s[i * N + 1] + s[i * N + 2], 1.0, 1e-5);
}

// A convolution's route, explained without running it; a bad shape throws
// (and gives an empty string and the status with an error_code).
static void explain_a_convolution(const wgc::Device &device, const wgc::Stream &stream) {
    wgc::Tensor x = wgc::Tensor::empty(device, WGC_DTYPE_F32, {1, 6, 8, 8});
    wgc::Tensor w = wgc::Tensor::empty(device, WGC_DTYPE_F32, {6, 1, 3, 3});
    wgc::Tensor y = wgc::Tensor::empty(device, WGC_DTYPE_F32, {1, 6, 6, 6});
    WgcConv2dParams p{};
    p.struct_size = sizeof p;
    p.groups = 6;
    std::string text = wgc::explain_conv2d(stream, p, x, w, nullptr, y);
    CHECK(text.rfind("route depthwise (", 0) == 0);
    CHECK(text.find(" because one input and one output channel per group") != std::string::npos);
    p.groups = 4;
    bool threw = false;
    try {
        wgc::explain_conv2d(stream, p, x, w, nullptr, y);
    } catch (const wgc::Error &e) {
        threw = e.status() == WGC_ERROR_SHAPE_MISMATCH;
    }
    CHECK(threw);
    std::error_code ec;
    CHECK(wgc::explain_conv2d(stream, p, x, w, nullptr, y, ec).empty());
    CHECK(ec.value() == WGC_ERROR_SHAPE_MISMATCH);
}

// A 1x1 convolution (folded weight of ones) + a residual + ReLU in one
// call: relu(2 + r); the residual as the output itself throws.
static void convolution_with_residual(const wgc::Device &device, const wgc::Stream &stream) {
    wgc::Tensor x = wgc::Tensor::empty(device, WGC_DTYPE_F32, {1, 2, 4, 4});
    wgc::Tensor w = wgc::Tensor::empty(device, WGC_DTYPE_F32, {3, 2, 1, 1});
    wgc::Tensor r = wgc::Tensor::empty(device, WGC_DTYPE_F32, {1, 3, 4, 4});
    wgc::Tensor y = wgc::Tensor::empty(device, WGC_DTYPE_F32, {1, 3, 4, 4});
    x.write(std::vector<float>(32, 1.0f));
    w.write(std::vector<float>(6, 1.0f));
    std::vector<float> res(48);
    for (int i = 0; i < 48; i++) res[i] = 0.25f * i - 5.0f;
    r.write(res);
    WgcConv2dBnActParams p{};
    p.struct_size = sizeof p;
    p.activation = WGC_ACTIVATION_RELU;
    p.folded = 1;
    wgc::conv2d_bn_act_residual(stream, p, x, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, w, nullptr, r, y);
    std::vector<float> got = y.to_vector<float>();
    for (int i = 0; i < 48; i++) CHECK_NEAR(got[i], std::max(0.0f, 2.0f + res[i]), 1e-6);
    bool threw = false;
    try {
        wgc::conv2d_bn_act_residual(stream, p, x, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, w, nullptr, y,
                                    y);
    } catch (const wgc::Error &e) {
        threw = e.status() == WGC_ERROR_INVALID_ARGUMENT;
    }
    CHECK(threw);
}

// A product's route, explained without running it; mismatched inner sizes
// throw (and give an empty string and the status with an error_code).
static void explain_a_product(const wgc::Device &device, const wgc::Stream &stream) {
    wgc::Tensor a = wgc::Tensor::empty(device, WGC_DTYPE_F32, {5, 7});
    wgc::Tensor b = wgc::Tensor::empty(device, WGC_DTYPE_F32, {7, 3});
    wgc::Tensor c = wgc::Tensor::empty(device, WGC_DTYPE_F32, {5, 3});
    std::string text = wgc::explain_gemm(stream, 1.0f, a, 0, b, 0, 0.0f, c);
    CHECK(text.rfind("route ", 0) == 0);
    CHECK(text.find(" because ") != std::string::npos);
    wgc::Tensor bad = wgc::Tensor::empty(device, WGC_DTYPE_F32, {6, 3});
    bool threw = false;
    try {
        wgc::explain_gemm(stream, 1.0f, a, 0, bad, 0, 0.0f, c);
    } catch (const wgc::Error &e) {
        threw = e.status() == WGC_ERROR_SHAPE_MISMATCH;
    }
    CHECK(threw);
    std::error_code ec;
    CHECK(wgc::explain_gemm(stream, 1.0f, a, 0, bad, 0, 0.0f, c, ec).empty());
    CHECK(ec.value() == WGC_ERROR_SHAPE_MISMATCH);
}

// A linear layer with its bias, GELU and a residual fused into the GEMM,
// against double; its explain names where the epilogue runs.
static void linear_with_epilogue(const wgc::Device &device, const wgc::Stream &stream) {
    const int M = 5, N = 6, K = 7;
    std::vector<float> x(M * K), w(N * K), bias(N), res(M * N);
    for (int i = 0; i < M * K; i++) x[i] = std::sin(0.3f * i);
    for (int i = 0; i < N * K; i++) w[i] = std::cos(0.2f * i);
    for (int i = 0; i < N; i++) bias[i] = 0.1f * i - 0.2f;
    for (int i = 0; i < M * N; i++) res[i] = std::sin(1.1f * i);
    wgc::Tensor tx = wgc::Tensor::empty(device, WGC_DTYPE_F32, {M, K});
    wgc::Tensor tw = wgc::Tensor::empty(device, WGC_DTYPE_F32, {N, K});
    wgc::Tensor tbias = wgc::Tensor::empty(device, WGC_DTYPE_F32, {N});
    wgc::Tensor tres = wgc::Tensor::empty(device, WGC_DTYPE_F32, {M, N});
    wgc::Tensor ty = wgc::Tensor::empty(device, WGC_DTYPE_F32, {M, N});
    tx.write(x);
    tw.write(w);
    tbias.write(bias);
    tres.write(res);
    WgcGemmEpilogueParams p{};
    p.struct_size = sizeof p;
    p.alpha = 1.0f;
    p.transpose_b = 1;
    p.activation = WGC_ACTIVATION_GELU;
    p.residual_position = WGC_RESIDUAL_POSITION_AFTER_ACTIVATION;
    wgc::gemm_epilogue(stream, p, tx, tw, &tbias, nullptr, &tres, ty);
    std::vector<float> y = ty.to_vector<float>();
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double v = bias[j];
            for (int k = 0; k < K; k++) v += static_cast<double>(x[i * K + k]) * w[j * K + k];
            double ref = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))) + res[i * N + j];
            CHECK_NEAR(y[i * N + j], ref, 2e-5);
        }
    std::string text = wgc::explain_gemm_epilogue(stream, p, tx, tw, &tbias, nullptr, &tres, ty);
    CHECK(text.find("epilogue") != std::string::npos);
    std::error_code ec;
    CHECK(wgc::explain_gemm_epilogue(stream, p, tx, tx, &tbias, nullptr, &tres, ty, ec).empty());
    CHECK(ec.value() == WGC_ERROR_SHAPE_MISMATCH);
}

// Attention over one head: 3 queries, 4 keys, head dim 2, the bottom-right
// causal mask (query i sees keys 0 .. i + 1); lse left out (nullptr).
static void attention_one_head(const wgc::Device &device, const wgc::Stream &stream) {
    const int S = 3, T = 4, D = 2;
    std::vector<float> q(S * D), k(T * D), v(T * D);
    for (int i = 0; i < S * D; i++) q[i] = std::sin(0.7f * i);
    for (int i = 0; i < T * D; i++) k[i] = std::cos(0.4f * i), v[i] = 0.5f * i - 1;
    wgc::Tensor tq = wgc::Tensor::empty(device, WGC_DTYPE_F32, {1, S, D});
    wgc::Tensor tk = wgc::Tensor::empty(device, WGC_DTYPE_F32, {1, T, D});
    wgc::Tensor tv = wgc::Tensor::empty(device, WGC_DTYPE_F32, {1, T, D});
    wgc::Tensor to = wgc::Tensor::empty(device, WGC_DTYPE_F32, {1, S, D});
    tq.write(q);
    tk.write(k);
    tv.write(v);
    WgcAttentionDesc desc{};
    desc.struct_size = sizeof desc;
    desc.causal = WGC_ATTENTION_CAUSAL_BOTTOM_RIGHT;
    wgc::attention(stream, tq, tk, tv, nullptr, nullptr, desc, to, nullptr);
    std::vector<float> o = to.to_vector<float>();
    for (int i = 0; i < S; i++) {
        double w[T], l = 0;
        for (int j = 0; j <= i + 1; j++) {
            w[j] = std::exp((q[i * D] * k[j * D] + q[i * D + 1] * k[j * D + 1]) / std::sqrt(2.0));
            l += w[j];
        }
        for (int e = 0; e < D; e++) {
            double ref = 0;
            for (int j = 0; j <= i + 1; j++) ref += w[j] * v[j * D + e] / l;
            CHECK_NEAR(o[i * D + e], ref, 1e-5);
        }
    }
}

static void kernels_streams_events(const wgc::Device &device, const wgc::Stream &stream) {
    wgc::Kernel k = wgc::Kernel::create(device, SCALE, "scale");
    CHECK(k.workgroup_size()[0] == 64);
    std::vector<float> x(100);
    for (int i = 0; i < 100; i++) x[i] = static_cast<float>(i);
    wgc::Buffer buf = wgc::Buffer::create(device, x.size() * sizeof(float));
    buf.write(x);
    struct {
        uint32_t n;
        float factor;
    } params = {100, 0.5f};
    wgc::Event start = stream.record_event();
    stream.launch(k, {wgc::binding(0, buf)}, {2, 1, 1},
                  wgc::span<const unsigned char>(reinterpret_cast<const unsigned char *>(&params), sizeof params));
    wgc::Event end = stream.record_event();
    stream.flush();
    end.wait();
    CHECK(end.query());
    if (device.info().has_timestamps) CHECK(start.elapsed_ms(end) >= 0.0);
    float out[100];
    buf.read(wgc::span<float>(out, 100));
    CHECK(out[99] == 49.5f && out[1] == 0.5f);
}

// A graph: capture an operator and a kernel, replay with new inputs, a
// rebound output and a patched factor; what cannot be captured throws.
static void graphs(const wgc::Device &device, const wgc::Stream &stream) {
    wgc::Kernel k = wgc::Kernel::create(device, SCALE, "scale");
    wgc::Tensor x = wgc::Tensor::empty(device, WGC_DTYPE_F32, {100});
    wgc::Tensor y = wgc::Tensor::empty(device, WGC_DTYPE_F32, {100});
    std::vector<float> host(100);
    for (int i = 0; i < 100; i++) host[i] = static_cast<float>(i);
    x.write(host);
    struct {
        uint32_t n;
        float factor;
    } params = {100, 0.5f};
    uint32_t launch = 0, value = 99;
    wgc::Graph g = wgc::Graph::capture(stream, [&] {
        value = wgc::Graph::next_value(stream);
        wgc::binary_scalar(stream, WGC_BINARY_OP_ADD, x, 1.0, y);  // y = x + 1
        launch = wgc::Graph::next_launch(stream);
        stream.launch(k, {wgc::binding(0, y.buffer())}, {2, 1, 1},
                      wgc::span<const unsigned char>(reinterpret_cast<const unsigned char *>(&params), sizeof params));
        bool refused = false;
        try {
            stream.synchronize();
        } catch (const wgc::Error &e) {
            refused = e.status() == WGC_ERROR_INVALID_OPERATION;
        }
        CHECK(refused);
    });
    CHECK(g.counts()[1] == launch + 1);
    g.replay(stream);
    std::vector<float> out(100);
    y.read(out);
    CHECK(out[0] == 0.5f && out[99] == 50.0f);
    host[99] = 199.0f;
    x.write(host);
    wgc::Tensor z = wgc::Tensor::empty(device, WGC_DTYPE_F32, {100});
    float factor = 2.0f;
    WgcGraphRebind rebind = {g.slot(y.buffer()), z.buffer().get()};
    WgcGraphScalar scalar = {launch, 4, &factor, 4};
    g.replay(stream, wgc::span<const WgcGraphRebind>(&rebind, 1), wgc::span<const WgcGraphScalar>(&scalar, 1));
    z.read(out);
    CHECK(out[0] == 2.0f && out[99] == 400.0f);
    y.read(out);
    CHECK(out[99] == 50.0f);
    // A new value for the operator's scalar: y = (x + 10) * 0.5.
    WgcGraphValue ten = {value, 0, 10.0};
    CHECK(value == 0);
    g.replay(stream, {}, {}, wgc::span<const WgcGraphValue>(&ten, 1));
    y.read(out);
    CHECK(out[0] == 5.0f && out[99] == 104.5f);
}

// The tuner's counters and save, through device options.
static void autotune_options(const wgc::Instance &instance) {
    WgcDeviceOptions options = wgc::device_options();
    options.autotune = WGC_AUTOTUNE_ON;
    wgc::Device device = wgc::Device::create(instance, options);
    wgc::Stream stream = wgc::Stream::create(device);
    wgc::Tensor x = wgc::Tensor::empty(device, WGC_DTYPE_F32, {3, 40001}), y = wgc::Tensor::empty(device, WGC_DTYPE_F32, {3, 40001});
    x.write(std::vector<float>(3 * 40001, 1.0f));
    wgc::softmax(stream, x, -1, y);
    std::vector<float> out = y.to_vector<float>();
    CHECK(std::fabs(out[40000] - 1.0f / 40001) < 1e-9f);
    WgcTuningStats stats = device.tuning_stats();
    CHECK(stats.mode == WGC_AUTOTUNE_ON && stats.timed == 1 && stats.entries == 1);
    CHECK(!device.save_tuning());  // no tuning_cache_path
}

// An expression built with operators: y = sqrt(relu(a * b + 1)) * 0.5 and
// a > b, one kernel with two outputs and a parameter; then the fused
// residual norm.
static void expressions(const wgc::Device &device, const wgc::Stream &stream) {
    const int N = 37;
    std::vector<float> a(N), b(N);
    for (int i = 0; i < N; i++) a[i] = std::sin(0.7f * i) * 2, b[i] = std::cos(0.3f * i);
    wgc::Tensor ta = wgc::Tensor::empty(device, WGC_DTYPE_F32, {N}), tb = wgc::Tensor::empty(device, WGC_DTYPE_F32, {N});
    wgc::Tensor ty = wgc::Tensor::empty(device, WGC_DTYPE_F32, {N}), tm = wgc::Tensor::empty(device, WGC_DTYPE_U32, {N});
    ta.write(a);
    tb.write(b);
    wgc::Expr e = wgc::Expr::create();
    wgc::Expr::Node x = e.input(WGC_DTYPE_F32), y = e.input(WGC_DTYPE_F32), p = e.param(WGC_DTYPE_F32);
    e.output(wgc::sqrt(wgc::relu(x * y + p)) * 0.5);
    e.output(e.binary(WGC_BINARY_OP_GT, x, y));
    wgc::Tensor in[] = {ta, tb}, out[] = {ty, tm};
    const double params[] = {1.0};
    wgc::expr(stream, e, in, out, params);
    std::vector<float> got = ty.to_vector<float>();
    std::vector<uint32_t> mask = tm.to_vector<uint32_t>();
    for (int i = 0; i < N; i++) {
        double t = static_cast<double>(a[i]) * b[i] + 1.0;
        CHECK_NEAR(got[i], std::sqrt(t > 0 ? t : 0) * 0.5, 1e-6);
        CHECK(mask[i] == (a[i] > b[i] ? 1u : 0u));
    }
    std::error_code ec;
    e.unary(WGC_UNARY_OP_EXP, e.input(WGC_DTYPE_I32), ec);
    CHECK(ec.value() == WGC_ERROR_UNSUPPORTED);

    // sqrt(sum(a * b over all) + eps) in one launch: a reduction with an epilogue.
    wgc::Expr d = wgc::Expr::create(), root = wgc::Expr::create();
    wgc::Expr::Node da = d.input(WGC_DTYPE_F32), db = d.input(WGC_DTYPE_F32);
    d.output(da * db);
    wgc::Expr::Node v = root.input(WGC_DTYPE_F32);
    root.output(wgc::sqrt(wgc::maximum(v, root.scalar(WGC_DTYPE_F32, 0.0)) + root.param(WGC_DTYPE_F32)));
    wgc::Tensor dot = wgc::Tensor::empty(device, WGC_DTYPE_F32, {});
    const double eps[] = {0.5};
    wgc::expr_reduce(stream, d, WGC_REDUCE_OP_SUM, {}, false, in, eps, &root, dot);
    double ref = 0;
    for (int i = 0; i < N; i++) ref += static_cast<double>(a[i]) * b[i];
    CHECK_NEAR(dot.to_vector<float>()[0], std::sqrt((ref > 0 ? ref : 0) + 0.5), 1e-5);
    wgc::expr_reduce(stream, e, WGC_REDUCE_OP_SUM, {}, false, in, params, nullptr, dot, ec);
    CHECK(ec.value() == WGC_ERROR_INVALID_ARGUMENT);  // e has two outputs

    wgc::Tensor h = wgc::Tensor::empty(device, WGC_DTYPE_F32, {2, 8}), r = wgc::Tensor::empty(device, WGC_DTYPE_F32, {2, 8});
    wgc::Tensor n = wgc::Tensor::empty(device, WGC_DTYPE_F32, {2, 8}), s = wgc::Tensor::empty(device, WGC_DTYPE_F32, {2, 8});
    std::vector<float> hv(16), rv(16);
    for (int i = 0; i < 16; i++) hv[i] = 0.25f * i, rv[i] = 1.0f;
    h.write(hv);
    r.write(rv);
    wgc::rms_norm_residual(stream, h, r, nullptr, 1, 1e-6f, n, s);
    std::vector<float> sv = s.to_vector<float>(), nv = n.to_vector<float>();
    for (int row = 0; row < 2; row++) {
        double ss = 0;
        for (int j = 0; j < 8; j++) ss += static_cast<double>(sv[row * 8 + j]) * sv[row * 8 + j];
        double rstd = 1.0 / std::sqrt(ss / 8 + 1e-6);
        for (int j = 0; j < 8; j++) {
            CHECK(sv[row * 8 + j] == hv[row * 8 + j] + 1.0f);
            CHECK_NEAR(nv[row * 8 + j], sv[row * 8 + j] * rstd, 1e-5);
        }
    }
}

// Several devices on the one adapter: a tensor view copied across, and the
// collectives through the communicator.
static void several_devices(const wgc::Instance &instance) {
    std::vector<wgc::Device> devices = {wgc::Device::create(instance), wgc::Device::create(instance)};
    std::vector<wgc::Stream> streams = {wgc::Stream::create(devices[0]), wgc::Stream::create(devices[1])};
    wgc::Tensor a = wgc::Tensor::empty(devices[0], WGC_DTYPE_F32, {5, 3});
    wgc::Tensor b = wgc::Tensor::empty(devices[1], WGC_DTYPE_F32, {5, 3});
    std::vector<float> x(15);
    for (int i = 0; i < 15; i++) x[i] = static_cast<float>(i);
    a.write(x);
    wgc::copy_to_device(streams[0], a, streams[1], b);
    CHECK(b.to_vector<float>() == x);
    WgcPeerRoute route = wgc::peer_route(devices[0], devices[1]);
    CHECK(route == WGC_PEER_ROUTE_IMPORTED || route == WGC_PEER_ROUTE_STAGED);
    CHECK(wgc::peer_route(devices[1], devices[0]) == route);
    wgc::Comm comm = wgc::Comm::create(devices);
    CHECK(comm.size() == 2);
    std::vector<wgc::Tensor> both = {a, b};
    comm.all_reduce(streams, both);
    std::vector<float> sum = a.to_vector<float>();
    CHECK(sum[14] == 28.0f && b.to_vector<float>() == sum);
    std::vector<wgc::Device> twice = {devices[0], devices[0]};
    std::error_code ec;
    wgc::Comm bad = wgc::Comm::create(twice, ec);
    CHECK(!bad && ec == wgc::make_error_code(WGC_ERROR_INVALID_ARGUMENT));
    comm.all_reduce(wgc::span<const wgc::Stream>(streams.data(), 1), both, WGC_COLLECTIVE_OP_SUM, ec);
    CHECK(ec == wgc::make_error_code(WGC_ERROR_INVALID_ARGUMENT));
}

// The profiler: one record per command with the operator's name and
// shapes, a table, and a refused group; records freed by the Profile.
static void profiling(const wgc::Device &device) {
    wgc::Stream s = wgc::Stream::create(device);
    wgc::set_profiling(s, true);
    wgc::Tensor a = wgc::Tensor::empty(device, WGC_DTYPE_F32, {4, 6}), b = wgc::Tensor::empty(device, WGC_DTYPE_F32, {6, 3});
    wgc::Tensor c = wgc::Tensor::empty(device, WGC_DTYPE_F32, {4, 3});
    a.write(std::vector<float>(24, 1.0f));
    b.write(std::vector<float>(18, 2.0f));
    wgc::matmul(s, a, b, c);
    wgc::Profile p = wgc::Profile::take(s);
    CHECK(p.size() >= 1);
    bool found = false;
    for (const WgcProfileRecord &r : p) found = found || std::strcmp(r.op, "matmul") == 0;
    CHECK(found);
    std::string table = p.table();
    CHECK(table.find("matmul") != std::string::npos);
    CHECK(c.to_vector<float>()[0] == 12.0f);
    bool refused = false;
    try {
        (void)p.table(99);
    } catch (const wgc::Error &e) {
        refused = e.status() == WGC_ERROR_INVALID_ARGUMENT;
    }
    CHECK(refused);
    wgc::clear_profile(s);
    wgc::set_profiling(s, false);
}

int main() {
    wgc::Instance instance = wgc::Instance::create();
    CHECK(instance.adapter_count() >= 1);
    CHECK(std::strlen(instance.adapter_info(0).name) > 0);
    wgc::Device device = wgc::Device::create(instance);
    wgc::Stream stream = wgc::Stream::create(device);
    handles_count_references(device);
    errors_throw_with_status_and_message(device, stream);
    error_codes_do_not_throw(device);
    operators_on_views(device, stream);
    explain_a_convolution(device, stream);
    explain_a_product(device, stream);
    convolution_with_residual(device, stream);
    linear_with_epilogue(device, stream);
    attention_one_head(device, stream);
    kernels_streams_events(device, stream);
    graphs(device, stream);
    autotune_options(instance);
    expressions(device, stream);
    several_devices(instance);
    profiling(device);
    return finish("test_cpp_api");
}
