/* ResNet-50 (torchvision's layout: the stride on the 3x3 convolution of a
 * bottleneck), inference: each convolution with its batch norm folded. */
#include <stdio.h>

#include "net.h"

static int bottleneck(Net *net, const char *name, int x, int64_t width, int64_t stride) {
    char n[48];
    int64_t out_c = width * 4;
    snprintf(n, sizeof n, "%s.conv1", name);
    int a = net_conv(net, n, x, width, 1, 1, 1, WGC_ACTIVATION_RELU, 1.0);
    snprintf(n, sizeof n, "%s.conv2", name);
    int b = net_conv(net, n, a, width, 3, stride, 1, WGC_ACTIVATION_RELU, 1.0);
    snprintf(n, sizeof n, "%s.conv3", name);
    int c = net_conv(net, n, b, out_c, 1, 1, 1, WGC_ACTIVATION_NONE, 0.2);
    int shortcut = x;
    if (stride != 1 || net->values[x].c != out_c) {
        snprintf(n, sizeof n, "%s.downsample", name);
        shortcut = net_conv(net, n, x, out_c, 1, stride, 1, WGC_ACTIVATION_NONE, 1.0);
    }
    snprintf(n, sizeof n, "%s.add", name);
    return net_add(net, n, c, shortcut, 1);
}

void build_resnet50(Net *net, int64_t size) {
    static const int blocks[4] = {3, 4, 6, 3};
    int x = net_input(net, 3, size, size);
    x = net_conv(net, "conv1", x, 64, 7, 2, 1, WGC_ACTIVATION_RELU, 1.0);
    x = net_maxpool(net, "maxpool", x, 3, 2, 1);
    for (int stage = 0; stage < 4; stage++)
        for (int i = 0; i < blocks[stage]; i++) {
            char name[32];
            snprintf(name, sizeof name, "layer%d.%d", stage + 1, i);
            x = bottleneck(net, name, x, 64 << stage, i == 0 && stage > 0 ? 2 : 1);
        }
    x = net_gap(net, "avgpool", x);
    net_linear(net, "fc", x, 1000);
}
