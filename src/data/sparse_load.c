/* Loading the data of a sparse run from a spec: LIBSVM files or generated rows. */
#include <stdlib.h>
#include <string.h>

#include "sw_data_internal.h"
#include "syncwise/err.h"
#include "syncwise/sparse.h"
#include "syncwise/spec.h"

int sw_sparse_slice(sw_sparse_data **out, const sw_sparse_data *d, size_t first, size_t count,
                    char *err)
{
    if (first + count > d->n || count == 0)
        return sw_fail(err, SW_EINVAL, "rows %zu..%zu of %zu", first, first + count, d->n);
    size_t base = d->row[first], nnz = d->row[first + count] - base;
    int rc = sw_sparse_new(out, count, d->dim, nnz, err);
    if (rc)
        return rc;
    sw_sparse_data *s = *out;
    for (size_t i = 0; i <= count; i++)
        s->row[i] = d->row[first + i] - base;
    memcpy(s->col, d->col + base, nnz * sizeof *s->col);
    memcpy(s->val, d->val + base, nnz * sizeof *s->val);
    memcpy(s->label, d->label + first, count * sizeof *s->label);
    s->n_classes = d->n_classes;
    return 0;
}

/* Splits the last `test` rows of all into out->test. */
static int split(sw_sparse_set *out, sw_sparse_data *all, size_t test, char *err)
{
    int rc = sw_sparse_slice(&out->train, all, 0, all->n - test, err);
    if (!rc)
        rc = sw_sparse_slice(&out->test, all, all->n - test, test, err);
    sw_sparse_free(all);
    return rc;
}

static int load_libsvm(sw_sparse_set *out, sw_spec *s, char *err)
{
    const char *train = sw_spec_str(s, "train", NULL), *test = sw_spec_str(s, "test", NULL);
    long dim = 0;
    int rc = sw_spec_usage(sw_spec_int(s, "dim", 0, 1L << 24, &dim, err));
    if (!rc)
        rc = sw_spec_finish(s, "train, test, dim", err);
    if (!rc && !train)
        rc = sw_fail(err, SW_EINVAL, "libsvm needs train=PATH");
    sw_sparse_data *all = NULL;
    if (!rc && !test && !(rc = sw_sparse_read_libsvm(&all, train, (size_t)dim, err))) {
        if (all->n < 2)
            rc = sw_fail(err, SW_EFORMAT, "%s: too few rows to split off a test set", train);
        else
            return split(out, all, all->n / 10 ? all->n / 10 : 1, err);
        sw_sparse_free(all);
        return rc;
    }
    if (!rc && !(rc = sw_sparse_read_libsvm(&out->train, train, (size_t)dim, err)))
        rc = sw_sparse_read_libsvm(&out->test, test, out->train->dim, err);
    return rc;
}

static int load_generated(sw_sparse_set *out, sw_spec *s, uint64_t seed, char *err)
{
    long n = 20000, test = 2000, dim = 10000;
    sw_sparse_gen g = {.density = 0.005, .zipf = 1.1, .noise = 0.02, .seed = seed};
    int rc;
    if ((rc = sw_spec_int(s, "n", 1, 1L << 28, &n, err)) ||
        (rc = sw_spec_int(s, "test", 1, 1L << 28, &test, err)) ||
        (rc = sw_spec_int(s, "dim", 1, 1L << 24, &dim, err)) ||
        (rc = sw_spec_double(s, "density", 1e-9, 1, &g.density, err)) ||
        (rc = sw_spec_double(s, "zipf", 0, 10, &g.zipf, err)) ||
        (rc = sw_spec_double(s, "noise", 0, 0.499, &g.noise, err)) ||
        (rc = sw_spec_finish(s, "n, test, dim, density, zipf, noise", err)))
        return sw_spec_usage(rc);
    g.n = (size_t)(n + test);
    g.dim = (size_t)dim;
    sw_sparse_data *all;
    if ((rc = sw_sparse_generate(&all, &g, err)))
        return rc;
    return split(out, all, (size_t)test, err);
}

int sw_sparse_load(sw_sparse_set *out, const char *spec, uint64_t seed, char *err)
{
    memset(out, 0, sizeof *out);
    sw_spec s;
    int rc = sw_spec_parse(&s, spec, err);
    if (rc)
        return rc;
    if (strcmp(s.name, "libsvm") == 0)
        rc = load_libsvm(out, &s, err);
    else if (strcmp(s.name, "sparse") == 0)
        rc = load_generated(out, &s, seed, err);
    else
        rc = sw_fail(err, SW_ENOTFOUND, "unknown sparse data '%s' (known: libsvm, sparse)", s.name);
    if (rc)
        sw_sparse_set_free(out);
    return rc;
}

void sw_sparse_set_free(sw_sparse_set *s)
{
    sw_sparse_free(s->train);
    sw_sparse_free(s->test);
    s->train = s->test = NULL;
}

int sw_sparse_is_model(const char *model_spec)
{
    size_t n = strcspn(model_spec, ":");
    return (n == 3 && !strncmp(model_spec, "svm", 3)) ||
           (n == 8 && !strncmp(model_spec, "logistic", 8));
}
