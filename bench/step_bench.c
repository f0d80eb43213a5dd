/* Microseconds per training step (next mini-batch, forward, backward, SGD update) for the models
 * of the foundation benchmark, and the machine's sgemm throughput for reference.
 *
 * Output is one line per measurement, "name threads=T us=X" or "sgemm threads=T gflops=X", read by
 * bench/step.sh, which runs the PyTorch peer in the same run and prints the ratios. Each figure is
 * the median of 5 timed runs after a warm-up.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"
#include "syncwise/clock.h"
#include "syncwise/data.h"
#include "syncwise/model.h"
#include "syncwise/optim.h"

#define REPEATS 5

typedef struct workload {
    const char *name, *spec;
    size_t batch;
} workload;

static const workload workloads[] = {
    {"mlp_b16", "mlp:h=1,u=256", 16},
    {"mlp_b128", "mlp:h=1,u=256", 128},
    {"cnn_b16", "cnn:c1=20,c2=50,f=500", 16},
    {"cnn_dbw_b500", "cnn:c1=8,c2=16,f=64", 500}, /* DBW Fig. 3 (bench/adaptive.sh) */
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* Random 28x28 images with 10 classes: speed does not depend on the pixel values. */
static sw_dataset *images(size_t n)
{
    sw_dataset *ds;
    uint32_t shape[3] = {28, 28, 1};
    if (sw_dataset_new(&ds, n, shape, SW_CLASSIFY, 10, NULL))
        return NULL;
    sw_rng r;
    sw_rng_seed(&r, 1, 0);
    for (size_t i = 0; i < n * ds->dim; i++)
        ds->x[i] = (float)sw_rng_uniform(&r);
    for (size_t i = 0; i < n; i++)
        ds->label[i] = (int32_t)sw_rng_below(&r, 10);
    return ds;
}

static double step_us(const workload *w, const sw_dataset *ds, double seconds)
{
    sw_model_desc d = {.in_shape = {28, 28, 1}, .objective = SW_CLASSIFY, .n_classes = 10};
    snprintf(d.spec, sizeof d.spec, "%s", w->spec);
    sw_model *m;
    sw_batcher *b;
    char err[256];
    if (sw_model_new(&m, &d, w->batch, err) ||
        sw_batcher_new(&b, ds, w->batch, SW_BATCH_SHARD, 0, 1, 1, err)) {
        fprintf(stderr, "bench: %s\n", err);
        exit(1);
    }
    size_t n = sw_model_n_params(m);
    float *p = malloc(n * sizeof *p), *g = malloc(n * sizeof *g);
    sw_model_init_params(m, p, 1);
    double runs[REPEATS];
    long steps = 20;
    for (int r = -1; r < REPEATS; r++) { /* run -1 warms up and sizes the timed runs */
        double t0 = sw_clock_now_s();
        for (long s = 0; s < steps; s++) {
            sw_batch bt;
            sw_batcher_next(b, &bt);
            sw_model_grad(m, p, &bt, g);
            sw_sgd_step(p, g, n, 0.01f, 0);
        }
        double dt = sw_clock_now_s() - t0;
        if (r < 0)
            steps = (long)(seconds / REPEATS / (dt / (double)steps)) + 1;
        else
            runs[r] = dt / (double)steps * 1e6;
    }
    free(p);
    free(g);
    sw_batcher_free(b);
    sw_model_free(m);
    return median(runs, REPEATS);
}

static double sgemm_gflops(int size)
{
    size_t nn = (size_t)size * (size_t)size;
    float *a = calloc(nn, sizeof *a), *bm = calloc(nn, sizeof *bm), *c = calloc(nn, sizeof *c);
    for (size_t i = 0; i < nn; i++)
        a[i] = bm[i] = (float)(i % 7) * 0.1f;
    double runs[REPEATS];
    for (int r = -1; r < REPEATS; r++) {
        double t0 = sw_clock_now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, size, size, size, 1.0f, a, size,
                    bm, size, 0.0f, c, size);
        double dt = sw_clock_now_s() - t0;
        if (r >= 0)
            runs[r] = 2.0 * size * (double)size * size / dt * 1e-9;
    }
    free(a);
    free(bm);
    free(c);
    return median(runs, REPEATS);
}

int main(int argc, char **argv)
{
    int threads = 1;
    double seconds = 2.0;
    bench_usage(argc, argv, 4,
                "[--threads N] [--seconds S]\n"
                "Microseconds per training step of the foundation benchmark's models, and\n"
                "sgemm's GFLOPS (bench/step.sh reads the lines and runs the PyTorch peer).\n"
                "  --threads N   OpenBLAS threads, 1 to 64 (default 1)\n"
                "  --seconds S   time each measurement for about S seconds (default 2)\n");
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 == argc)
            bench_refuse(argv[0], argv[i], "takes a value");
        if (strcmp(argv[i], "--threads") == 0)
            threads = (int)bench_long(argv[0], "--threads", argv[i + 1], 1, 64);
        else if (strcmp(argv[i], "--seconds") == 0)
            seconds = bench_double(argv[0], "--seconds", argv[i + 1], 0.01, 3600);
        else
            bench_refuse(argv[0], argv[i], "the options are --threads and --seconds");
    }
    openblas_set_num_threads(threads);
    printf("openblas core=%s threads=%d\n", openblas_get_corename(), openblas_get_num_threads());
    printf("sgemm threads=%d gflops=%.1f\n", threads, sgemm_gflops(1536));
    sw_dataset *ds = images(4096);
    if (!ds)
        return 1;
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++) {
        printf("%s threads=%d us=%.1f\n", workloads[i].name, threads,
               step_us(&workloads[i], ds, seconds));
        fflush(stdout);
    }
    sw_dataset_free(ds);
    return 0;
}
