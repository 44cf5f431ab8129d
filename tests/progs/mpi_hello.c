/*
 * mpi_hello: the MPICH job pmigate's tests, demo and benchmarks launch.
 * An unmodified MPI program (PMI-1 inside libmpich): init, allreduce, check,
 * finalize.  Options let tests provoke the failures a launcher must handle:
 *   --abort=CODE            rank 1 (or 0 when alone) calls MPI_Abort(CODE)
 *   --abort-rank=RANK       ... or that rank instead (a rank on another node)
 *   --die-before-init=RANK  that rank kills itself before MPI_Init
 *   --quiet                 print only rank 0's summary line
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int env_rank(void)
{
    const char *r = getenv("PMI_RANK");
    return r ? atoi(r) : -1;
}

int main(int argc, char **argv)
{
    int abort_code = -1, abort_rank = -1, die_rank = -1, quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--abort=", 8) == 0)
            abort_code = atoi(argv[i] + 8);
        else if (strncmp(argv[i], "--abort-rank=", 13) == 0)
            abort_rank = atoi(argv[i] + 13);
        else if (strncmp(argv[i], "--die-before-init=", 18) == 0)
            die_rank = atoi(argv[i] + 18);
        else if (strcmp(argv[i], "--quiet") == 0)
            quiet = 1;
    }
    if (die_rank >= 0 && env_rank() == die_rank)
        raise(SIGKILL);

    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (abort_rank < 0)
        abort_rank = size > 1 ? 1 : 0;
    if (abort_code >= 0 && rank == abort_rank) {
        fprintf(stderr, "rank %d: calling MPI_Abort(%d)\n", rank, abort_code);
        MPI_Abort(MPI_COMM_WORLD, abort_code);
    }

    long mine = rank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long expect = (long)size * (size + 1) / 2;
    if (sum != expect) {
        fprintf(stderr, "rank %d: allreduce gave %ld, expected %ld\n", rank, sum, expect);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (!quiet)
        printf("hello from rank %d of %d\n", rank, size);
    if (rank == 0)
        printf("allreduce ok: sum of 1..%d = %ld\n", size, sum);
    MPI_Finalize();
    return 0;
}
