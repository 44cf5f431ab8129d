/*
 * hh_cases: the PMI-1 and PMI-2 handlers' conversations, one table (see
 * hh_table.h), one case per rule of docs/wire-protocol.md ("PMI-1
 * commands", "PMI-2 commands", "Semantics") that MPICH's clients, Slurm's
 * libpmi2 or a user rely on.  A case of both dialects is a behaviour they
 * share: its "@" rows are written once, its requests once per dialect.
 */
#include "tests/handlers/hh_cases.h"

#define END { 0, 0, NULL, NULL }
#define ROWS(...) ((const hh_row_t[]){ __VA_ARGS__, END })

/* MPICH 4.0's init line for PMI-1 and the PMI-2 switch (both PMI-1 lines). */
#define INIT1 "cmd=init pmi_version=1 pmi_subversion=1\n"
#define INIT1_OK "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
#define INIT2 "cmd=init pmi_version=2 pmi_subversion=0\n"
#define INIT2_OK "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n"
#define PUT1_OK "cmd=put_result rc=0 msg=success\n"
#define PUT2_OK "cmd=kvs-put-response;rc=0;"
#define BARRIER_OK "cmd=barrier_out rc=0\n"
#define FENCE_OK "cmd=kvs-fence-response;rc=0;"
#define GETID_OK "cmd=job-getid-response;rc=0;jobid=$KVS;"

/* The two blocks MPICH 4.0 sent hydra (tests/captures/doc.cap; argcnt after
 * the args, preputs repeated), with an argument holding '=' and a tab. */
#define SPAWN_BLOCK1                                                                               \
    "mcmd=spawn\nnprocs=2\nexecname=python3\ntotspawns=2\nspawnssofar=1\narg1=probe6.py\n"        \
    "arg2=v1\narg3=a b c\narg4=k=v\tx\nargcnt=4\npreput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\n" \
    "preput_val_0=tag#0$port#99$\ninfo_num=1\ninfo_key_0=wdir\ninfo_val_0=/scratch/job\nendcmd\n"
#define SPAWN_BLOCK2                                                                               \
    "mcmd=spawn\nnprocs=1\nexecname=python3\ntotspawns=2\nspawnssofar=2\narg1=probe6.py\n"        \
    "arg2=v1\nargcnt=2\npreput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\n"                       \
    "preput_val_0=tag#0$port#99$\ninfo_num=0\nendcmd\n"

/* ---- handshake --------------------------------------------------------------- */

static const hh_case_t handshake_cases[] = {
    /* PMI-1's init 1.1; PMI-2's switch from a PMI-1 line, then fullinit
     * (pmijobid as Slurm sends it) answered with the job's facts */
    { "the handshake is answered in the version asked for", HBOTH, 2, 1, HH_BARE, ROWS(
        { H1, 0, INIT1, INIT1_OK },
        { H2_RAW, 1, INIT2, INIT2_OK },
        { H2_LEFT, 1, "cmd=fullinit;pmijobid=7.0;pmirank=1;threaded=FALSE;",
          "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=1;size=2;appnum=0;"
          "debugged=FALSE;pmiverbose=FALSE;" }) },
    /* pmigate's libraries say they read the key segment; MPICH's and
     * Slurm's say nothing, and the gateway then writes none
     * (docs/shm-segment.md) */
    { "the handshake tells the host who reads the segment", HBOTH, 2, 1, HH_BARE, ROWS(
        { H1, 0, "cmd=init pmi_version=1 pmi_subversion=1 pmigate_shm=yes\n", INIT1_OK },
        { H1, 1, INIT1, INIT1_OK },
        { H2_RAW, 0, INIT2, INIT2_OK },
        { H2_RAW, 1, INIT2, INIT2_OK },
        { H2, 0, "cmd=fullinit;pmirank=0;threaded=FALSE;pmigate_shm=yes;",
          "cmd=fullinit-response;rc=0;*" },
        { H2_LEFT, 1, "cmd=fullinit;pmijobid=7.0;pmirank=1;threaded=FALSE;",
          "cmd=fullinit-response;rc=0;*" },
        { HBOTH, 0, "@segment", "yes" },
        { HBOTH, 1, "@segment", "no" }) },
    { "init 1.0 is served as 1.1", H1, 1, 1, HH_BARE, ROWS(
        { H1, 0, "cmd=init pmi_version=1 pmi_subversion=0\n", INIT1_OK }) },
    /* a missing version crashes hydra's proxy: here it is an rc */
    { "unsupported version: rc!=0, connection stays", H1, 1, 1, HH_BARE, ROWS(
        { H1, 0, "cmd=init pmi_version=3 pmi_subversion=0\n",
          "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n" },
        { H1, 0, "cmd=init pmi_subversion=1\n",
          "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n" },
        { H1, 0, "cmd=get_maxes\n", "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n" }) },
    /* a PMI_PORT client names its rank: initack's pmiid, fullinit's srcid */
    { "a port client's handshake names its rank", HBOTH, 4, 1, HH_BARE, ROWS(
        { HBOTH, 4, "@port", NULL },
        { H1, 4, "cmd=initack pmiid=2\n", "cmd=initack\n" },
        { H1, 4, NULL, "cmd=set size=4\n" },
        { H1, 4, NULL, "cmd=set rank=2\n" },
        { H1, 4, NULL, "cmd=set debug=0\n" },
        { H1, 4, INIT1, INIT1_OK },
        { H2_RAW, 4, INIT2, INIT2_OK },
        { H2_LEFT, 4, "cmd=fullinit;srcid=3;threaded=FALSE;",
          "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=3;size=4;*" }) },
    { "fullinit without keys takes the fd's rank", H2, 3, 1, HH_BARE, ROWS(
        { H2_RAW, 2, INIT2, INIT2_OK },
        { H2, 2, "cmd=fullinit;",
          "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=2;size=3;appnum=0;"
          "debugged=FALSE;pmiverbose=FALSE;" }) },
    /* MPICH 3.3-4.0 simple2pmi: the length claims 6 more bytes, then junk */
    { "left/right padded lengths, off-by-6 junk", H2, 1, 1, HH_READY, ROWS(
        { H2, 0, "cmd=job-getid;", GETID_OK },
        { H2_LEFT, 0, "cmd=job-getid;", GETID_OK },
        { H2_RAW, 0, "20    cmd=job-getid;\x01\x7f\xffZ=\x02", GETID_OK },
        { H2, 0, "cmd=job-getid;", GETID_OK }) },
    { NULL, 0, 0, 0, 0, NULL },
};

