/* A sharded run's restores on the in-process network, where a killed shard's listener loses
 * what was queued for it, and the connections to it are made again when it is started again at
 * its endpoint, bringing what was sent meanwhile (as ZeroMQ keeps it). One shard is stopped
 * (no more turns, as SIGSTOP), the other killed and started again from its file, then the
 * stopped one killed and started again, at many moments around the saves the server orders
 * every two applies, quickly (the server sees the links made again) and slowly (the shards
 * count as out first). Whatever each shard had saved when it stopped, every shard must go back
 * to a checkpoint all of them hold and the run must reach its limit: before, a stopped shard
 * that had not read the save under way was sent back to it (and refused), and one that had
 * saved a version the run then abandoned was called an old file. And a shard's links broken
 * while it counts as out, the same process going on after: it missed orders, and refused the
 * next apply before; now every shard goes back. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "syncwise/ckpt.h"
#include "syncwise/err.h"
#include "syncwise/net.h"
#include "syncwise/shard.h"
#include "syncwise/transport.h"

enum { WORKERS = 2, SHARDS = 2, LIMIT = 60 };
#define LATENCY_S 0.01 /* a save is on its way to the shards a fifth of the time */
#define STEP_S 0.05
#define DEADLINE_S 600.0

static double a_step(void *ctx, uint32_t worker)
{
    (void)ctx;
    return STEP_S * (1 + 0.3 * worker);
}

typedef struct rig {
    sw_net *net;
    sw_loop *loop;
    char dir[64], files[SHARDS][96], record[96];
    sw_shard *shards[SHARDS];
    sw_shard_params shard_p[SHARDS];
    sw_shard_result shard_r[SHARDS];
    sw_server_params server_p;
    sw_worker_params worker_p;
    double target_acc, eval_every_s; /* 0: none, and no evaluation before the end */
    FILE *log;                       /* the server's event log, with a target */
} rig;

static const char *const eps[SHARDS] = {"shard0", "shard1"};

/* Shard j on its endpoint and file; resumed from the file when `resume`. */
static void start_shard(rig *g, uint32_t j, bool resume)
{
    char err[SW_ERR_LEN];
    g->shard_p[j] = (sw_shard_params){.bind = eps[j], .checkpoint = g->files[j], .resume = resume};
    if (sw_shard_new(&g->shards[j], g->net, &g->shard_p[j], &g->shard_r[j], err) ||
        sw_loop_add(g->loop, sw_shard_agent(g->shards[j]), err))
        fail_msg("shard %u: %s", j, err);
}

/* SIGSTOP: no more turns; what comes waits in its queue. */
static void stop_shard(rig *g, uint32_t j)
{
    sw_loop_remove(g->loop, sw_shard_agent(g->shards[j]));
}

/* SIGKILL (of a shard stopped or not): its queue is lost, its connections break. */
static void kill_shard(rig *g, uint32_t j)
{
    sw_loop_remove(g->loop, sw_shard_agent(g->shards[j]));
    sw_shard_end(g->shards[j]);
    g->shards[j] = NULL;
}

static void run_until(rig *g, double t)
{
    char err[SW_ERR_LEN];
    if (sw_loop_run(g->loop, NULL, t, err))
        fail_msg("the loop: %s", err);
}

static void remove_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return;
    char file[320];
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(file, sizeof file, "%s/%s", path, e->d_name);
            unlink(file);
        }
    closedir(d);
    rmdir(path);
}

/* The moments: shard 1 stopped at `stop`, shard 0 killed at `kill0` and started again
 * `restart_s` later, shard 1 killed 0.4 s after shard 0's start and started again
 * `restart_s` later. */
typedef struct plan {
    double stop, kill0, restart_s;
} plan;

/* A run on two shards with a checkpoint every `applies` applies (and every_s seconds, 0: not
 * by time), its server and workers started. */
