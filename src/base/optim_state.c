/* Optimizers that keep state between steps: heavy-ball and Nesterov momentum, and Adam (see
 * syncwise/optim.h). Like the plain step, each coordinate is one expression in plain C compiled
 * without contraction, so every path and every machine gives the same bits; a sparse step runs
 * the dense expression with a zero gradient where the pairs name no coordinate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/optim.h"
#include "syncwise/simd.h"
#include "syncwise/spec.h"

sw_optim_params sw_optim_default(void)
{
    return (sw_optim_params){.kind = SW_OPTIM_SGD, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
}

static int parse_sgd(sw_optim_params *p, sw_spec *s, char *err)
{
    double mu = p->momentum;
    long nesterov = p->nesterov;
    int rc;
    if ((rc = sw_spec_double(s, "momentum", 0, 0.9999, &mu, err)) ||
        (rc = sw_spec_int(s, "nesterov", 0, 1, &nesterov, err)) ||
        (rc = sw_spec_finish(s, "momentum, nesterov", err)))
        return rc;
    if (nesterov && mu == 0)
        return sw_fail(err, SW_EINVAL, "optimizer: nesterov needs a momentum above 0");
    p->momentum = (float)mu;
    p->nesterov = nesterov;
    return 0;
}

static int parse_adam(sw_optim_params *p, sw_spec *s, char *err)
{
    double b1 = p->beta1, b2 = p->beta2, eps = p->eps;
    int rc;
    if ((rc = sw_spec_double(s, "beta1", 0, 0.9999, &b1, err)) ||
        (rc = sw_spec_double(s, "beta2", 0, 0.999999, &b2, err)) ||
        (rc = sw_spec_double(s, "eps", 1e-12, 1, &eps, err)) ||
        (rc = sw_spec_finish(s, "beta1, beta2, eps", err)))
        return rc;
    p->beta1 = b1;
    p->beta2 = b2;
    p->eps = eps;
    return 0;
}

int sw_optim_parse(sw_optim_params *p, const char *text, char *err)
{
    sw_spec s;
    int rc = sw_spec_parse(&s, text, err);
    if (rc)
        return rc;
    sw_optim_params q = sw_optim_default();
    if (strcmp(s.name, "sgd") == 0) {
        rc = parse_sgd(&q, &s, err);
    } else if (strcmp(s.name, "adam") == 0) {
        q.kind = SW_OPTIM_ADAM;
        rc = parse_adam(&q, &s, err);
    } else {
        return sw_fail(err, SW_EINVAL, "unknown optimizer '%s' (known: sgd, adam)", s.name);
    }
    if (!rc)
        *p = q;
    return rc;
}

/* The shortest decimal that reads back as x (a float's value when single): 0.9, not
 * 0.899999976. */
static const char *shortest(double x, bool single, char out[25])
{
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(out, 25, "%.*g", digits, x);
        if (single ? strtof(out, NULL) == (float)x : strtod(out, NULL) == x)
            break;
    }
    return out;
}

void sw_optim_format(const sw_optim_params *p, char out[SW_OPTIM_SPEC_LEN])
{
    char a[25], b[25], c[25]; /* "%.17g" at its longest, -1.2345678901234567e-100 */
    if (p->kind == SW_OPTIM_ADAM)
        snprintf(out, SW_OPTIM_SPEC_LEN, "adam:beta1=%s,beta2=%s,eps=%s",
                 shortest(p->beta1, false, a), shortest(p->beta2, false, b),
                 shortest(p->eps, false, c));
    else if (p->momentum > 0)
        snprintf(out, SW_OPTIM_SPEC_LEN, "sgd:momentum=%s%s", shortest(p->momentum, true, a),
                 p->nesterov ? ",nesterov=1" : "");
    else
        snprintf(out, SW_OPTIM_SPEC_LEN, "sgd");
}

unsigned sw_optim_arrays(const sw_optim_params *p)
{
    return p->kind == SW_OPTIM_ADAM ? 2 : p->momentum > 0 ? 1 : 0;
}

bool sw_optim_stateful(const sw_optim_params *p)
{
    return sw_optim_arrays(p) > 0;
}

int sw_optim_init(sw_optim *o, const sw_optim_params *p, size_t n, char *err)
{
    *o = (sw_optim){.p = *p, .n = n};
    unsigned arrays = sw_optim_arrays(p);
    size_t cells = n ? n : 1;
    if (arrays >= 1 && !(o->m = calloc(cells, sizeof *o->m)))
        goto nomem;
    if (arrays >= 2 && !(o->u = calloc(cells, sizeof *o->u)))
        goto nomem;
    return 0;
nomem:
    sw_optim_free(o);
    return sw_fail(err, SW_ENOMEM, "out of memory for the optimizer's state of %zu parameters", n);
}