/* ---- job facts, key-value space, barrier and fence ---------------------------- */

static const hh_case_t kvs_cases[] = {
    { "maxes 256/64/1024; appnum, kvsname; universe size = job size", H1, 4, 1, HH_READY, ROWS(
        { H1, 0, "cmd=get_maxes\n", "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n" },
        { H1, 3, "cmd=get_appnum\n", "cmd=appnum rc=0 appnum=0\n" },
        { H1, 3, "cmd=get_my_kvsname\n", "cmd=my_kvsname rc=0 kvsname=$KVS\n" },
        { H1, 3, "cmd=get_universe_size\n", "cmd=universe_size rc=0 size=4\n" }) },
    /* PMI-1's get and PMI-2's info-getjobattr read the same job facts */
    { "job attributes: PMI_process_mapping, universeSize", HBOTH, 4, 1, HH_READY, ROWS(
        { H1, 1, "cmd=get kvsname=$KVS key=PMI_process_mapping\n",
          "cmd=get_result rc=0 msg=success value=(vector,(0,1,4))\n" },
        { H1, 1, "cmd=get kvsname=$KVS key=universeSize\n", "cmd=get_result rc=0 msg=success value=4\n" },
        { H1, 1, "cmd=get kvsname=$KVS key=PMI_dead_processes\n", "cmd=get_result rc=0 msg=success value=\n" },
        { H2_LEFT, 0, "cmd=info-getjobattr;key=PMI_process_mapping;",
          "cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,4));" },
        { H2_LEFT, 0, "cmd=info-getjobattr;key=universeSize;",
          "cmd=info-getjobattr-response;rc=0;found=TRUE;value=4;" },
        { H2_LEFT, 0, "cmd=info-getjobattr;key=PMI_no_such_attr;",
          "cmd=info-getjobattr-response;rc=0;found=FALSE;" }) },
    /* value= last: MPICH reads the value up to the end of the line */
    { "own put visible at once, others' after the barrier", H1, 2, 1, HH_READY, ROWS(
        { H1, 0, "cmd=put kvsname=$KVS key=key0 value=got-key0\n", PUT1_OK },
        { H1, 0, "cmd=get kvsname=$KVS key=key0\n", "cmd=get_result rc=0 msg=success value=got-key0\n" },
        { H1, 0, "cmd=barrier_in\n", NULL },
        { H1, 1, "cmd=barrier_in\n", NULL },
        { H1, 0, NULL, BARRIER_OK },
        { H1, 1, NULL, BARRIER_OK },
        { H1, 1, "cmd=get kvsname=$KVS key=key0\n", "cmd=get_result rc=0 msg=success value=got-key0\n" }) },
    { "put twice keeps the last; empty and '=' values", H1, 1, 1, HH_READY, ROWS(
        { H1, 0, "cmd=put kvsname=$KVS key=k value=first\n", PUT1_OK },
        { H1, 0, "cmd=put kvsname=$KVS key=k value=second\n", PUT1_OK },
        { H1, 0, "cmd=put kvsname=$KVS key=empty value=\n", PUT1_OK },
        { H1, 0, "cmd=put kvsname=$KVS key=eq value=x=y\n", PUT1_OK },
        { H1, 0, "cmd=get kvsname=$KVS key=k\n", "cmd=get_result rc=0 msg=success value=second\n" },
        { H1, 0, "cmd=get kvsname=$KVS key=empty\n", "cmd=get_result rc=0 msg=success value=\n" },
        { H1, 0, "cmd=get kvsname=$KVS key=eq\n", "cmd=get_result rc=0 msg=success value=x=y\n" }) },
    { "get of a missing key fails at once, value= last", H1, 2, 1, HH_READY, ROWS(
        { H1, 0, "cmd=get kvsname=$KVS key=nokey\n",
          "cmd=get_result rc=-1 msg=key_nokey_not_found value=unknown\n" }) },
    { "getbyidx: no_more_keyvals", H1, 1, 1, HH_READY, ROWS(
        { H1, 0, "cmd=getbyidx kvsname=x idx=0\n", "cmd=getbyidx_results rc=-1 reason=no_more_keyvals\n" }) },
    /* PMI-1's barrier and PMI-2's fence release nobody before the last */
    { "barrier / fence waits for the last rank", HBOTH, 3, 1, HH_READY, ROWS(
        { H1, 0, "cmd=barrier_in\n", NULL },
        { H1, 1, "cmd=barrier_in\n", NULL },
        { H2, 0, "cmd=kvs-fence;", NULL },
        { H2, 1, "cmd=kvs-fence;", NULL },
        { HBOTH, 0, "@quiet", NULL },
        { HBOTH, 1, "@quiet", NULL },
        { H1, 2, "cmd=barrier_in\n", NULL },
        { H2, 2, "cmd=kvs-fence;", NULL },
        { H1, 0, NULL, BARRIER_OK }, { H1, 1, NULL, BARRIER_OK }, { H1, 2, NULL, BARRIER_OK },
        { H2, 0, NULL, FENCE_OK }, { H2, 1, NULL, FENCE_OK }, { H2, 2, NULL, FENCE_OK }) },
    /* barrier_out is the very next line after a put: MPICH 4.0 expects it */
    { "no keyval_cache unless the client asks", H1, 2, 1, HH_READY, ROWS(
        { H1, 0, "cmd=put kvsname=$KVS key=a value=1\n", PUT1_OK },
        { H1, 0, "cmd=barrier_in\n", NULL },
        { H1, 1, "cmd=barrier_in\n", NULL },
        { H1, 0, NULL, BARRIER_OK },
        { H1, 1, NULL, BARRIER_OK }) },
    /* a held get (thrid 0xa1) is answered by its owner's fence */
    { "put invisible to its owner until the fence", H2, 2, 1, HH_READY, ROWS(
        { H2, 0, "cmd=kvs-put;key=k0;value=v0;", PUT2_OK },
        { H2, 0, "cmd=kvs-get;thrid=0xa1;jobid=$KVS;srcid=0;key=k0;", NULL },
        { H2, 0, "@quiet", NULL },
        { H2, 0, "cmd=kvs-fence;thrid=0xf0;", "cmd=kvs-get-response;thrid=0xa1;rc=0;found=TRUE;value=v0;" },
        { H2, 1, "cmd=kvs-fence;", NULL },
        { H2, 0, NULL, "cmd=kvs-fence-response;thrid=0xf0;rc=0;" },
        { H2, 1, NULL, FENCE_OK }) },
    { "put invisible to others until the owner's fence", H2, 2, 1, HH_READY, ROWS(
        { H2, 0, "cmd=kvs-put;key=k0;value=v0;", PUT2_OK },
        { H2, 1, "cmd=kvs-get;jobid=$KVS;srcid=0;key=k0;", NULL },
        { H2, 1, "@quiet", NULL },
        { H2, 0, "cmd=kvs-fence;", NULL },
        { H2, 1, NULL, "cmd=kvs-get-response;rc=0;found=TRUE;value=v0;" },
        { H2, 1, "cmd=kvs-fence;", NULL },
        { H2, 0, NULL, FENCE_OK },
        { H2, 1, NULL, FENCE_OK }) },
    { "missing key after a fence: found=FALSE at once", H2, 2, 1, HH_READY, ROWS(
        { H2, 0, "cmd=kvs-fence;", NULL },
        { H2, 1, "cmd=kvs-fence;", FENCE_OK },
        { H2, 0, NULL, FENCE_OK },
        { H2, 0, "cmd=kvs-get;jobid=$KVS;srcid=-1;key=-NONEXIST-KEY;",
          "cmd=kvs-get-response;rc=0;found=FALSE;" }) },
    /* alone in its job, nobody else could ever post it */
    { "missing key before any fence, alone in the job", H2, 1, 1, HH_READY, ROWS(
        { H2, 0, "cmd=kvs-get;jobid=$KVS;srcid=-1;key=nokey;", "cmd=kvs-get-response;rc=0;found=FALSE;" }) },
    /* the other rank waits in a fence only the asker can release */
    { "missing key before any fence, the other rank fencing", H2, 2, 1, HH_READY, ROWS(
        { H2, 0, "cmd=kvs-get;jobid=$KVS;srcid=-1;key=nokey;", NULL },
        { H2, 1, "cmd=kvs-fence;", NULL },
        { H2, 0, NULL, "cmd=kvs-get-response;rc=0;found=FALSE;" },
        { H2, 0, "cmd=kvs-fence;", FENCE_OK },
        { H2, 1, NULL, FENCE_OK }) },
    { "';' in values round-trips as ';;'", H2, 1, 1, HH_READY, ROWS(
        { H2, 0, "cmd=kvs-put;key=semi;value=val;;with;;semis 0;", PUT2_OK },
        { H2, 0, "cmd=kvs-fence;", FENCE_OK },
        { H2, 0, "cmd=kvs-get;jobid=$KVS;srcid=0;key=semi;",
          "cmd=kvs-get-response;rc=0;found=TRUE;value=val;;with;;semis 0;" }) },
    { "thrid echoed from any position", H2, 1, 1, HH_READY, ROWS(
        { H2, 0, "cmd=job-getid;thrid=0x7ffd3c1a2b40;",
          "cmd=job-getid-response;thrid=0x7ffd3c1a2b40;rc=0;jobid=$KVS;" },
        { H2, 0, "cmd=kvs-put;key=a;value=b;thrid=T2;", "cmd=kvs-put-response;thrid=T2;rc=0;" },
        { H2, 0, "cmd=info-getjobattr;thrid=T3;key=nosuchattr;",
          "cmd=info-getjobattr-response;thrid=T3;rc=0;found=FALSE;" },
        { H2, 0, "cmd=bogus;thrid=T4;", "cmd=bogus-response;thrid=T4;rc=14;errmsg=unsupported_command_bogus;" },
        { H2, 0, "cmd=kvs-put;thrid=T5;key=",
          "cmd=kvs-put-response;thrid=T5;rc=3;errmsg=missing_or_invalid_value;" }) },
    /* the PMI-2 design note names the operation id "opid" */
    { "opid echoed as opid", H2, 1, 1, HH_READY, ROWS(
        { H2, 0, "cmd=job-getid;opid=42;", "cmd=job-getid-response;opid=42;rc=0;jobid=$KVS;" },
        { H2, 0, "cmd=bogus;opid=43;", "cmd=bogus-response;opid=43;rc=14;errmsg=unsupported_command_bogus;" }) },
    { "node attributes: put, get, wait satisfied later", H2, 2, 1, HH_READY, ROWS(
        { H2, 0, "cmd=info-getnodeattr;key=nk;wait=FALSE;", "cmd=info-getnodeattr-response;rc=0;found=FALSE;" },
        { H2, 0, "cmd=info-getnodeattr;key=nk;wait=TRUE;", NULL },
        { H2, 0, "@quiet", NULL },
        { H2, 1, "cmd=info-putnodeattr;key=nk;value=nv1;", "cmd=info-putnodeattr-response;rc=0;" },
        { H2, 0, NULL, "cmd=info-getnodeattr-response;rc=0;found=TRUE;value=nv1;" },
        { H2, 1, "cmd=info-getnodeattr;key=nk;wait=FALSE;",
          "cmd=info-getnodeattr-response;rc=0;found=TRUE;value=nv1;" }) },
    /* rank 0 on node 0, rank 1 on node 1 */
    { "node attributes are per node", H2, 2, 2, HH_READY, ROWS(
        { H2, 0, "cmd=info-putnodeattr;key=nk;value=n0;", "cmd=info-putnodeattr-response;rc=0;" },
        { H2, 1, "cmd=info-getnodeattr;key=nk;wait=FALSE;", "cmd=info-getnodeattr-response;rc=0;found=FALSE;" }) },
    { "never-satisfiable node wait ends found=FALSE", H2, 2, 1, HH_READY, ROWS(
        { H2, 0, "cmd=info-getnodeattr;key=never;wait=TRUE;", NULL },
        { H2, 0, "@quiet", NULL },
        { H2, 1, "cmd=finalize;", "cmd=finalize-response;rc=0;" },
        { H2, 0, NULL, "cmd=info-getnodeattr-response;rc=0;found=FALSE;" }) },
    /* a threaded client keeps working in other threads while one waits:
     * both ranks waiting that way are not judged hung */
    { "threaded node waits are not judged hung", H2, 2, 1, HH_READY, ROWS(
        { H2, 0, "cmd=info-getnodeattr;thrid=0x1;key=late;wait=TRUE;", NULL },
        { H2, 1, "cmd=info-getnodeattr;thrid=0x2;key=late;wait=TRUE;", NULL },
        { H2, 0, "@quiet", NULL },
        { H2, 1, "@quiet", NULL },
        { H2, 0, "cmd=info-putnodeattr;thrid=0x3;key=late;value=here;", NULL },
        { H2, 0, NULL, "cmd=info-getnodeattr-response;thrid=0x1;rc=0;found=TRUE;value=here;" },
        { H2, 0, NULL, "cmd=info-putnodeattr-response;thrid=0x3;rc=0;" },
        { H2, 1, NULL, "cmd=info-getnodeattr-response;thrid=0x2;rc=0;found=TRUE;value=here;" }) },
    { NULL, 0, 0, 0, 0, NULL },
};

