/* libFuzzer target for the protocol decoder: any bytes, decoded as a frame and, when that
 * succeeds, as a float payload. Built with clang -fsanitize=fuzzer,address,undefined by
 * tests/fuzz/run.sh, which CI runs briefly over tests/corpus/proto. */
#include <stddef.h>
#include <stdint.h>

#include "syncwise/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sw_msg m;
    if (sw_msg_decode(data, size, 1 << 16, &m, NULL) == 0) {
        float v[64];
        if (m.payload_len <= sizeof v)
            sw_msg_get_floats(&m, v, m.payload_len / 4, NULL);
        sw_msg_floats_in_place(&m, m.payload_len / 4, NULL);
        uint32_t idx[64];
        size_t k;
        sw_msg_get_pairs(&m, 1000, idx, v, 64, &k, NULL);
        sw_msg_get_indices(&m, 1000, idx, 64, &k, NULL);
    }
    return 0;
}
