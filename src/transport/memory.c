/* The allocator tuned for a process that moves large messages (syncwise/transport.h). */
#include "syncwise/transport.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

void sw_net_keep_freed_memory(void)
{
#ifdef __GLIBC__
    /* Fixed thresholds also end glibc's sizing of them from the blocks it sees, which left
     * a heap's free top past its trim threshold after two freed 512 KB messages. (Where 32
     * MiB is above glibc's largest, on 32-bit hosts, that one call is refused and the
     * threshold stays glibc's.) */
    mallopt(M_MMAP_THRESHOLD, SW_NET_HEAP_BLOCK_MAX);
    mallopt(M_TRIM_THRESHOLD, SW_NET_KEEP_FREED);
#endif
}
