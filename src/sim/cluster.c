/* Cluster timing models: parsing the spec into per-worker models and drawing step times. */
#define _POSIX_C_SOURCE 200809L
#include "syncwise/cluster.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/lines.h"
#include "syncwise/rng.h"
#include "syncwise/spec.h"

typedef enum kind { K_CONST, K_UNIFORM, K_SHEXP, K_PARETO, K_STRAGGLE, K_TRACE } kind;

typedef struct trace {
    double *s;
    size_t n;
} trace;

typedef struct model {
    kind k;
    double a, b, c, d, e; /* the model's parameters, by kind */
    double speed;
    int per_step;         /* straggle: mode=step */
} model;

typedef struct worker {
    model m;
    sw_rng rng;
    int straggler;
    size_t trace_pos;
    const trace *tr;
} worker;

struct sw_cluster {
    worker *w;
    uint32_t n;
    trace *traces; /* per worker, or one shared (index 0) */
    uint32_t n_traces;
    bool trace_shared;     /* one column: every worker of the trace's group reads index 0 */
    char trace_path[1024]; /* for what it lacks */
};

static double positive(double v) { return v > 1e-9 ? v : 1e-9; }

double sw_cluster_step_s(sw_cluster *c, uint32_t w)
{
    worker *k = &c->w[w];
    const model *m = &k->m;
    double s = 0;
    switch (m->k) {
    case K_CONST: s = m->a; break;
    case K_UNIFORM: s = m->a + (m->b - m->a) * sw_rng_uniform(&k->rng); break;
    case K_SHEXP: s = m->b * (1.0 - m->a + m->a * sw_rng_exp(&k->rng)); break;
    case K_PARETO: s = m->b * pow(1.0 - sw_rng_uniform(&k->rng), -1.0 / m->a); break;
    case K_STRAGGLE: {
        s = m->d * (1.0 + m->e * sw_rng_normal(&k->rng));
        s = s > 0.1 * m->d ? s : 0.1 * m->d;
        int sleeps = m->per_step ? sw_rng_uniform(&k->rng) < m->a : k->straggler;
        if (sleeps) {
            double z = m->b + m->c * sw_rng_normal(&k->rng);
            s += z > 0 ? z : 0;
        }
        break;
    }
    case K_TRACE:
        s = k->tr->s[k->trace_pos++ % k->tr->n];
        break;
    }
    return positive(s * m->speed);
}

int sw_cluster_is_straggler(const sw_cluster *c, uint32_t w) { return c->w[w].straggler; }

/* Trace rows: "worker,seconds" or "seconds" (shared by every worker), '#' comments, a header. */
typedef struct trace_reading {
    sw_cluster *c;
    const char *path;
    size_t *cap;
    int shared; /* -1 until the first row */
} trace_reading;

static int add_time(trace_reading *r, uint32_t w, double secs, char *err)
{
    trace *t = &r->c->traces[w];
    if (t->n == r->cap[w]) {
        r->cap[w] = r->cap[w] ? 2 * r->cap[w] : 64;
        double *g = realloc(t->s, r->cap[w] * sizeof *g);
        if (!g)
            return sw_fail(err, SW_ENOMEM, "out of memory for a trace");
        t->s = g;
    }
    t->s[t->n++] = secs;
    return 0;
}

/* A first line that holds a letter and no number-led field is a header ("worker,seconds"); one
 * that starts like a number ("1.0.0", "inf") and does not read as a row is a mistake, said as
 * one. */
static bool header(const char *line, size_t lineno)
{
    char *end;
    const char *at = line + strspn(line, " \t");
    if (lineno != 1 || sw_spec_decimal(at) || (strtod(at, &end), end != at))
        return false;
    for (const char *c = line; *c; c++)
        if (isalpha((unsigned char)*c))
            return true;
    return false;
}

static int trace_line(void *ctx, char *line, size_t lineno, char *err)
{
    trace_reading *r = ctx;
    if (line[strspn(line, " \t\r\n")] == '\0' || line[0] == '#' || header(line, lineno))
        return 0;
    char *end;
    const char *first = line + strspn(line, " \t"), *second = NULL;
    double a = strtod(line, &end), b = 0;
    end += strspn(end, " \t"); /* "1 , 2" as "1,2" */
    int two = *end == ',';
    if (two) {
        second = end + 1 + strspn(end + 1, " \t");
        b = strtod(end + 1, &end);
    }
    end += strspn(end, " \t\r\n");
    /* decimal as people write it: strtod would read "0x10" as 16, and inf */
    if (*end != '\0' || end == line || !sw_spec_decimal(first) || (two && !sw_spec_decimal(second)))
        return sw_fail(err, SW_EFORMAT, "%s:%zu: expected 'worker,seconds' or 'seconds'",
                       r->path, lineno);
    if (r->shared < 0)
        r->shared = !two;
    if (r->shared == two)
        return sw_fail(err, SW_EFORMAT, "%s:%zu: rows mix one and two columns", r->path, lineno);
    double secs = two ? b : a;
    if (two && (a != floor(a) || a < 0))
        return sw_fail(err, SW_EFORMAT, "%s:%zu: bad worker", r->path, lineno);
    if (!(secs >= 1e-9 && secs <= 1e9)) /* the bounds of every other model's times */
        return sw_fail(err, SW_EFORMAT, "%s:%zu: a step time of %g s is outside [1e-09, 1e+09]",
                       r->path, lineno, secs);
    if (two && a >= r->c->n_traces)
        return 0; /* rows for workers this run does not have */
    return add_time(r, two ? (uint32_t)a : 0, secs, err);
}

