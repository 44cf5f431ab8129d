/*
 * shm_attack: a rank that tries to damage the node's shared key segment and
 * its commit table (PMIGATE_SHM, docs/shm-segment.md) under the other ranks
 * and the gateway, linked with pmigate's libpmi2 (which maps the segment).
 * Every rank puts a card and fences; rank 0 then truncates, writes, punches
 * and maps for writing both files, by descriptor and by path, and tells the
 * others it is done (a file in DIR); they read every card while the
 * segment is mapped, then everyone puts again and fences (the gateway
 * stores into the commit table and publishes again) and reads again.
 * A rank or the gateway killed by SIGBUS fails the job; a damaging attempt
 * that succeeds is reported and fails rank 0.
 * Usage: shm_attack DIR.  Prints "shm_attack rank R: ok" when all holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pmi2.h"

static int rank = -1, size;
static char jobid[256];

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "shm_attack rank %d: ", rank);                     \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static void put_fence(int round)
{
    char key[64], val[64];

    snprintf(key, sizeof(key), "card-%d-%d", round, rank);
    snprintf(val, sizeof(val), "value-%d-%d", round, rank);
    CHECK(PMI2_KVS_Put(key, val) == PMI2_SUCCESS, "put %s", key);
    CHECK(PMI2_KVS_Fence() == PMI2_SUCCESS, "fence %d", round);
}

static void get_all(int round)
{
    for (int r = 0; r < size; r++) {
        char key[64], want[64], got[256];
        int len = 0;

        snprintf(key, sizeof(key), "card-%d-%d", round, r);
        snprintf(want, sizeof(want), "value-%d-%d", round, r);
        CHECK(PMI2_KVS_Get(jobid, PMI2_ID_NULL, key, got, sizeof(got), &len) == PMI2_SUCCESS,
              "get %s", key);
        CHECK(strcmp(got, want) == 0, "get %s: '%s', want '%s'", key, got, want);
    }
}

/* Every way a process of the user could shrink or change a file: counts
 * the ones that worked. */
static int attack(const char *path)
{
    int fd = open(path, O_RDWR), worked = 0;
    void *m;

    if (fd < 0) /* read-only is the first line of defence, and enough */
        return 0;
    if (pwrite(fd, "XXXXXXXX", 8, 0) == 8)
        worked++, fprintf(stderr, "shm_attack: wrote into %s\n", path);
    if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 1 << 20) == 0)
        worked++, fprintf(stderr, "shm_attack: punched a hole into %s\n", path);
    m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m != MAP_FAILED) {
        worked++, fprintf(stderr, "shm_attack: mapped %s for writing\n", path);
        munmap(m, 4096);
    }
    /* last, so the file stays empty: every page of a mapping is cut off */
    if (truncate(path, 0) == 0)
        worked++, fprintf(stderr, "shm_attack: truncated %s by name\n", path);
    if (ftruncate(fd, 0) == 0)
        worked++, fprintf(stderr, "shm_attack: truncated %s\n", path);
    close(fd);
    return worked;
}

/* The files PMIGATE_SHM names ("SEGMENT:TABLE", or one path). */
static int attack_all(void)
{
    char spec[4096], *save = NULL;
    const char *env = getenv("PMIGATE_SHM");
    int worked = 0, files = 0;

    CHECK(env != NULL && *env, "no PMIGATE_SHM: pmigate offered no segment");
    snprintf(spec, sizeof(spec), "%s", env);
    for (char *p = strtok_r(spec, ":", &save); p != NULL; p = strtok_r(NULL, ":", &save), files++)
        worked += attack(p);
    /* an older layout: the table beside the segment in its directory */
    if (files == 1) {
        char table[4200];

        snprintf(table, sizeof(table), "%.*s/kvs.commits", (int)(strrchr(spec, '/') - spec),
                 spec);
        worked += attack(table);
    }
    return worked;
}

static void wait_for(const char *path)
{
    struct timespec ms = { 0, 1000000 };

    for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++)
        nanosleep(&ms, NULL);
    CHECK(access(path, F_OK) == 0, "rank 0 never said it was done");
}

int main(int argc, char **argv)
{
    int spawned, appnum, worked = 0;
    char done[4096];

    CHECK(argc == 2, "usage: shm_attack DIR");
    CHECK(PMI2_Init(&spawned, &size, &rank, &appnum) == PMI2_SUCCESS, "init");
    CHECK(PMI2_Job_GetId(jobid, sizeof(jobid)) == PMI2_SUCCESS, "job id");
    snprintf(done, sizeof(done), "%s/attacked", argv[1]);
    put_fence(1);
    if (rank == 0) {
        worked = attack_all();
        close(open(done, O_CREAT | O_WRONLY, 0600));
    } else {
        wait_for(done);
    }
    get_all(1); /* from the segment mapped at fence 1, after the attack */
    put_fence(2);
    get_all(2);
    get_all(1);
    CHECK(PMI2_Finalize() == PMI2_SUCCESS, "finalize");
    CHECK(worked == 0, "%d attempts to damage the segment worked", worked);
    printf("shm_attack rank %d: ok\n", rank);
    return 0;
}
