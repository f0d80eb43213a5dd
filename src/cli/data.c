/* `syncwise data`: make sparse data sets in LIBSVM format, synthetic (text-like, power-law
 * feature frequencies) or exported from any data set syncwise loads (Fashion-MNIST). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "syncwise/err.h"
#include "syncwise/sparse.h"

#define CMD "data"

static void help(void)
{
    printf("usage: syncwise data gen --out FILE [OPTIONS]\n"
           "       syncwise data export --data SPEC --out FILE [--split NAME]\n\n"
           "gen writes synthetic two-class sparse data like bag-of-words text: feature j\n"
           "appears with probability proportional to 1/(j+1)^zipf, rows have unit norm, the\n"
           "label is the sign of a hidden linear model (flipped with probability --noise).\n"
           "export writes the nonzeros of a loaded data set (Fashion-MNIST by default).\n"
           "Files are LIBSVM text (two-class labels as -1/+1), written atomically.\n\n"
           "options:\n"
           "  --out FILE       where to write (required)\n"
           "  --n N            rows (gen: 100000)\n"
           "  --dim D          features (gen: 50000)\n"
           "  --density P      features drawn per row as a share of --dim; repeated draws\n"
           "                   of a frequent feature merge, so rows hold fewer (gen: 0.002)\n"
           "  --zipf S         power-law exponent of feature frequencies (gen: 1.1)\n"
           "  --noise X        label noise (gen: 0.02)\n"
           "  --seed N         seed (1)\n"
           "  --data SPEC      data set to export (default fashion-mnist)\n"
           "  --split NAME     train, val or test (export: train)\n"
           "  -h, --help       this text\n");
}

typedef struct opts {
    const char *out, *data, *split;
    sw_sparse_gen gen;
} opts;

static int parse(int argc, char **argv, opts *o)
{
    static const struct option table[] = {
        {"out", 1, 0, 'o'},   {"n", 1, 0, 'n'},     {"dim", 1, 0, 'd'},  {"density", 1, 0, 'p'},
        {"zipf", 1, 0, 'z'},  {"noise", 1, 0, 'x'}, {"seed", 1, 0, 's'}, {"data", 1, 0, 'D'},
        {"split", 1, 0, 'S'}, {"help", 0, 0, 'h'},  {0, 0, 0, 0},
    };
    int c, bad = 0;
    long v;
    optind = 1;
    while (!bad && (c = getopt_long(argc, argv, "h", table, NULL)) != -1) {
        switch (c) {
        case 'o': o->out = optarg; break;
        case 'D': o->data = optarg; break;
        case 'S': o->split = optarg; break;
        case 'n':
            bad = !sw_cli_long(CMD, "--n", optarg, 1, 1L << 30, &v);
            o->gen.n = (size_t)v;
            break;
        case 'd':
            bad = !sw_cli_long(CMD, "--dim", optarg, 1, 1L << 24, &v);
            o->gen.dim = (size_t)v;
            break;
        case 'p': bad = !sw_cli_double(CMD, "--density", optarg, 1e-9, 1, &o->gen.density); break;
        case 'z': bad = !sw_cli_double(CMD, "--zipf", optarg, 0, 10, &o->gen.zipf); break;
        case 'x': bad = !sw_cli_double(CMD, "--noise", optarg, 0, 0.499, &o->gen.noise); break;
        case 's': bad = !sw_cli_u64(CMD, "--seed", optarg, &o->gen.seed); break;
        case 'h': help(); return -1;
        default: bad = 1;
        }
    }
    if (bad || sw_cli_stray(CMD, argc, argv))
        return 2;
    if (!o->out)
        return sw_cli_error(CMD, "--out FILE is required (see --help)") + 1;
    return 0;
}

static int export(const opts *o, char *err)
{
    sw_data d;
    int rc = sw_data_load(&d, o->data, o->gen.seed, err);
    if (rc)
        return rc;
    const sw_dataset *ds = sw_cli_split(&d, o->split);
    sw_sparse_data *s = NULL;
    if (!ds)
        rc = sw_fail(err, SW_ENOTFOUND, "data set '%s' has no %s split", o->data, o->split);
    if (!rc)
        rc = sw_sparse_from_dense(&s, ds, err);
    if (!rc)
        rc = sw_sparse_write_libsvm(s, o->out, err);
    if (!rc)
        printf("wrote %s: %zu rows, %zu features, %zu nonzeros (%.1f%%)\n", o->out, s->n, s->dim,
               s->nnz, 100.0 * (double)s->nnz / ((double)s->n * (double)s->dim));
    sw_sparse_free(s);
    sw_data_free(&d);
    return rc;
}

static int gen(const opts *o, char *err)
{
    sw_sparse_data *s;
    int rc = sw_sparse_generate(&s, &o->gen, err);
    if (!rc)
        rc = sw_sparse_write_libsvm(s, o->out, err);
    if (!rc)
        printf("wrote %s: %zu rows, %zu features, %zu nonzeros (%.3f%%)\n", o->out, s->n, s->dim,
               s->nnz, 100.0 * (double)s->nnz / ((double)s->n * (double)s->dim));
    if (!rc)
        sw_sparse_free(s);
    return rc;
}

int sw_cli_data(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "gen") != 0 && strcmp(argv[1], "export") != 0)) {
        if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
            help();
            return 0;
        }
        return sw_cli_error(CMD, "expected 'gen' or 'export' (see syncwise data --help)") + 1;
    }
    opts o = {
        .data = "fashion-mnist",
        .split = "train",
        .gen = {
            .n = 100000, .dim = 50000, .density = 0.002, .zipf = 1.1, .noise = 0.02, .seed = 1}};
    int rc = parse(argc - 1, argv + 1, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    char err[SW_ERR_LEN];
    rc = strcmp(argv[1], "gen") == 0 ? gen(&o, err) : export(&o, err);
    return rc ? sw_cli_error(CMD, "%s", err) : 0;
}
