/* A worker's side of a task: its mini-batches and their gradients (syncwise/task.h). */
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "task_internal.h"

int sw_learner_new(sw_learner **out, sw_task *t, const sw_learner_params *p, char *err)
{
    *out = NULL;
    if (p->batch == 0 || p->batch > t->max_batch)
        return sw_fail(err, SW_EINVAL, "a batch of %u examples: the task takes 1 to %zu",
                       p->batch, t->max_batch);
    sw_learner *l = calloc(1, sizeof *l);
    if (!l)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    l->t = t;
    l->p = *p;
    int rc = t->ops->learner_open(l, err);
    l->p.deal = NULL; /* lent for the opening only */
    if (rc) {
        sw_learner_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

void sw_learner_free(sw_learner *l)
{
    if (!l)
        return;
    l->t->ops->learner_close(l);
    free(l);
}

void sw_learner_next(sw_learner *l) { l->t->ops->next(l); }

const uint32_t *sw_learner_touched(sw_learner *l, size_t *n) { return l->t->ops->touched(l, n); }

double sw_learner_grad(sw_learner *l, const float *params, sw_grad *g)
{
    return l->t->ops->grad(l, params, g);
}

int sw_grad_alloc(sw_grad *g, const sw_learner *l, char *err)
{
    memset(g, 0, sizeof *g);
    size_t pairs = l->t->ops->max_pairs(l);
    if (pairs) {
        g->idx = malloc(pairs * sizeof *g->idx);
        g->val = malloc(pairs * sizeof *g->val);
    } else {
        g->dense = malloc(l->t->n_params * sizeof *g->dense);
    }
    if (pairs ? !g->idx || !g->val : !g->dense) {
        sw_grad_free(g);
        return sw_fail(err, SW_ENOMEM, "out of memory for a gradient");
    }
    return 0;
}

void sw_grad_free(sw_grad *g)
{
    free(g->dense);
    free(g->idx);
    free(g->val);
    memset(g, 0, sizeof *g);
}
