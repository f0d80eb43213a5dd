/* Loaders behind sw_data_load, one per source name. Each reads its own keys from the spec and
 * returns a training set and, when the source has one, a test set. */
#ifndef SW_DATA_INTERNAL_H
#define SW_DATA_INTERNAL_H

#include "syncwise/data.h"
#include "syncwise/err.h"
#include "syncwise/spec.h"

typedef int (*sw__data_loader)(sw_spec *s, uint64_t seed, sw_dataset **train, sw_dataset **test,
                               char *err);

int sw__synthetic_load(sw_spec *s, uint64_t seed, sw_dataset **train, sw_dataset **test,
                       char *err);

/* Parses a number at p (strtod's syntax), setting *end past it: 0 with the value in *out,
 * SW_EFORMAT when p holds no number (or NaN), SW_ERANGE when it does not fit a float (inf, 1e39). */
int sw__parse_float(const char *p, char **end, double *out);


#endif
