/* A simulation built and taken down (sim_internal.h): its configuration checked, the task, the
 * workers' learners, the cluster and network models, the engine and the checker made, and all
 * of it freed; sim.c runs what this builds. */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "syncwise/err.h"
#include "syncwise/memlimit.h"

/* The sizes of a run, which need no data. */
static int check_sizes(const sw_sim_config *c, char *err)
{
    if (!c->policy || !c->cluster)
        return sw_fail(err, SW_EINVAL, "no %s spec", !c->policy ? "policy" : "cluster");
    if (c->workers == 0 || c->workers > (1u << 20))
        return sw_fail(err, SW_EINVAL, "--workers must be in [1, %u]", 1u << 20);
    if (c->batch == 0 || c->get_model_frequency == 0)
        return sw_fail(err, SW_EINVAL, "batch and get_model_frequency must be at least 1");
    if (!(c->eval_every > 0))
        return sw_fail(err, SW_EINVAL, "the evaluation interval must be positive");
    return 0;
}

static bool has_target(const sw_sim_config *c)
{
    return c->target_acc > 0 || c->target_loss > 0 || c->patience > 0;
}

/* Some rule that ends the run, whether or not its data are known yet. */
static int check_stops(const sw_sim_config *c, char *err)
{
    if (!has_target(c) && !(c->max_time > 0) && !c->max_applies && !c->max_pushes)
        return sw_fail(err, SW_EINVAL,
                       "no stopping condition: give a target accuracy or loss, "
                       "patience, a time, apply or push limit");
    return 0;
}

int sw__sim_check_run(const sw_sim_config *c, char *err)
{
    int rc = check_sizes(c, err);
    if (rc)
        return rc;
    if (!c->data && has_target(c))
        return sw_fail(err, SW_EINVAL, "targets and patience need data and a model");
    if (c->data && sw_task_data_is_sparse(c->data) && c->get_model_frequency > 1)
        return sw_fail(err, SW_EINVAL,
                       "a sparse model pulls the weights of each batch: "
                       "get_model_frequency (--get-model-frequency) must be 1");
    return check_stops(c, err);
}

static int setup_task(sim *s, char *err)
{
    const sw_sim_config *c = s->c;
    if (!c->data)
        return 0;
    int rc = sw_task_new(&s->task, c->model, c->data, c->batch > 256 ? c->batch : 256,
                         c->probe_batch, err);
    if (rc)
        return rc;
    s->n_params = sw_task_n_params(s->task);
    return sw_stop_rules_check(&(sw_stop_rules){.target_acc = c->target_acc},
                               sw_task_classifies(s->task), err);
}

/* Under --batch-mode sample each worker keeps an order of the whole training set (4 bytes an
 * example): with many workers on a large set, more than the machine (or the process's control
 * group: a container's or a Slurm job's limit) lets it hold, refused here
 * rather than killed by the kernel after minutes (80,000 workers on 100,000 examples). */
static int check_orders_fit(const sim *s, char *err)
{
    const sw_sim_config *c = s->c;
    double need = 4.0 * (double)s->n_slots * (double)sw_task_data_train_size(c->data);
    double have = sw_memory_limit();
    if (c->batch_mode != SW_BATCH_SAMPLE || !(have > 0) || need <= have)
        return 0;
    return sw_fail(err, SW_ENOMEM,
                   "%u workers each reading the %zu training examples in an order of its own "
                   "need %.1f GB for their orders, over the %.1f GB this process may hold: "
                   "fewer workers, or --batch-mode shard (the examples dealt out among them)",
                   s->n_slots, sw_task_data_train_size(c->data), need / 1e9, have / 1e9);
}

/* Worker w's learner (its batches: its share of `deal`, under --batch-mode shard) and its
 * buffers. */
static int setup_worker(sim *s, uint32_t w, const sw_deal *deal, char *err)
{
    const sw_sim_config *c = s->c;
    sim_worker *k = &s->w[w];
    sw_learner_params lp = {.batch = c->batch,
                            .mode = c->batch_mode,
                            .rank = w,
                            .ranks = s->n_slots,
                            .seed = c->seed,
                            .deal = deal};
    int rc = sw_learner_new(&k->learner, s->task, &lp, err);
    if (!rc)
        rc = sw_grad_alloc(&k->grad, k->learner, err);
    if (!rc && c->get_model_frequency > 1 && !(k->local = malloc(s->n_params * sizeof *k->local)))
        rc = sw_fail(err, SW_ENOMEM, "out of memory for worker %u", w);
    return rc;
}

/* The workers, their shards of the training set dealt from one shuffle of it (setting up
 * 100,000 workers on 400,000 examples shuffled it 100,000 times: a quarter of an hour). */
static int setup_workers(sim *s, char *err)
{
    const sw_sim_config *c = s->c;
    int rc = s->task ? check_orders_fit(s, err) : 0;
    if (rc)
        return rc;
    s->w = calloc(s->n_slots, sizeof *s->w);
    if (!s->w)
        return sw_fail(err, SW_ENOMEM, "out of memory for %u workers", s->n_slots);
    if (!s->task)
        return 0;
    sw_deal *deal = NULL;
    if (c->batch_mode == SW_BATCH_SHARD)
        rc = sw_deal_new(&deal, sw_task_data_train_size(c->data), c->seed, err);
    for (uint32_t w = 0; w < s->n_slots && !rc; w++)
        rc = setup_worker(s, w, deal, err);
    sw_deal_free(deal);
    return rc;
}

