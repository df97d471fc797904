/*
 * src/sim/collectives.c - launches and collectives: process groups, rendezvous,
 * all_reduce and the other collectives within a process.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"
#ifdef SIM_HAVE_STREAM
#include <immintrin.h> /* the AVX-512 folds, in target() functions */
#endif

#define SIM_SPARE_LAUNCHES 4

/* Frees a launch's messages (never received) and ends its lock and
 * condition: all of it for one on the stack, the start of destroying one. */
SIM_PRIVATE void sim_launch_own_end(sim_client *c, struct sim_launch *l) {
  for (sim_msg *m = l->msgs, *next; m; m = next) { /* never received */
    next = m->next;
    c->al.free(c->al.self, m);
  }
  pthread_cond_destroy(&l->cv);
  pthread_mutex_destroy(&l->mu);
}

static void sim_launch_destroy(sim_client *c, struct sim_launch *l) {
  sim_launch_own_end(c, l);
  c->al.free(c->al.self, l->parts);
  c->al.free(c->al.self, l);
}

SIM_PRIVATE void sim_launches_free(sim_client *c) {
  if (!c->lmu_ok) return;
  for (struct sim_launch *l = c->launches, *next; l; l = next) {
    next = l->next;
    sim_launch_destroy(c, l);
  }
  for (struct sim_launch *l = c->spare, *next; l; l = next) {
    next = l->next;
    sim_launch_destroy(c, l);
  }
  c->launches = c->spare = NULL;
  pthread_cond_destroy(&c->dead_cv);
  pthread_mutex_destroy(&c->lmu);
  c->lmu_ok = 0;
}

/* A launch with room for n participants: a spare one, or new.  lmu held. */
static struct sim_launch *sim_launch_new(sim_client *c, int n) {
  struct sim_launch **pp = &c->spare;
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->cap >= n) {
      struct sim_launch *l = *pp;
      *pp = l->next;
      return l;
    }
  struct sim_launch *l =
      (struct sim_launch *)c->al.alloc(c->al.self, sizeof *l);
  sim_part *parts =
      l ? (sim_part *)c->al.alloc(c->al.self, sizeof *parts * (size_t)n) : NULL;
  if (!parts) {
    if (l) c->al.free(c->al.self, l);
    return NULL;
  }
  memset(l, 0, sizeof *l);
  l->parts = parts;
  l->cap = n;
  if (pthread_mutex_init(&l->mu, NULL) != 0) {
    c->al.free(c->al.self, parts);
    c->al.free(c->al.self, l);
    return NULL;
  }
  if (pthread_cond_init(&l->cv, NULL) != 0) {
    pthread_mutex_destroy(&l->mu);
    c->al.free(c->al.self, parts);
    c->al.free(c->al.self, l);
    return NULL;
  }
  return l;
}

SIM_PRIVATE void sim_launch_reset(struct sim_launch *l, uint64_t id, int n,
                             int npart) {
  l->id = id;
  l->n = n;
  l->npart = npart;
  l->joined = l->departed = 0;
  l->epoch = 0;
  l->nwait = 0;
  l->failed = 0;
  l->fail_code = XRT_OK;
  l->fail_proc = l->fail_dev = -1;
  l->fail_msg[0] = 0;
  l->msgs = NULL;
  memset(l->parts, 0, sizeof *l->parts * (size_t)n);
}

/* A free slot of the dead table, or -1.  lmu held. */
static int sim_dead_slot(const sim_client *c) {
  int n = (int)(sizeof c->dead / sizeof c->dead[0]);
  for (int i = 0; i < n; i++)
    if (c->dead[i].left == 0) return i;
  return -1;
}

/* Remembers (without allocating) that launch id has no record: its
 * first participant, proc, ran out of memory making it; the left others
 * will fail when they arrive.  sim_launch_join made sure a slot is free:
 * a lost entry would leave the others waiting for proc forever.  lmu
 * held. */
static void sim_launch_bury(sim_client *c, uint64_t id, int left, int proc) {
  int i = sim_dead_slot(c);
  assert(i >= 0);
  if (i < 0 || left <= 0) return;
  c->dead[i].id = id;
  c->dead[i].left = left;
  c->dead[i].proc = proc;
}

/* Participants of an n-participant launch of e that run in this process
 * (the others, in other processes, never arrive here). */
static int sim_launch_locals(const sim_exe *e, int n) {
  if (!e || !e->xp_proc || (int64_t)e->nrep * e->npart != n) return n;
  int k = 0;
  for (int q = 0; q < n; q++) k += e->xp_proc[q] == e->xp_me;
  return k;
}

/* Fails a participant of a launch sim_launch_bury remembers.  lmu held. */
static xrt_status sim_launch_dead(sim_client *c,
                                  const xrt_plugin_execute_args *a, int n,
                                  int proc, xrt_plugin_error *err) {
  int nd = (int)(sizeof c->dead / sizeof c->dead[0]);
  for (int i = 0; i < nd; i++) {
    if (c->dead[i].left == 0 || c->dead[i].id != a->launch_id) continue;
    int first = c->dead[i].proc;
    if (--c->dead[i].left == 0) pthread_cond_broadcast(&c->dead_cv);
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "launch %llu: participant "
                    "(replica %d, partition %d) ran out of host memory for "
                    "the launch before it started, so participant %d of %d "
                    "cannot run", (unsigned long long)a->launch_id,
                    first / a->num_partitions, first % a->num_partitions,
                    proc, n);
  }
  return XRT_OK;
}

