/*
 * cap_slurm_pmi2: a Slurm-libpmi2 program that sends every PMI-2 command
 * hydra 4.0 survives, for pmi_tap to record: fullinit, job-getid,
 * info-getjobattr (found and not found), kvs-put (a value with ';' that
 * libpmi2 escapes as ";;", and one with spaces), kvs-fence, kvs-get of the
 * other rank's key, info-putnodeattr / info-getnodeattr (found, missing),
 * name-publish / name-lookup / name-unpublish, finalize.  With the argument
 * "abort", rank 0 calls PMI2_Abort after init instead (hydra 4.0 does not
 * know PMI-2 abort and tears the job down with exit 255: expected).
 * Known server behaviour it steers around: hydra 4.0 aborts on a kvs-get of
 * a missing key before the first fence, and answers name-lookup with port=
 * where libpmi2 wants value= (the lookup "fails"; the bytes are still real).
 */
#include <slurm/pmi2.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int spawned, size, rank, appnum, found, len;
    char jobid[256], key[64], val[PMI2_MAX_VALLEN + 1], port[256];

    if (PMI2_Init(&spawned, &size, &rank, &appnum) != PMI2_SUCCESS)
        return 1;
    if (argc > 1 && strcmp(argv[1], "abort") == 0 && rank == 0)
        PMI2_Abort(1, "capture abort; with a semicolon");
    PMI2_Job_GetId(jobid, sizeof jobid);
    PMI2_Info_GetJobAttr("PMI_process_mapping", val, sizeof val, &found);
    PMI2_Info_GetJobAttr("universeSize", val, sizeof val, &found);
    snprintf(key, sizeof key, "key%d", rank);
    PMI2_KVS_Put(key, rank == 0 ? "val;with;semis" : "val with spaces");
    PMI2_KVS_Put("empty", "");
    PMI2_KVS_Fence();
    snprintf(key, sizeof key, "key%d", (rank + 1) % size);
    PMI2_KVS_Get(jobid, (rank + 1) % size, key, val, sizeof val, &len);
    if (rank == 0) {
        PMI2_Info_PutNodeAttr("nodekey", "nodeval");
        PMI2_Info_GetNodeAttr("nodekey", val, sizeof val, &found, 0);
        PMI2_Info_GetNodeAttr("nodemissing", val, sizeof val, &found, 0);
        PMI2_Nameserv_publish("pg-svc", NULL, "tag#0$port#7$");
        PMI2_Nameserv_lookup("pg-svc", NULL, port, sizeof port);
        PMI2_Nameserv_unpublish("pg-svc", NULL);
    }
    PMI2_KVS_Fence();
    PMI2_Finalize();
    return 0;
}
