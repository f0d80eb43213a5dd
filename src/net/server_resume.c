/* A server's resume from its checkpoint: the parameters, the version and the optimizer's state
 * of an unsharded run, and for every run the policy that was in force. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_text.h"
#include "server_internal.h"
#include "syncwise/ckpt.h"
#include "syncwise/err.h"
#include "syncwise/log.h"
#include "syncwise/policy.h"

/* The name of a policy spec: "ssp" of "ssp:s=3". */
static void spec_name(const char *spec, char *out, size_t cap)
{
    snprintf(out, cap, "%.*s", (int)strcspn(spec, ":"), spec);
}

/* A line of the record that is there but says nothing a run writes: its key, else NULL. */
static const char *unreadable_line(const char *record)
{
    double lr, wd;
    unsigned long long slots, params;
    char optim[SW_OPTIM_SPEC_LEN], why[SW_ERR_LEN];
    sw_optim_params p;
    const char *at = sw__text_value(record, "optimizer");
    if (at)
        snprintf(optim, sizeof optim, "%.*s", (int)strcspn(at, "\n"), at);
    if (sw__text_value(record, "lr") && (sw__text_real(record, "lr", &lr) || !(lr >= 0)))
        return "lr";
    if (sw__text_value(record, "wd") && (sw__text_real(record, "wd", &wd) || !(wd >= 0)))
        return "wd";
    if (sw__text_value(record, "slots") && (sw__text_number(record, "slots", &slots) || !slots))
        return "slots";
    if (sw__text_value(record, "params") && sw__text_number(record, "params", &params))
        return "params";
    if (at && sw_optim_parse(&p, optim, why))
        return "optimizer";
    at = sw__text_value(record, "policy");
    return at && (*at == '\n' || !*at) ? "policy" : NULL;
}

int sw__server_resume_record_ok(const server *s, const char *record, char *err)
{
    const char *key = unreadable_line(record);
    if (!key)
        return 0; /* (a line an older record lacks is no damage) */
    const char *at = sw__text_value(record, key);
    return sw_fail(err, SW_EFORMAT, "%s records %s=%.*s, which no run writes: the record is "
                   "damaged or edited", s->p->checkpoint, key, (int)strcspn(at, "\n"), at);
}

/* A learning rate other than the checkpoint's is taken (training on at another rate may be
 * meant) but said, as another seed or data set is. */
static void resume_lr(const server *s, const char *record)
{
    double was;
    if (!sw__text_real(record, "lr", &was) && (float)was != s->p->lr)
        sw_log(SW_LOG_WARN, "%s was made at --lr %g; this run goes on at %g", s->p->checkpoint,
               was, (double)s->p->lr);
}

int sw__server_resume_policy(server *s, const char *record, char *err)
{
    resume_lr(s, record);
    const char *at = sw__text_value(record, "policy");
    char saved[sizeof s->policy], name[64], given[64];
    snprintf(saved, sizeof saved, "%.*s", at ? (int)strcspn(at, "\n") : 0, at ? at : "");
    spec_name(saved, name, sizeof name);
    spec_name(s->p->policy, given, sizeof given);
    /* Older checkpoints name the policy alone: --policy's spec stands for it when it agrees. */
    if (!saved[0] || (!strchr(saved, ':') && !strcmp(saved, given)))
        return 0;
    if (!sw_policy_find(name))
        return sw_fail(err, SW_ENOTFOUND, "%s was saved under %s, the policy then in force, "
                       "which this server does not know (a plugin's? give the server "
                       "SYNCWISE_PLUGINS naming it, as the run had)", s->p->checkpoint, saved);
    if (strcmp(saved, s->p->policy) != 0 && !s->p->policy_default)
        sw_log(SW_LOG_WARN, "resuming under %s, the policy in force at the checkpoint (--policy "
               "%s is not used: switch with syncwise ctl policy)", saved, s->p->policy);
    snprintf(s->policy, sizeof s->policy, "%s", saved);
    return 0;
}

int sw__server_resume_facts(const server *s, char *out, size_t cap)
{
    char optim[SW_OPTIM_SPEC_LEN];
    sw_optim_format(&s->optim, optim);
    return snprintf(out, cap, "policy=%s\nlr=%.9g\nwd=%.9g\nslots=%u\noptimizer=%s\n",
                    sw_engine_policy_spec(s->engine), (double)s->p->lr,
                    (double)s->p->weight_decay, s->slots, optim);
}

int sw__server_resume_wd(const server *s, const char *record, bool sharded, char *err)
{
    double was;
    if (sw__text_real(record, "wd", &was) || (float)was == s->p->weight_decay)
        return 0; /* older checkpoints do not say */
    if (sharded) /* the shards read it from their own checkpoints, not from this server */
        return sw_fail(err, SW_EMISMATCH, "%s records a run of --wd %.9g, which the shards "
                       "apply as they saved it: resume it with --wd %.9g; a sharded run keeps "
                       "its weight decay", s->p->checkpoint, was, was);
    sw_log(SW_LOG_WARN, "%s was made at --wd %g; this run goes on at %g", s->p->checkpoint, was,
           (double)s->p->weight_decay);
    return 0;
}

int sw__server_resume_slots(const server *s, const char *record, char *err)
{
    unsigned long long was;
    if (sw__text_number(record, "slots", &was) || was == s->slots)
        return 0; /* older checkpoints do not say */
    return sw_fail(err, SW_EMISMATCH, "%s was made by a run of %llu worker slots; --max-workers "
                   "%u would make the resumed log a second run in one file: give --max-workers "
                   "%llu (or start a new run with another --log)", s->p->checkpoint, was,
                   s->slots, was);
}