static void start_run(rig *g, sw_server **s, sw_server_result *r, sw_worker **workers,
                      sw_worker_result *results, uint64_t applies, double every_s)
{
    char err[SW_ERR_LEN];
    double target = g->target_acc, every = g->eval_every_s;
    *g = (rig){.target_acc = target, .eval_every_s = every};
    sw_inproc_params np = {.latency_s = LATENCY_S, .bandwidth = 1e9};
    if (sw_net_inproc_new(&g->net, &np, err) || sw_loop_new(&g->loop, g->net, err))
        fail_msg("%s", err);
    snprintf(g->dir, sizeof g->dir, "/tmp/sw_restore_test.XXXXXX");
    assert_non_null(mkdtemp(g->dir));
    snprintf(g->record, sizeof g->record, "%s/server.ckpt", g->dir);
    for (uint32_t j = 0; j < SHARDS; j++) {
        snprintf(g->files[j], sizeof g->files[j], "%s/shard%u.ckpt", g->dir, j);
        start_shard(g, j, false);
    }
    sw_server_params p = sw_server_default_params();
    p.bind = "server";
    p.ctl_bind = "operators";
    p.policy = "asp";
    p.model = "softmax";
    p.data = "synthetic:task=logistic,d=12,n=3000,test=300,val=300";
    p.seed = 11;
    p.wait_workers = WORKERS;
    p.heartbeat_timeout_s = 1e9;
    p.eval_every_s = every ? every : 1e9;
    p.target_acc = target;
    if (target) {
        char path[96];
        snprintf(path, sizeof path, "%s/events.jsonl", g->dir);
        assert_non_null(g->log = fopen(path, "w+"));
        p.log = g->log;
    }
    p.checkpoint = g->record;
    p.checkpoint_applies = applies;
    p.checkpoint_s = every_s;
    p.max_applies = target ? 0 : LIMIT; /* a target ends the run */
    p.shards = "shard0,shard1";
    g->server_p = p; /* borrowed by the server until it ends */
    if (sw_server_new(s, g->net, &g->server_p, r, err) ||
        sw_loop_add(g->loop, sw_server_agent(*s), err))
        fail_msg("the server: %s", err);
    sw_worker_params wp = sw_worker_default_params();
    wp.connect = "server";
    wp.server_timeout_s = 1e9;
    wp.step_s = a_step;
    g->worker_p = wp;
    for (int w = 0; w < WORKERS; w++)
        if (sw_worker_new(&workers[w], g->net, &g->worker_p, &results[w], err) ||
            sw_loop_add(g->loop, sw_worker_agent(workers[w]), err))
            fail_msg("a worker: %s", err);
}

/* The run, played to its end: it must have reached its limit keeping its promise, with every
 * shard at its version and restored at least once. `what` names the case in a failure. */
static void end_run(rig *g, sw_server *s, const sw_server_result *r, sw_worker **workers,
                    uint64_t min_restores, const char *what, ...)
{
    char err[SW_ERR_LEN], name[160];
    va_list ap;
    va_start(ap, what);
    vsnprintf(name, sizeof name, what, ap);
    va_end(ap);
    if (sw_server_end(s, err))
        fail_msg("%s: the run failed: %s", name, err);
    assert_string_equal(r->broken, "");
    assert_true(r->version - r->start_version >= LIMIT);
    for (uint32_t j = 0; j < SHARDS; j++) {
        if (!g->shard_r[j].done || g->shard_r[j].version != r->version ||
            g->shard_r[j].restores < min_restores)
            fail_msg("%s: shard %u ended %s at version %llu (the server's %llu) after %llu "
                     "restores", name, j, g->shard_r[j].done ? "with the run" : "before the run",
                     (unsigned long long)g->shard_r[j].version, (unsigned long long)r->version,
                     (unsigned long long)g->shard_r[j].restores);
        sw_shard_end(g->shards[j]);
    }
    for (int w = 0; w < WORKERS; w++)
        assert_int_equal(sw_worker_end(workers[w], err), 0);
    sw_loop_free(g->loop);
    sw_net_free(g->net);
    remove_dir(g->dir);
}

