/*
 * The rules every program of the mixed-version job checks, whatever PMI
 * API it uses: ranks 0..N-1 each speak one API (the layout comes as argv[1],
 * e.g. "pmi1,pmi1,pmi2,pmi2,pmix,pmix"), share one namespace, read every
 * other rank's keys, and synchronise on the same fences.
 *
 * Two rounds: round r, rank i puts "mix<r>-<i>" = "<api>-<i>-round<r>",
 * fences (PMI-1 barrier, PMI-2 kvs-fence or PMIx_Fence with collect), then
 * reads every rank's key of that round.  Round 2's keys are put after round
 * 1's fence, so they can only be read if the second fence of all three kinds
 * is one and the same barrier.
 */
#ifndef MIXED_H
#define MIXED_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIX_MAX_RANKS 64

/* Splits the comma-separated API layout; returns the number of ranks. */
static inline int mix_layout(const char *arg, char apis[][8])
{
    int n = 0;
    const char *p = arg;
    while (p != NULL && *p != '\0' && n < MIX_MAX_RANKS) {
        size_t len = strcspn(p, ",");
        snprintf(apis[n++], 8, "%.*s", (int)len, p);
        p = p[len] == ',' ? p + len + 1 : NULL;
    }
    return n;
}

static inline void mix_key(char *buf, size_t size, int round, int rank)
{
    snprintf(buf, size, "mix%d-%d", round, rank);
}

static inline void mix_value(char *buf, size_t size, const char *api, int round, int rank)
{
    snprintf(buf, size, "%s-%d-round%d", api, rank, round);
}

#define MIX_CHECK(rank, cond, ...)                                              \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "mixed rank %d: ", (rank));                         \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

#endif
