/* Reference-counted frames (syncwise/transport.h). */
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

#include "syncwise/transport.h"

struct sw_frame {
    atomic_uint refs;
    uint8_t *data;
    size_t size;
    void (*done)(void *ctx); /* lent bytes: given back when the last reference goes */
    void *ctx;
};

/* A frame's own bytes follow it, at an offset that keeps them aligned for any type. */
#define OWN_OFFSET ((sizeof(sw_frame) + alignof(max_align_t) - 1) / alignof(max_align_t) * \
                    alignof(max_align_t))

sw_frame *sw_frame_new(size_t size)
{
    sw_frame *f = malloc(OWN_OFFSET + (size ? size : 1));
    if (!f)
        return NULL;
    atomic_init(&f->refs, 1);
    f->data = (uint8_t *)f + OWN_OFFSET;
    f->size = size;
    f->done = NULL;
    f->ctx = NULL;
    return f;
}

sw_frame *sw_frame_lend(void *data, size_t size, void (*done)(void *ctx), void *ctx)
{
    sw_frame *f = malloc(sizeof *f);
    if (!f)
        return NULL;
    atomic_init(&f->refs, 1);
    f->data = data;
    f->size = size;
    f->done = done;
    f->ctx = ctx;
    return f;
}

sw_frame *sw_frame_ref(sw_frame *f)
{
    atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
    return f;
}

void sw_frame_unref(sw_frame *f)
{
    if (!f || atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (f->done)
        f->done(f->ctx);
    free(f);
}

uint8_t *sw_frame_data(const sw_frame *f) { return f->data; }

size_t sw_frame_size(const sw_frame *f) { return f->size; }
