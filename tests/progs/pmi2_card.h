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

#include <stdio.h>

/* Bytes of one card (without the terminating NUL). */
#define PG_CARD_LEN 220

/* Writes rank's card, NUL-terminated, into card (PG_CARD_LEN + 1 bytes,
 * owned by the caller).  It starts with "card-<rank>-" and depends on the
 * rank in every byte, so a reply carrying the wrong rank's card shows. */
static inline void pg_card_make(int rank, char *card)
{
    int n = snprintf(card, PG_CARD_LEN + 1, "card-%d-", rank);
    for (int i = n; i < PG_CARD_LEN; i++)
        card[i] = "0123456789ABCDEF"[(rank * 7 + i) % 16];
    card[PG_CARD_LEN] = '\0';
}

#endif
