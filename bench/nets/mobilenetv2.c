/* MobileNetV2 (torchvision's, width 1.0), inference: each convolution with
 * its batch norm folded, ReLU6 after the expansion and depthwise ones. */
#include <stdio.h>

#include "net.h"

void build_mobilenetv2(Net *net, int64_t size) {
    /* expansion t, output channels c, repeats n, first stride s */
    static const int settings[7][4] = {{1, 16, 1, 1},  {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                       {6, 96, 3, 1},  {6, 160, 3, 2}, {6, 320, 1, 1}};
    const uint32_t relu6 = WGC_ACTIVATION_RELU6, none = WGC_ACTIVATION_NONE;
    int x = net_input(net, 3, size, size);
    x = net_conv(net, "features.0", x, 32, 3, 2, 1, relu6, 1.0);
    int index = 1;
    for (int s = 0; s < 7; s++)
        for (int i = 0; i < settings[s][2]; i++, index++) {
            int64_t in_c = net->values[x].c, hidden = in_c * settings[s][0], out_c = settings[s][1];
            int64_t stride = i == 0 ? settings[s][3] : 1;
            char n[48];
            int h = x;
            if (settings[s][0] != 1) {
                snprintf(n, sizeof n, "features.%d.expand", index);
                h = net_conv(net, n, h, hidden, 1, 1, 1, relu6, 1.0);
            }
            snprintf(n, sizeof n, "features.%d.dw", index);
            h = net_conv(net, n, h, hidden, 3, stride, hidden, relu6, 1.0);
            int residual = stride == 1 && in_c == out_c;
            snprintf(n, sizeof n, "features.%d.project", index);
            h = net_conv(net, n, h, out_c, 1, 1, 1, none, residual ? 0.2 : 1.0);
            if (residual) {
                snprintf(n, sizeof n, "features.%d.add", index);
                h = net_add(net, n, h, x, 0);
            }
            x = h;
        }
    x = net_conv(net, "features.18", x, 1280, 1, 1, 1, relu6, 1.0);
    x = net_gap(net, "avgpool", x);
    net_linear(net, "classifier", x, 1000);
}
