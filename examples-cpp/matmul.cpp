#include <wgcompute.hpp>
#include <cstdio>
#include <vector>

int main() {
    wgc::Device device = wgc::Device::create(wgc::Instance::create());
    wgc::Stream stream = wgc::Stream::create(device);
    wgc::Tensor a = wgc::Tensor::empty(device, WGC_DTYPE_F32, {2, 3}), b = wgc::Tensor::empty(device, WGC_DTYPE_F32, {3, 2});
    wgc::Tensor c = wgc::Tensor::empty(device, WGC_DTYPE_F32, {2, 2});
    a.write(std::vector<float>{1, 2, 3, 4, 5, 6});
    b.write(std::vector<float>{1, 0, 0, 1, 1, 1});
    wgc::matmul(stream, a, b, c);                    // recorded on the stream
    std::vector<float> out = c.to_vector<float>();   // waits for the result
    std::printf("%g %g\n%g %g\n", out[0], out[1], out[2], out[3]);
}
