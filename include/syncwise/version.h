/* The version of syncwise a program was built against and the one it runs with. */
#ifndef SYNCWISE_VERSION_H
#define SYNCWISE_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

/* "MAJOR.MINOR.PATCH" of the library in use. */
const char *sw_version(void);

#ifdef __cplusplus
}
#endif

#endif
