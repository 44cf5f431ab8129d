/*
 * pg_proc: what pmigate knows about the process tree under it, read from
 * /proc.  Two guarantees rest on it:
 *   - a PMI_PORT connection may speak for rank R only if the process that
 *     connected is R's process or one of its descendants (SO_PEERCRED gives
 *     the pid; the parent chain proves the kinship).  Unlike a token in the
 *     rank's environment, which any process of the same user can read in
 *     /proc/PID/environ, kinship cannot be copied, and it needs nothing
 *     from the client, so unmodified clients keep working;
 *   - nothing the ranks start outlives the job: pmigate is the job's child
 *     subreaper (orphans of the ranks are re-parented to it, setsid or not)
 *     and, at the end, kills every process whose parent chain leads to it.
 *
 * Pure reads of /proc plus kill(); no state.
 */
#ifndef PG_PROC_H
#define PG_PROC_H

#include <sys/types.h>

/* pid's parent, or -1 when pid is gone or /proc cannot tell. */
pid_t pg_proc_parent(pid_t pid);

/* Of the pids in ancestors[0..n) (0 entries are skipped), the index of the
 * one that pid is or descends from, nearest first; -1 when none is on its
 * parent chain (or pid is gone).  The walk stops at init and at `stop` (the
 * gateway: a process re-parented to the subreaper belongs to no rank). */
int pg_proc_ancestor_among(pid_t pid, const pid_t *ancestors, int n, pid_t stop);

/* Makes the calling process the child subreaper of everything it starts.
 * 0, or -1 with errno. */
int pg_proc_become_subreaper(void);

/* Sends signo to every live process that descends from the calling
 * process, setsid or not (zombies are skipped: they are dead, only to be
 * reaped), but `spare` (0: none; the keeper, which starts nothing).
 * signo 0 counts them.  Returns how many were signalled. */
int pg_proc_signal_descendants(int signo, pid_t spare);

#endif
