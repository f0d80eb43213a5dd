/* Synthetic sparse two-class data with power-law feature frequencies (like words in text). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/data.h"
#include "syncwise/err.h"
#include "syncwise/rng.h"
#include "syncwise/sparse.h"

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The cumulative Zipf weights of features 0..dim-1, normalised to end at 1. */
static double *zipf_cdf(size_t dim, double s)
{
    double *c = malloc(dim * sizeof *c), total = 0;
    if (!c)
        return NULL;
    for (size_t j = 0; j < dim; j++)
        c[j] = total += pow((double)(j + 1), -s);
    for (size_t j = 0; j < dim; j++)
        c[j] /= total;
    return c;
}

static uint32_t draw_feature(const double *cdf, size_t dim, sw_rng *r)
{
    double u = sw_rng_uniform(r);
    size_t lo = 0, hi = dim - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

/* One row: k distinct features (duplicates of a draw are merged), positive values, unit norm. */
static size_t make_row(const double *cdf, size_t dim, size_t k, sw_rng *r, uint32_t *col,
                       float *val)
{
    for (size_t i = 0; i < k; i++)
        col[i] = draw_feature(cdf, dim, r);
    qsort(col, k, sizeof *col, by_u32);
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (m == 0 || col[m - 1] != col[i])
            col[m++] = col[i];
    double norm = 0;
    for (size_t i = 0; i < m; i++) {
        val[i] = (float)(1.0 + sw_rng_exp(r));
        norm += (double)val[i] * val[i];
    }
    for (size_t i = 0; i < m; i++)
        val[i] = (float)(val[i] / sqrt(norm));
    return m;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Labels: the hidden model's score above its median (balanced classes), flipped with
 * probability noise. */
static int label_rows(sw_sparse_data *d, const float *truth, double noise, sw_rng *r)
{
    double *score = malloc(d->n * sizeof *score), *sorted = malloc(d->n * sizeof *sorted);
    if (!score || !sorted) {
        free(score);
        free(sorted);
        return SW_ENOMEM;
    }
    for (size_t i = 0; i < d->n; i++) {
        double dot = 0;
        for (size_t k = d->row[i]; k < d->row[i + 1]; k++)
            dot += (double)truth[d->col[k]] * d->val[k];
        score[i] = sorted[i] = dot;
    }
    qsort(sorted, d->n, sizeof *sorted, by_double);
    double median = sorted[d->n / 2];
    for (size_t i = 0; i < d->n; i++)
        d->label[i] = (score[i] > median) != (sw_rng_uniform(r) < noise);
    free(score);
    free(sorted);
    return 0;
}

static int check(const sw_sparse_gen *g, char *err)
{
    if (g->n == 0 || g->dim == 0 || g->dim >= (1u << 31))
        return sw_fail(err, SW_EINVAL, "need n > 0 and 0 < dim < 2^31");
    if (!(g->density > 0 && g->density <= 1) || !(g->zipf >= 0 && g->zipf <= 10) ||
        !(g->noise >= 0 && g->noise < 0.5))
        return sw_fail(err, SW_EINVAL, "density in (0, 1], zipf in [0, 10], noise in [0, 0.5)");
    return 0;
}

int sw_sparse_generate(sw_sparse_data **out, const sw_sparse_gen *g, char *err)
{
    *out = NULL;
    int rc = check(g, err);
    if (rc)
        return rc;
    double mean = g->density * (double)g->dim;
    size_t max_k = (size_t)(1.5 * mean) + 2;
    double bytes = (double)g->n * (double)max_k * (sizeof(uint32_t) + sizeof(float));
    if (bytes > (double)SW_DATA_MAX_GENERATED) /* draws merge: a row holds at most dim */
        return sw_fail(err, SW_ERANGE, "sparse: %zu rows of up to %zu draws of features take "
                       "%.1f GiB, over the %.0f GiB a generator makes: use a LIBSVM file", g->n,
                       max_k, bytes / 0x1p30, (double)SW_DATA_MAX_GENERATED / 0x1p30);
    double *cdf = zipf_cdf(g->dim, g->zipf);
    float *truth = malloc(g->dim * sizeof *truth);
    uint32_t *col = malloc(g->n * max_k * sizeof *col);
    float *val = malloc(g->n * max_k * sizeof *val);
    size_t *row = calloc(g->n + 1, sizeof *row);
    if (!cdf || !truth || !col || !val || !row)
        rc = sw_fail(err, SW_ENOMEM, "out of memory for %zu rows of up to %zu nonzeros", g->n,
                     max_k);
    sw_rng r;
    sw_rng_seed(&r, g->seed, SW_STREAM_DATA);
    /* The hidden model weighs a feature by its frequency's square root: as in text, words
     * common enough to be learned carry most of the signal, so the task is learnable. */
    for (size_t j = 0; !rc && j < g->dim; j++)
        truth[j] = (float)(sw_rng_normal(&r) * pow((double)(j + 1), -g->zipf / 2));
    for (size_t i = 0; !rc && i < g->n; i++) {
        size_t k = (size_t)llround(mean * (0.5 + sw_rng_uniform(&r)));
        k = k < 1 ? 1 : k > max_k ? max_k : k;
        row[i + 1] = row[i] + make_row(cdf, g->dim, k, &r, col + row[i], val + row[i]);
    }
    if (!rc && !(rc = sw_sparse_new(out, g->n, g->dim, row[g->n], err))) {
        sw_sparse_data *d = *out;
        memcpy(d->row, row, (g->n + 1) * sizeof *row);
        memcpy(d->col, col, row[g->n] * sizeof *col);
        memcpy(d->val, val, row[g->n] * sizeof *val);
        if (label_rows(d, truth, g->noise, &r)) {
            sw_sparse_free(d);
            *out = NULL;
            rc = sw_fail(err, SW_ENOMEM, "out of memory for labels");
        }
    }
    free(cdf);
    free(truth);
    free(col);
    free(val);
    free(row);
    return rc;
}
