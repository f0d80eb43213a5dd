/* The architecture description that sw_model_new turns into a model with its scratch memory. */
#ifndef SW_MODEL_INTERNAL_H
#define SW_MODEL_INTERNAL_H

#include "layer.h"
#include "syncwise/model.h"
#include "syncwise/spec.h"

#define SW__MAX_LAYERS 32

typedef struct sw__arch {
    sw__layer layers[SW__MAX_LAYERS];
    int n_layers;
    uint32_t shape[3]; /* the running output shape while building */
    uint32_t n_out;
    size_t n_params;
    char canonical[SW_MODEL_SPEC_LEN];
} sw__arch;

/* Parses spec and lays out the layers for inputs of in_shape and n_out outputs. */
int sw__arch_build(sw__arch *a, const char *spec, const uint32_t in_shape[3], uint32_t n_out,
                   char *err);

#endif
