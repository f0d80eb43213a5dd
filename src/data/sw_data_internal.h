/* Loaders behind sw_data_load, one per source name. Each reads its own keys from the spec and
 * returns a training set and, when the source has one, a test set. */
#ifndef SW_DATA_INTERNAL_H
#define SW_DATA_INTERNAL_H

#include "syncwise/data.h"
#include "syncwise/spec.h"

typedef int (*sw__data_loader)(sw_spec *s, uint64_t seed, sw_dataset **train, sw_dataset **test,
                               char *err);

int sw__synthetic_load(sw_spec *s, uint64_t seed, sw_dataset **train, sw_dataset **test,
                       char *err);

#endif