/* ---- life cycle and name service ---------------------------------------------- */

static const hh_case_t life_cases[] = {
    { "finalize is acknowledged, then the connection closes", HBOTH, 1, 1, HH_READY, ROWS(
        { H1, 0, "cmd=finalize\n", "cmd=finalize_ack rc=0\n" },
        { H2_LEFT, 0, "cmd=finalize;", "cmd=finalize-response;rc=0;" },
        { HBOTH, 0, "@closed", "clean" }) },
    /* PMI-1's form and MPICH >= 4.1's PMI-2 form: exitcode, message */
    { "abort ends the job with its exit code and no reply", HBOTH, 2, 1, HH_READY, ROWS(
        { H1, 1, "cmd=abort exitcode=7 message=abort\n", NULL },
        { H2, 1, "cmd=abort;exitcode=7;message=line one\nline two;", NULL },
        { HBOTH, 1, "@quiet", NULL },
        { HBOTH, 0, "@abort", "code=7 rank=1" }) },
    /* MPICH 4.0's and Slurm's form: isworld, msg */
    { "abort isworld=TRUE kills the job, its msg logged", H2, 2, 1, HH_READY, ROWS(
        { H2_LEFT, 1, "cmd=abort;isworld=TRUE;msg=bye;", NULL },
        { H2, 1, "@quiet", NULL },
        { H2, 1, "@abort", "code=1 rank=1" },
        { H2, 1, "@log", "*bye*" }) },
    { "abort isworld=FALSE spares the job", H2, 2, 1, HH_READY, ROWS(
        { H2, 0, "cmd=abort;isworld=FALSE;msg=only me;", NULL },
        { H2, 0, "@quiet", NULL },
        { H2, 0, "@abort", "none" }) },
    /* a mixed job: the PMIx processes hear PMIX_ERR_PROC_ABORTED from the
     * rank that aborted the job, the aborting rank itself is not told, an
     * abort for itself only (isworld=FALSE) tells no one */
    { "abort: the PMIx ranks are told", HBOTH, 3, 1, HH_READY, ROWS(
        { HBOTH, 0, "@watch", NULL },
        { HBOTH, 2, "@watch", NULL },
        { H2, 2, "cmd=abort;isworld=FALSE;msg=only me;", NULL },
        { HBOTH, 0, "@events", "" },
        { H1, 2, "cmd=abort exitcode=7 message=no_more\n", NULL },
        { H2, 2, "cmd=abort;exitcode=7;message=all of us;", NULL },
        { HBOTH, 0, "@abort", "code=7 rank=2" },
        { H1, 0, "@events", "$ABORTED source 2 $EXIT_CODE=7 $EVTEXT=no_more\n" },
        { H2, 0, "@events", "$ABORTED source 2 $EXIT_CODE=7 $EVTEXT=all of us\n" }) },
    /* publish, a duplicate refused, lookup (PMI-2 answers port= and
     * value=), unpublish, again refused, lookup refused */
    { "name service: publish, duplicate, lookup, unpublish", HBOTH, 2, 1, HH_READY, ROWS(
        { H1, 0, "cmd=publish_name service=svc port=tag#0$port#99$\n",
          "cmd=publish_result info=ok rc=0 msg=success\n" },
        { H2_LEFT, 0, "cmd=name-publish;name=svc;port=tag#0$port#99$;infokeycount=0;",
          "cmd=name-publish-response;rc=0;" },
        { H1, 1, "cmd=publish_name service=svc port=other\n",
          "cmd=publish_result info=fail rc=1 msg=key_already_present\n" },
        { H2_LEFT, 1, "cmd=name-publish;name=svc;port=other;infokeycount=0;",
          "cmd=name-publish-response;rc=1;errmsg=duplicate_service;" },
        { H1, 1, "cmd=lookup_name service=svc\n",
          "cmd=lookup_result port=tag#0$port#99$ info=ok rc=0 msg=success\n" },
        { H2_LEFT, 1, "cmd=name-lookup;name=svc;infokeycount=0;",
          "cmd=name-lookup-response;rc=0;found=TRUE;port=tag#0$port#99$;value=tag#0$port#99$;" },
        { H1, 0, "cmd=unpublish_name service=svc\n", "cmd=unpublish_result info=ok rc=0 msg=success\n" },
        { H2_LEFT, 0, "cmd=name-unpublish;name=svc;infokeycount=0;", "cmd=name-unpublish-response;rc=0;" },
        { H1, 0, "cmd=unpublish_name service=svc\n",
          "cmd=unpublish_result info=fail rc=1 msg=service_not_found\n" },
        { H2_LEFT, 0, "cmd=name-unpublish;name=svc;infokeycount=0;",
          "cmd=name-unpublish-response;rc=1;errmsg=service_not_found;" },
        { H1, 1, "cmd=lookup_name service=svc\n", "cmd=lookup_result info=fail rc=1 msg=service_not_found\n" },
        { H2_LEFT, 1, "cmd=name-lookup;name=svc;infokeycount=0;",
          "cmd=name-lookup-response;rc=1;errmsg=service_not_found;found=FALSE;" }) },
    { NULL, 0, 0, 0, 0, NULL },
};

