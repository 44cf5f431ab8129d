/*
 * pg_status_cli: `pmigate status [--watch] [JOB]`, the client of the status
 * endpoint (pg_statusd.h).  It finds this user's running pmigate jobs on
 * this node -- the live job directories under $TMPDIR (pg_jobdir_live),
 * or the one JOB names by its directory or by pmigate's pid -- asks each
 * for its report and prints it; --watch asks again every interval.  It
 * only reads: the endpoint answers nothing but the report.
 */
#ifndef PG_STATUS_CLI_H
#define PG_STATUS_CLI_H

#include <stddef.h>

/* Seconds a job may take to answer before it is reported as not answering. */
#define PG_STATUS_ANSWER_S 5

typedef struct pg_status_opts {
    const char *job;   /* a directory or a pid; NULL: every job */
    int watch;
    double interval;   /* --watch's period, seconds */
    int help;
} pg_status_opts_t;

/* Parses the arguments after `status`.  0, or -1 with a message in err. */
int pg_status_parse(int argc, char **argv, pg_status_opts_t *opts, char *err, size_t errlen);

extern const char pg_status_usage[];

/* Asks the job whose directory is `dir`: 0 with *report (malloc'd, the text
 * after the header) and *pid, or -1 with a one-line reason in err. */
int pg_status_query(const char *dir, char **report, long *pid, char *err, size_t errlen);

/* The command: returns the exit status (0; 1 when no job was found or a
 * named job could not be asked; 2 for bad usage). */
int pg_status_main(int argc, char **argv);

#endif