static void run_plan(const plan *pl)
{
    rig g = {0};
    sw_server *s;
    sw_server_result r;
    sw_worker *workers[WORKERS];
    sw_worker_result results[WORKERS];
    start_run(&g, &s, &r, workers, results, 2, 0);
    double kill1 = pl->kill0 + pl->restart_s + 0.4;
    run_until(&g, pl->stop < pl->kill0 ? pl->stop : pl->kill0);
    if (pl->stop < pl->kill0) {
        stop_shard(&g, 1);
        run_until(&g, pl->kill0);
        kill_shard(&g, 0);
    } else {
        kill_shard(&g, 0);
        run_until(&g, pl->stop);
        stop_shard(&g, 1);
    }
    run_until(&g, pl->kill0 + pl->restart_s);
    start_shard(&g, 0, true);
    run_until(&g, kill1);
    kill_shard(&g, 1);
    run_until(&g, kill1 + pl->restart_s);
    start_shard(&g, 1, true);
    run_until(&g, DEADLINE_S);
    end_run(&g, s, &r, workers, 1, "stop at %.3f s, kill at %.3f s, restarts after %.1f s",
            pl->stop, pl->kill0, pl->restart_s);
}

/* Shard 1 stopped 15 ms before or after shard 0's kill, at 10 moments 7 ms apart (more than a
 * save's period of about two applies: every phase of a save on its way), each restart quick
 * (within the server's 1 s before a silent shard is out) and slow. */
static void every_shard_goes_back_to_a_checkpoint_all_hold(void **state)
{
    (void)state;
    for (int k = 0; k < 10; k++)
        for (int order = 0; order < 2; order++)
            for (int slow = 0; slow < 2; slow++) {
                double t = 1.0 + 0.007 * k;
                plan pl = {.stop = order ? t + 0.015 : t, .kill0 = order ? t : t + 0.015,
                           .restart_s = slow ? 1.5 : 0.0};
                run_plan(&pl);
            }
}

/* A fault at time t: on shard 1's links, or shards killed and started again (it may run the
 * loop on while it lasts). */
typedef void fault_fn(rig *g, double t);

/* A run with `fault` at t, checkpointed every `applies` applies and every_s seconds too (0: by
 * count only), played to its end (end_run, at least min_restores each); `what` names the fault
 * in a failure. */
static void run_with_fault(double t, uint64_t applies, double every_s, fault_fn *fault,
                           uint64_t min_restores, const char *what)
{
    rig g = {0};
    sw_server *s;
    sw_server_result r;
    sw_worker *workers[WORKERS];
    sw_worker_result results[WORKERS];
    start_run(&g, &s, &r, workers, results, applies, every_s);
    run_until(&g, t);
    fault(&g, t);
    run_until(&g, DEADLINE_S);
    end_run(&g, s, &r, workers, min_restores, "%s at %.3f s", what, t);
}

static sw_sock *links_of(rig *g, uint32_t j)
{
    return sw_shard_agent(g->shards[j])->socks[0];
}

static void stopped_till_out_then_broken(rig *g, double t)
{
    char err[SW_ERR_LEN];
    stop_shard(g, 1);
    run_until(g, t + 1.5);
    sw_net_inproc_break(links_of(g, 1));
    if (sw_loop_add(g->loop, sw_shard_agent(g->shards[1]), err))
        fail_msg("%s", err);
}

static void broken(rig *g, double t)
{
    (void)t;
    sw_net_inproc_break(links_of(g, 1));
}

static void cut_for_a_while(rig *g, double t)
{
    sw_net_inproc_cut(links_of(g, 1));
    run_until(g, t + 0.3);
    sw_net_inproc_mend(links_of(g, 1));
}

/* Shard 1 stopped long enough to count as out (1 s of silence), its link to everyone broken
 * meanwhile (what was queued either way lost: an apply order, a push), then let run again:
 * the same process, which awaits no restore, yet missed orders. Every shard must go back to
 * the common checkpoint, and the run reach its limit. Stopped at 10 moments 7 ms apart. */
static void a_link_broken_while_its_shard_is_out_is_mended(void **state)
{
    (void)state;
    for (int k = 0; k < 10; k++)
        run_with_fault(1.0 + 0.007 * k, 2, 0, stopped_till_out_then_broken, 1,
                       "a link broken while out");
}

