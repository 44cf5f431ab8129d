/*
 * floor_cards: the wire-up workload's own work without PMI, the floor of
 * "own clients at scale" in tests/bench/wireup.sh.
 *
 * Started as N ranks by `pmigate run -n N floor_cards` (rank and size from
 * PMI_RANK / PMI_SIZE, which the launcher sets for every rank), each rank
 * does what pmi2_wireup and pmixbench do around their gets -- format the key
 * "card-<r>", make the expected card, compare -- for all N cards, with the
 * get itself replaced by writing the card in place (a copy of its 220
 * bytes, the least any library can do).  The wall of such a run is what
 * starting N processes and their own card work cost on this machine: no
 * PMI library, however fast, wires up N ranks of that workload quicker.
 *
 * A rank that finds a card wrong exits 1 (so the optimiser cannot drop the
 * work); rank 0 prints "floor_cards n=N".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/progs/pmi2_card.h"

static int env_int(const char *name, int fallback)
{
    const char *s = getenv(name);
    return s != NULL && *s != '\0' ? atoi(s) : fallback;
}

int main(void)
{
    int rank = env_int("PMI_RANK", 0), size = env_int("PMI_SIZE", 1);
    char key[64], got[PG_CARD_LEN + 1], want[PG_CARD_LEN + 1];

    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof key, "card-%d", r);
        pg_card_make(r, got); /* stands for the get: the card lands in got */
        pg_card_make(r, want);
        if (strcmp(got, want) != 0 || strncmp(key, got, strlen(key)) != 0) {
            fprintf(stderr, "floor_cards rank %d: card of rank %d is wrong\n", rank, r);
            return 1;
        }
    }
    if (rank == 0)
        printf("floor_cards n=%d\n", size);
    return 0;
}
