/*
 * pg_pmi2_parser: the ragel machine for one PMI-2 body ("cmd=name;key=value;
 * ..."); the C this generates is never committed (make builds it, make dist
 * ships it).  Grammar: docs/wire-protocol.md, "PMI-2 messages".
 *
 * ";;" inside a value is an escaped ';' (Slurm libpmi2, MPICH <= 4.0).  The
 * machine cannot know at a ';' whether it ends the pair or starts ";;", so a
 * pair ending at ';' stays pending until the next byte decides: another ';'
 * continues the value (esc), a key byte or the end commits it.
 */
#include "parser/pg_parse_internal.h"

%%{
machine pg_pmi2;
include pg_common "pg_common.rl";

action token_end { ps.pending = true; ps.val_end = p; }
action esc { ps.pending = false; ps.escaped = true; }
action commit_pending { if (ps.pending) pg_parse_commit_pmi2(&ps); }

key = (any - [;=\0])+ >commit_pending >key_start %key_end;
value = ((any - ';') | ';;' @esc)*;
token = key ('=' @val_start value)?;
name = ((pmi2_name_char+ >name_start) | pmi2_cmd_name) %name_end;

# Every pair is terminated by ';' on the wire, but peers that leave out the
# last one are accepted.
main := 'cmd=' name (';' token %token_end)* ';'?;
}%%

%% write data noerror noentry;

int pg_parse_pmi2(char *body, size_t len, pg_msg_t *msg)
{
    pg_parse_t ps;
    pg_parse_begin(&ps, msg, PG_PROTO_PMI2, body, len);
    if (len > PG_PMI2_BODY_MAX)
        return pg_parse_refuse(&ps, PG_WIRE_ELENGTH_TOO_BIG, "body longer than the framer allows");
    char *p = body, *pe = body + len, *eof = pe;
    int cs;
    %% write init;
    %% write exec;
    return pg_parse_finish_pmi2(&ps, cs >= pg_pmi2_first_final, p);
}