void sw_optim_free(sw_optim *o)
{
    free(o->m);
    free(o->u);
    o->m = o->u = NULL;
}

void sw_optim_copy_state(sw_optim *o, const sw_optim *src)
{
    if (o->m && src->m)
        memcpy(o->m, src->m, o->n * sizeof *o->m);
    if (o->u && src->u)
        memcpy(o->u, src->u, o->n * sizeof *o->u);
    o->steps = src->steps;
}

/* The constants of one step. */
typedef struct step_consts {
    float scale, lr, wd;
    float mu; /* sgd */
    bool nesterov;
    float b1, c1, b2, c2, eps;     /* adam: beta, 1 - beta */
    float step_size, inv_sqrt_bc2; /* adam: lr / (1 - b1^t), 1 / sqrt(1 - b2^t) */
} step_consts;

static inline void sgd_coord(const step_consts *k, float *theta, float *v, float g)
{
    float d = g * k->scale + k->wd * *theta;
    float vv = k->mu * *v + d;
    *v = vv;
    *theta = *theta - k->lr * (k->nesterov ? d + k->mu * vv : vv);
}

static inline void adam_coord(const step_consts *k, float *theta, float *m, float *u, float g)
{
    float d = g * k->scale + k->wd * *theta;
    float mm = k->b1 * *m + k->c1 * d;
    float uu = k->b2 * *u + k->c2 * (d * d);
    *m = mm;
    *u = uu;
    *theta = *theta - k->step_size * mm / (sqrtf(uu) * k->inv_sqrt_bc2 + k->eps);
}

/* The constants of step number `step` (Adam's bias correction counts steps from 1). */
static step_consts consts_at(const sw_optim *o, uint64_t step, float scale, float lr, float wd)
{
    const sw_optim_params *p = &o->p;
    step_consts k = {
        .scale = scale, .lr = lr, .wd = wd, .mu = p->momentum, .nesterov = p->nesterov};
    if (p->kind == SW_OPTIM_ADAM) {
        double bc1 = 1 - pow(p->beta1, (double)step);
        double bc2 = 1 - pow(p->beta2, (double)step);
        k.b1 = (float)p->beta1, k.c1 = (float)(1 - p->beta1);
        k.b2 = (float)p->beta2, k.c2 = (float)(1 - p->beta2);
        k.eps = (float)p->eps;
        k.step_size = (float)(lr / bc1);
        k.inv_sqrt_bc2 = (float)(1 / sqrt(bc2));
    }
    return k;
}

/* The next step's constants, counting it. */
static step_consts consts(sw_optim *o, float scale, float lr, float wd)
{
    return consts_at(o, ++o->steps, scale, lr, wd);
}

/* Coordinate j with gradient g, whichever optimizer. */
static inline void coord(const sw_optim *o, const step_consts *k, float *theta, size_t j, float g)
{
    if (o->p.kind == SW_OPTIM_ADAM)
        adam_coord(k, &theta[j], &o->m[j], &o->u[j], g);
    else
        sgd_coord(k, &theta[j], &o->m[j], g);
}

SW_VECTOR_CLONES void sw_optim_step_range(const sw_optim *o, uint64_t step, float *theta,
                                          const float *g, float scale, float lr, float wd,
                                          size_t lo, size_t hi)
{
    step_consts k = consts_at(o, step, scale, lr, wd);
    if (o->p.kind == SW_OPTIM_ADAM)
        for (size_t j = lo; j < hi; j++)
            adam_coord(&k, &theta[j], &o->m[j], &o->u[j], g[j]);
    else
        for (size_t j = lo; j < hi; j++)
            sgd_coord(&k, &theta[j], &o->m[j], g[j]);
}

void sw_optim_step(sw_optim *o, float *theta, const float *g, float scale, float lr, float wd)
{
    sw_optim_step_range(o, ++o->steps, theta, g, scale, lr, wd, 0, o->n);
}

void sw_optim_step_sparse(sw_optim *o, float *theta, const uint32_t *idx, const float *val,
                          size_t nnz, float scale, float lr, float wd)
{
    step_consts k = consts(o, scale, lr, wd);
    size_t next = 0;
    for (size_t j = 0; j < o->n; j++) {
        float g = 0.0f;
        if (next < nnz && idx[next] == j)
            g = val[next++];
        coord(o, &k, theta, j, g);
    }
}
