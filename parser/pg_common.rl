# pg_common.rl: what the PMI-1 and PMI-2 machines share: the actions that
# fill the pg_parse_t scratch state `ps` (parser/pg_parse_internal.h) and
# the command-name machines built from wire/pg_cmd.def.  Actions only record
# positions and hand complete tokens to C; rules about limits, quirks and
# errors live in parser/pg_parse.c, where they can be read and tested.
%%{
machine pg_common;

include pg_cmds "pg_cmds.rl";

action name_start { ps.name = p; }
action name_end { pg_parse_name_end(&ps, p); }
action key_start { ps.key = p; ps.val = NULL; }
action key_end { ps.key_len = (size_t)(p - ps.key); }
action val_start { ps.val = p + 1; }

# A command name: any run of allowed bytes, where the known names (a subset)
# also store their enum when the name ends.
pmi1_name_char = any - [ \n\0];
pmi2_name_char = any - [;\0];
}%%
