// The public header must compile as C++11 with every warning an error.
#include "wgcompute.h"

int main() {
    WgcStatus s = WGC_OK;
    WgcLaunch launch = WgcLaunch();
    launch.struct_size = sizeof launch;
    const char *(*name)(WgcStatus) = &wgc_status_string;
    (void)name;
    return static_cast<int>(s) + (WGC_ABI_VERSION > 0 ? 0 : 1);
}
