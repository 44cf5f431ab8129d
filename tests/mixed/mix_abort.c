/* A PMIx rank that aborts the job with the code given (tests/mixed/abort_codes.sh):
 * PMIx_Abort(CODE), linked with pmigate's libpmix.  It should never return;
 * if it does, the rank exits 100 so the test sees it. */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    pmix_proc_t me;

    if (argc != 2 || PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
        fprintf(stderr, "usage: mix_abort CODE (under pmigate run)\n");
        return 99;
    }
    PMIx_Abort(atoi(argv[1]), "mix_abort", NULL, 0);
    return 100;
}
