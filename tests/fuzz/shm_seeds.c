/*
 * shm_seeds OUTDIR: the starting corpus of fuzz_shm (tests/fuzz/run.sh
 * builds and runs it): segments written by the gateway's own writer
 * (gateway/io/pg_shm.c) for the namespace "ns" -- PMI cards by rank, a key
 * every rank put, typed PMIx values, long values past the PMI limits, an
 * empty generation -- each behind fuzz_shm's control byte (whole, and cut
 * to half), so the fuzzer starts from what readers really map.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gateway/io/pg_shm.h"

/* The bytes of the generation the writer published. */
static char *seg_bytes(const pg_shm_t *w, size_t *len)
{
    char path[256], *buf;
    struct stat st;
    int fd;

    snprintf(path, sizeof(path), "%.*s", (int)strcspn(pg_shm_path(w), ":"), pg_shm_path(w));
    fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0 || (buf = malloc((size_t)st.st_size + 1)) == NULL ||
        read(fd, buf, (size_t)st.st_size) != st.st_size) {
        fprintf(stderr, "shm_seeds: cannot read %s\n", path);
        exit(1);
    }
    close(fd);
    *len = (size_t)st.st_size;
    return buf;
}

static void seed_write(const char *dir, const char *name, unsigned char ctl, const char *b,
                       size_t len)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s-%02x", dir, name, ctl);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(&ctl, 1, 1, f) != 1 || fwrite(b, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "shm_seeds: cannot write %s\n", path);
        exit(1);
    }
}

static void publish(const char *dir, pg_shm_t *w, const char *name, uint64_t gen)
{
    static const unsigned char ctls[] = { 0x00, 0x40, 0x80 | 63 };
    size_t len;
    char *b;

    if (pg_shm_publish(w, gen) != 0) {
        fprintf(stderr, "shm_seeds: publish %s failed\n", name);
        exit(1);
    }
    b = seg_bytes(w, &len);
    for (size_t i = 0; i < sizeof(ctls); i++)
        seed_write(dir, name, ctls[i], b, len);
    free(b);
}

int main(int argc, char **argv)
{
    static const uint32_t typed = 7;
    char keys[4][16], vals[4][240], longval[1500];
    pg_value_t v;
    int err = 0;
    pg_shm_t *w;

    if (argc != 2) {
        fprintf(stderr, "usage: shm_seeds OUTDIR\n");
        return 2;
    }
    w = pg_shm_new("ns", 4, &err);
    if (w == NULL) {
        fprintf(stderr, "shm_seeds: no writer (%d)\n", err);
        return 1;
    }
    for (uint32_t r = 0; r < 4; r++) { /* a wire-up's cards, and a key all put */
        snprintf(keys[r], sizeof(keys[r]), "card-%u", r);
        snprintf(vals[r], sizeof(vals[r]), "card-%u-%0200u", r, r);
        v = pg_value_string(vals[r]);
        pg_shm_add(w, keys[r], r, &v);
        v = pg_value_string(keys[r]);
        pg_shm_add(w, "k", r, &v);
    }
    publish(argv[1], w, "cards", 1);
    memset(longval, 'L', sizeof(longval) - 1);
    longval[sizeof(longval) - 1] = '\0';
    v = pg_value_string(longval); /* over both PMI limits: PMIx only */
    pg_shm_add(w, "long", 1, &v);
    v = pg_value_string("has space\nand newline");
    pg_shm_add(w, "k", 2, &v);
    v = pg_value_bytes(PMIX_UINT32, &typed, sizeof(typed));
    pg_shm_add(w, "typed", 3, &v);
    v = pg_value_string("0,1,(vector)");
    pg_shm_add(w, "PMI_process_mapping", 0, &v);
    publish(argv[1], w, "mixed", 2);
    publish(argv[1], w, "empty", 3);
    pg_shm_free(w);
    return 0;
}
