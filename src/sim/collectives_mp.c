/*
 * src/sim/collectives_mp.c - collectives across processes (hierarchical
 * all_reduce, stand-in participants).
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * Collectives across processes (issue #11)
 *
 * Collectives whose groups span processes.  The core compiles an
 * executable for the launch of every process (participant_process says
 * where each logical id runs) and runs only this process's participants;
 * the others are counted as departed in the launch, and reached through
 * the core's exchange service (host->exchange, ABI 1.2).
 *
 * all_reduce is hierarchical and pipelined.  The group's members on this
 * process meet in the launch as usual.  The operand is cut in chunks of
 * SIM_XP_CHUNK bytes, numbered alike on every process.  For each chunk,
 * one local member folds it over the local members (group order) into a
 * scratch block that stays in cache, reduces that with the other
 * processes (a reduce-scatter and an all-gather between processes: each
 * process folds a 1/P piece in process order, so every process gets the
 * same bits), and streams it into every local member's output.  Memory is
 * read once and written once; the exchanges read cached bytes.  Chunks go
 * round-robin over the first S local members, S = the cores this process
 * may use (cores / processes on the host, at least 1, at most the local
 * members; XRT_SIM_XP_THREADS sets it): more threads than cores would only
 * take turns.  S may differ
 * between processes: exchanges are tagged by chunk, and each thread takes
 * its chunks in ascending order, so the lowest unfinished chunk always
 * has both sides at it and no wait can form a cycle.
 *
 * The other collectives (all_gather, reduce_scatter, all_to_all,
 * collective_permute, collective_broadcast) fetch the operands of the
 * other processes' participants (every local participant's operands go to
 * every other process in one exchange) and install them in the launch as
 * stand-in participants that have reached every phase: the collective
 * then runs unchanged, reading the stand-ins as it reads local peers, and
 * gives exactly the single-process result.  That moves every operand to
 * every process: simple and exact, not bandwidth-optimal.
 * ==================================================================== */

#define SIM_XP_MAXP 64 /* processes in one group */
/* Bytes of an all_reduce folded, exchanged and written at a time: they
 * stay in a core's L2 between the three (with the exchange's buffers). */
#define SIM_XP_CHUNK ((size_t)1 << 19)

/* ---- compile ---- */

SIM_PRIVATE xrt_status sim_xp_compile(sim_exe *e, const xrt_plugin_compile_args *a,
                                 xrt_plugin_error *err) {
  if (!XRT_STRUCT_HAS(a, xrt_plugin_compile_args, process_index) ||
      !a->participant_process)
    return XRT_OK;
  int64_t n = (int64_t)e->nrep * e->npart;
  int remote = 0;
  for (int64_t i = 0; i < n; i++) {
    if (a->participant_process[i] < 0)
      return sim_fail(err, XRT_INVALID_ARGUMENT, "participant_process[%lld] "
                      "is %d", (long long)i, (int)a->participant_process[i]);
    remote |= a->participant_process[i] != a->process_index;
  }
  if (!remote) return XRT_OK; /* every participant is here */
  const xrt_plugin_host_api *h = e->cl->host;
  if (!h || !XRT_STRUCT_HAS(h, xrt_plugin_host_api, process_count) ||
      !h->exchange)
    return sim_fail(err, XRT_FAILED_PRECONDITION, "@%s runs on other "
                    "processes too, but the core offers no exchange between "
                    "processes", a->module->funcs[a->entry].name);
  int32_t *pp = (int32_t *)sim_pool_alloc(&e->pool, sizeof *pp * (size_t)n);
  if (!pp) return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  memcpy(pp, a->participant_process, sizeof *pp * (size_t)n);
  e->xp_proc = pp;
  e->xp_me = a->process_index;
  return XRT_OK;
}

/* ---- launches ---- */

/* Participants of other processes never join here: they count as
 * departed, so that the last local one to leave frees the launch and
 * deadlock detection counts only local ones.  mu held or private. */
SIM_PRIVATE void sim_xp_launch_init(struct sim_launch *l, const sim_exe *e) {
  l->xp_ready = 0;
  l->xp_mem = NULL;
  if (!e || !e->xp_proc || (int64_t)e->nrep * e->npart != l->n) return;
  for (int q = 0; q < l->n; q++)
    if (e->xp_proc[q] != e->xp_me) l->departed++;
}

static int sim_xp_remote(const sim_exe *e, int32_t q) {
  return q >= 0 && e->xp_proc[q] != e->xp_me;
}

SIM_PRIVATE void sim_xp_launch_end(sim_client *c, struct sim_launch *l) {
  c->al.free(c->al.self, l->xp_mem);
  l->xp_mem = NULL;
  l->xp_ready = 0;
}

/* Whether collective k meets participants of different processes: a
 * group with members on two, or a permute pair across two (the same
 * answer on every process). */
