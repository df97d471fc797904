/*
 * src/sim/gemm_cache.c - packed GEMM operands kept across executes.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"
/* ======================================================================
 * The packed-operand cache
 *
 * A model passes its weights as arguments, the same buffers call after
 * call; the GEMM packs its B operand into micro-panels on every call
 * (an eighth of a transformer's time).  When that operand is an argument
 * of the execute, the product asks here for its packed copy, keyed by
 *
 *   (product gid, device, argument memory, write generation)
 *
 * where the generation (sim_mem_serial) is a process-wide serial that
 * device.c renews at every allocation of and every write into the block,
 * so memory freed and allocated again at the same address, or rewritten,
 * never matches an old entry; memory without a generation (adopted host
 * memory, a block whose host address was handed out) is never cached.
 * Nothing is guessed from contents.
 *
 * Each (gid, device) has at most one entry: a new key replaces the old
 * one.  The first sight of a key only records it (state SEEN); the second
 * allocates and fills the packed copy (FILLING, by the caller, outside the
 * lock), which later calls read (READY).  So a training step, whose
 * weights are new buffers every call, never copies.  Entries in use
 * (refs) are never freed.  Memory is bounded by SIM_GC_BYTES (or
 * XRT_SIM_GEMM_CACHE_MB megabytes, read when a client's cache is made; 0
 * turns the cache off): to make
 * room an entry may evict only entries that were not used since the
 * entrant's own previous call (products of destroyed executables, or of
 * programs no longer run); products that are all in use every call and do
 * not fit keep packing as before instead of evicting each other.  Every
 * entry is freed with the client.
 * ==================================================================== */

enum { SIM_GC_SLOTS = 128 };
#define SIM_GC_BYTES ((size_t)1 << 30) /* packed bytes, at most */

enum { SIM_GC_FREE, SIM_GC_SEEN, SIM_GC_FILLING, SIM_GC_READY };

typedef struct sim_gc_ent {
  uint64_t gid, serial, last; /* last: clock of the latest use */
  const void *mem;
  int device, state, refs;
  void *raw;   /* allocation (data aligned inside it) */
  void *data;
  size_t bytes; /* reserved against the cache's cap */
} sim_gc_ent;

struct sim_gcache {
  atomic_flag mu;
  size_t bytes, cap; /* packed bytes held, at most */
  uint64_t clock;
  sim_gc_ent e[SIM_GC_SLOTS];
};

static _Atomic uint64_t sim_gc_next_id = 1;

SIM_PRIVATE uint64_t sim_gcache_id(void) {
  return atomic_fetch_add(&sim_gc_next_id, 1);
}

static void sim_gc_lock(struct sim_gcache *g) {
  while (atomic_flag_test_and_set_explicit(&g->mu, memory_order_acquire))
    sched_yield();
}

static void sim_gc_unlock(struct sim_gcache *g) {
  atomic_flag_clear_explicit(&g->mu, memory_order_release);
}

/* The cap on packed bytes: XRT_SIM_GEMM_CACHE_MB when it is a number of
 * megabytes (0: no cache), else SIM_GC_BYTES. */
static size_t sim_gc_cap(void) {
  const char *v = getenv("XRT_SIM_GEMM_CACHE_MB");
  char *end = NULL;
  unsigned long long mb = v && *v ? strtoull(v, &end, 10) : 0;
  if (!v || !*v || *end || mb > (SIZE_MAX >> 20)) return SIM_GC_BYTES;
  return (size_t)mb << 20;
}

/* The client's cache, made on first use; NULL when out of memory. */
static struct sim_gcache *sim_gc_of(sim_client *c) {
  struct sim_gcache *g = atomic_load(&c->gcache);
  if (g) return g;
  struct sim_gcache *n =
      (struct sim_gcache *)c->al.alloc(c->al.self, sizeof *n);
  if (!n) return NULL;
  memset(n, 0, sizeof *n);
  n->cap = sim_gc_cap();
  atomic_flag_clear(&n->mu);
  if (atomic_compare_exchange_strong(&c->gcache, &g, n)) return n;
  c->al.free(c->al.self, n); /* another thread made it first: g */
  return g;
}

/* Frees an unused entry's bytes; it becomes SEEN (or FREE). Locked. */
static void sim_gc_drop(sim_client *c, struct sim_gcache *g, sim_gc_ent *e,
                        int state) {
  if (e->raw) c->al.free(c->al.self, e->raw);
  g->bytes -= e->bytes;
  e->raw = e->data = NULL;
  e->bytes = 0;
  e->state = state;
}

/* Makes room for need bytes by evicting unused READY entries last used
 * before `before`, the least recently used first.  Locked. */
static int sim_gc_room(sim_client *c, struct sim_gcache *g, size_t need,
                       uint64_t before) {
  while (g->bytes + need > g->cap) {
    sim_gc_ent *v = NULL;
    for (int i = 0; i < SIM_GC_SLOTS; i++) {
      sim_gc_ent *e = &g->e[i];
      if (e->state == SIM_GC_READY && !e->refs && e->last < before &&
          (!v || e->last < v->last))
        v = e;
    }
    if (!v) return 0;
    sim_gc_drop(c, g, v, SIM_GC_FREE);
  }
  return 1;
}

