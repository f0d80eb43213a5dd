/* `syncwise data`: make sparse data sets in LIBSVM format, synthetic (text-like, power-law
 * feature frequencies) or exported from any data set syncwise loads (Fashion-MNIST). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "scenario.h"
#include "syncwise/err.h"
#include "syncwise/sparse.h"
#include "syncwise/task.h"

#define CMD "data"

typedef struct opts {
    const char *out, *data;
    int split; /* in splits[] */
    sw_sparse_gen gen;
} opts;

static const char *const splits[] = {"train", "val", "test", NULL};

#define AT(field) offsetof(opts, field)
static const sw_opt table[] = {
    {SW_OPT_ROW(SW_OPT_STR, "out", 0, AT(out), 0, 0, "FILE", "where to write (required)")},
    SW_OPT_HEADING("gen"),
    {SW_OPT_ROW(SW_OPT_SIZE, "n", 0, AT(gen.n), 1, 1L << 30, "N", "rows")},
    {SW_OPT_ROW(SW_OPT_SIZE, "dim", 0, AT(gen.dim), 1, 1L << 24, "D", "features")},
    {SW_OPT_ROW(SW_OPT_F64, "density", 0, AT(gen.density), 1e-9, 1, "P",
                "features drawn per row as a share of --dim; repeated\n"
                "draws of a frequent feature merge, so rows hold fewer")},
    {SW_OPT_ROW(SW_OPT_F64, "zipf", 0, AT(gen.zipf), 0, 10, "S",
                "power-law exponent of feature frequencies")},
    {SW_OPT_ROW(SW_OPT_F64, "noise", 0, AT(gen.noise), 0, 0.499, "X", "label noise")},
    {SW_OPT_ROW(SW_OPT_U64, "seed", 0, AT(gen.seed), 0, 0, "N", "seed")},
    SW_OPT_HEADING("export"),
    {SW_OPT_ROW(SW_OPT_STR, "data", 0, AT(data), 0, 0, "SPEC", "data set to export")},
    {SW_OPT_ROW(SW_OPT_CHOICE, "split", 0, AT(split), 0, 0, "NAME", "train, val or test"),
     .choices = splits},
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts command = {
    .cmd = CMD,
    .usage = "gen --out FILE [OPTIONS]\n"
             "       syncwise data export --data SPEC --out FILE [--split NAME]",
    .about = "gen writes synthetic two-class sparse data like bag-of-words text: feature j\n"
             "appears with probability proportional to 1/(j+1)^zipf, rows have unit norm, the\n"
             "label is the sign of a hidden linear model (flipped with probability --noise).\n"
             "export writes the nonzeros of a loaded data set (Fashion-MNIST by default), or\n"
             "the rows a sparse run generates from a sparse:... spec (a run's data set is\n"
             "the spec's alone, whatever the run's --seed).\n"
             "Files are LIBSVM text (two-class labels as -1/+1), written atomically.",
    .tables = {table},
};

static int parse(int argc, char **argv, opts *o)
{
    int rc = sw_cli_parse(&command, argc, argv, o, NULL);
    if (rc)
        return rc == 1 ? -1 : rc;
    if (!o->out)
        return sw_cli_error(CMD, "--out FILE is required (see --help)") + 1;
    return sw_cli_outputs_apart(CMD, 1, (const char *[]){"--out"}, &o->out, 1, &o->data);
}

static void report_written(const opts *o, const sw_sparse_data *s)
{
    printf("wrote %s: %zu rows, %zu features, %zu nonzeros (%.3f%%)\n", o->out, s->n, s->dim,
           s->nnz, 100.0 * (double)s->nnz / ((double)s->n * (double)s->dim));
}

/* A generated sparse set (sparse:...), as a sparse run sees it: its train or test rows. */
static int export_sparse(const opts *o, char *err)
{
    if (strcmp(splits[o->split], "val") == 0)
        return sw_fail(err, SW_EINVAL, "sparse data have a train and a test split, no val");
    sw_sparse_set set;
    int rc = sw_sparse_load(&set, o->data, SW_DATA_SEED, err); /* as every run loads it */
    if (rc)
        return rc;
    const sw_sparse_data *s = strcmp(splits[o->split], "test") == 0 ? set.test : set.train;
    rc = sw_sparse_write_libsvm(s, o->out, err);
    if (!rc)
        report_written(o, s);
    sw_sparse_set_free(&set);
    return rc;
}

static int export(const opts *o, char *err)
{
    if (strncmp(o->data, "sparse:", 7) == 0 || strcmp(o->data, "sparse") == 0)
        return export_sparse(o, err);
    sw_data d;
    int rc = sw_data_load(&d, o->data, SW_DATA_SEED, err); /* as every run loads it */
    if (rc)
        return rc;
    const sw_dataset *ds = sw_cli_split(&d, splits[o->split]);
    sw_sparse_data *s = NULL;
    if (!ds)
        rc = sw_fail(err, SW_ENOTFOUND, "data set '%s' has no %s split", o->data, splits[o->split]);
    if (!rc)
        rc = sw_sparse_from_dense(&s, ds, err);
    if (!rc)
        rc = sw_sparse_write_libsvm(s, o->out, err);
    if (!rc)
        report_written(o, s);
    sw_sparse_free(s);
    sw_data_free(&d);
    return rc;
}

static int gen(const opts *o, char *err)
{
    sw_sparse_data *s = NULL;
    int rc = sw_sparse_generate(&s, &o->gen, err);
    if (!rc)
        rc = sw_sparse_write_libsvm(s, o->out, err);
    if (!rc)
        report_written(o, s);
    sw_sparse_free(s);
    return rc;
}

static opts defaults(void)
{
    return (opts){.data = "fashion-mnist",
                  .gen = {.n = 100000, .dim = 50000, .density = 0.002, .zipf = 1.1,
                          .noise = 0.02, .seed = 1}};
}

/* The other subcommand's options are refused, not ignored (export --n 10 wrote the whole data
 * set): 0, or the exit status. A run's data set is its spec's alone, whatever the run's --seed,
 * so export takes none (it wrote rows no run saw when given the run's). */
static int options_of(const char *sub, const opts *o)
{
    opts d = defaults();
    const sw_sparse_gen *g = &o->gen;
    if (!strcmp(sub, "export") && (g->n != d.gen.n || g->dim != d.gen.dim ||
                                   g->density != d.gen.density || g->zipf != d.gen.zipf ||
                                   g->noise != d.gen.noise || g->seed != d.gen.seed))
        return sw_cli_error(CMD, "--n, --dim, --density, --zipf, --noise and --seed are for gen: "
                                 "export writes the data set --data names, which is the spec's "
                                 "alone in every run, whatever its --seed") + 1;
    if (!strcmp(sub, "gen") && (strcmp(o->data, d.data) != 0 || o->split != d.split))
        return sw_cli_error(CMD, "--data and --split are for export: gen makes its rows from "
                                 "--n, --dim, --density, --zipf, --noise and --seed") + 1;
    return 0;
}

int sw_cli_data(int argc, char **argv)
{
    opts o = defaults();
    if (argc < 2 || (strcmp(argv[1], "gen") != 0 && strcmp(argv[1], "export") != 0)) {
        if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
            sw_cli_help(&command, &o);
            return 0;
        }
        return sw_cli_error(CMD, "expected 'gen' or 'export' (see syncwise data --help)") + 1;
    }
    int rc = parse(argc - 1, argv + 1, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    if ((rc = options_of(argv[1], &o)))
        return rc;
    char err[SW_ERR_LEN];
    rc = strcmp(argv[1], "gen") == 0 ? gen(&o, err) : export(&o, err);
    return rc ? sw_cli_error(CMD, "%s", err) * sw_cli_load_status(rc) : 0; /* 2: a bad spec */
}
