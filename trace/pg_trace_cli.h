/*
 * pg_trace_cli: the command lines of `pmigate trace show|stats|timeline`,
 * kept out of main() so the viewers can be unit tested on synthetic traces.
 */
#ifndef PG_TRACE_CLI_H
#define PG_TRACE_CLI_H

/* Runs `pmigate trace ...`; argv[0] is the word after "trace".  Returns the
 * exit status (0, 1 for an unreadable trace or output, 2 for bad usage). */
int pg_trace_main(int argc, char **argv);

extern const char pg_trace_usage[];

#endif