/* Participant `proc` of launch a->launch_id arrives. */
SIM_PRIVATE xrt_status sim_launch_join(sim_client *c,
                                  const xrt_plugin_execute_args *a, int proc,
                                  struct sim_launch **out,
                                  xrt_plugin_error *err) {
  int n = a->num_replicas * a->num_partitions;
  xrt_status rc = XRT_OK;
  const sim_exe *e = (const sim_exe *)a->executable;
  pthread_mutex_lock(&c->lmu);
  struct sim_launch *l;
  for (;;) {
    l = c->launches;
    while (l && l->id != a->launch_id) l = l->next;
    if (!l && (rc = sim_launch_dead(c, a, n, proc, err))) {
      pthread_mutex_unlock(&c->lmu);
      return rc;
    }
    if (l || sim_dead_slot(c) >= 0) break;
    /* Every slot holds a launch whose first participant failed: making
     * this record may fail too, with nowhere to say so.  The peers of
     * those launches free slots as they arrive (they come: launches are
     * queued in one order on every device), so wait for them; peers of
     * this launch arriving meanwhile wait here as well. */
    pthread_cond_wait(&c->dead_cv, &c->lmu);
  }
  if (!l) {
    l = sim_launch_new(c, n);
    if (!l) {
      sim_launch_bury(c, a->launch_id, sim_launch_locals(e, n) - 1, proc);
      pthread_mutex_unlock(&c->lmu);
      return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory for "
                      "launch %llu", (unsigned long long)a->launch_id);
    }
    sim_launch_reset(l, a->launch_id, n, a->num_partitions);
    sim_xp_launch_init(l, e);
    l->next = c->launches;
    c->launches = l;
  }
  pthread_mutex_lock(&l->mu);
  if (l->n != n || l->npart != a->num_partitions)
    rc = sim_fail(err, XRT_INVALID_ARGUMENT, "launch %llu: participants "
                  "disagree on its shape (%d x %d here)",
                  (unsigned long long)a->launch_id, (int)a->num_replicas,
                  (int)a->num_partitions);
  else if (l->parts[proc].joined)
    rc = sim_fail(err, XRT_INVALID_ARGUMENT, "launch %llu: participant "
                  "(replica %d, partition %d) arrived twice",
                  (unsigned long long)a->launch_id, (int)a->replica,
                  (int)a->partition);
  if (!rc) {
    l->parts[proc].joined = 1;
    l->parts[proc].device = a->device;
    l->joined++;
  }
  pthread_mutex_unlock(&l->mu);
  pthread_mutex_unlock(&c->lmu);
  *out = rc ? NULL : l;
  return rc;
}

/* Something changed: every waiter must look again.  mu held. */
SIM_PRIVATE void sim_launch_changed(struct sim_launch *l) {
  l->epoch++;
  l->nwait = 0;
  pthread_cond_broadcast(&l->cv);
}

/* Marks the launch failed (first failure wins).  mu held. */
static void sim_launch_fail(struct sim_launch *l, int proc, xrt_status code,
                            const char *msg) {
  if (l->failed) return;
  l->failed = 1;
  l->fail_code = code ? code : XRT_INTERNAL;
  l->fail_proc = proc;
  l->fail_dev = proc >= 0 ? l->parts[proc].device : -1;
  snprintf(l->fail_msg, sizeof l->fail_msg, "%s", msg && *msg ? msg : "?");
  sim_launch_changed(l);
}

/* Participant proc leaves, with rc and its message if it failed; the last
 * one to leave frees the launch. */
SIM_PRIVATE void sim_launch_leave(sim_client *c, struct sim_launch *l, int proc,
                             xrt_status rc, const char *msg) {
  pthread_mutex_lock(&l->mu);
  if (rc) sim_launch_fail(l, proc, rc, msg);
  l->parts[proc].departed = 1;
  l->departed++;
  sim_launch_changed(l);
  int last = l->departed == l->n;
  pthread_mutex_unlock(&l->mu);
  if (!last) return;
  pthread_mutex_lock(&c->lmu);
  struct sim_launch **pp = &c->launches;
  while (*pp != l) pp = &(*pp)->next;
  *pp = l->next;
  for (sim_msg *m = l->msgs, *next; m; m = next) { /* sends never received */
    next = m->next;
    c->al.free(c->al.self, m);
  }
  l->msgs = NULL;
  sim_xp_launch_end(c, l);
  int spares = 0;
  for (struct sim_launch *s = c->spare; s; s = s->next) spares++;
  if (spares < SIM_SPARE_LAUNCHES) {
    l->next = c->spare;
    c->spare = l;
    l = NULL;
  }
  pthread_mutex_unlock(&c->lmu);
  if (l) sim_launch_destroy(c, l);
}

/* ---- waiting ---- */

SIM_PRIVATE int sim_proc_of(const sim_cx *cx) {
  return cx->xa->replica * cx->xa->num_partitions + cx->xa->partition;
}
/* "<op> at file:line:col: message" */
SIM_PRIVATE xrt_status sim_coll_fail(sim_cx *cx, const xrt_ir_op *op,
                                xrt_status code, const char *fmt, ...) {
  char prefix[400];
  const char *name = strncmp(op->name, "stablehlo.", 10) == 0
                         ? op->name + 10 : op->name;
  int n = snprintf(prefix, sizeof prefix, "%s at ", name);
  size_t used = n < 0 ? 0 : (size_t)n < sizeof prefix ? (size_t)n
                                                       : sizeof prefix - 1;
  sim_loc(op, prefix + used, sizeof prefix - used); /* cut as one would be */
  va_list ap;
  va_start(ap, fmt);
  sim_vfail(cx->err, code, prefix, fmt, ap);
  va_end(ap);
  return code;
}

/* The error of a participant released because another one failed.
 * mu held. */
SIM_PRIVATE xrt_status sim_coll_peer_failed(sim_cx *cx, struct sim_launch *l,
                                       const xrt_ir_op *op) {
  if (l->fail_proc < 0)
    return sim_coll_fail(cx, op, XRT_ABORTED, "%s", l->fail_msg);
  return sim_coll_fail(cx, op, XRT_ABORTED, "participant (replica %d, "
                       "partition %d) on device %d failed: %s",
                       l->fail_proc / l->npart, l->fail_proc % l->npart,
                       l->fail_dev, l->fail_msg);
}

/* An injected COLLECTIVE fault of the participant's device, if due: fails
 * it and its launch (so the peers are released).  See sim_faults.inc. */

/* Records this participant's own failure in the launch.  mu held. */
SIM_PRIVATE xrt_status sim_coll_self_fail(sim_cx *cx, struct sim_launch *l,
                                     xrt_status rc) {
  sim_launch_fail(l, sim_proc_of(cx), rc, cx->err ? cx->err->message : "");
  return rc;
}

/* Blocks on the launch's condition; fails the launch when every
 * participant still running is blocked too.  mu held. */
SIM_PRIVATE xrt_status sim_launch_block(sim_cx *cx, struct sim_launch *l,
                                   uint64_t *epoch, const xrt_ir_op *op,
                                   const char *what) {
  if (*epoch != l->epoch) {
    *epoch = l->epoch;
    l->nwait++;
  }
  if (l->nwait + l->departed >= l->n) {
    sim_coll_fail(cx, op, XRT_FAILED_PRECONDITION, "deadlock: every "
                  "participant of the launch is waiting (this one for %s)",
                  what);
    return sim_coll_self_fail(cx, l, XRT_FAILED_PRECONDITION);
  }
  pthread_cond_wait(&l->cv, &l->mu);
  return XRT_OK;
}

