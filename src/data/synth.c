/* Synthetic regression and classification data from a hidden linear model.
 *
 * Features are standard normal; the hidden weights w* are normal with variance 1/d so that
 * x . w* is standard normal whatever the dimension. Least squares targets are x . w* plus
 * Gaussian noise of standard deviation `noise`; logistic labels are 1 when x . w* plus noise is
 * positive. These sets are cheap to make and to learn, which keeps simulations of thousands of
 * workers fast, and their optimum is known.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sw_data_internal.h"
#include "syncwise/err.h"

static int synthetic_make(sw_dataset **out, size_t n, size_t d, sw_objective task, double noise,
                       const float *w_star, sw_rng *rng, char *err)
{
    uint32_t shape[3] = {1, 1, (uint32_t)d};
    int rc = sw_dataset_new(out, n, shape, task, 2, err);
    if (rc)
        return rc;
    sw_dataset *ds = *out;
    for (size_t i = 0; i < n; i++) {
        float *x = ds->x + i * d;
        double dot = 0;
        for (size_t j = 0; j < d; j++) {
            x[j] = (float)sw_rng_normal(rng);
            dot += (double)x[j] * w_star[j];
        }
        double y = dot + noise * sw_rng_normal(rng);
        if (task == SW_REGRESS)
            ds->target[i] = (float)y;
        else
            ds->label[i] = y > 0;
    }
    return 0;
}

int sw__synthetic_load(sw_spec *s, uint64_t seed, sw_dataset **train, sw_dataset **test,
                       char *err)
{
    long d = 100, n = 10000, n_test = 2000;
    double noise = 0.1;
    const char *task = sw_spec_str(s, "task", "lsq");
    int rc;
    if ((rc = sw_spec_int(s, "d", 1, 1 << 20, &d, err)) ||
        (rc = sw_spec_int(s, "n", 1, 1 << 26, &n, err)) ||
        (rc = sw_spec_int(s, "test", 0, 1 << 26, &n_test, err)) ||
        (rc = sw_spec_double(s, "noise", 0, 1e6, &noise, err)))
        return sw_spec_usage(rc);
    uint64_t bytes = (uint64_t)(n + n_test) * (uint64_t)d * sizeof(float);
    if (bytes > SW_DATA_MAX_GENERATED)
        return sw_fail(err, SW_ERANGE, "synthetic: (n + test) x d = %ld x %ld floats is %.1f GiB, "
                       "over the %.0f GiB a generator makes: use a data file", n + n_test, d,
                       (double)bytes / 0x1p30, (double)SW_DATA_MAX_GENERATED / 0x1p30);
    sw_objective t;
    if (strcmp(task, "lsq") == 0)
        t = SW_REGRESS;
    else if (strcmp(task, "logistic") == 0)
        t = SW_CLASSIFY;
    else
        return sw_fail(err, SW_EINVAL, "synthetic: task='%s' is not lsq or logistic", task);
    float *w = malloc((size_t)d * sizeof *w);
    if (!w)
        return sw_fail(err, SW_ENOMEM, "out of memory for synthetic weights");
    sw_rng rng;
    sw_rng_seed(&rng, seed, SW_STREAM_DATA);
    for (long j = 0; j < d; j++)
        w[j] = (float)(sw_rng_normal(&rng) / sqrt((double)d));
    rc = synthetic_make(train, (size_t)n, (size_t)d, t, noise, w, &rng, err);
    if (!rc && n_test > 0)
        rc = synthetic_make(test, (size_t)n_test, (size_t)d, t, noise, w, &rng, err);
    free(w);
    return rc;
}