/* ---- spawn ----------------------------------------------------------------------- */

static const hh_case_t spawn_cases[] = {
    /* this harness's host has no spawn op until @spawn */
    { "a host that cannot spawn refuses it; legacy commands refused", HBOTH, 1, 1, HH_READY, ROWS(
        { H1, 0, "mcmd=spawn\nnprocs=1\nexecname=a.out\ntotspawns=1\nspawnssofar=1\n"
                 "argcnt=0\npreput_num=0\ninfo_num=0\nendcmd\n",
          "cmd=spawn_result rc=-1 msg=spawn_is_not_supported_by_this_host\n" },
        { H2, 0, "cmd=spawn;ncmds=1;preputcount=0;subcmd=a.out;maxprocs=1;argc=0;infokeycount=0;",
          "cmd=spawn-response;rc=14;errmsg=spawn_is_not_supported_by_this_host;nerrs=0;" },
        { H1, 0, "cmd=create_kvs\n", "cmd=newkvs rc=-1 msg=create_kvs_is_not_supported_yet\n" },
        { H1, 0, "cmd=destroy_kvs kvsname=x\n", "cmd=kvs_destroyed rc=-1 msg=destroy_kvs_is_not_supported_yet\n" },
        { H1, 0, "cmd=get_appnum\n", "cmd=appnum rc=0 appnum=0\n" },
        /* a job this gateway does not have; one never connected */
        { H2, 0, "cmd=job-connect;jobid=other;",
          "cmd=job-connect-response;rc=3;errmsg=no_such_job_in_this_gateway;kvscopy=FALSE;" },
        { H2, 0, "cmd=job-disconnect;jobid=other;",
          "cmd=job-disconnect-response;rc=3;errmsg=not_connected_to_that_job;" },
        { H2, 0, "cmd=job-getid;", GETID_OK }) },
    /* MPICH's and Slurm's clients require kvscopy=FALSE */
    { "job-connect to a known job: rc=0 kvscopy=FALSE", H2, 1, 1, HH_READY, ROWS(
        { H2, 0, "cmd=job-connect;jobid=$KVS;", "cmd=job-connect-response;rc=0;kvscopy=FALSE;" }) },
    /* what MPICH 4.0 sent hydra (tests/captures/doc.cap): PMI-1's blocks,
     * answered after the last; PMI-2's segments in Slurm's strict order */
    { "spawn: MPICH 4.0's request makes one spawn and one reply", HBOTH, 1, 1, HH_READY, ROWS(
        { HBOTH, 0, "@spawn", NULL },
        { H1, 0, SPAWN_BLOCK1, NULL },
        { H1, 0, "@quiet", NULL },
        { H1, 0, SPAWN_BLOCK2, "cmd=spawn_result rc=0 jobid=kvs_spawned_1 errcodes=0,0,0\n" },
        { H2, 0, "cmd=spawn;thrid=7;ncmds=2;preputcount=1;ppkey0=PARENT_ROOT_PORT_NAME;"
                 "ppval0=tag#0$port#99$;subcmd=python3;maxprocs=2;argc=4;argv0=probe6.py;"
                 "argv1=v1;argv2=a b c;argv3=k=v\tx;infokeycount=1;infokey0=wdir;infoval0=/scratch/job;"
                 "subcmd=python3;maxprocs=1;argc=2;argv0=probe6.py;argv1=v1;infokeycount=0;",
          "cmd=spawn-response;thrid=7;rc=0;jobid=kvs_spawned_1;nerrs=3;errcodes=0,0,0;" },
        { HBOTH, 0, "@quiet", NULL },
        { HBOTH, 0, "@spawned", "preput PARENT_ROOT_PORT_NAME=tag#0$port#99$\n"
                                "cmd python3 x2 [probe6.py] [v1] [a b c] [k=v\tx] wdir=/scratch/job\n"
                                "cmd python3 x1 [probe6.py] [v1]\n" }) },
    /* newer MPICH writes all blocks in one buffer, preputs in block 1 only */
    { "spawn: blocks in one write, preputs once", H1, 1, 1, HH_READY, ROWS(
        { H1, 0, "@spawn", NULL },
        { H1, 0, "mcmd=spawn\nnprocs=1\nexecname=a.out\ntotspawns=2\nspawnssofar=1\nargcnt=0\n"
                 "preput_num=1\npreput_key_0=k\npreput_val_0=v\ninfo_num=0\nendcmd\n"
                 "mcmd=spawn\nnprocs=2\nexecname=b.out\ntotspawns=2\nspawnssofar=2\nargcnt=0\n"
                 "info_num=0\nendcmd\n",
          "cmd=spawn_result rc=0 jobid=kvs_spawned_1 errcodes=0,0,0\n" },
        { H1, 0, "@spawned", "preput k=v\ncmd a.out x1\ncmd b.out x2\n" }) },
    /* a failed spawn still says which processes could not start */
    { "spawn: a failure carries errcodes", HBOTH, 1, 1, HH_READY, ROWS(
        { HBOTH, 0, "@spawn", NULL },
        { H1, 0, "mcmd=spawn\nnprocs=2\nexecname=missing\ntotspawns=1\nspawnssofar=1\n"
                 "argcnt=0\npreput_num=0\ninfo_num=0\nendcmd\n",
          "cmd=spawn_result rc=-1 errcodes=2,2\n" },
        { H2, 0, "cmd=spawn;ncmds=1;preputcount=0;subcmd=missing;maxprocs=2;argc=0;",
          "cmd=spawn-response;rc=-1;errmsg=cannot_run_'missing';nerrs=2;errcodes=2,2;" }) },
    /* counts that lie, a missing argument, blocks out of order: refused
     * with a reason, nothing spawned, and the next spawn starts afresh */
    { "spawn: bad requests refused with a reason", HBOTH, 1, 1, HH_READY, ROWS(
        { HBOTH, 0, "@spawn", NULL },
        { H1, 0, "mcmd=spawn\nnprocs=1\nexecname=a.out\ntotspawns=2\nspawnssofar=2\n"
                 "argcnt=0\ninfo_num=0\nendcmd\n",
          "cmd=spawn_result rc=-1 msg=block_2_of_2_out_of_order_or_bad_preput_num\n" },
        { H1, 0, "mcmd=spawn\nnprocs=1\nexecname=a.out\ntotspawns=1\nspawnssofar=1\n"
                 "argcnt=2\narg1=x\ninfo_num=0\nendcmd\n",
          "cmd=spawn_result rc=-1 msg=missing_arg2\n" },
        { H2, 0, "cmd=spawn;ncmds=2;preputcount=0;subcmd=a;maxprocs=1;argc=0;",
          "cmd=spawn-response;rc=3;errmsg=ncmds_must_be_the_number_of_subcmd_segments_(1);nerrs=0;" },
        { H2, 0, "cmd=spawn;ncmds=1;preputcount=0;subcmd=a;maxprocs=1;argc=2;argv0=x;",
          "cmd=spawn-response;rc=3;errmsg=missing_argv1;nerrs=0;" },
        { H2, 0, "cmd=spawn;ncmds=1;subcmd=a;maxprocs=1;argc=0;",
          "cmd=spawn-response;rc=3;errmsg=missing_or_invalid_preputcount;nerrs=0;" },
        { HBOTH, 0, "@spawned", "" },
        { H1, 0, SPAWN_BLOCK1 SPAWN_BLOCK2, "cmd=spawn_result rc=0 jobid=kvs_spawned_1 errcodes=0,0,0\n" }) },
    { NULL, 0, 0, 0, 0, NULL },
};