/* Waits until participants mem[0..nm) reached tick t.  mu held. */
SIM_PRIVATE xrt_status sim_wait_ticks(sim_cx *cx, struct sim_launch *l,
                                 const int32_t *mem, int32_t nm, uint64_t t,
                                 const xrt_ir_op *op) {
  uint64_t epoch = ~(uint64_t)0;
  for (;;) {
    if (l->failed) return sim_coll_peer_failed(cx, l, op);
    int32_t q = -1;
    for (int32_t k = 0; k < nm && q < 0; k++)
      if (l->parts[mem[k]].tick < t) q = mem[k];
    if (q < 0) return XRT_OK;
    if (l->parts[q].departed) {
      sim_coll_fail(cx, op, XRT_FAILED_PRECONDITION, "participant (replica "
                    "%d, partition %d) on device %d finished without "
                    "reaching this collective", q / l->npart, q % l->npart,
                    l->parts[q].device);
      return sim_coll_self_fail(cx, l, XRT_FAILED_PRECONDITION);
    }
    char what[96];
    snprintf(what, sizeof what, "participant (replica %d, partition %d)",
             q / l->npart, q % l->npart);
    xrt_status rc = sim_launch_block(cx, l, &epoch, op, what);
    if (rc) return rc;
  }
}

typedef struct sim_pgb { /* group builder */
  int32_t *gstart, *gmem;
  int32_t ng, nm;
} sim_pgb;

SIM_PRIVATE uint64_t sim_fnv(uint64_t h, int64_t v) {
  for (int i = 0; i < 8; i++) {
    h ^= (uint64_t)(v >> (8 * i)) & 0xff;
    h *= 1099511628211ull;
  }
  return h;
}

/* The ids of replica_groups (or source_target_pairs) as rows of width w;
 * -1 pads ragged rows. */
SIM_PRIVATE xrt_status sim_pg_rows(sim_fcc *fc, const xrt_ir_op *op,
                              const char *name, const int64_t **ids,
                              int64_t *nrows, int64_t *w) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  *ids = NULL;
  *nrows = *w = 0;
  if (!a) return XRT_OK;
  if (a->kind != XRT_ATTR_INTS)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: %s must "
                       "be a 2-dimensional integer tensor", op->name, name);
  *ids = a->ints;
  if (a->lit && a->lit->type.shape.rank == 2) {
    *nrows = a->lit->type.shape.dims[0];
    *w = a->lit->type.shape.dims[1];
  } else if (a->n > 0) {
    *nrows = 1; /* a flat list is one group */
    *w = a->n;
  }
  if (*nrows * *w != a->n)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: %s has a "
                       "bad shape", op->name, name);
  return XRT_OK;
}

SIM_PRIVATE int64_t sim_channel_id(const xrt_ir_op *op) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, "channel_handle");
  const xrt_ir_attr *h = xrt_ir_attr_field(a, "handle");
  if (h && h->kind == XRT_ATTR_INT) return h->i;
  if (a && a->kind == XRT_ATTR_INT) return a->i;
  return 0;
}

SIM_PRIVATE int sim_flag(const xrt_ir_op *op, const char *name) {
  const xrt_ir_attr *a = xrt_ir_op_attr(op, name);
  if (!a) return 0;
  if (a->kind == XRT_ATTR_UNIT) return 1;
  return (a->kind == XRT_ATTR_BOOL || a->kind == XRT_ATTR_INT) && a->i != 0;
}

static const char *sim_pg_name(int mode) {
  switch (mode) {
  case SIM_PG_REPLICA: return "cross_replica";
  case SIM_PG_PARTITION: return "cross_partition";
  case SIM_PG_REPLICA_PARTITION: return "cross_replica_and_partition";
  default: return "flattened_ids";
  }
}

/* Bound of the ids in replica_groups for a grouping mode. */
SIM_PRIVATE int32_t sim_pg_bound(const sim_coll *k, int mode) {
  return mode == SIM_PG_PARTITION ? k->npart
       : mode == SIM_PG_FLAT ? k->n : k->nrep;
}

/* Checks ids: in range, unique; with cover, every id in [0, bound) once. */
SIM_PRIVATE xrt_status sim_pg_check(sim_fcc *fc, const xrt_ir_op *op,
                               const char *name, const int64_t *ids,
                               int64_t cnt, int32_t bound, int mode,
                               int cover, int pairs) {
  uint8_t *seen = (uint8_t *)sim_palloc(fc, (size_t)bound * 2 + 1);
  if (!seen) return XRT_RESOURCE_EXHAUSTED;
  for (int64_t i = 0; i < cnt; i++) {
    if (ids[i] == -1 && !pairs) continue;
    if (ids[i] < 0 || ids[i] >= bound)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: id %lld "
                         "in %s is out of range: %s over %d %s",
                         op->name, (long long)ids[i], name, sim_pg_name(mode),
                         (int)bound, mode == SIM_PG_PARTITION ? "partitions"
                         : mode == SIM_PG_FLAT ? "processes" : "replicas");
    uint8_t *s = &seen[pairs ? (i & 1) * bound + ids[i] : ids[i]];
    if (*s)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: id %lld "
                         "appears twice in %s%s", op->name,
                         (long long)ids[i], name,
                         pairs ? (i & 1 ? " as a target" : " as a source")
                               : "");
    *s = 1;
  }
  for (int32_t i = 0; cover && i < bound; i++)
    if (!seen[i])
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: %s "
                         "leaves id %d out: with %s every id in [0, %d) must "
                         "be in exactly one group", op->name, name, (int)i,
                         sim_pg_name(mode), (int)bound);
  return XRT_OK;
}

