/* What a launcher's environment says about this process (launch_env.c), for `syncwise launch`.
 * A rank's host comes from SYNCWISE_HOSTS, Slurm's node list (tasks in blocks or cyclic), or a
 * StatefulSet's naming (SYNCWISE_SERVICE); the server's may be given by SYNCWISE_SERVER. */
#ifndef SW_CLI_LAUNCH_ENV_H
#define SW_CLI_LAUNCH_ENV_H

#include <stddef.h>

/* The job's size from the launcher's variables into *size (-1 when none is set): 0, or 2
 * having said that the variable set is no size. */
int sw__launch_env_size(long *size);
/* The same, -1 when none is set or it is no size (said). */
long sw__launch_size(void);
/* This process's rank: the launcher's variable, else a StatefulSet's host name (name-N); -1
 * when nothing says, -2 when the variable is no rank (said). */
long sw__launch_rank(void);
/* Rank r's host name into out; 0 on success, else -1 with sw__launch_host_hint saying why as
 * far as the variables tell (" (...)", or empty). */
int sw__launch_host_of_rank(long r, char *out, size_t cap);
/* The server's host: given (--server), else SYNCWISE_SERVER, else rank 0's. */
int sw__launch_server_host(const char *given, char *out, size_t cap);
extern char sw__launch_host_hint[200];
/* The launcher's job, made a job name, or "" when no variable names one. */
const char *sw__launch_job(void);

#endif
