/* The library's version (syncwise/version.h), from the project's (CMakeLists.txt). */
#include "syncwise/version.h"

const char *sw_version(void) { return SW_VERSION; }