/* ---- refusals and bad input --------------------------------------------------------- */

static const hh_case_t bad_input_cases[] = {
    /* a response name sent as a request is unknown too */
    { "unknown command: error reply, no abort, connection stays", HBOTH, 2, 1, HH_READY, ROWS(
        { H1, 0, "cmd=bogus_command foo=bar\n",
          "cmd=bogus_command_result rc=-1 msg=unsupported_command_bogus_command\n" },
        { H2, 0, "cmd=frobnicate;a=b;", "cmd=frobnicate-response;rc=14;errmsg=unsupported_command_frobnicate;" },
        { HBOTH, 0, "@abort", "none" },
        { H1, 0, "cmd=barrier_out\n", "cmd=barrier_out_result rc=-1 msg=unsupported_command_barrier_out\n" },
        { H1, 0, "cmd=barrier_in\n", NULL },
        { H1, 1, "cmd=barrier_in\n", BARRIER_OK },
        { H1, 0, NULL, BARRIER_OK },
        { H2, 0, "cmd=job-getid;", GETID_OK }) },
    { "over-long key and value refused, connection stays", HBOTH, 1, 1, HH_READY, ROWS(
        { H1, 0, "cmd=put kvsname=x key={100*k} value=v\n",
          "cmd=put_result rc=-1 msg=key_too_long_(max_64_bytes)\n" },
        { H2, 0, "cmd=kvs-put;key={100*k};value=v;", "cmd=kvs-put-response;rc=5;errmsg=key_too_long_(max_64_bytes);" },
        { H1, 0, "cmd=put kvsname=x key=k value={2000*v}\n",
          "cmd=put_result rc=-1 msg=value_too_long_(max_1024_bytes)\n" },
        { H2, 0, "cmd=kvs-put;key=k;value={2000*v};",
          "cmd=kvs-put-response;rc=7;errmsg=value_too_long_(max_1024_bytes);" },
        { H1, 0, "cmd=get kvsname=$KVS key=k\n", "cmd=get_result rc=-1 msg=key_k_not_found value=unknown\n" },
        { H2, 0, "cmd=kvs-get;key={100*k};",
          "cmd=kvs-get-response;rc=5;errmsg=key_too_long_(max_64_bytes);found=FALSE;" },
        { H1, 0, "cmd=put kvsname=$KVS key=ok value=v\n", PUT1_OK },
        { H2, 0, "cmd=kvs-put;key=k;value=fine;", PUT2_OK }) },
    /* the get_result line ("cmd=get_result rc=0 msg=success value=...\n",
     * 39 bytes around the value) must fit MPICH's 1023 bytes, so 984 bytes
     * is the most a value can have, below vallen_max (1024) */
    { "put accepts only values a get can return (<= 984 bytes)", H1, 1, 1, HH_READY, ROWS(
        { H1, 0, "cmd=put kvsname=x key=big value={1000*v}\n",
          "cmd=put_result rc=-1 msg=value_too_long_to_be_read_back_over_pmi1\n" },
        { H1, 0, "cmd=get kvsname=$KVS key=big\n", "cmd=get_result rc=-1 msg=key_big_not_found value=unknown\n" },
        { H1, 0, "cmd=put kvsname=$KVS key=edge value={984*v}\n", PUT1_OK },
        { H1, 0, "cmd=get kvsname=$KVS key=edge\n", "cmd=get_result rc=0 msg=success value={984*v}\n" },
        { H1, 0, "cmd=put kvsname=x key=over value={985*v}\n",
          "cmd=put_result rc=-1 msg=value_too_long_to_be_read_back_over_pmi1\n" }) },
    { "malformed message refused, connection stays", HBOTH, 1, 1, HH_READY, ROWS(
        { H1, 0, "cmd=put key\n", "cmd=put_result rc=-1 msg=malformed_message:_token_without_'_'_in_a_request\n" },
        { H1, 0, "cmd=get kvsname=x\n", "cmd=get_result rc=-1 msg=missing_or_invalid_key\n" },
        { H1, 0, "cmd=get_maxes\n", "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n" },
        { H2, 0, "cmd=kvs-put;novalue;key=a;",
          "cmd=kvs-put-response;rc=12;errmsg=malformed_message:_pair_without_'_'_in_a_request;" },
        { H2, 0, "cmd=kvs-put;key=a;", "cmd=kvs-put-response;rc=3;errmsg=missing_or_invalid_value;" },
        { H2, 0, "cmd=job-getid;", GETID_OK }) },
    { "pipelined and split requests are answered in order", H1, 1, 1, HH_READY, ROWS(
        { H1, 0, "cmd=get_maxes\ncmd=get_appnum\ncmd=get_universe_size\n",
          "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n" },
        { H1, 0, NULL, "cmd=appnum rc=0 appnum=0\n" },
        { H1, 0, NULL, "cmd=universe_size rc=0 size=1\n" },
        { H1, 0, "cmd=get_my", NULL },
        { H1, 0, "@quiet", NULL },
        { H1, 0, "_kvsname\n", "cmd=my_kvsname rc=0 kvsname=$KVS\n" }) },
    /* broken framing fails rank 1: the fence it was part of fails */
    { "a lost rank fails the others' fence", H2, 2, 1, HH_READY, ROWS(
        { H2, 0, "cmd=kvs-fence;", NULL },
        { H2, 0, "@quiet", NULL },
        { H2_RAW, 1, "abcdef", NULL },
        { H2, 0, NULL, "cmd=kvs-fence-response;rc=-1;errmsg=a_process_of_the_job_was_lost;" }) },
    { NULL, 0, 0, 0, 0, NULL },
};

const hh_case_t *const hh_case_tables[] = {
    handshake_cases, kvs_cases, life_cases, spawn_cases, bad_input_cases, NULL,
};
