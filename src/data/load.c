/* sw_data_load: from a spec string to the train / validation / test triple.
 *
 * Each source reads its own keys; the keys every source shares are applied afterwards in one
 * order: keep a fraction of the training set (frac), split off a validation set (val), then
 * standardise features with statistics of the training part only (norm=standard), so nothing of
 * the held-out sets leaks into training.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sw_data_internal.h"
#include "syncwise/err.h"

#define COMMON_KEYS "val, frac, norm"

/* IDX sets ship gzip-compressed or not; take whichever of name.gz and name exists. */
static void idx_path(char *out, size_t cap, const char *dir, const char *name)
{
    struct stat st;
    snprintf(out, cap, "%s/%s.gz", dir, name);
    if (stat(out, &st) != 0)
        snprintf(out, cap, "%s/%s", dir, name);
}

static int load_idx_dir(const char *dir, uint32_t classes, sw_dataset **train, sw_dataset **test,
                        char *err)
{
    char img[4096], lab[4096];
    idx_path(img, sizeof img, dir, "train-images-idx3-ubyte");
    idx_path(lab, sizeof lab, dir, "train-labels-idx1-ubyte");
    int rc = sw_idx_read(train, img, lab, classes, err);
    if (rc)
        return rc;
    idx_path(img, sizeof img, dir, "t10k-images-idx3-ubyte");
    idx_path(lab, sizeof lab, dir, "t10k-labels-idx1-ubyte");
    if ((rc = sw_idx_read(test, img, lab, classes, err)))
        return rc;
    /* the shape, not only the pixel count: a convolution reads the rows as the training set's */
    if (memcmp((*test)->shape, (*train)->shape, sizeof (*train)->shape))
        return sw_fail(err, SW_EMISMATCH, "%s: test images are %ux%u, training images %ux%u", dir,
                       (*test)->shape[0], (*test)->shape[1], (*train)->shape[0],
                       (*train)->shape[1]);
    return 0;
}

static int load_fashion(sw_spec *s, uint64_t seed, sw_dataset **train, sw_dataset **test,
                        char *err)
{
    (void)seed;
    const char *dir = sw_spec_str(s, "dir", SW_FASHION_MNIST_DIR);
    int rc = load_idx_dir(dir, 10, train, test, err);
    if (rc == SW_EIO && strcmp(dir, SW_FASHION_MNIST_DIR) == 0)
        sw_fail(err, rc, "Fashion-MNIST is not installed in %s: apt-get install "
                         "dataset-fashion-mnist (or run scripts/deps.sh)",
                SW_FASHION_MNIST_DIR);
    return rc;
}

static int load_idx(sw_spec *s, uint64_t seed, sw_dataset **train, sw_dataset **test, char *err)
{
    (void)seed;
    long classes = 10;
    const char *dir = sw_spec_str(s, "dir", NULL);
    int rc = sw_spec_int(s, "classes", 2, 256, &classes, err);
    if (rc)
        return sw_spec_usage(rc);
    if (!dir)
        return sw_fail(err, SW_EINVAL, "idx: dir=PATH is required");
    return load_idx_dir(dir, (uint32_t)classes, train, test, err);
}

static int parse_task(sw_spec *s, sw_objective *task, char *err)
{
    const char *t = sw_spec_str(s, "task", "classify");
    if (strcmp(t, "classify") == 0)
        *task = SW_CLASSIFY;
    else if (strcmp(t, "regress") == 0)
        *task = SW_REGRESS;
    else
        return sw_fail(err, SW_EINVAL, "%s: task='%s' is not classify or regress", s->name, t);
    return 0;
}

/* Class counts come from the largest label seen, so a test file may see fewer classes than its
 * training file; it must not see more. */
static int same_classes(const sw_dataset *train, sw_dataset *test, const char *tr, const char *te,
                        char *err)
{
    if (train->objective != SW_CLASSIFY)
        return 0;
    if (test->n_classes > train->n_classes)
        return sw_fail(err, SW_EMISMATCH, "%s: class %u does not occur in %s", te,
                       test->n_classes - 1, tr);
    test->n_classes = train->n_classes;
    return 0;
}

static int load_libsvm(sw_spec *s, uint64_t seed, sw_dataset **train, sw_dataset **test,
                       char *err)
{
    (void)seed;
    long dim = 0;
    sw_objective task = SW_CLASSIFY;
    const char *tr = sw_spec_str(s, "train", NULL), *te = sw_spec_str(s, "test", NULL);
    int rc;
    if ((rc = sw_spec_int(s, "dim", 0, 1 << 24, &dim, err)) || (rc = parse_task(s, &task, err)))
        return sw_spec_usage(rc);
    if (!tr)
        return sw_fail(err, SW_EINVAL, "libsvm: train=PATH is required");
    if ((rc = sw_libsvm_read(train, tr, (size_t)dim, task, err)))
        return rc;
    /* The test file must have the training set's width even if its largest index is smaller. */
    if (te && (rc = sw_libsvm_read(test, te, (*train)->dim, task, err)))
        return rc;
    return te ? same_classes(*train, *test, tr, te, err) : 0;
}