static int sim_xp_spans(const sim_exe *e, const sim_coll *k) {
  for (int32_t g = 0; k->gstart && g < k->ngroups; g++)
    for (int32_t m = k->gstart[g] + 1; m < k->gstart[g + 1]; m++)
      if (e->xp_proc[k->gmem[m]] != e->xp_proc[k->gmem[k->gstart[g]]])
        return 1;
  for (int32_t q = 0; q < k->n; q++)
    if ((k->psrc && k->psrc[q] >= 0 &&
         e->xp_proc[k->psrc[q]] != e->xp_proc[q]) ||
        (k->pdst && k->pdst[q] >= 0 &&
         e->xp_proc[k->pdst[q]] != e->xp_proc[q]))
      return 1;
  return 0;
}

#define SIM_XP_MAXL 1024 /* participants of one process (its devices) */

/* The other processes' participants as stand-ins in the launch: frames
 * whose operand values point at their inputs, received from their
 * processes.  Run by the first local participant with mu released. */
typedef struct sim_xpx {
  const sim_exe *e;
  const sim_step *st;
  const sim_coll *k;
  struct sim_launch *l;
  const int32_t *loc;
  int32_t nl;
  int32_t nv;        /* frame entries a stand-in needs */
  size_t stride;     /* bytes of one stand-in: frame, then inputs */
  char *mem;
} sim_xpx;

static size_t sim_xp_up(size_t n) { return (n + 63) & ~(size_t)63; }

/* Bytes and layout of the stand-ins. */
static void sim_xp_layout(sim_xpx *x) {
  int32_t nv = 0;
  for (int32_t j = 0; j < x->st->nin; j++)
    if (x->st->in[j] + 1 > nv) nv = x->st->in[j] + 1;
  for (int32_t j = 0; j < x->st->nout; j++)
    if (x->st->out[j] + 1 > nv) nv = x->st->out[j] + 1;
  x->nv = nv;
  x->stride = sim_xp_up(sizeof(void *) * (size_t)nv);
  for (int32_t j = 0; j < x->k->nops; j++)
    x->stride += sim_xp_up((size_t)x->k->numel[j] * x->k->es[j]);
}

/* Stand-in q's frame, with its operand pointers set. */
static void **sim_xp_standin(const sim_xpx *x, int32_t q) {
  char *base = x->mem + x->stride * (size_t)q;
  void **vals = (void **)(void *)base;
  char *d = base + sim_xp_up(sizeof(void *) * (size_t)x->nv);
  for (int32_t i = 0; i < x->nv; i++) vals[i] = NULL;
  for (int32_t j = 0; j < x->k->nops; j++) {
    vals[x->st->in[j]] = d;
    d += sim_xp_up((size_t)x->k->numel[j] * x->k->es[j]);
  }
  return vals;
}

/* Sends every local participant's operands to every other process and
 * receives theirs into the stand-ins (one tagged exchange; messages
 * between two processes match in posting order). */
static xrt_status sim_xp_fetch(sim_cx *cx, sim_xpx *x, uint32_t seq) {
  const sim_exe *e = x->e;
  const sim_coll *k = x->k;
  int32_t n = k->n, procs[SIM_XP_MAXP], np = 0;
  for (int32_t q = 0; q < n; q++) {
    int32_t p = e->xp_proc[q], t = 0;
    if (p == e->xp_me) continue;
    while (t < np && procs[t] != p) t++;
    if (t == np) {
      if (np == SIM_XP_MAXP)
        return sim_coll_fail(cx, x->st->op, XRT_UNIMPLEMENTED, "more than "
                             "%d processes in one launch", SIM_XP_MAXP);
      procs[np++] = p;
    }
  }
  size_t nsend = (size_t)x->nl * (size_t)k->nops * (size_t)np;
  size_t nrecv = (size_t)(n - x->nl) * (size_t)k->nops;
  const xrt_allocator *al = &e->cl->al;
  xrt_transport_msg *m = (xrt_transport_msg *)al->alloc(
      al->self, sizeof *m * (nsend + nrecv + 1));
  if (!m)
    return sim_coll_fail(cx, x->st->op, XRT_RESOURCE_EXHAUSTED, "out of host "
                         "memory");
  size_t s = 0, r = nsend;
  for (int32_t i = 0; i < x->nl; i++) {
    const sim_part *p = &x->l->parts[x->loc[i]];
    for (int32_t j = 0; j < k->nops; j++)
      for (int32_t t = 0; t < np; t++)
        m[s++] = (xrt_transport_msg){procs[t], p->vals[p->st->in[j]],
                                     (size_t)k->numel[j] * k->es[j]};
  }
  for (int32_t q = 0; q < n; q++) {
    if (e->xp_proc[q] == e->xp_me) continue;
    void **vals = sim_xp_standin(x, q);
    for (int32_t j = 0; j < k->nops; j++)
      m[r++] = (xrt_transport_msg){e->xp_proc[q], vals[x->st->in[j]],
                                   (size_t)k->numel[j] * k->es[j]};
  }
  const xrt_plugin_host_api *h = e->cl->host;
  xrt_plugin_error e2;
  e2.message[0] = 0;
  uint64_t tag = sim_fnv(sim_fnv(sim_fnv(cx->xa->launch_id, seq), 0x5eed),
                         k->sig);
  xrt_status rc = h->exchange(h->ctx, tag, m, (int)nsend, m + nsend,
                              (int)nrecv, &e2);
  al->free(al->self, m);
  if (rc)
    sim_coll_fail(cx, x->st->op, rc, "exchange with the other processes "
                  "failed: %s", e2.message[0] ? e2.message : "?");
  return rc;
}