/* Shard 1's links broken while it works (no stop: orders and reports are on their way), at
 * 10 moments 7 ms apart: every shard goes back, and the run reaches its limit. */
static void a_link_broken_under_way_is_mended(void **state)
{
    (void)state;
    for (int k = 0; k < 10; k++)
        run_with_fault(1.0 + 0.007 * k, 2, 0, broken, 1, "a link broken under way");
}

/* Shard 1's links cut while it works, and made again 0.3 s later: the orders the server sent
 * meanwhile (a save every 0.1 s, applies) wait in its connection and reach the same shard
 * process first, which missed the orders before them and refuses them; the restore the break
 * brings makes those refusals moot, and the run reaches its limit. At 10 moments 7 ms apart. */
static void orders_kept_across_a_cut_are_moot(void **state)
{
    (void)state;
    for (int k = 0; k < 10; k++)
        run_with_fault(1.0 + 0.007 * k, 2, 0.1, cut_for_a_while, 1, "a link cut for 0.3 s");
}

/* Shard 1's links broken near the run's end, at 10 moments 30 ms apart up to the end of the
 * same run without a fault (some once the run is over, its last gather and save on their
 * way): every run reaches its end, every shard at the server's version. */
static void a_link_broken_at_the_end_is_mended(void **state)
{
    (void)state;
    rig g = {0};
    sw_server *s;
    sw_server_result r;
    sw_worker *workers[WORKERS];
    sw_worker_result results[WORKERS];
    start_run(&g, &s, &r, workers, results, 2, 0);
    run_until(&g, DEADLINE_S);
    double end = sw_net_now(g.net); /* deterministic: the same in every run until the fault */
    end_run(&g, s, &r, workers, 0, "a run without a fault");
    for (int k = 0; k < 10; k++)
        run_with_fault(end - 0.3 + 0.03 * k, 2, 0, broken, 0, "a link broken near the run's end");
}

/* The version of the checkpoint in path (SW_SHARD_NONE: none there). */
static uint64_t version_in(const char *path)
{
    sw_ckpt ck;
    char err[SW_ERR_LEN];
    if (sw_ckpt_load(path, &ck, err))
        return SW_SHARD_NONE;
    uint64_t v = ck.model_version;
    sw_ckpt_free(&ck);
    return v;
}

/* Four bytes in the middle of path overwritten: what a bad disk leaves. */
static void damage(const char *path)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long middle = ftell(f) / 2;
    assert_int_equal(fseek(f, middle, SEEK_SET), 0);
    assert_int_equal(fwrite("\xff\xff\xff\xff", 1, 4, f), 4);
    assert_int_equal(fclose(f), 0);
}

/* Shard 1 killed and its newest checkpoint (version 20, saved by every shard) damaged: started
 * again, it reads its FILE.prev, the run's start, older than the checkpoint all shards saved
 * last, which every shard still holds in FILE.prev. The run goes back to it and reaches its
 * limit (it ended, the file called an old one, before). At 10 moments 80 ms apart between the
 * save of version 20 and the next. */
static void newest_damaged(rig *g, double t)
{
    (void)t;
    char prev[128];
    kill_shard(g, 1);
    snprintf(prev, sizeof prev, "%s.prev", g->files[1]);
    assert_int_equal(version_in(g->files[1]), 20);
    assert_int_equal(version_in(prev), 0);
    damage(g->files[1]);
    start_shard(g, 1, true);
}

static void a_damaged_newest_checkpoint_sends_the_run_back_further(void **state)
{
    (void)state;
    for (int k = 0; k < 10; k++)
        run_with_fault(1.15 + 0.08 * k, 20, 0, newest_damaged, 1,
                       "shard 1's newest checkpoint damaged");
}

/* The version of the first evaluation in the event log that met `target` (0: none). */
static uint64_t first_eval_meeting(FILE *log, double target)
{
    char line[512];
    rewind(log);
    while (fgets(line, sizeof line, log)) {
        const char *v = strstr(line, "\"V\":"), *acc = strstr(line, "\"acc\":");
        if (strstr(line, "\"ev\":\"eval\"") && v && acc && strtod(acc + 6, NULL) >= target)
            return strtoull(v + 4, NULL, 10);
    }
    return 0;
}

