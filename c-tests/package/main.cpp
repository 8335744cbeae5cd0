// An outside C++ project using the installed wgcompute.hpp through wgcompute::wgcompute.
#include <wgcompute.hpp>

#include <cstdio>
#include <vector>

int main() {
    wgc::Device device = wgc::Device::create(wgc::Instance::create());
    wgc::Stream stream = wgc::Stream::create(device);
    wgc::Tensor x = wgc::Tensor::empty(device, WGC_DTYPE_F32, {3});
    x.write(std::vector<float>{1, 2, 3});
    wgc::Tensor total = wgc::Tensor::empty(device, WGC_DTYPE_F32, {});
    wgc::reduce(stream, WGC_REDUCE_OP_SUM, x, {}, 0, total);
    std::vector<float> out = total.to_vector<float>();
    std::printf("wgcompute C++ consumer: sum = %g\n", out[0]);
    return out[0] == 6.0f ? 0 : 1;
}
