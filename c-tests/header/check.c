/* The public header must compile as strict C99 with every warning an error. */
#include "wgcompute.h"

int main(void) {
    WgcStatus s = WGC_OK;
    WgcLaunch launch = {0};
    WgcDeviceOptions options = {0};
    launch.struct_size = sizeof launch;
    options.preference = WGC_POWER_PREFERENCE_SOFTWARE;
    (void)launch;
    (void)options;
    (void)wgc_status_string(s);
    return (int)s + (WGC_ABI_VERSION > 0 ? 0 : 1);
}