static int load_csv(sw_spec *s, uint64_t seed, sw_dataset **train, sw_dataset **test, char *err)
{
    (void)seed;
    sw_objective task = SW_CLASSIFY;
    const char *tr = sw_spec_str(s, "train", NULL), *te = sw_spec_str(s, "test", NULL);
    sw_csv_labels labels = {.column = sw_spec_str(s, "label", "first")};
    int rc = parse_task(s, &task, err);
    if (rc)
        return rc;
    if (!tr)
        return sw_fail(err, SW_EINVAL, "csv: train=PATH is required");
    rc = sw_csv_read(train, tr, &labels, task, err);
    if (!rc && te)
        rc = sw_csv_read(test, te, &labels, task, err);
    sw_csv_labels_free(&labels);
    if (rc || !te)
        return rc;
    if ((*test)->dim != (*train)->dim)
        return sw_fail(err, SW_EMISMATCH, "%s: %zu features where %s has %zu", te, (*test)->dim,
                       tr, (*train)->dim);
    return same_classes(*train, *test, tr, te, err);
}

typedef struct source {
    const char *name;
    sw__data_loader load;
    const char *keys; /* the source's own keys, for the unknown-key message */
} source;

static const source sources[] = {
    {"fashion-mnist", load_fashion, "dir"},
    {"idx", load_idx, "dir, classes"},
    {"libsvm", load_libsvm, "train, test, dim, task"},
    {"csv", load_csv, "train, test, label, task"},
    {"synthetic", sw__synthetic_load, "task, d, n, test, noise"},
};

const sw_data_source_info sw_data_sources[] = {
    {"fashion-mnist", "Fashion-MNIST from the Debian package (dir=PATH to use another copy)"},
    {"idx", "an MNIST-style IDX directory: dir=PATH, classes=10"},
    {"libsvm", "LIBSVM text: train=PATH, test=PATH, dim=D, task=classify|regress; labels "
               "-1/+1 become classes 0/1, others are the class (an integer below 1000)"},
    {"csv", "CSV: train=PATH, test=PATH, label=first|last|COLUMN (from 0)|NAME (a header's), "
            "task=...; text labels become classes"},
    {"synthetic", "a hidden linear model: task=lsq|logistic, d=100, n=10000, test=2000, "
                  "noise=0.1"},
    {"(each above)", "val=N validation examples split off training (default: min(5000, "
                     "n/10); 0: none, runs evaluate on the test set), frac=F keep a random "
                     "fraction of training, norm=none|standard (for "
                     "the dense models)"},
    {NULL, NULL},
};

/* Keeps a random fraction of the training set, then splits `n_val` of it off as validation. */
static int split(sw_data *d, double frac, long n_val, uint64_t seed, char *err)
{
    size_t n = d->train->n;
    uint32_t *idx = malloc(n * sizeof *idx);
    if (!idx)
        return sw_fail(err, SW_ENOMEM, "out of memory for a split");
    for (size_t i = 0; i < n; i++)
        idx[i] = (uint32_t)i;
    sw_rng rng;
    sw_rng_seed(&rng, seed, SW_STREAM_SPLIT);
    sw_rng_shuffle(&rng, idx, n);
    size_t keep = (size_t)(frac * (double)n + 0.5);
    size_t nv = n_val >= 0 ? (size_t)n_val : (keep / 10 < 5000 ? keep / 10 : 5000);
    int rc = 0;
    if (keep <= nv)
        rc = sw_fail(err, SW_EINVAL, "%zu training examples leave none after %zu for validation",
                     keep, nv);
    sw_dataset *tr = NULL, *va = NULL;
    if (!rc && nv > 0)
        rc = sw_dataset_subset(&va, d->train, idx, nv, err);
    if (!rc)
        rc = sw_dataset_subset(&tr, d->train, idx + nv, keep - nv, err);
    free(idx);
    if (rc) {
        sw_dataset_free(va);
        return rc;
    }
    sw_dataset_free(d->train);
    d->train = tr;
    d->val = va;
    return 0;
}

static const source *find_source(const char *name)
{
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
        if (strcmp(sources[i].name, name) == 0)
            return &sources[i];
    return NULL;
}

static int load(sw_data *out, sw_spec *s, uint64_t seed, char *err)
{
    const source *src = find_source(s->name);
    if (!src)
        return sw_fail(err, SW_ENOTFOUND,
                       "unknown data set '%s' (known: fashion-mnist, idx, libsvm, csv, "
                       "synthetic)",
                       s->name);
    long n_val = -1;
    double frac = 1.0;
    const char *norm = sw_spec_str(s, "norm", "none");
    if (strcmp(norm, "standard") != 0 && strcmp(norm, "none") != 0)
        return sw_fail(err, SW_EINVAL, "%s: norm='%s' is not none or standard", s->name, norm);
    int rc;
    if ((rc = sw_spec_int(s, "val", 0, 1 << 26, &n_val, err)) ||
        (rc = sw_spec_double(s, "frac", 1e-6, 1.0, &frac, err)))
        return sw_spec_usage(rc);
    if ((rc = src->load(s, seed, &out->train, &out->test, err)))
        return rc;
    char known[128];
    snprintf(known, sizeof known, "%s, %s", src->keys, COMMON_KEYS);
    if ((rc = sw_spec_finish(s, known, err)) || (rc = split(out, frac, n_val, seed, err)))
        return rc;
    if (strcmp(norm, "standard") != 0)
        return 0;
    sw_dataset *all[] = {out->val, out->test, out->train};
    return sw_dataset_standardize(out->train, all, 3, err);
}

int sw_data_load(sw_data *out, const char *spec, uint64_t seed, char *err)
{
    memset(out, 0, sizeof *out);
    sw_spec s;
    int rc = sw_spec_parse(&s, spec, err);
    if (!rc)
        rc = load(out, &s, seed, err);
    if (rc)
        sw_data_free(out);
    return rc;
}

void sw_data_free(sw_data *d)
{
    sw_dataset_free(d->train);
    sw_dataset_free(d->val);
    sw_dataset_free(d->test);
    memset(d, 0, sizeof *d);
}
