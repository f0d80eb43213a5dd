/* Float buffers lent to the network without a copy (see lend.h). */
#define _POSIX_C_SOURCE 200809L
#include "lend.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/log.h"

/* The floats start one cache line into the buffer; the header sits just before them. */
#define HEADROOM 64
#define SPARE 2 /* idle buffers kept for reuse; more are freed */
_Static_assert(HEADROOM >= SW_PROTO_HEADER + SW__LEND_HEAD_MAX,
               "the header and a payload's head must fit in front of the floats");

enum { IDLE, BUSY, ORPHAN }; /* ORPHAN: busy, and freed when its frame goes */

struct sw__lent {
    uint8_t *base;
    float *floats;
    atomic_int state; /* BUSY while a frame reads it: set here, cleared where the frame goes */
};

void sw__lender_init(sw__lender *l, size_t n) { *l = (sw__lender){.n = n}; }

static void drop(sw__lent *b)
{
    free(b->base);
    free(b);
}

/* A buffer still in a frame (queued for a server that is down, say) is left to the frame. */
void sw__lender_free(sw__lender *l)
{
    for (size_t i = 0; i < l->count; i++) {
        int busy = BUSY;
        if (!atomic_compare_exchange_strong(&l->bufs[i]->state, &busy, ORPHAN))
            drop(l->bufs[i]);
    }
    free(l->bufs);
    *l = (sw__lender){.n = l->n};
}

static sw__lent *find(const sw__lender *l, const float *floats)
{
    for (size_t i = 0; i < l->count; i++)
        if (l->bufs[i]->floats == floats)
            return l->bufs[i];
    return NULL;
}

static bool idle(sw__lent *b)
{
    return atomic_load_explicit(&b->state, memory_order_acquire) == IDLE;
}

static sw__lent *fresh(sw__lender *l)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4;
        sw__lent **bufs = realloc(l->bufs, cap * sizeof *bufs);
        if (!bufs)
            return NULL;
        l->bufs = bufs;
        l->cap = cap;
    }
    sw__lent *b = malloc(sizeof *b);
    if (!b || posix_memalign((void **)&b->base, HEADROOM, HEADROOM + 4 * l->n) != 0) {
        free(b);
        return NULL;
    }
    b->floats = (float *)(b->base + HEADROOM);
    atomic_init(&b->state, IDLE);
    return l->bufs[l->count++] = b;
}

/* Frees idle buffers beyond SPARE, sparing `keep`: a burst of frames in flight (many workers,
 * a slow network) must not leave its buffers allocated for the rest of the run. */
static void trim(sw__lender *l, const sw__lent *keep)
{
    size_t spare = 0;
    for (size_t i = 0; i < l->count;) {
        sw__lent *b = l->bufs[i];
        if (b != keep && idle(b) && ++spare > SPARE) {
            drop(b);
            l->bufs[i] = l->bufs[--l->count];
        } else {
            i++;
        }
    }
}

float *sw__lender_writable(sw__lender *l, float *cur, bool keep)
{
    sw__lent *b = find(l, cur);
    if (b && idle(b)) {
        if (l->count > SPARE + 1)
            trim(l, b);
        return cur;
    }
    sw__lent *w = NULL;
    for (size_t i = 0; i < l->count && !w; i++)
        if (l->bufs[i] != b && idle(l->bufs[i]))
            w = l->bufs[i];
    if (!w && !(w = fresh(l))) {
        sw_log(SW_LOG_WARN, "no memory for a second copy of %zu floats: writing them while "
                            "they are sent (the receiver refuses a torn copy by its checksum)",
               l->n);
        return cur;
    }
    if (keep && cur)
        memcpy(w->floats, cur, 4 * l->n);
    trim(l, w);
    return w->floats;
}

static void returned(void *ctx)
{
    sw__lent *b = ctx;
    if (atomic_exchange_explicit(&b->state, IDLE, memory_order_acq_rel) == ORPHAN)
        drop(b);
}

sw_frame *sw__lender_frame(sw__lender *l, const float *floats, const sw_msg *m, size_t head)
{
    sw__lent *b = find(l, floats);
    /* the whole buffer, exactly: a payload of the buffer's first floats only is not lent */
    if (!b || !idle(b) || head > SW__LEND_HEAD_MAX || m->payload_len != head + 4 * l->n ||
        (head && !m->payload))
        return NULL;
    uint8_t *at = (uint8_t *)b->floats - head - SW_PROTO_HEADER;
    if (head)
        memcpy(at + SW_PROTO_HEADER, m->payload, head);
    sw_msg header = *m;
    header.payload = NULL; /* already in place: only checksummed */
    sw_msg_encode(&header, at);
    atomic_store_explicit(&b->state, BUSY, memory_order_relaxed);
    sw_frame *f = sw_frame_lend(at, sw_msg_size(m->payload_len), returned, b);
    if (!f)
        atomic_store_explicit(&b->state, IDLE, memory_order_relaxed);
    return f;
}

sw_frame *sw__frame_build_head(sw__lender *l, const sw_msg *m, size_t head, const float *floats)
{
    sw_frame *f = l && floats ? sw__lender_frame(l, floats, m, head) : NULL;
    if (f || !(f = sw_frame_new(sw_msg_size(m->payload_len))))
        return f;
    if (floats)
        sw_msg_encode_head_floats(m, head, floats, sw_frame_data(f));
    else
        sw_msg_encode(m, sw_frame_data(f));
    return f;
}

sw_frame *sw__frame_build(sw__lender *l, const sw_msg *m, const float *floats)
{
    return sw__frame_build_head(l, m, 0, floats);
}

float *sw__lender_engine_hook(void *ctx, float *theta)
{
    return sw__lender_writable(ctx, theta, true);
}
