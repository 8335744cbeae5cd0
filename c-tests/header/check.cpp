// The public header must compile as C++11 with every warning an error.
#include "wgcompute.h"

int main() {
    WgcStatus s = WGC_OK;
    WgcLaunch launch = WgcLaunch();
    launch.struct_size = sizeof launch;
    WgcDeviceOptions options = WgcDeviceOptions();
    options.preference = WGC_POWER_PREFERENCE_SOFTWARE;
    const char *name = wgc_status_string(s);
    (void)name;
    (void)options;
    return static_cast<int>(s) + (WGC_ABI_VERSION > 0 ? 0 : 1);
}