/* Adds the process groups of one row of ids (-1 entries skipped). */
static void sim_pg_add_row(sim_coll *k, sim_pgb *b, const int64_t *row,
                           int64_t w, int mode) {
  int32_t outer = mode == SIM_PG_REPLICA ? k->npart
                : mode == SIM_PG_PARTITION ? k->nrep : 1;
  for (int32_t o = 0; o < outer; o++) {
    int32_t inner = mode == SIM_PG_REPLICA_PARTITION ? k->npart : 1;
    for (int32_t p2 = 0; p2 < inner; p2++)
      for (int64_t j = 0; j < w; j++) {
        int64_t id = row[j];
        if (id < 0) continue;
        int32_t proc;
        switch (mode) {
        case SIM_PG_REPLICA: proc = (int32_t)id * k->npart + o; break;
        case SIM_PG_PARTITION: proc = o * k->npart + (int32_t)id; break;
        case SIM_PG_REPLICA_PARTITION:
          proc = (int32_t)id * k->npart + p2;
          break;
        default: proc = (int32_t)id; break;
        }
        b->gmem[b->nm++] = proc;
      }
    b->gstart[++b->ng] = b->nm;
  }
}

/* Builds k's groups from rows of ids; an empty list is one group of all. */
static xrt_status sim_pg_build(sim_fcc *fc, sim_coll *k, const int64_t *ids,
                               int64_t nrows, int64_t w, int mode) {
  int32_t bound = sim_pg_bound(k, mode);
  int64_t *all = NULL;
  if (nrows == 0) {
    all = (int64_t *)sim_palloc(fc, sizeof *all * (size_t)bound);
    if (!all) return XRT_RESOURCE_EXHAUSTED;
    for (int32_t i = 0; i < bound; i++) all[i] = i;
    ids = all, nrows = 1, w = bound;
  }
  int32_t outer = mode == SIM_PG_REPLICA ? k->npart
                : mode == SIM_PG_PARTITION ? k->nrep : 1;
  int32_t inner = mode == SIM_PG_REPLICA_PARTITION ? k->npart : 1;
  size_t maxg = (size_t)nrows * (size_t)outer + 1;
  size_t maxm = (size_t)nrows * (size_t)w * (size_t)outer * (size_t)inner + 1;
  sim_pgb b = {(int32_t *)sim_palloc(fc, sizeof(int32_t) * maxg),
               (int32_t *)sim_palloc(fc, sizeof(int32_t) * maxm), 0, 0};
  int32_t *pg = (int32_t *)sim_palloc(fc, sizeof(int32_t) * (size_t)k->n);
  int32_t *pi = (int32_t *)sim_palloc(fc, sizeof(int32_t) * (size_t)k->n);
  if (!b.gstart || !b.gmem || !pg || !pi) return XRT_RESOURCE_EXHAUSTED;
  b.gstart[0] = 0;
  for (int64_t r = 0; r < nrows; r++) sim_pg_add_row(k, &b, ids + r * w, w, mode);
  for (int32_t p = 0; p < k->n; p++) pg[p] = pi[p] = -1;
  for (int32_t g = 0; g < b.ng; g++)
    for (int32_t j = b.gstart[g]; j < b.gstart[g + 1]; j++) {
      pg[b.gmem[j]] = g;
      pi[b.gmem[j]] = j - b.gstart[g];
    }
  k->ngroups = b.ng;
  k->gstart = b.gstart;
  k->gmem = b.gmem;
  k->pgroup = pg;
  k->pindex = pi;
  for (int32_t j = 0; j < b.nm; j++) k->sig = sim_fnv(k->sig, b.gmem[j]);
  return XRT_OK;
}

/* The grouping mode of all_gather, all_reduce, reduce_scatter. */
static xrt_status sim_pg_mode3(sim_fcc *fc, const xrt_ir_op *op, int *mode) {
  int64_t ch = sim_channel_id(op);
  int global = sim_flag(op, "use_global_device_ids");
  if (global && ch <= 0)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                       "use_global_device_ids needs a channel_handle with "
                       "handle > 0", op->name);
  *mode = ch <= 0 ? SIM_PG_REPLICA
        : global ? SIM_PG_FLAT : SIM_PG_REPLICA_PARTITION;
  return XRT_OK;
}

/* replica_groups of op in mode; cover: a partition of all ids; equal: all
 * groups the same size (*gs). */
SIM_PRIVATE xrt_status sim_pg_groups(sim_fcc *fc, const xrt_ir_op *op,
                                sim_coll *k, int mode, int cover,
                                int32_t *gs) {
  const int64_t *ids;
  int64_t nrows, w;
  xrt_status rc = sim_pg_rows(fc, op, "replica_groups", &ids, &nrows, &w);
  if (rc) return rc;
  int32_t bound = sim_pg_bound(k, mode);
  if ((rc = sim_pg_check(fc, op, "replica_groups", ids, nrows * w, bound,
                         mode, cover, 0)) ||
      (rc = sim_pg_build(fc, k, ids, nrows, w, mode)))
    return rc;
  if (gs) {
    *gs = k->ngroups ? k->gstart[1] - k->gstart[0] : 0;
    for (int32_t g = 0; g < k->ngroups; g++)
      if (k->gstart[g + 1] - k->gstart[g] != *gs)
        return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: "
                           "replica_groups must all have the same size "
                           "(group %d has %d processes, group 0 has %d)",
                           op->name, (int)g,
                           (int)(k->gstart[g + 1] - k->gstart[g]), (int)*gs);
  }
  return XRT_OK;
}

/* ======================================================================
 * Common lowering
 * ==================================================================== */

SIM_PRIVATE sim_coll *sim_coll_new(sim_fcc *fc, const xrt_ir_op *op,
                              int32_t nops) {
  sim_coll *k = (sim_coll *)sim_palloc(fc, sizeof *k);
  size_t *es = (size_t *)sim_palloc(fc, sizeof *es * (size_t)(nops + 1));
  int64_t *ne = (int64_t *)sim_palloc(fc, sizeof *ne * (size_t)(nops + 1));
  int64_t *ou = (int64_t *)sim_palloc(fc, sizeof *ou * (size_t)(nops + 1));
  int64_t *in = (int64_t *)sim_palloc(fc, sizeof *in * (size_t)(nops + 1));
  if (!k || !es || !ne || !ou || !in) return NULL;
  sim_exe *e = fc->cc->exe;
  k->nrep = e->nrep;
  k->npart = e->npart;
  k->n = e->nrep * e->npart;
  k->nops = nops;
  k->es = es, k->numel = ne, k->outer = ou, k->inner = in;
  k->root_operand = -1;
  k->sig = sim_fnv(1469598103934665603ull, op->code);
  for (int32_t j = 0; j < nops; j++) {
    const xrt_shape *s = sim_shape(fc, op->operands[j]);
    es[j] = sim_esize(s->dtype);
    ne[j] = sim_numel(s);
    k->sig = sim_fnv(sim_fnv(k->sig, (int64_t)es[j]), ne[j]);
  }
  e->has_coll = 1;
  return k;
}