/* Places the stand-ins in the launch as participants that reached every
 * phase of collective seq.  mu held. */
static void sim_xp_install(sim_xpx *x, uint32_t seq) {
  for (int32_t q = 0; q < x->k->n; q++) {
    if (x->e->xp_proc[q] == x->e->xp_me) continue;
    sim_part *p = &x->l->parts[q];
    p->seq = seq;
    p->sig = x->k->sig;
    p->vals = (void **)(void *)(x->mem + x->stride * (size_t)q);
    p->st = x->st;
    p->tick = (uint64_t)seq << 8 | 0xff;
  }
  x->l->xp_mem = x->mem;
  x->l->xp_ready = (uint64_t)seq + 1;
  sim_launch_changed(x->l);
}

/* A collective (other than all_reduce, which is hierarchical) that meets
 * participants of other processes: once every local participant has
 * published it, the first one fetches the others' operands and installs
 * them as stand-ins; then the collective runs as on one process, reading
 * the stand-ins like any peer (and computing exactly what one process
 * would).  mu held; released during the exchange. */
SIM_PRIVATE xrt_status sim_xp_gather(sim_cx *cx, const sim_step *st,
                                const sim_coll *k, struct sim_launch *l,
                                uint32_t seq) {
  const sim_exe *e = cx->exe;
  if (!e || !e->xp_proc || st->op->code == XRT_OP_ALL_REDUCE ||
      st->op->code == XRT_OP_COLLECTIVE_REDUCE || !sim_xp_spans(e, k))
    return XRT_OK;
  int32_t loc[SIM_XP_MAXL], nl = 0;
  for (int32_t q = 0; q < k->n && nl < SIM_XP_MAXL; q++)
    if (e->xp_proc[q] == e->xp_me) loc[nl++] = q;
  uint64_t tick = (uint64_t)seq << 8 | 1;
  xrt_status rc = sim_wait_ticks(cx, l, loc, nl, tick, st->op);
  if (rc) return rc;
  if (loc[0] != sim_proc_of(cx)) { /* wait for the first one's fetch */
    uint64_t epoch = ~(uint64_t)0;
    while (l->xp_ready != (uint64_t)seq + 1 && !rc) {
      if (l->failed) return sim_coll_peer_failed(cx, l, st->op);
      rc = sim_launch_block(cx, l, &epoch, st->op,
                            "the exchange with the other processes");
    }
    return rc;
  }
  sim_xpx x = {e, st, k, l, loc, nl, 0, 0, NULL};
  sim_xp_layout(&x);
  const xrt_allocator *al = &e->cl->al;
  /* Every local participant has moved on from the previous collective. */
  al->free(al->self, l->xp_mem);
  l->xp_mem = NULL;
  pthread_mutex_unlock(&l->mu);
  x.mem = (char *)al->alloc(al->self, x.stride * (size_t)k->n + 64);
  if (!x.mem)
    rc = sim_coll_fail(cx, st->op, XRT_RESOURCE_EXHAUSTED, "out of host "
                       "memory for the other processes' operands");
  else rc = sim_xp_fetch(cx, &x, seq);
  pthread_mutex_lock(&l->mu);
  if (rc) {
    al->free(al->self, x.mem);
    return sim_coll_self_fail(cx, l, rc);
  }
  sim_xp_install(&x, seq);
  return XRT_OK;
}

/* ---- a group across processes ---- */

typedef struct sim_xpg {
  int32_t g;                         /* the group */
  int32_t loc[SIM_COLL_MAXG], nl, li; /* members here (group order), me */
  int32_t procs[SIM_XP_MAXP], np, pi; /* its processes, ascending; mine */
  int32_t slices;                    /* local members that take chunks */
} sim_xpg;

/* The group of this participant as seen from its process; 0 when it has
 * no member elsewhere (the plain path runs it). */
static int sim_xp_group(const sim_cx *cx, const sim_coll *k, sim_xpg *x,
                        xrt_status *rc) {
  const sim_exe *e = cx->exe;
  int32_t proc = sim_proc_of(cx);
  *rc = XRT_OK;
  memset(x, 0, sizeof *x);
  x->g = k->pgroup ? k->pgroup[proc] : -1;
  if (x->g < 0) return 0;
  const int32_t *mem = k->gmem + k->gstart[x->g];
  int32_t gs = k->gstart[x->g + 1] - k->gstart[x->g];
  int remote = 0;
  for (int32_t m = 0; m < gs; m++) remote |= sim_xp_remote(e, mem[m]);
  if (!remote) return 0;
  for (int32_t m = 0; m < gs && !*rc; m++) {
    int32_t p = e->xp_proc[mem[m]], t = 0;
    if (p == e->xp_me) {
      if (x->nl == SIM_COLL_MAXG) *rc = XRT_UNIMPLEMENTED;
      else {
        if (mem[m] == proc) x->li = x->nl;
        x->loc[x->nl++] = mem[m];
      }
    }
    while (t < x->np && x->procs[t] < p) t++;
    if (t < x->np && x->procs[t] == p) continue;
    if (x->np == SIM_XP_MAXP) {
      *rc = XRT_UNIMPLEMENTED;
      break;
    }
    memmove(x->procs + t + 1, x->procs + t, sizeof *x->procs * (size_t)(x->np - t));
    x->procs[t] = p;
    x->np++;
  }
  for (int32_t t = 0; t < x->np; t++)
    if (x->procs[t] == e->xp_me) x->pi = t;
  x->slices = x->nl < e->cl->xp_threads ? x->nl : e->cl->xp_threads;
  return 1;
}

