/* A fork-join team (syncwise/team.h): the threads wait on one condition for a new generation of
 * work, take their part, and the last to finish wakes the caller. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "syncwise/err.h"
#include "syncwise/team.h"

struct sw_team {
    uint32_t n;           /* threads in all, the caller's among them */
    pthread_t *threads;   /* the n - 1 started */
    uint32_t started;
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    uint64_t generation;  /* one per sw_team_run */
    uint32_t unfinished;  /* the team's threads still on this generation */
    bool stopping;
    sw_team_fn fn;
    void *ctx;
    uint32_t parts;
};

typedef struct member {
    sw_team *t;
    uint32_t part;
} member;

static void *member_main(void *arg)
{
    sw_team *t = ((member *)arg)->t;
    uint32_t part = ((member *)arg)->part;
    free(arg);
    uint64_t seen = 0;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        while (t->generation == seen && !t->stopping)
            pthread_cond_wait(&t->work, &t->lock);
        if (t->stopping)
            break;
        seen = t->generation;
        sw_team_fn fn = t->fn;
        void *ctx = t->ctx;
        uint32_t parts = t->parts;
        if (part >= parts) /* not needed this time: the caller waits for the parts only */
            continue;
        pthread_mutex_unlock(&t->lock);
        fn(ctx, part, parts);
        pthread_mutex_lock(&t->lock);
        if (--t->unfinished == 0)
            pthread_cond_signal(&t->done);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

int sw_team_new(sw_team **out, uint32_t threads, char *err)
{
    sw_team *t = calloc(1, sizeof *t);
    if (!t || !(t->threads = calloc(threads > 1 ? threads - 1 : 1, sizeof *t->threads))) {
        free(t);
        return sw_fail(err, SW_ENOMEM, "no memory for %u threads", threads);
    }
    t->n = threads ? threads : 1;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->work, NULL);
    pthread_cond_init(&t->done, NULL);
    for (uint32_t i = 1; i < t->n; i++) {
        member *m = malloc(sizeof *m);
        if (!m) {
            sw_team_free(t);
            return sw_fail(err, SW_ENOMEM, "no memory for thread %u of %u", i + 1, threads);
        }
        *m = (member){.t = t, .part = i};
        if (pthread_create(&t->threads[t->started], NULL, member_main, m) != 0) {
            free(m);
            sw_team_free(t);
            return sw_fail(err, SW_EIO, "could not start thread %u of %u", i + 1, threads);
        }
        t->started++;
    }
    *out = t;
    return 0;
}

uint32_t sw_team_size(const sw_team *t)
{
    return t->n;
}

void sw_team_run(sw_team *t, uint32_t parts, sw_team_fn fn, void *ctx)
{
    if (parts > t->n)
        parts = t->n;
    if (parts <= 1) {
        fn(ctx, 0, 1);
        return;
    }
    pthread_mutex_lock(&t->lock);
    t->fn = fn;
    t->ctx = ctx;
    t->parts = parts;
    t->unfinished = parts - 1; /* the members of parts 1 .. parts - 1 */
    t->generation++;
    pthread_cond_broadcast(&t->work);
    pthread_mutex_unlock(&t->lock);
    fn(ctx, 0, parts);
    pthread_mutex_lock(&t->lock);
    while (t->unfinished)
        pthread_cond_wait(&t->done, &t->lock);
    pthread_mutex_unlock(&t->lock);
}

void sw_team_free(sw_team *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->stopping = true;
    pthread_cond_broadcast(&t->work);
    pthread_mutex_unlock(&t->lock);
    for (uint32_t i = 0; i < t->started; i++)
        pthread_join(t->threads[i], NULL);
    pthread_cond_destroy(&t->work);
    pthread_cond_destroy(&t->done);
    pthread_mutex_destroy(&t->lock);
    free(t->threads);
    free(t);
}