/* Operands and results are tensors, as many results as operands. */
SIM_PRIVATE xrt_status sim_coll_check_values(sim_fcc *fc, const xrt_ir_op *op,
                                        int32_t nops) {
  if (nops < 1 || op->num_results != nops)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s takes as "
                       "many results as operands (at least one)", op->name);
  for (int32_t j = 0; j < nops; j++) {
    const xrt_ir_type *a = &fc->f->value_types[op->operands[j]];
    const xrt_ir_type *b = &fc->f->value_types[op->results[j]];
    if (a->kind != XRT_TYPE_TENSOR || b->kind != XRT_TYPE_TENSOR ||
        a->shape.dtype != b->shape.dtype)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: result "
                         "%d must be a tensor of operand %d's element type",
                         op->name, (int)j, (int)j);
  }
  return XRT_OK;
}

/* As sim_coll_check_values, and each result has its operand's element
 * count (the ops that keep the data's size). */
SIM_PRIVATE xrt_status sim_coll_check_same_size(sim_fcc *fc, const xrt_ir_op *op,
                                           int32_t nops) {
  xrt_status rc = sim_coll_check_values(fc, op, nops);
  if (rc) return rc;
  for (int32_t j = 0; j < nops; j++)
    if (sim_numel(sim_shape(fc, op->operands[j])) !=
        sim_numel(sim_shape(fc, op->results[j])))
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: result "
                         "%d must have operand %d's shape", op->name, (int)j,
                         (int)j);
  return XRT_OK;
}

/* Product of dims [from, to) of s. */
SIM_PRIVATE int64_t sim_dims_prod(const xrt_shape *s, int32_t from, int32_t to) {
  int64_t p = 1;
  for (int32_t i = from; i < to; i++) p *= s->dims[i];
  return p;
}

/* An integer attribute naming a dimension of every operand. */
SIM_PRIVATE xrt_status sim_coll_dim(sim_fcc *fc, const xrt_ir_op *op,
                               const char *name, int64_t *d) {
  xrt_status rc = sim_int_attr(fc, op, name, d);
  if (rc) return rc;
  for (int32_t j = 0; j < op->num_operands; j++) {
    int32_t r = sim_shape(fc, op->operands[j])->rank;
    if (*d < 0 || *d >= r || sim_shape(fc, op->results[j])->rank != r)
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: %s = "
                         "%lld is not a dimension of operand %d (rank %d) "
                         "and its result", op->name, name, (long long)*d,
                         (int)j, (int)r);
  }
  return XRT_OK;
}

/* ---- the reduction computation ---- */

/* The typed loop when the body is one binary op of its two arguments. */
static sim_red_fn sim_coll_fast(const sim_fcc *fc, const xrt_ir_op *op,
                                int32_t j) {
  const xrt_ir_region *r = &op->regions[0];
  const xrt_ir_op *b = sim_region_binop(r);
  if (!b) return NULL;
  int32_t a0 = r->args[0];
  const xrt_ir_type *in = &fc->f->value_types[op->operands[j]];
  const xrt_ir_type *bt = &fc->f->value_types[b->results[0]];
  const xrt_ir_type *at = &fc->f->value_types[a0];
  if (in->quant || bt->quant || at->quant ||
      bt->shape.dtype != in->shape.dtype || at->shape.dtype != in->shape.dtype)
    return NULL;
  return sim_red_pick(b->code, in->shape.dtype);
}

static xrt_status sim_coll_body(sim_fcc *fc, const xrt_ir_op *op,
                                sim_coll *k) {
  if (op->num_regions != 1)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s needs a "
                       "computation region", op->name);
  const xrt_ir_region *reg = &op->regions[0];
  if (reg->num_args != 2)
    return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: the "
                       "computation must take 2 arguments", op->name);
  sim_red_fn *fast = (sim_red_fn *)sim_palloc(fc, sizeof *fast *
                                                      (size_t)k->nops);
  if (!fast) return XRT_RESOURCE_EXHAUSTED;
  int slow = 0;
  for (int32_t j = 0; j < k->nops; j++) {
    fast[j] = sim_coll_fast(fc, op, j);
    slow |= !fast[j];
    /* The computation combines the operand's bytes as its own element
     * type: an i32 body over f32 data (same size) would add bit patterns,
     * so the types must be the same, not only their sizes. */
    xrt_dtype ot = sim_shape(fc, op->operands[j])->dtype;
    for (int32_t a = 0; a < 2; a++) {
      const xrt_ir_type *t = &fc->f->value_types[reg->args[a]];
      if (t->kind != XRT_TYPE_TENSOR || sim_numel(&t->shape) != 1 ||
          sim_esize(t->shape.dtype) != k->es[j] || t->shape.dtype != ot)
        return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: the "
                           "computation's arguments must be scalars of "
                           "operand %d's element type", op->name, (int)j);
    }
  }
  k->fast = fast;
  k->bargs = reg->args;
  if (!slow) return XRT_OK;
  xrt_status rc = sim_lower_region(fc, reg, &k->body, &k->brets, 1, op);
  if (rc) return rc;
  const xrt_ir_type *rt = &fc->f->value_types[k->brets[0]];
  for (int32_t j = 0; j < k->nops; j++)
    if (rt->kind != XRT_TYPE_TENSOR || sim_esize(rt->shape.dtype) != k->es[j])
      return sim_fail_op(fc->cc->err, op, XRT_INVALID_ARGUMENT, "%s: the "
                         "computation must return a scalar of operand %d's "
                         "element type", op->name, (int)j);
  return XRT_OK;
}

/* acc[i] = computation(acc[i], in[i]) for i in [0, n), operand j. */
SIM_PRIVATE xrt_status sim_coll_combine(const sim_coll *k, int32_t j, void **vals,
                                   sim_cx *cx, char *acc, const char *in,
                                   int64_t n) {
  if (k->fast[j]) {
    k->fast[j](acc, in, n, 1);
    return XRT_OK;
  }
  size_t es = k->es[j];
  for (int64_t i = 0; i < n; i++) {
    vals[k->bargs[0]] = acc + (size_t)i * es;
    vals[k->bargs[1]] = (void *)(uintptr_t)(in + (size_t)i * es);
    xrt_status rc = sim_run_plan(&k->body, vals, cx);
    if (rc) return rc;
    memmove(acc + (size_t)i * es, vals[k->brets[0]], es);
  }
  return XRT_OK;
}

