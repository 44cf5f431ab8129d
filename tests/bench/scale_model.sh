#!/usr/bin/env bash
# scale_model.sh: a model, not a measurement.  What one collecting fence
# over K nodes costs on the wire -- fence time and bytes each node sends --
# for pmigate's proxies (the old star through node 0, the overlay's Bruck
# allgather), Slurm's pmix plugin (its tree and its ring) and PRRTE (its
# radix tree), at sizes no machine of the project has.  The assumptions and
# the formulas are in docs/performance.md, "Across 1 000 and 10 000 nodes:
# a model"; this script is their arithmetic, so the table there can be
# made again.  Needs bash and awk only: no build.
#
#   bash tests/bench/scale_model.sh      (or: ./dev bench scale_model)
#
# Knobs (environment):
#   MODEL_NODES    node counts K                      (1000 10000)
#   MODEL_BYTES    bytes each node adds to the fence  (12800 1024000:
#                  64 ranks x 200 B, 64 ranks x 16 kB)
#   MODEL_GBITS    link bandwidth, Gbit/s             (100)
#   MODEL_ALPHA_US cost of one message, us            (10)
#   MODEL_MAC_GBS  frame-tag (GMAC) rate of one core, GB/s (7.4)
#   MODEL_SYNC_BYTES  what each proxy puts in the host's fence (200)
set -euo pipefail

nodes=${MODEL_NODES:-1000 10000}
sizes=${MODEL_BYTES:-12800 1024000}
gbits=${MODEL_GBITS:-100}
alpha=${MODEL_ALPHA_US:-10}
mac=${MODEL_MAC_GBS:-7.4}
sync=${MODEL_SYNC_BYTES:-200}

