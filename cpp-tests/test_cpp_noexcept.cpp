// The C++ API compiled without exceptions: the std::error_code forms only.
#include <wgcompute.hpp>

#include <vector>

#include "check.hpp"

#if WGC_HPP_EXCEPTIONS
#error "this test must be compiled with -fno-exceptions"
#endif

int main() {
    std::error_code ec;
    wgc::Instance instance = wgc::Instance::create(ec);
    CHECK(!ec && instance);
    wgc::Device device = wgc::Device::create(instance, ec);
    CHECK(!ec && device);
    wgc::Stream stream = wgc::Stream::create(device, ec);
    wgc::Tensor x = wgc::Tensor::empty(device, WGC_DTYPE_F32, {4}, ec);
    wgc::Tensor y = wgc::Tensor::uninit(device, WGC_DTYPE_F32, {4}, ec);
    x.write(std::vector<float>{-1, 2, -3, 4}, ec);
    wgc::unary(stream, WGC_UNARY_OP_ABS, x, y, ec);
    CHECK(!ec);
    std::vector<float> out(4);
    y.read(out, ec);
    CHECK(!ec && out[0] == 1 && out[2] == 3);
    wgc::Tensor wrong = wgc::Tensor::empty(device, WGC_DTYPE_I32, {4}, ec);
    wgc::unary(stream, WGC_UNARY_OP_ABS, x, wrong, ec);  // dtypes differ
    CHECK(ec.value() == WGC_ERROR_DTYPE_MISMATCH);
    CHECK(!wgc::last_error_message().empty());
    wgc::Buffer none = wgc::Buffer::create_uninit(device, 0, WGC_BUFFER_USAGE_STORAGE, ec);
    CHECK(ec.value() == WGC_ERROR_INVALID_ARGUMENT && !none);
    return finish("test_cpp_noexcept");
}
