/*
 * pmi2_card.h: the "business card" of the PMI-2 wire-up workload.
 *
 * tests/progs/pmi2_wireup puts one card per rank and checks every card it
 * gets; tests/bench/floor_pmi2 answers those gets from cards it computes
 * itself.  Both include this header so the card a floor serves is, byte
 * for byte, the card the workload expects: they cannot drift apart.
 */
#ifndef PMI2_CARD_H
#define PMI2_CARD_H

#include <string.h>

/* Bytes of one card (without the terminating NUL). */
#define PG_CARD_LEN 220

/* Writes rank's card, NUL-terminated, into card (PG_CARD_LEN + 1 bytes,
 * owned by the caller).  It starts with "card-<rank>-" and depends on the
 * rank in every byte, so a reply carrying the wrong rank's card shows:
 * byte i after the prefix is the hex digit (rank * 7 + i) % 16.  Made with
 * one copy, not a formatted print and a loop: every rank makes N cards to
 * check its gets, N^2 in all, and at thousands of ranks the workload's own
 * checking would otherwise outweigh the gets it checks (docs/performance.md,
 * "Own clients at scale"). */
static inline void pg_card_make(int rank, char *card)
{
    /* the digits twice over and then some: any 16-aligned window of them
     * starting at offset o reads (o + j) % 16 at position j */
    static const char digits[] = "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"
                                 "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"
                                 "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"
                                 "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"
                                 "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF";
    char num[16];
    int len = 0, n;
    unsigned v = (unsigned)rank;

    do
        num[len++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    memcpy(card, "card-", 5);
    for (n = 5; len > 0; n++)
        card[n] = num[--len];
    card[n++] = '-';
    memcpy(card + n, digits + ((unsigned)rank * 7u + (unsigned)n) % 16, (size_t)(PG_CARD_LEN - n));
    card[PG_CARD_LEN] = '\0';
}

#endif