/* One exchange of the collective (phase 1 or 2 of chunk ci of operand
 * j); its failure becomes the op's. */
static xrt_status sim_xp_exchange(sim_cx *cx, const sim_step *st,
                                  const sim_cview *v, const sim_xpg *x,
                                  int32_t j, int64_t ci, int phase,
                                  const xrt_transport_msg *sends,
                                  const xrt_transport_msg *recvs, int n) {
  const xrt_plugin_host_api *h = cx->exe->cl->host;
  uint64_t tag = sim_fnv(sim_fnv(sim_fnv(sim_fnv(sim_fnv(
      cx->xa->launch_id, v->seq), x->g), (uint64_t)ci), j), phase);
  xrt_plugin_error e2;
  e2.message[0] = 0;
  xrt_status rc = h->exchange(h->ctx, tag, sends, n, recvs, n, &e2);
  if (rc)
    sim_coll_fail(cx, st->op, rc, "exchange with the other processes failed: "
                  "%s", e2.message[0] ? e2.message : "?");
  return rc;
}

/* Piece t of P of a slice of L elements. */
static void sim_xp_piece(int64_t L, int32_t P, int32_t t, int64_t *lo,
                         int64_t *len) {
  *lo = L * t / P;
  *len = L * (t + 1) / P - *lo;
}

/* part[0, L) holds this process's fold of chunk ci; afterwards, the
 * fold over every process (reduce-scatter, then all-gather). */
static xrt_status sim_xp_reduce_procs(sim_cx *cx, const sim_step *st,
                                      void **vals, const sim_coll *k,
                                      const sim_cview *v, const sim_xpg *x,
                                      int32_t j, int64_t ci, char *part,
                                      int64_t L, char *rbuf) {
  size_t es = k->es[j];
  xrt_transport_msg sends[SIM_XP_MAXP], recvs[SIM_XP_MAXP];
  int64_t mylo, mylen;
  sim_xp_piece(L, x->np, x->pi, &mylo, &mylen);
  int n = 0;
  for (int32_t t = 0; t < x->np; t++) {
    if (t == x->pi) continue;
    int64_t lo, len;
    sim_xp_piece(L, x->np, t, &lo, &len);
    sends[n] = (xrt_transport_msg){x->procs[t], part + (size_t)lo * es,
                                   (size_t)len * es};
    recvs[n] = (xrt_transport_msg){x->procs[t],
                                   rbuf + (size_t)t * (size_t)mylen * es,
                                   (size_t)mylen * es};
    n++;
  }
  xrt_status rc = sim_xp_exchange(cx, st, v, x, j, ci, 1, sends, recvs, n);
  if (rc) return rc;
  /* Fold the pieces in process order (the same on every process). */
  char *acc = rbuf + (size_t)x->np * (size_t)mylen * es, *mine =
      part + (size_t)mylo * es;
  memcpy(acc, x->pi == 0 ? mine : rbuf, (size_t)mylen * es);
  for (int32_t t = 1; t < x->np && !rc; t++)
    rc = sim_coll_combine(k, j, vals, cx, acc,
                          t == x->pi ? mine
                                     : rbuf + (size_t)t * (size_t)mylen * es,
                          mylen);
  if (rc) return rc;
  memcpy(mine, acc, (size_t)mylen * es);
  n = 0;
  for (int32_t t = 0; t < x->np; t++) {
    if (t == x->pi) continue;
    int64_t lo, len;
    sim_xp_piece(L, x->np, t, &lo, &len);
    sends[n] = (xrt_transport_msg){x->procs[t], mine, (size_t)mylen * es};
    recvs[n] = (xrt_transport_msg){x->procs[t], part + (size_t)lo * es,
                                   (size_t)len * es};
    n++;
  }
  return sim_xp_exchange(cx, st, v, x, j, ci, 2, sends, recvs, n);
}

/* part[0, n) = the fold of the local members' inputs over [at, at + n)
 * of operand j, in group order. */
static xrt_status sim_xp_fold_chunk(const sim_coll *k, int32_t j,
                                    void **vals, sim_cx *cx,
                                    const sim_cview *v, const sim_xpg *x,
                                    char *part, int64_t at, int64_t n) {
  /* A chunk is below sim_fold_range's streaming size, so the fold lands
   * in part through the cache, where the exchange reads it next. */
  _Static_assert(SIM_XP_CHUNK < SIM_STREAM_MIN, "chunks fold into cache");
  size_t off = (size_t)at * k->es[j];
  const char *ins[SIM_COLL_MAXG];
  for (int32_t m = 0; m < x->nl; m++)
    ins[m] = sim_peer_in(v, x->loc[m], j) + off;
  sim_cview lv = *v;
  lv.gs = x->nl;
  char *outs[1] = {part};
  return sim_fold_range(k, j, vals, cx, &lv, outs, 1, ins, 0, n);
}