/* Operand j and result j of process q (which published this collective). */
SIM_PRIVATE const char *sim_peer_in(const sim_cview *v, int32_t q, int32_t j) {
  const sim_part *p = &v->l->parts[q];
  return (const char *)p->vals[p->st->in[j]];
}
SIM_PRIVATE char *sim_peer_out(const sim_cview *v, int32_t q, int32_t j) {
  const sim_part *p = &v->l->parts[q];
  return (char *)p->vals[p->st->out[j]];
}

/* Enters the collective: publishes this participant's frame and waits for
 * the peers in wait[0..nw) (its group by default) to publish the same
 * collective. */
SIM_PRIVATE xrt_status sim_coll_enter(const sim_step *st, void **vals,
                                 sim_cx *cx, const sim_coll *k,
                                 sim_cview *v, const int32_t *wait,
                                 int32_t nw) {
  memset(v, 0, sizeof *v);
  xrt_status frc = sim_fault_coll(cx, st->op);
  if (frc) return frc;
  v->seq = cx->coll_seq++;
  v->l = cx->launch;
  v->proc = sim_proc_of(cx);
  int32_t g = k->pgroup ? k->pgroup[v->proc] : -1;
  if (g >= 0) {
    v->mem = k->gmem + k->gstart[g];
    v->gs = k->gstart[g + 1] - k->gstart[g];
    v->me = k->pindex[v->proc];
  }
  if (!wait) wait = v->mem, nw = v->gs;
  struct sim_launch *l = v->l;
  if (!l) return XRT_OK;
  pthread_mutex_lock(&l->mu);
  sim_part *me = &l->parts[v->proc];
  me->seq = v->seq;
  me->sig = k->sig;
  me->vals = vals;
  me->st = st;
  me->tick = (uint64_t)v->seq << 8 | 1;
  sim_launch_changed(l);
  xrt_status rc = sim_xp_gather(cx, st, k, l, v->seq); /* collectives across processes */
  if (!rc) rc = sim_wait_ticks(cx, l, wait, nw, me->tick, st->op);
  for (int32_t i = 0; i < nw && !rc; i++) {
    const sim_part *p = &l->parts[wait[i]];
    if (p->seq != v->seq || p->sig != k->sig) {
      sim_coll_fail(cx, st->op, XRT_FAILED_PRECONDITION, "participant "
                    "(replica %d, partition %d) is in a different collective "
                    "(collectives must be entered in the same order, with "
                    "the same shapes and groups)", wait[i] / l->npart,
                    wait[i] % l->npart);
      rc = sim_coll_self_fail(cx, l, XRT_FAILED_PRECONDITION);
    }
  }
  pthread_mutex_unlock(&l->mu);
  return rc;
}

/* Moves to phase ph and waits for wait[0..nw) (default: the group) to get
 * there too. */
SIM_PRIVATE xrt_status sim_coll_phase(sim_cx *cx, const sim_step *st,
                                 const sim_cview *v, int ph,
                                 const int32_t *wait, int32_t nw) {
  struct sim_launch *l = v->l;
  if (!l) return XRT_OK;
  if (!wait) wait = v->mem, nw = v->gs;
  pthread_mutex_lock(&l->mu);
  l->parts[v->proc].tick = (uint64_t)v->seq << 8 | (uint64_t)ph;
  sim_launch_changed(l);
  xrt_status rc = sim_wait_ticks(cx, l, wait, nw,
                                 (uint64_t)v->seq << 8 | (uint64_t)ph, st->op);
  pthread_mutex_unlock(&l->mu);
  return rc;
}

/* A failure of this participant's own computation inside a collective:
 * peers waiting for it must be released. */
SIM_PRIVATE xrt_status sim_coll_own_error(sim_cx *cx, const sim_cview *v,
                                     xrt_status rc) {
  if (!v->l) return rc;
  pthread_mutex_lock(&v->l->mu);
  sim_coll_self_fail(cx, v->l, rc);
  pthread_mutex_unlock(&v->l->mu);
  return rc;
}

/* ---- all_reduce ---- */

/* Elements [lo, hi) of slice s of n elements cut in gs pieces. */
static void sim_slice(int64_t n, int32_t gs, int32_t s, int64_t *lo,
                      int64_t *hi) {
  *lo = n * s / gs;
  *hi = n * (s + 1) / gs;
}

#define SIM_COLL_BLOCK 16384 /* bytes combined while in cache */

/* Copies n bytes with non-temporal stores where the machine has them: a
 * collective's result is written once and read by others later, so
 * reading its lines into the cache first would only cost bandwidth. */
SIM_PRIVATE void sim_copy_nt(void *dst, const void *src, size_t n) {
#ifdef SIM_HAVE_STREAM
  size_t head = (size_t)(-(uintptr_t)dst & 15);
  if (n >= 64 + head) {
    memcpy(dst, src, head);
    char *d = (char *)dst + head;
    const char *s = (const char *)src + head;
    size_t k = (n - head) / 64;
    for (size_t i = 0; i < k; i++, s += 64, d += 64) {
      __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)s);
      __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
      __m128i x2 = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
      __m128i x3 = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
      _mm_stream_si128((__m128i *)(void *)d, x0);
      _mm_stream_si128((__m128i *)(void *)(d + 16), x1);
      _mm_stream_si128((__m128i *)(void *)(d + 32), x2);
      _mm_stream_si128((__m128i *)(void *)(d + 48), x3);
    }
    memcpy(d, s, (n - head) % 64);
    return;
  }
#endif
  if (n) memcpy(dst, src, n);
}

/* Orders the non-temporal stores before peers are told to read. */
SIM_PRIVATE void sim_copy_nt_done(void) {
#ifdef SIM_HAVE_STREAM
  _mm_sfence();
#endif
}

/* Big copies stream; small ones go through the cache. */
static void sim_copy_stream(void *dst, const void *src, size_t n) {
  if (n >= SIM_STREAM_MIN) sim_copy_nt(dst, src, n);
  else if (n) memcpy(dst, src, n);
}

/* acc[0, len) = ins[0][i] + ins[1][i] + ... in group order (the same
 * rounding as folding one input at a time), for float sums: one pass over
 * the inputs, four vectors at a time.  0 when it does not apply. */