static int read_trace(sw_cluster *c, const char *path, uint32_t n_workers, char *err)
{
    c->traces = calloc(n_workers, sizeof *c->traces);
    size_t *cap = calloc(n_workers, sizeof *cap);
    if (!c->traces || !cap) {
        free(cap);
        return sw_fail(err, SW_ENOMEM, "out of memory for a trace");
    }
    c->n_traces = n_workers;
    snprintf(c->trace_path, sizeof c->trace_path, "%s", path);
    trace_reading r = {c, path, cap, -1};
    int rc = sw_read_lines(path, trace_line, &r, err);
    free(cap);
    c->trace_shared = r.shared == 1;
    if (!rc && r.shared < 0)
        return sw_fail(err, SW_EFORMAT, "%s: no step times", path);
    return rc; /* which workers need rows is known once the groups are (trace_of) */
}

/* Worker w's rows of the trace its group reads: its own, or the shared column. */
static int trace_of(sw_cluster *c, uint32_t w, char *err)
{
    trace *t = c->trace_shared ? &c->traces[0] : &c->traces[w];
    if (t->n == 0)
        return sw_fail(err, SW_EFORMAT, "%s: no step times for worker %u (its group reads this "
                       "trace)", c->trace_path, w);
    c->w[w].tr = t;
    return 0;
}

/* Parses one model spec ("straggle:p=0.3,...") into m; trace files are read into c. */
static int parse_model(sw_cluster *c, const char *text, uint32_t n_workers, model *m, char *err)
{
    sw_spec s;
    int rc = sw_spec_parse(&s, text, err);
    if (rc)
        return rc;
    *m = (model){.speed = 1};
    const char *keys = "speed";
    rc = sw_spec_double(&s, "speed", 1e-6, 1e6, &m->speed, err);
    if (!rc && strcmp(s.name, "const") == 0) {
        m->k = K_CONST;
        m->a = 1;
        rc = sw_spec_pos_double(&s, 0, 1e-9, 1e9, &m->a, err);
    } else if (!rc && strcmp(s.name, "uniform") == 0) {
        m->k = K_UNIFORM;
        if (s.n_pos != 2)
            return sw_fail(err, SW_EINVAL, "uniform: give LO,HI (e.g. uniform:0.5,1.5)");
        if (!(rc = sw_spec_pos_double(&s, 0, 0, 1e9, &m->a, err)) &&
            !(rc = sw_spec_pos_double(&s, 1, 1e-9, 1e9, &m->b, err)) && m->a > m->b)
            rc = sw_fail(err, SW_EINVAL, "uniform: LO %g above HI %g", m->a, m->b);
    } else if (!rc && strcmp(s.name, "shexp") == 0) {
        m->k = K_SHEXP;
        m->a = 1;
        m->b = 1;
        keys = "base, speed";
        if (!(rc = sw_spec_pos_double(&s, 0, 0, 1, &m->a, err)))
            rc = sw_spec_double(&s, "base", 1e-9, 1e9, &m->b, err);
    } else if (!rc && strcmp(s.name, "pareto") == 0) {
        m->k = K_PARETO;
        if (s.n_pos != 2)
            return sw_fail(err, SW_EINVAL, "pareto: give SHAPE,SCALE (e.g. pareto:2,1)");
        if (!(rc = sw_spec_pos_double(&s, 0, 1e-3, 1e3, &m->a, err)))
            rc = sw_spec_pos_double(&s, 1, 1e-9, 1e9, &m->b, err);
    } else if (!rc && strcmp(s.name, "straggle") == 0) {
        m->k = K_STRAGGLE;
        m->a = 0.3, m->b = 10, m->c = 4, m->d = 4.5, m->e = 0.05;
        keys = "p, mean, sd, base, jitter, mode, speed";
        const char *mode = sw_spec_str(&s, "mode", "worker");
        if (strcmp(mode, "step") == 0)
            m->per_step = 1;
        else if (strcmp(mode, "worker") != 0)
            return sw_fail(err, SW_EINVAL, "straggle: mode='%s' is not worker or step", mode);
        if (!(rc = sw_spec_double(&s, "p", 0, 1, &m->a, err)) &&
            !(rc = sw_spec_double(&s, "mean", 0, 1e9, &m->b, err)) &&
            !(rc = sw_spec_double(&s, "sd", 0, 1e9, &m->c, err)) &&
            !(rc = sw_spec_double(&s, "base", 1e-9, 1e9, &m->d, err)))
            rc = sw_spec_double(&s, "jitter", 0, 10, &m->e, err);
    } else if (!rc && strcmp(s.name, "trace") == 0) {
        m->k = K_TRACE;
        const char *path = sw_spec_pos_str(&s, 0);
        if (!path)
            return sw_fail(err, SW_EINVAL, "trace: give a file (trace:FILE)");
        if (c->traces)
            return sw_fail(err, SW_EINVAL, "trace: only one trace file per cluster");
        rc = read_trace(c, path, n_workers, err);
    } else if (!rc) {
        return sw_fail(err, SW_ENOTFOUND,
                       "unknown cluster model '%s' (known: const, uniform, shexp, pareto, "
                       "straggle, trace)",
                       s.name);
    }
    return rc ? rc : sw_spec_finish(&s, keys, err);
}