/* Operand j's chunks x->li, x->li + S, ... (S = x->slices): each folded
 * here, reduced across processes and written to every local output. */
static xrt_status sim_xp_chunks(sim_cx *cx, const sim_step *st, void **vals,
                                const sim_coll *k, const sim_cview *v,
                                const sim_xpg *x, int32_t j) {
  size_t es = k->es[j];
  int64_t N = k->numel[j], C = (int64_t)(SIM_XP_CHUNK / es);
  if (N <= (int64_t)x->li * C) return XRT_OK; /* no chunk for this member */
  int64_t C0 = N < C ? N : C, piece = C0 / x->np + 1;
  size_t pbytes = ((size_t)C0 * es + 63) & ~(size_t)63;
  size_t rbytes = ((size_t)x->np + 1) * (size_t)piece * es;
  /* Scratch from the device's own memory: its block cache hands back the
   * same (already touched) pages call after call. */
  sim_client *cl = cx->exe->cl;
  void *mem = NULL;
  xrt_plugin_error e2;
  e2.message[0] = 0;
  if (sim_buffer_alloc(cl, cx->xa->device, pbytes + rbytes, &mem, &e2))
    return sim_coll_fail(cx, st->op, XRT_RESOURCE_EXHAUSTED, "no scratch "
                         "for the exchange between processes: %s",
                         e2.message);
  char *part = (char *)mem, *rbuf = part + pbytes;
  xrt_status rc = XRT_OK;
  for (int64_t ci = x->li; ci * C < N && !rc; ci += x->slices) {
    int64_t at = ci * C, n = N - at < C ? N - at : C;
    rc = sim_xp_fold_chunk(k, j, vals, cx, v, x, part, at, n);
    if (!rc) rc = sim_xp_reduce_procs(cx, st, vals, k, v, x, j, ci, part, n,
                                      rbuf);
    for (int32_t m = 0; m < x->nl && !rc; m++)
      sim_copy_nt(sim_peer_out(v, x->loc[m], j) + (size_t)at * es, part,
                  (size_t)n * es);
  }
  sim_buffer_free(cl, cx->xa->device, mem);
  return rc;
}

/* all_reduce over a group with members on other processes; *handled 0:
 * it has none (the plain path runs it). */
SIM_PRIVATE xrt_status sim_xp_all_reduce(const sim_step *st, void **vals,
                                    sim_cx *cx, const sim_coll *k,
                                    int *handled) {
  sim_xpg x;
  xrt_status rc;
  *handled = sim_xp_group(cx, k, &x, &rc);
  if (!*handled) return XRT_OK;
  if (rc)
    return sim_coll_fail(cx, st->op, rc, "a group with more than %d "
                         "members on one process or %d processes is not "
                         "supported across processes", SIM_COLL_MAXG,
                         SIM_XP_MAXP);
  sim_cview v;
  if ((rc = sim_coll_enter(st, vals, cx, k, &v, x.loc, x.nl))) return rc;
  for (int32_t j = 0; j < k->nops && !rc && x.li < x.slices; j++)
    rc = sim_xp_chunks(cx, st, vals, k, &v, &x, j);
  sim_copy_nt_done();
  if (rc) return sim_coll_own_error(cx, &v, rc);
  return sim_coll_phase(cx, st, &v, 2, x.loc, x.nl);
}

/* ---- reduce_scatter ---- */

/* Each member reduces its block of the scatter dimension over the group. */
SIM_PRIVATE xrt_status sim_run_reduce_scatter(const sim_step *st, void **vals,
                                         sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  sim_cview v;
  xrt_status rc = sim_coll_enter(st, vals, cx, k, &v, NULL, 0);
  if (rc) return rc;
  for (int32_t j = 0; j < k->nops && !rc; j++) {
    int64_t blk = k->inner[j]; /* result elements per outer index */
    char *out = (char *)vals[st->out[j]];
    for (int64_t o = 0; o < k->outer[j] && !rc; o++)
    {
      char *dst = out + (size_t)(o * blk) * k->es[j];
      rc = sim_reduce_slice(k, j, vals, cx, &v, &dst, 1,
                            (o * v.gs + v.me) * blk, 0, blk);
    }
  }
  if (rc) return sim_coll_own_error(cx, &v, rc);
  return sim_coll_phase(cx, st, &v, 2, NULL, 0);
}

/* Checks that each result is its operand with dimension d divided by
 * (reduce_scatter) or times (gather) the group size gs, and sets the
 * operand's outer count and block (the smaller side's dims from d on). */
