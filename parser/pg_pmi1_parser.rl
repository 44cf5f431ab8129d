/*
 * pg_pmi1_parser: the ragel machines for PMI-1, one for a single line
 * ("cmd=name key=value ...") and one for an mcmd block ("mcmd=spawn\n
 * key=value\n..."); the C this generates is never committed (make builds
 * it, make dist ships it).  Grammar: docs/wire-protocol.md, "PMI-1 lines"
 * and "Spawn blocks".
 */
#include "parser/pg_parse_internal.h"

%%{
machine pg_pmi1_line;
include pg_common "pg_common.rl";

action token_end { pg_parse_token_pmi1(&ps, p); }

# Keys stop at ' ' and '='; values at ' ' only, so "value=x=y" keeps "x=y".
key = (any - [ =\n\0])+ >key_start %key_end;
value = (any - [ \n\0])*;
token = key ('=' @val_start value)?;
name = ((pmi1_name_char+ >name_start) | pmi1_cmd_name) %name_end;

main := 'cmd=' name (' '+ token %token_end)* ' '*;
}%%

%% write data noerror noentry;

int pg_parse_pmi1(char *line, size_t len, pg_msg_t *msg)
{
    if (len > 0 && line[len - 1] == '\n')
        len--;
    pg_parse_t ps;
    pg_parse_begin(&ps, msg, PG_PROTO_PMI1, line, len);
    if (len >= PG_PMI1_LINE_MAX)
        return pg_parse_refuse(&ps, PG_WIRE_ELINE_TOO_LONG, "line longer than the framer allows");
    char *p = line, *pe = line + len, *eof = pe;
    int cs;
    %% write init;
    %% write exec;
    return pg_parse_finish_pmi1(&ps, cs >= pg_pmi1_line_first_final, p);
}

%%{
machine pg_pmi1_mcmd;
include pg_common "pg_common.rl";

action line_end { pg_parse_token_mcmd(&ps, p); }

# In a block the separator is the newline: a value runs to the end of its
# line and may hold spaces, '=' and tabs.
key = (any - [=\n\0])+ >key_start %key_end;
line = key '=' @val_start (any - [\n\0])* %line_end '\n';
name = ((pmi1_name_char+ >name_start) | pmi1_cmd_name) %name_end;

main := 'mcmd=' name '\n' line* ('endcmd' '\n'?)?;
}%%

%% write data noerror noentry;

int pg_parse_pmi1_mcmd(char *block, size_t len, pg_msg_t *msg)
{
    pg_parse_t ps;
    pg_parse_begin(&ps, msg, PG_PROTO_PMI1, block, len);
    if (len >= PG_PMI1_MCMD_MAX)
        return pg_parse_refuse(&ps, PG_WIRE_EMCMD_TOO_LONG, "block longer than the framer allows");
    char *p = block, *pe = block + len, *eof = pe;
    int cs;
    (void)eof; /* this machine has no end-of-input actions */
    %% write init;
    %% write exec;
    return pg_parse_finish_mcmd(&ps, cs >= pg_pmi1_mcmd_first_final, p);
}
