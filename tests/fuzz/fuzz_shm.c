/*
 * fuzz_shm: libFuzzer target over the reader of the node's key segment
 * (client/pg_cl_shm.c, docs/shm-segment.md), which libpmi, libpmi2 and
 * libpmix run on memory the gateway wrote.  The gateway seals what it
 * publishes, so no process can change it under a reader; but a reader must
 * still survive whatever file PMIGATE_SHM names: another version's, a
 * damaged or truncated one.  The input is a segment image (seeds: real
 * ones from the writer, tests/fuzz/shm_seeds.c) behind one control byte:
 *   bit 7   cut the image (a truncated file): to (bits 0-6)/127 of its size
 *   bit 6   the commit table is all zeros (else all ones: every rank fresh
 *           or every rank committed, both ways)
 * The bytes go into a sealed memfd, as the writer makes them, mapped
 * through /proc/self/fd like a rank's; then every lookup a library makes:
 * PMI-1 and PMI-2 gets by rank, own value and lowest poster, with a buffer
 * that fits and one that does not, and PMIx lookups of the packed value,
 * for the keys the image names and a few others.  Nothing may crash,
 * overread (ASan), leak or hang.  Built by tests/fuzz/run.sh.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client/pg_cl_shm.h"
#include "wire/pack/pg_pack.h"
#include "wire/pg_pmix_msg.h"
#include "wire/pg_shm_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FZ_SEALS = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL };

/* A sealed memfd holding bytes[0..len), or -1. */
static int fz_sealed(const void *bytes, size_t len, int seals)
{
    int fd = memfd_create("fuzz-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd < 0)
        return -1;
    if ((len > 0 && write(fd, bytes, len) != (ssize_t)len) || fcntl(fd, F_ADD_SEALS, seals) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* PMIx: the packed value must unpack as one pmix_value_t. */
static int fz_take(const void *bytes, size_t len, void *arg)
{
    pmix_data_buffer_t view;
    pmix_value_t v;
    int rc;

    (void)arg;
    pg_pmix_msg_view(&view, bytes, len);
    memset(&v, 0, sizeof(v));
    rc = pg_pmix_unpack_one(&view, &v, PMIX_VALUE) == PMIX_SUCCESS ? 0 : -1;
    if (rc == 0)
        pg_value_destruct(&v);
    return rc;
}

static void fz_lookups(pg_cl_shm_t *r, const char *key)
{
    char small[8], big[2048];
    size_t len;

    for (int rank = -1; rank < 4; rank++) {
        for (unsigned d = PG_CL_SHM_PMI1; d <= PG_CL_SHM_PMI2; d++) {
            if (pg_cl_shm_get(r, d, key, rank, 0, small, sizeof(small), &len) == PG_CL_SHM_FOUND &&
                strlen(small) >= sizeof(small))
                abort();
            (void)pg_cl_shm_get(r, d, key, rank, rank + 1, big, sizeof(big), &len);
        }
        (void)pg_cl_shm_get_packed(r, key, rank < 0 ? PG_CL_SHM_ANY : (uint32_t)rank, fz_take, NULL);
    }
}

/* The keys the image names (its strings area, NUL-separated), bounded. */
static void fz_image_keys(pg_cl_shm_t *r, const uint8_t *img, size_t len)
{
    const pg_shm_header_t *h = (const void *)img;
    size_t at, end, n = 0;

    if (len < sizeof(*h) || h->strings_off >= len)
        return;
    end = h->strings_size < len - h->strings_off ? h->strings_off + h->strings_size : len;
    for (at = h->strings_off; at < end && n < 32; n++) {
        const char *s = (const char *)img + at;
        size_t slen = strnlen(s, end - at);

        if (slen == end - at)
            break;
        if (slen > 0 && slen <= 64)
            fz_lookups(r, s);
        at += slen + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const keys[] = { "k", "card-0", "PMI_process_mapping", "" };
    uint64_t table[1 + 4];
    uint8_t ctl, *img;
    size_t len;
    int seg, tab;
    char spec[96];
    pg_cl_shm_t *r;

    if (size < 1)
        return 0;
    ctl = data[0];
    size--;
    img = malloc(size + 1); /* aligned as a mapping is, for the header's fields */
    if (img == NULL)
        return 0;
    memcpy(img, data + 1, size);
    data = img;
    len = ctl & 0x80 ? size * (ctl & 0x7f) / 127 : size;
    memset(table, ctl & 0x40 ? 0 : 0xff, sizeof(table));
    seg = fz_sealed(data, len, FZ_SEALS);
    tab = fz_sealed(table, sizeof(table), FZ_SEALS);
    if (seg < 0 || tab < 0)
        abort(); /* memfds are the writer's ground: they must work here */
    snprintf(spec, sizeof(spec), "/proc/self/fd/%d:/proc/self/fd/%d", seg, tab);
    r = pg_cl_shm_new(spec, "ns");
    if (r == NULL)
        abort();
    for (uint64_t g = 1; g <= 3; g++) {
        if (len >= sizeof(pg_shm_header_t))
            (void)pg_cl_shm_refresh(r, ((const pg_shm_header_t *)data)->generation);
        else
            (void)pg_cl_shm_refresh(r, g);
        fz_image_keys(r, data, len);
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            fz_lookups(r, keys[k]);
        if (pg_cl_shm_generation(r) == 0)
            break;
        pg_cl_shm_drop(r);
    }
    pg_cl_shm_free(r);
    close(seg);
    close(tab);
    free(img);
    return 0;
}