static int setup_result(sim *s, char *err)
{
    const sw_sim_config *c = s->c;
    sw_sim_result *r = s->r;
    memset(r, 0, sizeof *r);
    r->target_t = r->diverged_t = -1;
    sw_stopper_init(&s->stopper, &(sw_stop_rules){.target_acc = c->target_acc,
                                                  .target_loss = c->target_loss,
                                                  .max_time = c->max_time,
                                                  .max_applies = c->max_applies,
                                                  .max_pushes = c->max_pushes,
                                                  .patience = c->patience});
    return sw_run_stats_init(&r->stats, s->n_slots, err);
}

static double probe_loss(void *ctx, const float *params)
{
    return sw_task_probe_loss(((sim *)ctx)->task, params);
}

static int setup_engine(sim *s, char *err)
{
    const sw_sim_config *c = s->c;
    float *init = NULL;
    if (s->task) {
        init = malloc(s->n_params * sizeof *init);
        if (!init)
            return sw_fail(err, SW_ENOMEM, "out of memory");
        sw_task_init_params(s->task, init, c->seed);
    }
    sw_engine_params ep = sw_engine_default_params();
    ep.n_params = s->n_params;
    ep.init = init;
    ep.lr = c->lr;
    ep.weight_decay = c->weight_decay;
    ep.optim = c->optim;
    ep.max_workers = s->n_slots;
    ep.policy = c->policy;
    ep.seed = c->seed;
    ep.sink = sw__sim_sink;
    ep.sink_ctx = s;
    ep.policy_ops = c->policy_ops;
    ep.policy_ctx = c->policy_ctx;
    if (s->task && sw_task_has_probe(s->task)) {
        ep.loss_probe = probe_loss;
        ep.loss_probe_ctx = s;
    }
    /* The engine first: a spec it refuses is the caller's mistake (SW_EINVAL), which the
     * checker would call a broken promise (rule 7, for a log that names it). */
    int rc = sw_engine_new(&s->engine, &ep, err);
    if (!rc && !c->no_check)
        rc = sw_check_new(&s->check, c->policy, s->n_slots, 0, err);
    if (s->check)
        sw_check_simulated(s->check);
    free(init);
    return rc;
}

int sw__sim_setup(sim *s, char *err)
{
    const sw_sim_config *c = s->c;
    int rc;
    if ((rc = setup_result(s, err)) || (rc = setup_task(s, err)) ||
        (rc = sw__sim_parse_net(s, err)) ||
        (rc = sw_cluster_new(&s->cluster, c->cluster, s->n_slots, c->seed, err)) ||
        (rc = setup_workers(s, err)) || (rc = setup_engine(s, err)))
        return rc;
    s->r->classify = s->task && sw_task_classifies(s->task);
    s->r->held_out = s->task ? sw_task_held_out(s->task) : NULL;
    if (c->patience && s->task && !(s->best = malloc(s->n_params * sizeof *s->best)))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    if (sw__heap_init(&s->heap, 4 * (size_t)s->n_slots + 16))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    return 0;
}

void sw__sim_teardown(sim *s)
{
    for (uint32_t w = 0; s->w && w < s->n_slots; w++) {
        sw_learner_free(s->w[w].learner);
        sw_grad_free(&s->w[w].grad);
        free(s->w[w].local);
    }
    free(s->w);
    free(s->best);
    for (uint32_t i = 0; i < s->n_switches; i++)
        free(s->switches[i]);
    free(s->switches);
    sw__heap_free(&s->heap);
    sw__sim_servers_free(&s->servers);
    sw_engine_free(s->engine);
    sw_check_free(s->check);
    sw_cluster_free(s->cluster);
    sw_task_free(s->task);
}

int sw_sim_check_config(const sw_sim_config *c, char *err)
{
    sim s = {.c = c, .n_slots = c->workers + sw__sim_count_joins(c->events)};
    int rc = check_sizes(c, err);
    if (!rc)
        rc = check_stops(c, err);
    if (!rc && !c->policy_ops) /* a caller's own policy is its caller's to check */
        rc = sw_engine_check_policy(c->policy, s.n_slots, err);
    if (!rc)
        rc = sw__sim_parse_net(&s, err);
    if (!rc)
        rc = sw_cluster_new(&s.cluster, c->cluster, s.n_slots, c->seed, err);
    if (!rc && sw__heap_init(&s.heap, 16))
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
    if (!rc)
        rc = sw__sim_schedule(&s, c->events, c->workers, err);
    if (!rc && c->data && !(rc = sw__sim_check_run(c, err)) && !(rc = setup_task(&s, err)))
        rc = setup_workers(&s, err); /* the model on the data, the targets, every worker's share */
    if (!rc && c->data) { /* again, now that the model's size is known: shards=S <= params */
        sw__sim_servers_free(&s.servers);
        rc = sw__sim_parse_net(&s, err);
    }
    sw__sim_teardown(&s);
    return rc;
}