#ifdef SIM_HAVE_STREAM
/* sim_fold_add's whole 256-byte blocks with AVX-512: bytes done. */
__attribute__((target("avx512f"))) static size_t
sim_fold_add_avx512(int f32, char *acc, const char *const *ins, int32_t gs,
                    size_t off, size_t bytes) {
  size_t i = 0;
  for (; i + 256 <= bytes; i += 256) {
    const char *s = ins[0] + off + i;
    __m512 x0 = _mm512_loadu_ps((const void *)s);
    __m512 x1 = _mm512_loadu_ps((const void *)(s + 64));
    __m512 x2 = _mm512_loadu_ps((const void *)(s + 128));
    __m512 x3 = _mm512_loadu_ps((const void *)(s + 192));
    __m512d y0 = _mm512_castps_pd(x0), y1 = _mm512_castps_pd(x1);
    __m512d y2 = _mm512_castps_pd(x2), y3 = _mm512_castps_pd(x3);
    for (int32_t m = 1; m < gs; m++) {
      s = ins[m] + off + i;
      if (f32) {
        x0 = _mm512_add_ps(x0, _mm512_loadu_ps((const void *)s));
        x1 = _mm512_add_ps(x1, _mm512_loadu_ps((const void *)(s + 64)));
        x2 = _mm512_add_ps(x2, _mm512_loadu_ps((const void *)(s + 128)));
        x3 = _mm512_add_ps(x3, _mm512_loadu_ps((const void *)(s + 192)));
      } else {
        y0 = _mm512_add_pd(y0, _mm512_loadu_pd((const void *)s));
        y1 = _mm512_add_pd(y1, _mm512_loadu_pd((const void *)(s + 64)));
        y2 = _mm512_add_pd(y2, _mm512_loadu_pd((const void *)(s + 128)));
        y3 = _mm512_add_pd(y3, _mm512_loadu_pd((const void *)(s + 192)));
      }
    }
    if (!f32) {
      x0 = _mm512_castpd_ps(y0), x1 = _mm512_castpd_ps(y1);
      x2 = _mm512_castpd_ps(y2), x3 = _mm512_castpd_ps(y3);
    }
    _mm512_storeu_ps((void *)(acc + i), x0);
    _mm512_storeu_ps((void *)(acc + i + 64), x1);
    _mm512_storeu_ps((void *)(acc + i + 128), x2);
    _mm512_storeu_ps((void *)(acc + i + 192), x3);
  }
  return i;
}
#endif

static int sim_fold_add(const sim_coll *k, int32_t j, char *acc,
                        const char *const *ins, int32_t gs, size_t off,
                        int64_t len) {
#ifdef SIM_HAVE_STREAM
  int kind = sim_red_add_kind(k->fast[j]);
  if (!kind) return 0;
  int f32 = kind == 1;
  size_t bytes = (size_t)len * k->es[j], i = 0;
  if (sim_isa_cap() >= 2 && __builtin_cpu_supports("avx512f"))
    i = sim_fold_add_avx512(f32, acc, ins, gs, off, bytes);
  for (; i + 64 <= bytes; i += 64) {
    const char *s = ins[0] + off + i;
    __m128 x0 = _mm_loadu_ps((const float *)(const void *)s);
    __m128 x1 = _mm_loadu_ps((const float *)(const void *)(s + 16));
    __m128 x2 = _mm_loadu_ps((const float *)(const void *)(s + 32));
    __m128 x3 = _mm_loadu_ps((const float *)(const void *)(s + 48));
    __m128d y0 = _mm_castps_pd(x0), y1 = _mm_castps_pd(x1);
    __m128d y2 = _mm_castps_pd(x2), y3 = _mm_castps_pd(x3);
    for (int32_t m = 1; m < gs; m++) {
      s = ins[m] + off + i;
      if (f32) {
        x0 = _mm_add_ps(x0, _mm_loadu_ps((const float *)(const void *)s));
        x1 = _mm_add_ps(x1, _mm_loadu_ps((const float *)(const void *)(s + 16)));
        x2 = _mm_add_ps(x2, _mm_loadu_ps((const float *)(const void *)(s + 32)));
        x3 = _mm_add_ps(x3, _mm_loadu_ps((const float *)(const void *)(s + 48)));
      } else {
        y0 = _mm_add_pd(y0, _mm_loadu_pd((const double *)(const void *)s));
        y1 = _mm_add_pd(y1, _mm_loadu_pd((const double *)(const void *)(s + 16)));
        y2 = _mm_add_pd(y2, _mm_loadu_pd((const double *)(const void *)(s + 32)));
        y3 = _mm_add_pd(y3, _mm_loadu_pd((const double *)(const void *)(s + 48)));
      }
    }
    if (!f32) {
      x0 = _mm_castpd_ps(y0), x1 = _mm_castpd_ps(y1);
      x2 = _mm_castpd_ps(y2), x3 = _mm_castpd_ps(y3);
    }
    _mm_storeu_ps((float *)(void *)(acc + i), x0);
    _mm_storeu_ps((float *)(void *)(acc + i + 16), x1);
    _mm_storeu_ps((float *)(void *)(acc + i + 32), x2);
    _mm_storeu_ps((float *)(void *)(acc + i + 48), x3);
  }
  if (i < bytes) { /* the tail, a whole number of elements */
    int64_t rest = (int64_t)((bytes - i) / k->es[j]);
    memcpy(acc + i, ins[0] + off + i, bytes - i);
    for (int32_t m = 1; m < gs; m++)
      k->fast[j](acc + i, ins[m] + off + i, rest, 1);
  }
  return 1;
#else
  (void)k, (void)j, (void)acc, (void)ins, (void)gs, (void)off, (void)len;
  return 0;
#endif
}

/* outs[*][lo, hi) = fold of the members' inputs over [lo, hi), in group
 * order, a cache-sized block at a time: folded in a buffer that stays in
 * cache, then written to every output (streamed when the range is big). */