static xrt_status sim_coll_blocks(sim_fcc *fc, const xrt_ir_op *op,
                                  sim_coll *k, int64_t d, int32_t gs,
                                  int gather) {
  int64_t *outer = (int64_t *)(uintptr_t)k->outer;
  int64_t *inner = (int64_t *)(uintptr_t)k->inner;
  for (int32_t j = 0; j < k->nops; j++) {
    const xrt_shape *in = sim_shape(fc, op->operands[j]);
    const xrt_shape *out = sim_shape(fc, op->results[j]);
    const xrt_shape *big = gather ? out : in, *small = gather ? in : out;
    for (int32_t i = 0; i < in->rank; i++)
      if (small->dims[i] * (i == d ? gs : 1) != big->dims[i])
        return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                           "result %d must be operand %d with dimension %lld "
                           "%s the group size %d", op->name, (int)j, (int)j,
                           (long long)d, gather ? "times" : "divided by",
                           (int)gs);
    outer[j] = sim_dims_prod(in, 0, (int32_t)d);
    inner[j] = sim_dims_prod(small, (int32_t)d, small->rank); /* block */
  }
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_reduce_scatter(sim_fcc *fc, const xrt_ir_op *op,
                                           sim_step *st) {
  int32_t nops = op->num_operands, gs;
  int64_t d;
  xrt_status rc = sim_coll_check_values(fc, op, nops);
  if (rc || (rc = sim_coll_dim(fc, op, "scatter_dimension", &d))) return rc;
  sim_coll *k;
  if ((rc = sim_coll_grouped(fc, op, 1, &gs, &k))) return rc;
  if ((rc = sim_coll_blocks(fc, op, k, d, gs, 0))) return rc;
  st->data = k;
  st->run = sim_run_reduce_scatter;
  return XRT_OK;
}

/* ---- all_gather ---- */

SIM_PRIVATE xrt_status sim_run_all_gather(const sim_step *st, void **vals,
                                     sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  sim_cview v;
  xrt_status rc = sim_coll_enter(st, vals, cx, k, &v, NULL, 0);
  if (rc) return rc;
  for (int32_t j = 0; j < k->nops; j++) {
    size_t chunk = (size_t)k->inner[j] * k->es[j];
    char *out = (char *)vals[st->out[j]];
    for (int32_t m = 0; m < v.gs; m++) {
      const char *in = sim_peer_in(&v, v.mem[m], j);
      for (int64_t o = 0; o < k->outer[j]; o++)
        memcpy(out + ((size_t)o * (size_t)v.gs + (size_t)m) * chunk,
               in + (size_t)o * chunk, chunk);
    }
  }
  return sim_coll_phase(cx, st, &v, 2, NULL, 0);
}

SIM_PRIVATE xrt_status sim_lower_all_gather(sim_fcc *fc, const xrt_ir_op *op,
                                       sim_step *st) {
  int32_t nops = op->num_operands, gs;
  int64_t d;
  xrt_status rc = sim_coll_check_values(fc, op, nops);
  if (rc || (rc = sim_coll_dim(fc, op, "all_gather_dim", &d))) return rc;
  sim_coll *k;
  if ((rc = sim_coll_grouped(fc, op, 0, &gs, &k))) return rc;
  if ((rc = sim_coll_blocks(fc, op, k, d, gs, 1))) return rc;
  st->data = k;
  st->run = sim_run_all_gather;
  return XRT_OK;
}

/* ---- all_to_all ---- */

/* Copies block b (rank r, element size es) from src at offsets so (shape
 * ss) into dst at offsets do (shape ds). */
static void sim_block_copy(char *dst, const int64_t *ds, const int64_t *dof,
                           const char *src, const int64_t *ss,
                           const int64_t *sof, const int64_t *b, int32_t r,
                           size_t es) {
  int64_t dstr[XRT_MAX_RANK], sstr[XRT_MAX_RANK], idx[XRT_MAX_RANK];
  int64_t da = 1, sa = 1, total = 1;
  for (int32_t i = r - 1; i >= 0; i--) {
    dstr[i] = da, sstr[i] = sa;
    da *= ds[i], sa *= ss[i];
    total *= b[i];
  }
  if (total == 0) return;
  if (r == 0) {
    memcpy(dst, src, es);
    return;
  }
  memset(idx, 0, sizeof idx);
  size_t run = (size_t)b[r - 1] * es;
  for (;;) {
    int64_t d = 0, s = 0;
    for (int32_t i = 0; i < r; i++) {
      d += (dof[i] + (i == r - 1 ? 0 : idx[i])) * dstr[i];
      s += (sof[i] + (i == r - 1 ? 0 : idx[i])) * sstr[i];
    }
    memcpy(dst + (size_t)d * es, src + (size_t)s * es, run);
    int32_t i = r - 2;
    for (; i >= 0; i--) {
      if (++idx[i] < b[i]) break;
      idx[i] = 0;
    }
    if (i < 0) return;
  }
}