/* Parses "A-B" or "A" into [first, last]; checks it against the worker count. */
static int parse_range(const char *r, uint32_t n, uint32_t *first, uint32_t *last, char *err)
{
    char *end;
    errno = 0;
    /* Each number starts with a digit: strtoul would also take spaces and signs ("@+0- 1"). */
    bool digits = isdigit((unsigned char)r[0]);
    unsigned long a = strtoul(r, &end, 10), b = a;
    if (end != r && *end == '-') {
        digits = digits && isdigit((unsigned char)end[1]);
        b = strtoul(end + 1, &end, 10);
    }
    if (!digits || end == r || *end || errno || a > b)
        return sw_fail(err, SW_EINVAL, "cluster: '@%s' is not a worker or range FIRST-LAST", r);
    if (b >= n)
        return sw_fail(err, SW_ERANGE, "cluster: '@%s' names worker %lu of only %u", r, b, n);
    *first = (uint32_t)a;
    *last = (uint32_t)b;
    return 0;
}

/* Assigns one group "model[@range]" to its workers. */
static int assign_group(sw_cluster *c, char *group, char *assigned, int *have_default,
                        model *dflt, char *err)
{
    char *at = strrchr(group, '@');
    model m;
    if (at)
        *at = '\0';
    int rc = parse_model(c, group, c->n, &m, err);
    if (rc)
        return rc;
    if (!at) {
        if (*have_default)
            return sw_fail(err, SW_EINVAL, "cluster: two groups without '@range'");
        *have_default = 1;
        *dflt = m;
        return 0;
    }
    uint32_t first = 0, last = 0;
    if ((rc = parse_range(at + 1, c->n, &first, &last, err)))
        return rc;
    for (uint32_t w = first; w <= last; w++) {
        if (assigned[w])
            return sw_fail(err, SW_EINVAL, "cluster: worker %u is in two groups", w);
        assigned[w] = 1;
        c->w[w].m = m;
    }
    return 0;
}

static int parse_groups(sw_cluster *c, const char *spec, char *err)
{
    char *copy = strdup(spec), *assigned = calloc(c->n, 1);
    int rc = copy && assigned ? 0 : sw_fail(err, SW_ENOMEM, "out of memory");
    int have_default = 0;
    model dflt = {0};
    char *save = NULL;
    for (char *g = copy ? strtok_r(copy, ";", &save) : NULL; g && !rc;
         g = strtok_r(NULL, ";", &save))
        rc = assign_group(c, g, assigned, &have_default, &dflt, err);
    for (uint32_t w = 0; !rc && w < c->n; w++) {
        if (assigned[w])
            continue;
        if (!have_default)
            rc = sw_fail(err, SW_EINVAL, "cluster: worker %u has no timing model (add a group "
                                         "without '@range')", w);
        else
            c->w[w].m = dflt;
    }
    free(copy);
    free(assigned);
    return rc;
}

int sw_cluster_new(sw_cluster **out, const char *spec, uint32_t n_workers, uint64_t seed,
                   char *err)
{
    *out = NULL;
    if (n_workers == 0)
        return sw_fail(err, SW_EINVAL, "cluster: no workers");
    sw_cluster *c = calloc(1, sizeof *c);
    if (!c || !(c->w = calloc(n_workers, sizeof *c->w))) {
        free(c);
        return sw_fail(err, SW_ENOMEM, "out of memory for a cluster");
    }
    c->n = n_workers;
    int rc = parse_groups(c, spec, err);
    if (rc) {
        sw_cluster_free(c);
        if (err && strncmp(err, "cluster", 7) != 0) { /* a spec's own words: say whose */
            char why[SW_ERR_LEN];
            snprintf(why, sizeof why, "%s", err);
            sw_fail(err, rc, "cluster '%s': %s", spec, why);
        }
        return rc;
    }
    for (uint32_t w = 0; w < n_workers && !rc; w++) {
        worker *k = &c->w[w];
        sw_rng_seed(&k->rng, seed, 0x636c757374ULL * 65536 + w); /* "clust" + worker */
        if (k->m.k == K_STRAGGLE && !k->m.per_step)
            k->straggler = sw_rng_uniform(&k->rng) < k->m.a;
        if (k->m.k == K_TRACE)
            rc = trace_of(c, w, err);
    }
    if (rc) {
        sw_cluster_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void sw_cluster_free(sw_cluster *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; c->traces && i < c->n_traces; i++)
        free(c->traces[i].s);
    free(c->traces);
    free(c->w);
    free(c);
}
