/*
 * ompi_hello: the Open MPI job of tests/integration/ompi.sh, built with
 * Debian's mpicc.openmpi and run unmodified under `pmigate run` (Open MPI
 * 4.1 reaches pmigate through its PMIx component and pmigate's libpmix).
 *
 * Every rank checks what the launcher told Open MPI - its rank within the
 * size, the size the test expects - and that an allreduce over all ranks
 * gives the sums that only distinct ranks 0..size-1 give; then it prints
 * one "ompi_hello: rank R of N: ok" line.  Options:
 *   --size=N        the job size the test launched (checked by every rank)
 *   --abort=CODE    rank 1 (0 when alone) calls MPI_Abort(CODE) after the
 *                   allreduce; the others wait in a barrier it never joins
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sum of rank + 1 and of (rank + 1)^2 over the job: both match the
 * closed forms only when the ranks are 0..size-1, each once. */
static int check_sums(int rank, int size)
{
    long mine[2] = { rank + 1L, (rank + 1L) * (rank + 1L) }, sum[2] = { 0, 0 };
    long n = size, want[2] = { n * (n + 1) / 2, n * (n + 1) * (2 * n + 1) / 6 };

    if (MPI_Allreduce(mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) {
        fprintf(stderr, "ompi_hello: rank %d: MPI_Allreduce failed\n", rank);
        return -1;
    }
    if (sum[0] != want[0] || sum[1] != want[1]) {
        fprintf(stderr, "ompi_hello: rank %d: allreduce gave %ld/%ld, expected %ld/%ld\n", rank,
                sum[0], sum[1], want[0], want[1]);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int want_size = -1, abort_code = -1, rank, size;

    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--size=", 7) == 0)
            want_size = atoi(argv[i] + 7);
        else if (strncmp(argv[i], "--abort=", 8) == 0)
            abort_code = atoi(argv[i] + 8);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if ((want_size >= 0 && size != want_size) || rank < 0 || rank >= size) {
        fprintf(stderr, "ompi_hello: rank %d of %d, but the job has %d ranks\n", rank, size,
                want_size);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (check_sums(rank, size) != 0)
        MPI_Abort(MPI_COMM_WORLD, 4);
    if (abort_code >= 0) {
        if (rank == (size > 1 ? 1 : 0)) {
            fprintf(stderr, "ompi_hello: rank %d: calling MPI_Abort(%d)\n", rank, abort_code);
            MPI_Abort(MPI_COMM_WORLD, abort_code);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    printf("ompi_hello: rank %d of %d: ok\n", rank, size);
    MPI_Finalize();
    return 0;
}
