/* The wait for the group to be whole (--wait-peers): nobody trains yet, so nothing else shows
 * who lives. The members tell each other who they know every SW_PEER_WAIT_BEAT_S; a member
 * counts toward the group only while it is heard from itself, and one silent past --timeout
 * (killed) is dropped. A peer that was itself away (stopped) says hello again: the others may
 * have dropped it, and it would otherwise wait, or train, apart from them. */
#define _POSIX_C_SOURCE 200809L
#include "peer_internal.h"
#include "syncwise/log.h"

#define SW_PEER_WAIT_BEAT_S 0.1 /* at most: a quarter of a shorter --timeout */
#define SW_PEER_WAIT_LIVE_S 0.5 /* heard within this (or --timeout, if shorter): live */

static double beat_s(const sw__peer *pe)
{
    double quarter = pe->p->timeout_s / 4;
    return quarter < SW_PEER_WAIT_BEAT_S ? quarter : SW_PEER_WAIT_BEAT_S;
}

int sw__peer_live(const sw__peer *pe)
{
    double live = pe->p->timeout_s < SW_PEER_WAIT_LIVE_S ? pe->p->timeout_s : SW_PEER_WAIT_LIVE_S;
    int n = 0;
    for (int k = 0; k < pe->n_members; k++)
        n += sw__peer_heard_within(pe, k, live);
    return n;
}

static void say_hello_again(sw__peer *pe, double gap)
{
    char hello[SW_PEER_EP_LEN + SW_PEER_RUN_LEN + 1];
    size_t len = sw__peer_hello(pe, hello, sizeof hello);
    sw_log(SW_LOG_INFO, "silent %.1f s (--timeout %g) while the group waited: saying hello again "
                        "to the %d members we knew, who may have dropped us", gap,
           pe->p->timeout_s, pe->n_members - 1);
    sw__peer_broadcast(pe, SW_MSG_PEER_HELLO, hello, len);
}

void sw__peer_wait_turn(sw__peer *pe)
{
    /* What came while we were away first: members who spoke are not taken for dead. */
    sw__peer_receive_all(pe, beat_s(pe) / 2);
    double now = sw__peer_now(pe);
    /* Away two beats: the others may have dropped us, for their --timeout may be shorter
     * than ours; a hello to members who kept us is harmless. Away half our own --timeout:
     * their silence meanwhile was ours, and counts from now. */
    double gap = now - pe->last_tick;
    if (gap > 2 * beat_s(pe))
        say_hello_again(pe, gap);
    if (gap > pe->p->timeout_s / 2)
        for (int k = 0; k < pe->n_members; k++)
            pe->m[k].last_seen = now;
    pe->last_tick = now;
    sw__peer_remove_silent(pe);
    if (now >= pe->next_beat) {
        char text[SW_PEER_MEMBERS_LEN];
        size_t n = sw__peer_members_text(pe, text, sizeof text);
        sw__peer_broadcast(pe, SW_MSG_PEER_MEMBERS, text, n);
        pe->next_beat = now + beat_s(pe);
    }
}
