/* Architectures: from a spec string to a list of layers with their shapes.
 *
 * Each builder reads its keys, appends layers through the helpers below (which track the running
 * shape and the parameter offset) and writes the canonical spec with every value spelled out, so
 * a checkpoint names its architecture completely even if defaults change later.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "syncwise/err.h"

static sw__layer *append(sw__arch *a, const sw__layer_ops *ops, char *err)
{
    if (a->n_layers == SW__MAX_LAYERS) {
        sw_fail(err, SW_EINVAL, "more than %d layers", SW__MAX_LAYERS);
        return NULL;
    }
    sw__layer *l = &a->layers[a->n_layers++];
    memset(l, 0, sizeof *l);
    l->ops = ops;
    memcpy(l->in, a->shape, sizeof l->in);
    l->in_size = (size_t)a->shape[0] * a->shape[1] * a->shape[2];
    return l;
}

static void finish(sw__arch *a, sw__layer *l)
{
    l->out_size = (size_t)l->out[0] * l->out[1] * l->out[2];
    l->param_off = a->n_params;
    a->n_params += l->n_weights + l->n_bias;
    memcpy(a->shape, l->out, sizeof a->shape);
}

static int add_dense(sw__arch *a, uint32_t units, char *err)
{
    sw__layer *l = append(a, &sw__dense_ops, err);
    if (!l)
        return SW_EINVAL;
    l->out[0] = l->out[1] = 1;
    l->out[2] = units;
    l->fan_in = l->in_size;
    l->n_weights = l->in_size * units;
    l->n_bias = units;
    finish(a, l);
    return 0;
}

static int add_activation(sw__arch *a, const sw__layer_ops *ops, char *err)
{
    sw__layer *l = append(a, ops, err);
    if (!l)
        return SW_EINVAL;
    memcpy(l->out, l->in, sizeof l->out);
    a->layers[a->n_layers - 2].relu_follows = 1;
    finish(a, l);
    return 0;
}

static int add_relu(sw__arch *a, char *err) { return add_activation(a, &sw__relu_ops, err); }

static int add_conv(sw__arch *a, uint32_t filters, uint32_t k, char *err)
{
    if (a->shape[0] < k || a->shape[1] < k)
        return sw_fail(err, SW_EINVAL, "a %ux%u input is too small for a %ux%u convolution",
                       a->shape[0], a->shape[1], k, k);
    sw__layer *l = append(a, &sw__conv_ops, err);
    if (!l)
        return SW_EINVAL;
    l->k = k;
    l->out[0] = l->in[0] - k + 1;
    l->out[1] = l->in[1] - k + 1;
    l->out[2] = filters;
    l->fan_in = (size_t)k * k * l->in[2];
    l->n_weights = l->fan_in * filters;
    l->n_bias = filters;
    finish(a, l);
    return 0;
}

static int add_pool(sw__arch *a, uint32_t k, char *err)
{
    if (a->shape[0] < k || a->shape[1] < k)
        return sw_fail(err, SW_EINVAL, "a %ux%u input is too small for %ux%u pooling",
                       a->shape[0], a->shape[1], k, k);
    sw__layer *l = append(a, &sw__maxpool_ops, err);
    if (!l)
        return SW_EINVAL;
    l->k = k;
    l->out[0] = l->in[0] / k;
    l->out[1] = l->in[1] / k;
    l->out[2] = l->in[2];
    finish(a, l);
    return 0;
}

static int build_softmax(sw_spec *s, sw__arch *a, char *err)
{
    int rc = sw_spec_finish(s, "", err);
    if (!rc)
        rc = add_dense(a, a->n_out, err);
    snprintf(a->canonical, sizeof a->canonical, "softmax");
    return rc;
}

/* Hidden widths from "256" (with h) or "64/32" (one per layer; h, if given, must agree). */
static int parse_widths(sw_spec *s, long widths[], long *h, char *err)
{
    const char *text = sw_spec_str(s, "u", "256");
    long n = 0;
    const char *p = text;
    for (;;) {
        char *end;
        long u = strtol(p, &end, 10);
        if (!sw_spec_decimal(p) || u < 1 || u > (1 << 16) || n == SW__MAX_LAYERS / 2 - 1)
            return sw_fail(err, SW_EINVAL, "mlp: u=%s is not a width in [1, 65536] or a list "
                           "of at most %d widths like 64/32", text, SW__MAX_LAYERS / 2 - 1);
        widths[n++] = u;
        if (*end == '\0')
            break;
        if (*end != '/')
            return sw_fail(err, SW_EINVAL, "mlp: u=%s: widths are separated by '/'", text);
        p = end + 1;
    }
    if (n == 1) {
        for (long i = 1; i < *h; i++)
            widths[i] = widths[0];
        return 0;
    }
    if (sw_spec_has(s, "h") && *h != n)
        return sw_fail(err, SW_EINVAL, "mlp: h=%ld but u=%s lists %ld widths", *h, text, n);
    *h = n;
    return 0;
}

