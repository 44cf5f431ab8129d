# pmix_python: a rank written with OpenPMIx's Python binding (Debian's
# python3-pmix, `import pmix`), run under pmigate (tests/pmix/pmix_python.sh,
# tests/cluster/proxy_python.sh).  The binding loads libpmix.so.2, which under
# `pmigate run` and `pmigate proxy` is pmigate's.  Every rank puts
# "peer-<rank>" = "from rank <rank>", commits, fences collecting data and
# reads every peer's key (ranks of tests/pmix/pmix_peers, in C, put the
# same); the first Python rank publishes "py-service" and every Python rank
# looks it up, waiting for it.  Prints "pmix_python rank R: ok", or what was
# wrong on stderr and exits 1.
import sys

import pmix
from pmix import PMIxClient

rank = -1


def check(cond, what):
    if not cond:
        print("pmix_python rank %d: %s" % (rank, what), file=sys.stderr, flush=True)
        sys.exit(1)


def info(key, value, val_type):
    return {'key': key, 'value': value, 'val_type': val_type}


def main():
    global rank
    client = PMIxClient()
    rc, me = client.init([])
    check(rc == pmix.PMIX_SUCCESS, "init: %d" % rc)
    rank, ns = me['rank'], me['nspace']
    wildcard = {'nspace': ns, 'rank': pmix.PMIX_RANK_WILDCARD}
    rc, size = client.get(wildcard, pmix.PMIX_JOB_SIZE, [])
    check(rc == pmix.PMIX_SUCCESS, "get PMIX_JOB_SIZE: %d" % rc)
    size = size['value']
    mine = {'value': "from rank %d" % rank, 'val_type': pmix.PMIX_STRING}
    check(client.put(pmix.PMIX_GLOBAL, "peer-%d" % rank, mine) == pmix.PMIX_SUCCESS, "put")
    check(client.commit() == pmix.PMIX_SUCCESS, "commit")
    rc = client.fence([], [info(pmix.PMIX_COLLECT_DATA, True, pmix.PMIX_BOOL)])
    check(rc == pmix.PMIX_SUCCESS, "fence: %d" % rc)
    for peer in range(size):
        rc, v = client.get({'nspace': ns, 'rank': peer}, "peer-%d" % peer, [])
        check(rc == pmix.PMIX_SUCCESS and v['value'] == "from rank %d" % peer,
              "peer-%d of rank %d: rc %d, %r" % (peer, peer, rc, v))
    # the name service: the lowest Python rank publishes, every one waits for it
    python_ranks = [int(r) for r in sys.argv[1].split(',')] if len(sys.argv) > 1 else [0]
    if rank == python_ranks[0]:
        rc = client.publish([info("py-service", "port-%s" % ns, pmix.PMIX_STRING)])
        check(rc == pmix.PMIX_SUCCESS, "publish: %d" % rc)
    rc, found = client.lookup([info("py-service", None, pmix.PMIX_STRING)],
                              [info(pmix.PMIX_WAIT, 1, pmix.PMIX_INT)])
    check(rc == pmix.PMIX_SUCCESS and len(found) == 1 and found[0]['value'] == "port-%s" % ns
          and found[0]['proc']['rank'] == python_ranks[0], "lookup: rc %d, %r" % (rc, found))
    rc = client.fence([], [])
    check(rc == pmix.PMIX_SUCCESS, "last fence: %d" % rc)
    check(client.finalize([]) == pmix.PMIX_SUCCESS, "finalize")
    print("pmix_python rank %d: ok" % rank, flush=True)


main()