SIM_PRIVATE void *sim_gcache_get(sim_client *c, uint64_t gid, int device,
                                 const void *mem, uint64_t serial,
                                 size_t bytes, int *fill, void **entry) {
  *fill = 0;
  *entry = NULL;
  if (!c || !mem || !serial || !bytes) return NULL;
  struct sim_gcache *g = sim_gc_of(c);
  if (!g || bytes > g->cap) return NULL;
  sim_gc_lock(g);
  uint64_t now = ++g->clock;
  sim_gc_ent *e = NULL, *slot = NULL;
  for (int i = 0; i < SIM_GC_SLOTS && !e; i++) {
    sim_gc_ent *x = &g->e[i];
    if (x->state != SIM_GC_FREE && x->gid == gid && x->device == device)
      e = x;
    else if (x->state == SIM_GC_FREE && !slot)
      slot = x;
  }
  void *out = NULL;
  if (e && e->mem == mem && e->serial == serial) {
    if (e->state == SIM_GC_READY) { /* hit */
      e->refs++;
      e->last = now;
      out = e->data;
    } else if (e->state == SIM_GC_SEEN) { /* second sight: fill */
      uint64_t before = e->last;
      e->last = now;
      if (sim_gc_room(c, g, bytes, before)) {
        e->state = SIM_GC_FILLING;
        e->refs = 1;
        e->bytes = bytes;
        g->bytes += bytes;
        *fill = 1;
      }
    } /* FILLING: another thread packs it; pack as usual meanwhile */
    sim_gc_unlock(g);
    if (!*fill) {
      if (out) *entry = e;
      return out;
    }
    /* allocate outside the lock; only this thread touches a FILLING
     * entry's bytes */
    void *raw = c->al.alloc(c->al.self, bytes + SIM_ALIGN);
    sim_gc_lock(g);
    if (!raw) {
      e->refs = 0;
      sim_gc_drop(c, g, e, SIM_GC_SEEN);
      sim_gc_unlock(g);
      *fill = 0;
      return NULL;
    }
    e->raw = raw;
    e->data = (char *)raw + (SIM_ALIGN - (uintptr_t)raw % SIM_ALIGN) % SIM_ALIGN;
    sim_gc_unlock(g);
    *entry = e;
    return e->data;
  }
  /* A new key: it replaces the product's old entry, or takes a free slot,
   * or the least recently used unused SEEN one. */
  if (e && e->refs) e = NULL; /* in use: leave it, record nothing */
  else if (e) sim_gc_drop(c, g, e, SIM_GC_SEEN);
  else if (slot) e = slot;
  else
    for (int i = 0; i < SIM_GC_SLOTS; i++) {
      sim_gc_ent *x = &g->e[i];
      if (x->state == SIM_GC_SEEN && (!e || x->last < e->last)) e = x;
    }
  if (e) {
    e->gid = gid, e->device = device, e->mem = mem, e->serial = serial;
    e->state = SIM_GC_SEEN;
    e->refs = 0;
    e->last = now;
  }
  sim_gc_unlock(g);
  return NULL;
}

SIM_PRIVATE void sim_gcache_put(sim_client *c, void *entry, int filled) {
  sim_gc_ent *e = (sim_gc_ent *)entry;
  struct sim_gcache *g = c ? atomic_load(&c->gcache) : NULL;
  if (!e || !g) return;
  sim_gc_lock(g);
  e->refs--;
  if (e->state == SIM_GC_FILLING) {
    if (filled) e->state = SIM_GC_READY;
    else sim_gc_drop(c, g, e, SIM_GC_SEEN);
  }
  sim_gc_unlock(g);
}

SIM_PRIVATE void sim_gcache_free(sim_client *c) {
  struct sim_gcache *g = c ? atomic_load(&c->gcache) : NULL;
  if (!g) return;
  for (int i = 0; i < SIM_GC_SLOTS; i++)
    if (g->e[i].raw) c->al.free(c->al.self, g->e[i].raw);
  c->al.free(c->al.self, g);
  atomic_store(&c->gcache, NULL);
}

SIM_PRIVATE void *sim_gcache_get_arg(sim_cx *cx, uint64_t gid,
                                     const void *mem, size_t bytes, int *fill,
                                     void **entry) {
  *entry = NULL;
  if (!gid || !cx || !cx->xa || !cx->exe || !cx->xa->args) return NULL;
  const xrt_plugin_execute_args *a = cx->xa;
  int arg = 0;
  for (int i = 0; i < a->num_args && !arg; i++) arg = a->args[i] == mem;
  if (!arg) return NULL;
  sim_client *c = cx->exe->cl;
  uint64_t serial = sim_mem_serial(c, a->device, mem);
  if (!serial) return NULL;
  return sim_gcache_get(c, gid, a->device, mem, serial, bytes, fill, entry);
}