/* A run that meets its target ends with the model that met it: the gathered slices were all
 * of the run's last version, and the figure it ends with is at least the target. (The applies
 * made while a gather was on its way were in the model it ended with but not in the one that
 * met the target: a run said 'target reached' with a lower final accuracy, and saved that
 * model.) Decisions wait for a gather, so the evaluation is of the version the run is at. */
static void the_target_is_met_by_the_model_the_run_ends_with(void **state)
{
    (void)state;
    for (int k = 0; k < 12; k++) {
        rig g = {.target_acc = 0.70 + 0.02 * k, .eval_every_s = 0.037};
        sw_server *s;
        sw_server_result r;
        sw_worker *workers[WORKERS];
        sw_worker_result results[WORKERS];
        start_run(&g, &s, &r, workers, results, 0, 0);
        run_until(&g, DEADLINE_S);
        char err[SW_ERR_LEN];
        if (sw_server_end(s, err))
            fail_msg("target %.2f: the run failed: %s", g.target_acc, err);
        if (!r.reached || r.final_acc < g.target_acc)
            fail_msg("target %.2f: reached %d, ending at accuracy %.4f (version %llu)",
                     g.target_acc, r.reached, r.final_acc, (unsigned long long)r.version);
        char model[128];
        snprintf(model, sizeof model, "%s.model", g.record);
        assert_int_equal(version_in(model), r.version);
        uint64_t met = first_eval_meeting(g.log, g.target_acc);
        if (met != r.version)
            fail_msg("target %.2f: met at version %llu, the run ended at %llu", g.target_acc,
                     (unsigned long long)met, (unsigned long long)r.version);
        fclose(g.log);
        for (uint32_t j = 0; j < SHARDS; j++)
            sw_shard_end(g.shards[j]);
        for (int w = 0; w < WORKERS; w++)
            sw_worker_end(workers[w], err);
        sw_loop_free(g.loop);
        sw_net_free(g.net);
        remove_dir(g.dir);
    }
}

/* Both shards killed after the save of version 40, shard 1's FILE damaged; shard 0 started
 * again at once, shard 1 `late` s later: every shard goes back to 40 first, shard 1 cannot take
 * it, and every shard goes further back, to 20 (shard 1's FILE.prev, shard 0's too), going on
 * as the same version both times. Workers pull meanwhile, and the run reaches its limit. (That
 * the two restores' slices are marked apart, so that no step reads both, shard_recover_test
 * checks: a step on mixed slices would not stop the run.) */
static void both_killed_one_damaged(rig *g, double t)
{
    double late = 1.15 + 4 * (t - 2.45); /* 1.15 s after a kill at 2.45 s, 80 ms more a 20 ms */
    kill_shard(g, 0);
    kill_shard(g, 1);
    assert_int_equal(version_in(g->files[1]), 40);
    damage(g->files[1]);
    start_shard(g, 0, true);
    run_until(g, t + late);
    start_shard(g, 1, true);
}

static void a_restore_a_shard_cannot_take_sends_the_run_further_back(void **state)
{
    (void)state;
    for (int k = 0; k < 6; k++)
        run_with_fault(2.45 + 0.02 * k, 20, 0, both_killed_one_damaged, 1,
                       "both shards killed, shard 1 back later");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_shard_goes_back_to_a_checkpoint_all_hold),
        cmocka_unit_test(a_link_broken_while_its_shard_is_out_is_mended),
        cmocka_unit_test(a_link_broken_under_way_is_mended),
        cmocka_unit_test(orders_kept_across_a_cut_are_moot),
        cmocka_unit_test(a_link_broken_at_the_end_is_mended),
        cmocka_unit_test(a_damaged_newest_checkpoint_sends_the_run_back_further),
        cmocka_unit_test(the_target_is_met_by_the_model_the_run_ends_with),
        cmocka_unit_test(a_restore_a_shard_cannot_take_sends_the_run_further_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
