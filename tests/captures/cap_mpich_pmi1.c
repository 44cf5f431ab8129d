/*
 * cap_mpich_pmi1: an MPICH program whose only job is to make libmpich's
 * PMI-1 client send every command it has to hydra, so pmi_tap can record
 * them: init/maxes/kvsname/appnum/get/put/barrier (MPI_Init), universe size,
 * publish/lookup/unpublish and finalize; with the argument "abort", rank 0
 * calls MPI_Abort instead of finalizing (the abort command).  Spawn is not
 * recorded here: Debian's MPICH 4.0.2 fails MPI_Comm_spawn before it sends
 * the mcmd block, so spawn vectors come from doc.cap (hydra 4.0.2 observed).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, flag, *usize;
    char port[MPI_MAX_PORT_NAME] = "tag#0$description#capture$port#1$";
    char found[MPI_MAX_PORT_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    if (rank == 0) {
        MPI_Publish_name("pg-capture", MPI_INFO_NULL, port);
        MPI_Lookup_name("pg-capture", MPI_INFO_NULL, found);
        MPI_Unpublish_name("pg-capture", MPI_INFO_NULL, port);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (argc > 1 && strcmp(argv[1], "abort") == 0 && rank == 0)
        MPI_Abort(MPI_COMM_WORLD, 7);
    MPI_Finalize();
    return 0;
}