/* The canonical spec: "mlp:h=H,u=U" for equal widths and ReLU, the full list otherwise. */
static void mlp_canonical(sw__arch *a, const long widths[], long h, bool leaky)
{
    bool equal = true;
    for (long i = 1; i < h; i++)
        equal = equal && widths[i] == widths[0];
    int off = snprintf(a->canonical, sizeof a->canonical, "mlp:h=%ld,u=%ld", h,
                       h ? widths[0] : 256);
    for (long i = 1; i < h && !equal; i++)
        off += snprintf(a->canonical + off, sizeof a->canonical - (size_t)off, "/%ld", widths[i]);
    if (leaky)
        snprintf(a->canonical + off, sizeof a->canonical - (size_t)off, ",act=leaky");
}

static int build_mlp(sw_spec *s, sw__arch *a, char *err)
{
    long h = 1, widths[SW__MAX_LAYERS / 2];
    int rc;
    if ((rc = sw_spec_int(s, "h", 0, SW__MAX_LAYERS / 2 - 1, &h, err)) ||
        (rc = parse_widths(s, widths, &h, err)))
        return rc;
    const char *act = sw_spec_str(s, "act", "relu");
    bool leaky = strcmp(act, "leaky") == 0;
    if (!leaky && strcmp(act, "relu") != 0)
        return sw_fail(err, SW_EINVAL, "mlp: act=%s is not relu or leaky", act);
    if ((rc = sw_spec_finish(s, "h, u, act", err)))
        return rc;
    for (long i = 0; i < h && !rc; i++)
        if (!(rc = add_dense(a, (uint32_t)widths[i], err)))
            rc = add_activation(a, leaky ? &sw__leaky_ops : &sw__relu_ops, err);
    if (!rc)
        rc = add_dense(a, a->n_out, err);
    mlp_canonical(a, widths, h, leaky);
    return rc;
}

static int build_cnn(sw_spec *s, sw__arch *a, char *err)
{
    long c1 = 20, c2 = 50, f = 500;
    int rc;
    if ((rc = sw_spec_int(s, "c1", 1, 1024, &c1, err)) ||
        (rc = sw_spec_int(s, "c2", 1, 1024, &c2, err)) ||
        (rc = sw_spec_int(s, "f", 1, 1 << 16, &f, err)) ||
        (rc = sw_spec_finish(s, "c1, c2, f", err)))
        return rc;
    if ((rc = add_conv(a, (uint32_t)c1, 5, err)) || (rc = add_relu(a, err)) ||
        (rc = add_pool(a, 2, err)) || (rc = add_conv(a, (uint32_t)c2, 5, err)) ||
        (rc = add_relu(a, err)) || (rc = add_pool(a, 2, err)) ||
        (rc = add_dense(a, (uint32_t)f, err)) || (rc = add_relu(a, err)) ||
        (rc = add_dense(a, a->n_out, err)))
        return rc;
    snprintf(a->canonical, sizeof a->canonical, "cnn:c1=%ld,c2=%ld,f=%ld", c1, c2, f);
    return 0;
}

typedef struct arch_entry {
    const char *name;
    int (*build)(sw_spec *s, sw__arch *a, char *err);
} arch_entry;

static const arch_entry archs[] = {
    {"softmax", build_softmax},
    {"mlp", build_mlp},
    {"cnn", build_cnn},
};

const sw_model_arch_info sw_model_archs[] = {
    {"softmax", "softmax regression (least squares on a regression task)"},
    {"mlp", "h=1 hidden layers of u=256 ReLU units; u=64/32 lists one width per layer, "
            "act=leaky uses leaky ReLU"},
    {"cnn", "two 5x5 convolutions of c1=20 and c2=50 filters with 2x2 max pooling, "
            "a dense layer of f=500 ReLU units"},
    {NULL, NULL},
};

int sw__arch_build(sw__arch *a, const char *spec, const uint32_t in_shape[3], uint32_t n_out,
                   char *err)
{
    memset(a, 0, sizeof *a);
    memcpy(a->shape, in_shape, sizeof a->shape);
    a->n_out = n_out;
    sw_spec s;
    int rc = sw_spec_parse(&s, spec, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].name, s.name) == 0)
            return sw_spec_usage(archs[i].build(&s, a, err)); /* a spec's range: usage */
    return sw_fail(err, SW_ENOTFOUND, "unknown model '%s' (known: softmax, mlp, cnn; svm and "
                   "logistic on sparse data)", s.name);
}
