/* Loss heads: softmax cross-entropy for classification, half squared error for regression. */
#include <math.h>

#include "layer.h"

double sw__xent(const float *logits, const int32_t *label, size_t n, size_t classes, float *dout,
                size_t *correct)
{
    double total = 0;
    size_t right = 0;
    const float scale = 1.0f / (float)n;
    for (size_t r = 0; r < n; r++) {
        const float *z = logits + r * classes;
        size_t best = 0;
        for (size_t j = 1; j < classes; j++)
            if (z[j] > z[best])
                best = j;
        /* Subtracting the largest logit keeps exp() from overflowing. */
        double sum = 0;
        for (size_t j = 0; j < classes; j++)
            sum += exp((double)(z[j] - z[best]));
        total += log(sum) - (double)(z[label[r]] - z[best]);
        right += best == (size_t)label[r];
        if (!dout)
            continue;
        float *d = dout + r * classes;
        for (size_t j = 0; j < classes; j++)
            d[j] = (float)(exp((double)(z[j] - z[best])) / sum) * scale;
        d[label[r]] -= scale;
    }
    if (correct)
        *correct = right;
    return total / (double)n;
}

double sw__mse(const float *y, const float *target, size_t n, size_t outputs, float *dout)
{
    double total = 0;
    for (size_t r = 0; r < n * outputs; r++) {
        double e = (double)y[r] - (double)target[r];
        total += 0.5 * e * e;
        if (dout)
            dout[r] = (float)(e / (double)n);
    }
    return total / (double)n;
}
