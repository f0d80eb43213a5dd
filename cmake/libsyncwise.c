/* libsyncwise.so's own source: nothing, its symbols come whole from the layers' libraries
 * (CMakeLists.txt). A typedef keeps this translation unit from being empty. */
#include "syncwise/version.h"

typedef int sw__libsyncwise_has_no_code;