SIM_PRIVATE xrt_status sim_run_all_to_all(const sim_step *st, void **vals,
                                     sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  sim_cview v;
  xrt_status rc = sim_coll_enter(st, vals, cx, k, &v, NULL, 0);
  if (rc) return rc;
  int32_t r = k->rank;
  for (int32_t j = 0; j < k->nops; j++) {
    const int64_t *ss = k->shapes + (size_t)j * 2 * XRT_MAX_RANK;
    const int64_t *ds = ss + XRT_MAX_RANK;
    int64_t b[XRT_MAX_RANK], so[XRT_MAX_RANK], dof[XRT_MAX_RANK];
    for (int32_t i = 0; i < r; i++) b[i] = ss[i], so[i] = dof[i] = 0;
    b[k->sdim] = ss[k->sdim] / v.gs;
    so[k->sdim] = v.me * b[k->sdim];
    for (int32_t m = 0; m < v.gs; m++) {
      dof[k->cdim] = m * b[k->cdim];
      sim_block_copy((char *)vals[st->out[j]], ds, dof,
                     sim_peer_in(&v, v.mem[m], j), ss, so, b, r, k->es[j]);
    }
  }
  return sim_coll_phase(cx, st, &v, 2, NULL, 0);
}

SIM_PRIVATE xrt_status sim_lower_all_to_all(sim_fcc *fc, const xrt_ir_op *op,
                                       sim_step *st) {
  int32_t nops = op->num_operands, gs;
  int64_t sd, cd, count = 0;
  xrt_status rc = sim_coll_check_values(fc, op, nops);
  if (rc || (rc = sim_coll_dim(fc, op, "split_dimension", &sd)) ||
      (rc = sim_coll_dim(fc, op, "concat_dimension", &cd)) ||
      (rc = sim_int_attr(fc, op, "split_count", &count)))
    return rc;
  sim_coll *k = sim_coll_new(fc, op, nops);
  if (!k) return XRT_RESOURCE_EXHAUSTED;
  int mode = sim_channel_id(op) > 0 ? SIM_PG_PARTITION : SIM_PG_REPLICA;
  if ((rc = sim_pg_groups(fc, op, k, mode, 1, &gs))) return rc;
  if (count != gs)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                       "split_count %lld must equal the group size %d",
                       op->name, (long long)count, (int)gs);
  int64_t *shapes = (int64_t *)sim_palloc(
      fc, sizeof *shapes * 2 * XRT_MAX_RANK * (size_t)nops);
  if (!shapes) return XRT_RESOURCE_EXHAUSTED;
  k->rank = sim_shape(fc, op->operands[0])->rank;
  for (int32_t j = 0; j < nops; j++) {
    const xrt_shape *in = sim_shape(fc, op->operands[j]);
    const xrt_shape *out = sim_shape(fc, op->results[j]);
    if (in->rank != k->rank || in->dims[sd] % gs != 0)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: operand "
                         "%d's dimension %lld must divide by split_count %d "
                         "(and every operand have the same rank)", op->name,
                         (int)j, (long long)sd, (int)gs);
    for (int32_t i = 0; i < in->rank; i++) {
      int64_t want = in->dims[i];
      if (i == sd) want /= gs;
      if (i == cd) want *= gs;
      if (out->dims[i] != want)
        return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: result "
                           "%d has dimension %d of size %lld, expected %lld",
                           op->name, (int)j, (int)i, (long long)out->dims[i],
                           (long long)want);
      shapes[(size_t)j * 2 * XRT_MAX_RANK + (size_t)i] = in->dims[i];
      shapes[(size_t)j * 2 * XRT_MAX_RANK + XRT_MAX_RANK + (size_t)i] =
          out->dims[i];
    }
  }
  k->shapes = shapes;
  k->sdim = (int32_t)sd;
  k->cdim = (int32_t)cd;
  k->sig = sim_fnv(sim_fnv(k->sig, sd), cd);
  st->data = k;
  st->run = sim_run_all_to_all;
  return XRT_OK;
}

/* ---- collective_permute ---- */

/* Pairwise: wait for the source to publish, copy, then wait for the
 * target to have read this participant's operand. */
SIM_PRIVATE xrt_status sim_run_collective_permute(const sim_step *st, void **vals,
                                             sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  sim_cview v;
  int32_t proc = sim_proc_of(cx);
  int32_t src = k->psrc[proc], dst = k->pdst[proc];
  xrt_status rc = sim_coll_enter(st, vals, cx, k, &v, &src, src >= 0);
  if (rc) return rc;
  for (int32_t j = 0; j < k->nops; j++) {
    size_t bytes = (size_t)k->numel[j] * k->es[j];
    if (src < 0) memset(vals[st->out[j]], 0, bytes);
    else if (bytes) memcpy(vals[st->out[j]], sim_peer_in(&v, src, j), bytes);
  }
  return sim_coll_phase(cx, st, &v, 2, &dst, dst >= 0);
}