# The program, quoted so that it may say "node's".
prog=$(cat <<'AWK'
# ceil(log2 k): the rounds of the Bruck exchange, the overlay hops
function lg(k,    s, p) {
    s = 0
    for (p = 1; p < k; s++)
        p *= 2
    return s
}
# the overlay's links of a node: i +- 2^j (mod k), j < s, each partner once
# (at 8 nodes, i + 4 and i - 4 are one node)
function overlay_links(k, s,    j, p, n, seen) {
    n = 0
    p = 1
    for (j = 0; j < s; j++) {
        if (!((p % k) in seen)) { seen[p % k] = 1; n++ }
        if (!(((k - p % k) % k) in seen)) { seen[(k - p % k) % k] = 1; n++ }
        p *= 2
    }
    return n - ((0 in seen) ? 1 : 0)
}
function fmt_bytes(b) {
    if (b >= 1e12) return sprintf("%.1f TB", b / 1e12)
    if (b >= 1e9) return sprintf("%.2f GB", b / 1e9)
    if (b >= 1e6) return sprintf("%.2f MB", b / 1e6)
    if (b >= 1e3) return sprintf("%.1f kB", b / 1e3)
    return sprintf("%d B", b)
}
function fmt_s(t) {
    if (t >= 7200) return sprintf("%.1f h", t / 3600)
    if (t >= 120) return sprintf("%.0f min", t / 60)
    if (t >= 1) return sprintf("%.2f s", t)
    if (t >= 1e-3) return sprintf("%.1f ms", t * 1e3)
    return sprintf("%.0f us", t * 1e6)
}
# One line of the table.  tags: the proxy CPU time for the frames MACs, -1
# when the design has none (the hosts authenticate no frame).
function row(k, m, name, links, steps, wire, maxb, meanb, tags,    t, tg) {
    t = wire
    tg = "-"
    if (tags >= 0) {
        tg = fmt_s(tags)
        if (tags > t)
            t = tags
    }
    printf "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k, fmt_bytes(m), name,
        links, steps, fmt_s(wire), tg, fmt_s(t), fmt_bytes(maxb), fmt_bytes(meanb)
}

# A tree fence as the hosts run it: every node sends its subtree's parts up
# to its parent once its children sent theirs (a node takes one message in
# at a time, in the order they come); the root has the whole D = k*m and
# sends all of it to each child in turn, which sends it on to its own.
# Uses the tree in nch[], ch[,], order[] (parents before children).
# Sets T (fence time), BMAX, BMEAN (bytes sent per node), DEPTH.
function tree_fence(k, m,    i, j, v, c, n, t, b, srt, subt, rdy, dn, D, per, sum, depth) {
    D = k * m
    for (i = k; i >= 1; i--) {
        v = order[i]
        subt[v] = 1
        n = nch[v]
        # children by the time their message is ready (insertion sort)
        for (j = 1; j <= n; j++)
            srt[j] = ch[v, j]
        for (j = 2; j <= n; j++) {
            c = srt[j]
            for (t = j - 1; t >= 1 && rdy[srt[t]] > rdy[c]; t--)
                srt[t + 1] = srt[t]
            srt[t + 1] = c
        }
        t = 0
        for (j = 1; j <= n; j++) {
            c = srt[j]
            subt[v] += subt[c]
            if (rdy[c] > t)
                t = rdy[c]
            t += alpha + subt[c] * m / beta
        }
        rdy[v] = t
    }
    per = alpha + D / beta
    T = 0
    sum = 0
    BMAX = 0
    depth[order[1]] = 0
    DEPTH = 0
    for (i = 1; i <= k; i++) {
        v = order[i]
        if (i == 1)
            dn[v] = rdy[v]
        if (dn[v] > T)
            T = dn[v]
        for (j = 1; j <= nch[v]; j++) {
            c = ch[v, j]
            dn[c] = dn[v] + j * per
            depth[c] = depth[v] + 1
            if (depth[c] > DEPTH)
                DEPTH = depth[c]
        }
        b = nch[v] * D + (i == 1 ? 0 : subt[v] * m)
        sum += b
        if (b > BMAX)
            BMAX = b
    }
    BMEAN = sum / k
}

# Slurm's reverse tree (src/common/reverse_tree.c in Slurm): ranks in
# preorder, a node of sub-depth d has up to w children spaced by
# (1 + w + ... + w^d) / w, its subtree being the ranks that follow it.
function gs(w, d,    s, p, i) {
    s = 0
    p = 1
    for (i = 0; i <= d; i++) {
        s += p
        p *= w
    }
    return s
}
function slurm_tree(k, w,    x, i, p, maxd, head, tail, v, c, dist, n, sd) {
    if (w > k) {
        nch[0] = k - 1
        for (i = 1; i < k; i++) {
            ch[0, i] = i
            nch[i] = 0
        }
        order[1] = 0
        for (i = 1; i < k; i++)
            order[i + 1] = i
        return
    }
    # the depth as Slurm reckons it (its dep())
    x = 0
    p = w
    for (i = 1; x < k - 1; i++) {
        x += p
        p *= w
    }
    maxd = i - 1
    head = 1
    tail = 1
    order[1] = 0
    sd[0] = maxd
    while (head <= tail) {
        v = order[head++]
        nch[v] = 0
        if (sd[v] == 0)
            continue
        dist = int(gs(w, sd[v]) / w)  # integer division, as in C
        c = v + 1
        for (n = 0; n < w && c < k; n++) {
            ch[v, n + 1] = c
            sd[c] = sd[v] - 1
            order[++tail] = c
            c += dist
        }
        nch[v] = n
    }
}

# PRRTE's radix tree (its routing tree): rank 0 the root; a node at
# depth d has the children r + W, r + 2W, ... r + radix*W, W = radix^d.
function radix_tree(k, r,    head, tail, v, W, c, n, dv) {
    head = 1
    tail = 1
    order[1] = 0
    dv[0] = 0
    while (head <= tail) {
        v = order[head++]
        W = 1
        for (n = 0; n < dv[v]; n++)
            W *= r
        nch[v] = 0
        for (n = 1; n <= r; n++) {
            c = v + n * W
            if (c >= k)
                break
            ch[v, n] = c
            dv[c] = dv[v] + 1
            order[++tail] = c
        }
        nch[v] = n - 1
    }
}

BEGIN {
    beta = gbits * 1e9 / 8          # bytes per second
    alpha = alpha_us * 1e-6
    h = mac_gbs * 1e9               # tagged bytes per second, one core
    tag_fixed = 0.4e-6              # one small frame's tag (measured: 0.37 us)
    frame_max = 1048576             # a fence frame carries at most 1 MiB
    nk = split(nodes, K, " ")
    nm = split(sizes, M, " ")
    printf "# one collecting fence over K nodes: %s Gbit/s links, %s us a message, frame tags %s GB/s\n", gbits, alpha_us, mac_gbs
    printf "# (a model: docs/performance.md, \"Across 1 000 and 10 000 nodes: a model\")\n\n"
    print "| K | per node | design | links per node | steps | wire | tags (CPU) | fence | sent per node, max | mean |"
    print "|---|---|---|---|---|---|---|---|---|---|"
    for (a = 1; a <= nk; a++) {
        k = K[a] + 0
        s = lg(k)
        for (b = 1; b <= nm; b++) {
            m = M[b] + 0
            fr = int((m + frame_max - 1) / frame_max)
            if (fr < 1)
                fr = 1
            # pmigate today: a star; node 0 takes every part in and sends
            # each node all the parts but its own
            wire = 2 * (k - 1) * alpha + k * (k - 1) * m / beta
            hub_out = (k - 1) * (k - 1) * m
            hub_in = (k - 1) * m
            tags = (hub_out + hub_in) / h + ((k - 1) * (k - 1) + (k - 1)) * fr * tag_fixed
            row(k, m, "pmigate, star (today)", (k - 1) " at node 0", 2, wire, hub_out, (hub_out + hub_in) / k, tags)
            # pmigate: Bruck over the overlay (i + 2^j); each node sends
            # and receives K-1 parts
            wire = s * alpha + (k - 1) * m / beta
            tags = 2 * (k - 1) * m / h + 2 * (k - 1) * fr * tag_fixed
            row(k, m, "pmigate, overlay (Bruck)", overlay_links(k, s), s, wire, (k - 1) * m, (k - 1) * m, tags)
            # Slurm: the tree at TreeWidth 16 (default since 23.02.5) and 50
            split("16 50", W, " ")
            for (wi = 1; wi <= 2; wi++) {
                delete nch; delete ch; delete order
                slurm_tree(k, W[wi])
                tree_fence(k, m)
                row(k, m, "Slurm tree, TreeWidth " W[wi], "<= " (W[wi] + 1), 2 * DEPTH, T, BMAX, BMEAN, -1)
            }
            # Slurm: the ring; K-1 steps of one part each
            wire = (k - 1) * (alpha + m / beta)
            row(k, m, "Slurm ring", 2, k - 1, wire, (k - 1) * m, (k - 1) * m, -1)
            # PRRTE: the radix tree, radix 64
            delete nch; delete ch; delete order
            radix_tree(k, 64)
            tree_fence(k, m)
            row(k, m, "PRRTE radix 64", "<= 65", 2 * DEPTH, T, BMAX, BMEAN, -1)
        }
    }
    # What a whole-job fence of pmigate also waits for: the host's fence
    # (the synchronisation), whose data is each proxy's start-up card.
    printf "\n# the host's own fence under pmigate: each proxy puts %d B (its card)\n\n", sync
    print "| K | host fence | time |"
    print "|---|---|---|"
    for (a = 1; a <= nk; a++) {
        k = K[a] + 0
        m = sync
        printf "| %d | Slurm ring (default: data to collect) | %s |\n", k, fmt_s((k - 1) * (alpha + m / beta))
        delete nch; delete ch; delete order
        slurm_tree(k, 16)
        tree_fence(k, m)
        printf "| %d | Slurm tree, TreeWidth 16 (PMIxCollFence=tree) | %s |\n", k, fmt_s(T)
        delete nch; delete ch; delete order
        radix_tree(k, 64)
        tree_fence(k, m)
        printf "| %d | PRRTE radix 64 | %s |\n", k, fmt_s(T)
    }
}
AWK
)
awk -v nodes="$nodes" -v sizes="$sizes" -v gbits="$gbits" -v alpha_us="$alpha" \
    -v mac_gbs="$mac" -v sync="$sync" "$prog"
