/*
 * pg_decode: prints a recorded PMI session (the tests/captures format)
 * message by message as pmigate's codec sees it: rank, direction, protocol,
 * the command enum and the tokens.  It runs the real framer and parsers, so
 * it is also a quick way to see what pmigate makes of odd bytes; until the
 * gateway exists it is what ./dev demo shows.
 *
 * Usage: pg_decode FILE...   ("-" reads stdin).  Exit status 0 when every
 * line decoded cleanly, 1 when some did not (each one is reported), 2 on
 * usage or I/O errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/pg_parse.h"
#include "tests/tools/pg_capture.h"
#include "wire/pg_escape.h"
#include "wire/pg_frame.h"

/* Prints bytes escaped by the capture files' own rule (wire/pg_escape.h). */
static void pg_print_escaped(const char *p, size_t n)
{
    char *out = malloc(pg_escaped_max(n));
    if (out == NULL) {
        fputs("<out of memory>", stdout);
        return;
    }
    pg_escape(p, n, out);
    fputs(out, stdout);
    free(out);
}

static void pg_print_msg(const pg_capture_msg_t *m, const pg_msg_t *msg, int rc)
{
    printf("%4d %c %-5s %-32s", m->rank, m->dir, pg_proto_name(msg->proto),
           pg_cmd_enum_name(msg->cmd));
    if (msg->cmd == PG_CMD_UNKNOWN) {
        fputs(" name=", stdout);
        pg_print_escaped(msg->name.ptr, msg->name.len);
    }
    for (uint32_t i = 0; i < msg->ntokens; i++) {
        const pg_token_t *t = &msg->tokens[i];
        putchar(' ');
        pg_print_escaped(t->key.ptr, t->key.len);
        if (t->val.ptr != NULL) {
            putchar('=');
            pg_print_escaped(t->val.ptr, t->val.len);
        }
    }
    if (rc != PG_WIRE_OK)
        printf("   !! %s: %s", pg_wire_strerror(rc), msg->err_reason ? msg->err_reason : "");
    putchar('\n');
}

/* Frames and parses every message in one capture line; 0 if all clean. */
static int pg_decode_msg(const pg_capture_msg_t *m, pg_msg_t *msg, unsigned long *count)
{
    size_t off = 0;
    int bad = 0;
    while (off < m->len) {
        pg_frame_t f;
        int rc = pg_frame_next(m->bytes + off, m->len - off, &f);
        if (rc != PG_WIRE_OK) {
            printf("%4d %c line %u: cannot frame: %s\n", m->rank, m->dir, m->line,
                   pg_wire_strerror(rc));
            return 1;
        }
        rc = pg_parse_frame(m->bytes + off, &f, msg);
        pg_print_msg(m, msg, rc);
        bad |= rc != PG_WIRE_OK;
        if (f.proto != (m->proto == 2 ? PG_PROTO_PMI2 : PG_PROTO_PMI1)) {
            printf("     line %u: recorded as PMI-%d but framed as %s\n", m->line, m->proto,
                   pg_proto_name(f.proto));
            bad = 1;
        }
        (*count)++;
        off += f.consumed;
    }
    return bad;
}

static int pg_decode_file(const char *path, FILE *in, pg_msg_t *msg)
{
    char *line = NULL;
    size_t cap = 0;
    unsigned lineno = 0;
    unsigned long count = 0, bad = 0;
    printf("== %s\n", path);
    while (getline(&line, &cap, in) >= 0) {
        pg_capture_msg_t m;
        const char *why = NULL;
        lineno++;
        int got = pg_capture_parse_line(line, &m, &why);
        if (got == 0)
            continue;
        if (got < 0) {
            printf("     line %u: not a capture line: %s\n", lineno, why);
            bad++;
            continue;
        }
        m.line = lineno;
        bad += (unsigned long)pg_decode_msg(&m, msg, &count);
    }
    free(line);
    printf("== %lu messages, %lu with problems\n", count, bad);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CAPTURE-FILE...   (- for stdin)\n", argv[0]);
        return 2;
    }
    int status = 0;
    pg_msg_t msg;
    pg_msg_init(&msg);
    for (int i = 1; i < argc; i++) {
        int use_stdin = strcmp(argv[i], "-") == 0;
        FILE *in = use_stdin ? stdin : fopen(argv[i], "r");
        if (in == NULL) {
            perror(argv[i]);
            status = 2;
            continue;
        }
        if (pg_decode_file(argv[i], in, &msg) != 0 && status == 0)
            status = 1;
        if (!use_stdin)
            fclose(in);
    }
    pg_msg_release(&msg);
    return status;
}