SIM_PRIVATE xrt_status sim_lower_collective_permute(sim_fcc *fc,
                                               const xrt_ir_op *op,
                                               sim_step *st) {
  int32_t nops = op->num_operands;
  xrt_status rc = sim_coll_check_same_size(fc, op, nops);
  if (rc) return rc;
  sim_coll *k = sim_coll_new(fc, op, nops);
  if (!k) return XRT_RESOURCE_EXHAUSTED;
  int mode = sim_channel_id(op) > 0 ? SIM_PG_PARTITION : SIM_PG_REPLICA;
  const int64_t *ids;
  int64_t nrows, w;
  if ((rc = sim_pg_rows(fc, op, "source_target_pairs", &ids, &nrows, &w)))
    return rc;
  if (nrows > 0 && w != 2)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                       "source_target_pairs must be a Nx2 tensor", op->name);
  int32_t bound = sim_pg_bound(k, mode);
  if ((rc = sim_pg_check(fc, op, "source_target_pairs", ids, nrows * w, bound,
                         mode, 0, 1)))
    return rc;
  int32_t *psrc = (int32_t *)sim_palloc(fc, sizeof *psrc * (size_t)k->n);
  int32_t *pdst = (int32_t *)sim_palloc(fc, sizeof *pdst * (size_t)k->n);
  if (!psrc || !pdst) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t p = 0; p < k->n; p++) psrc[p] = pdst[p] = -1;
  int32_t outer = mode == SIM_PG_REPLICA ? k->npart : k->nrep;
  for (int64_t i = 0; i < nrows; i++)
    for (int32_t o = 0; o < outer; o++) {
      int32_t s = (int32_t)ids[2 * i], t = (int32_t)ids[2 * i + 1];
      int32_t ps = mode == SIM_PG_REPLICA ? s * k->npart + o : o * k->npart + s;
      int32_t pt = mode == SIM_PG_REPLICA ? t * k->npart + o : o * k->npart + t;
      psrc[pt] = ps;
      pdst[ps] = pt;
      k->sig = sim_fnv(sim_fnv(k->sig, ps), pt);
    }
  k->psrc = psrc;
  k->pdst = pdst;
  st->data = k;
  st->run = sim_run_collective_permute;
  return XRT_OK;
}

/* ---- collective_broadcast ---- */

SIM_PRIVATE xrt_status sim_run_collective_broadcast(const sim_step *st,
                                               void **vals, sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  sim_cview v;
  xrt_status rc = sim_coll_enter(st, vals, cx, k, &v, NULL, 0);
  if (rc) return rc;
  int32_t nd = k->root_operand >= 0 ? (int32_t)k->root_operand : k->nops;
  for (int32_t j = 0; j < nd; j++) {
    size_t bytes = (size_t)k->numel[j] * k->es[j];
    if (v.gs == 0) {
      memset(vals[st->out[j]], 0, bytes);
      continue;
    }
    int32_t root = 0;
    if (k->root_operand >= 0) { /* has_dynamic_root: my root operand */
      const int32_t *ri = (const int32_t *)vals[st->in[k->root_operand]];
      root = ri[j];
      if (root < 0 || root >= v.gs) {
        rc = sim_coll_fail(cx, st->op, XRT_OUT_OF_RANGE, "root %d of "
                           "operand %d is not an index of the group of %d",
                           (int)root, (int)j, (int)v.gs);
        return sim_coll_own_error(cx, &v, rc);
      }
    }
    if (bytes)
      memcpy(vals[st->out[j]], sim_peer_in(&v, v.mem[root], j), bytes);
  }
  return sim_coll_phase(cx, st, &v, 2, NULL, 0);
}

SIM_PRIVATE xrt_status sim_lower_collective_broadcast(sim_fcc *fc,
                                                 const xrt_ir_op *op,
                                                 sim_step *st) {
  int32_t nops = op->num_operands, nd = nops;
  int dyn = sim_flag(op, "has_dynamic_root");
  if (dyn) { /* data operands, then one i32 root index per data operand */
    nd = nops - 1;
    const xrt_shape *r = nd >= 1 ? sim_shape(fc, op->operands[nd]) : NULL;
    if (!r || r->dtype != XRT_S32 || sim_numel(r) != nd ||
        op->num_results != nd)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                         "has_dynamic_root takes the data operands and a "
                         "tensor<%dxi32> of roots", op->name, (int)nd);
  }
  xrt_status rc = sim_coll_check_same_size(fc, op, nd);
  if (rc) return rc;
  sim_coll *k = sim_coll_new(fc, op, nops);
  if (!k) return XRT_RESOURCE_EXHAUSTED;
  int mode = sim_channel_id(op) > 0 ? SIM_PG_PARTITION : SIM_PG_REPLICA;
  if ((rc = sim_pg_groups(fc, op, k, mode, 0, NULL))) return rc;
  if (dyn) k->root_operand = nd;
  st->data = k;
  st->run = sim_run_collective_broadcast;
  return XRT_OK;
}

/* ---- replica_id, partition_id ---- */

static xrt_status sim_run_replica_id(const sim_step *st, void **vals,
                                     sim_cx *cx) {
  uint32_t id = 0;
  if (cx->xa)
    id = (uint32_t)(st->op->code == XRT_OP_PARTITION_ID ? cx->xa->partition
                                                        : cx->xa->replica);
  memcpy(vals[st->out[0]], &id, sizeof id);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_process_id(sim_fcc *fc, const xrt_ir_op *op,
                                       sim_step *st) {
  const xrt_shape *s = op->num_results == 1 ? sim_shape(fc, op->results[0])
                                            : NULL;
  if (!s || s->rank != 0 || s->dtype != XRT_U32)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s must "
                       "return tensor<ui32>", op->name);
  st->run = sim_run_replica_id;
  return XRT_OK;
}