SIM_PRIVATE xrt_status sim_fold_range(const sim_coll *k, int32_t j, void **vals,
                                 sim_cx *cx, const sim_cview *v,
                                 char *const *outs, int32_t nout,
                                 const char *const *ins, int64_t lo,
                                 int64_t hi) {
  size_t es = k->es[j];
  int64_t blk = (int64_t)(SIM_COLL_BLOCK / es);
  int stream = (size_t)(hi - lo) * es >= SIM_STREAM_MIN;
  _Alignas(64) char tmp[SIM_COLL_BLOCK];
  for (int64_t b = lo; b < hi; b += blk) {
    int64_t len = hi - b < blk ? hi - b : blk;
    size_t off = (size_t)b * es, bytes = (size_t)len * es;
    char *acc = stream || nout > 1 ? tmp : outs[0] + off;
    if (!sim_fold_add(k, j, acc, ins, v->gs, off, len)) {
      memcpy(acc, ins[0] + off, bytes);
      for (int32_t m = 1; m < v->gs; m++) {
        xrt_status rc = sim_coll_combine(k, j, vals, cx, acc, ins[m] + off,
                                         len);
        if (rc) return rc;
      }
    }
    for (int32_t o = 0; acc == tmp && o < nout; o++)
      if (stream) sim_copy_nt(outs[o] + off, tmp, bytes);
      else memcpy(outs[o] + off, tmp, bytes);
  }
  return XRT_OK;
}

/* outs[*][lo, hi) of operand j reduced over the group (reads peers'
 * inputs): outs[0] alone (nout = 1), or every member's output in group
 * order (nout = gs, groups of at most SIM_COLL_MAXG). */
SIM_PRIVATE xrt_status sim_reduce_slice(const sim_coll *k, int32_t j, void **vals,
                                   sim_cx *cx, const sim_cview *v,
                                   char *const *outs, int32_t nout,
                                   int64_t in_off, int64_t lo, int64_t hi) {
  const char *ins[SIM_COLL_MAXG];
  size_t es = k->es[j];
  if (v->gs <= SIM_COLL_MAXG) {
    for (int32_t m = 0; m < v->gs; m++)
      ins[m] = sim_peer_in(v, v->mem[m], j) + (size_t)in_off * es;
    return sim_fold_range(k, j, vals, cx, v, outs, nout, ins, lo, hi);
  }
  char *out = outs[0] + (size_t)lo * es;
  memcpy(out, sim_peer_in(v, v->mem[0], j) + (size_t)(in_off + lo) * es,
         (size_t)(hi - lo) * es);
  for (int32_t m = 1; m < v->gs; m++) {
    xrt_status rc = sim_coll_combine(
        k, j, vals, cx, out,
        sim_peer_in(v, v->mem[m], j) + (size_t)(in_off + lo) * es, hi - lo);
    if (rc) return rc;
  }
  return XRT_OK;
}

/* Copies the slices the other members reduced into this one's outputs
 * (the all-gather half of all_reduce, for groups too big to write every
 * member's output in one pass). */
static void sim_gather_slices(const sim_step *st, void **vals,
                              const sim_coll *k, const sim_cview *v) {
  for (int32_t j = 0; j < k->nops; j++) {
    char *out = (char *)vals[st->out[j]];
    for (int32_t m = 0; m < v->gs; m++) {
      if (m == v->me) continue;
      int64_t lo, hi;
      sim_slice(k->numel[j], v->gs, m, &lo, &hi);
      if (hi > lo)
        sim_copy_stream(out + (size_t)lo * k->es[j],
                        sim_peer_out(v, v->mem[m], j) + (size_t)lo * k->es[j],
                        (size_t)(hi - lo) * k->es[j]);
    }
  }
  sim_copy_nt_done();
}

/* Each member reduces its 1/gs slice of every operand (reading the peers'
 * inputs) and writes it into every member's output: one pass, each input
 * byte read once and each output byte written once, as a memcpy of the
 * same bytes would.  Inputs are only read in the reader's own slice, so an
 * output in place of its input would be safe.  Groups larger than
 * SIM_COLL_MAXG write their own output, then gather the others' slices. */
SIM_PRIVATE xrt_status sim_run_all_reduce(const sim_step *st, void **vals,
                                     sim_cx *cx) {
  const sim_coll *k = (const sim_coll *)st->data;
  sim_cview v;
  if (cx->exe && cx->exe->xp_proc) { /* collectives across processes */
    int handled;
    xrt_status xrc = sim_xp_all_reduce(st, vals, cx, k, &handled);
    if (handled) return xrc;
  }
  xrt_status rc = sim_coll_enter(st, vals, cx, k, &v, NULL, 0);
  if (rc) return rc;
  char *outs[SIM_COLL_MAXG];
  int32_t nout = v.l && v.gs > 1 && v.gs <= SIM_COLL_MAXG ? v.gs : 1;
  for (int32_t j = 0; j < k->nops && !rc; j++) {
    int64_t lo, hi;
    sim_slice(k->numel[j], v.gs, v.me, &lo, &hi);
    outs[0] = (char *)vals[st->out[j]];
    for (int32_t m = 0; nout > 1 && m < nout; m++)
      outs[m] = sim_peer_out(&v, v.mem[m], j);
    rc = sim_reduce_slice(k, j, vals, cx, &v, outs, nout, 0, lo, hi);
  }
  sim_copy_nt_done();
  if (rc) return sim_coll_own_error(cx, &v, rc);
  if (nout > 1 || v.gs <= 1) return sim_coll_phase(cx, st, &v, 2, NULL, 0);
  if ((rc = sim_coll_phase(cx, st, &v, 2, NULL, 0))) return rc;
  sim_gather_slices(st, vals, k, &v);
  return sim_coll_phase(cx, st, &v, 3, NULL, 0);
}

/* The collective of op's operands over the replica groups of its
 * channel mode (group size to *gs unless NULL), with its reduction body
 * when body is set. */
SIM_PRIVATE xrt_status sim_coll_grouped(sim_fcc *fc, const xrt_ir_op *op,
                                   int body, int32_t *gs, sim_coll **out) {
  sim_coll *k = sim_coll_new(fc, op, op->num_operands);
  int mode = 0; /* set by sim_pg_mode3 (gcc cannot see it once inlined) */
  if (!k) return XRT_RESOURCE_EXHAUSTED;
  xrt_status rc;
  if ((rc = sim_pg_mode3(fc, op, &mode)) ||
      (rc = sim_pg_groups(fc, op, k, mode, 1, gs)) ||
      (body && (rc = sim_coll_body(fc, op, k))))
    return rc;
  *out = k;
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_lower_all_reduce(sim_fcc *fc, const xrt_ir_op *op,
                                       sim_step *st) {
  int32_t nops = op->num_operands;
  xrt_status rc = sim_coll_check_same_size(fc, op, nops);
  if (rc) return rc;
  sim_coll *k;
  if ((rc = sim_coll_grouped(fc, op, 1, NULL, &k))) return rc;
  st->data = k;
  st->run = sim_run_all_reduce;
  return XRT_OK;
}