/* A model's shape in words, for a mismatch: "softmax on 1x1x50 inputs, 2 classes, 102
 * parameters". */
static void describe(const sw_model_desc *d, size_t n_params, char *out, size_t cap)
{
    snprintf(out, cap, "'%s' on %ux%ux%u inputs, %u classes, %zu parameters", d->spec,
             d->in_shape[0], d->in_shape[1], d->in_shape[2], d->n_classes, n_params);
}

/* The optimizer a checkpoint was made by: its record's line, or (older records) the spec an
 * unsharded run's checkpoint holds, "sgd" when it holds none; NULL when nothing says. */
static const char *saved_optim(const char *record, const char *held, char *out, size_t cap)
{
    const char *at = sw__text_value(record, "optimizer");
    if (at)
        snprintf(out, cap, "%.*s", (int)strcspn(at, "\n"), at);
    else if (held)
        snprintf(out, cap, "%s", held[0] ? held : "sgd");
    return at || held ? out : NULL;
}

int sw__server_resume_optim(server *s, const char *record, const char *held, char *err)
{
    char saved[SW_OPTIM_SPEC_LEN], run[SW_OPTIM_SPEC_LEN], why[SW_ERR_LEN];
    sw_optim_params p;
    if (!saved_optim(record, held, saved, sizeof saved) || sw_optim_parse(&p, saved, why))
        return 0; /* an older record says nothing; a checkpoint's spec was checked on reading */
    if (s->p->optim_default) {
        s->optim = p;
        if (sw_optim_stateful(&p))
            sw_log(SW_LOG_INFO, "resuming with %s, the optimizer of %s, and its state",
                   saved, s->p->checkpoint);
        return 0;
    }
    sw_optim_format(&p, saved);
    sw_optim_format(&s->optim, run);
    if (!held && strcmp(saved, run) != 0) /* sharded: the shards restore their own optimizer */
        return sw_fail(err, SW_EMISMATCH, "%s records a run of the optimizer %s, whose state the "
                       "shards hold: resume it with that one (or no optimizer option); a sharded "
                       "run keeps its optimizer", s->p->checkpoint, saved);
    return 0;
}

/* The optimizer state a checkpoint holds, into *o when it was made by this run's optimizer;
 * with another one asked for (plain SGD given) the state starts at zero, as the log says. */
static int resume_optim(server *s, const sw_ckpt *ck, sw_optim *o, char *err)
{
    int rc = sw__server_resume_optim(s, ck->note, ck->optimizer, err);
    if (rc)
        return rc;
    char run[SW_OPTIM_SPEC_LEN];
    sw_optim_format(&s->optim, run);
    if (!sw_optim_stateful(&s->optim)) {
        if (ck->optim_state) /* the state is dropped: say so, as the other way round does */
            sw_log(SW_LOG_WARN, "%s was trained with the optimizer %s; this run's %s "
                   "drops its state", s->p->checkpoint, ck->optimizer, run);
        return 0;
    }
    rc = sw_ckpt_take_optim(ck, &s->optim, o, err);
    if (rc == 1) {
        sw_log(SW_LOG_WARN,
               "%s was trained with the optimizer %s; this run's %s starts with no "
               "state",
               s->p->checkpoint, ck->optimizer[0] ? ck->optimizer : "sgd", run);
        return 0;
    }
    return rc;
}

int sw__server_load_resume(server *s, float *init, uint64_t *version, sw_optim *o, char *err)
{
    sw_ckpt ck;
    int rc = sw_ckpt_load(s->p->checkpoint, &ck, err);
    if (rc)
        return rc;
    sw_model_desc run = sw_task_desc(s->task);
    if (ck.n_params != s->n || strcmp(ck.desc.spec, run.spec) != 0 ||
        memcmp(ck.desc.in_shape, run.in_shape, sizeof run.in_shape) != 0 ||
        ck.desc.n_classes != run.n_classes) {
        char held[200], runs[200];
        describe(&ck.desc, ck.n_params, held, sizeof held);
        describe(&run, s->n, runs, sizeof runs);
        rc = sw_fail(err, SW_EMISMATCH, "%s holds %s; the server runs %s", s->p->checkpoint, held,
                     runs);
    } else if (!(rc = sw__server_resume_record_ok(s, ck.note, err))) { /* before any is read */
        memcpy(init, ck.params, s->n * sizeof *init);
        *version = ck.model_version;
        rc = resume_optim(s, &ck, o, err);
    }
    if (!rc)
        rc = sw__server_resume_policy(s, ck.note, err);
    if (!rc)
        rc = sw__server_resume_slots(s, ck.note, err);
    if (!rc)
        rc = sw__server_resume_wd(s, ck.note, false, err);
    /* Another data set or seed of the same shape may be meant (training on), but is more often
     * a slip: the run goes on, saying so. */
    if (!rc && ck.data_spec[0] && strcmp(ck.data_spec, s->p->data) != 0)
        sw_log(SW_LOG_WARN, "%s was trained on --data %s; this run reads %s", s->p->checkpoint,
               ck.data_spec, s->p->data);
    if (!rc && ck.seed != s->p->seed)
        sw_log(SW_LOG_WARN, "%s was made with --seed %llu; this run has %llu", s->p->checkpoint,
               (unsigned long long)ck.seed, (unsigned long long)s->p->seed);
    sw_ckpt_free(&ck);
    return rc;
}

