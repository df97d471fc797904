/*
 * src/pjrt_plugin/handle.c - the handle table: every object the plugin
 * hands to a PJRT host is named by a handle, so that a released or foreign
 * pointer is recognised without reading freed memory.
 * Part of libxrt_pjrt.so; MIT licensed, see LICENSE.
 *
 * A handle is (generation << XP_IDX_BITS) | (slot index + 1), never 0.  A
 * slot holds the object and a tag, generation << 8 | kind; the handle is
 * live while the tag matches.  Slots live in chunks that are allocated on
 * first need and never freed, so a lookup may read any slot at any time:
 * it is one acquire load of the tag and a compare, without a lock.
 * Creating and retiring take a spin lock around the free list only (a few
 * instructions).  Retiring bumps nothing: the next use of the slot does,
 * so a handle never comes back to life until its generation wraps (2^36
 * reuses of one slot on 64-bit targets).
 *
 * Also here: the plugin's allocator (xp_malloc, xp_calloc, xp_free and
 * xp_allocator for the xrt objects it creates), with the test hooks that
 * fail the Nth allocation (test/test_pjrt_plugin_alloc.c).
 */
#include "internal.h"

/* ---- host memory ----
 * One place for every allocation of the plugin (and of the xrt contexts
 * and clients it makes, through xp_allocator).  With XP_ALLOC_HOOKS (a
 * test's build only) any one of them can be made to fail, and the blocks
 * in use are counted. */

#ifdef XP_ALLOC_HOOKS
static _Atomic int xp_fail_armed;      /* 0: no allocation fails */
static _Atomic long xp_fail_calls;     /* allocations since arming */
static _Atomic long xp_fail_at;        /* the one that fails, 1-based */
static _Atomic int xp_fail_persistent; /* ... and every later one */
static _Atomic int xp_fail_happened;
static _Atomic long xp_live_blocks;

XP_PRIVATE void xp_alloc_fail_after(long n, int persistent) {
  atomic_store(&xp_fail_armed, 0);
  if (n < 0) return; /* the counts stay, for the caller to read */
  atomic_store(&xp_fail_calls, 0);
  atomic_store(&xp_fail_at, n + 1);
  atomic_store(&xp_fail_persistent, persistent != 0);
  atomic_store(&xp_fail_happened, 0);
  atomic_store(&xp_fail_armed, 1);
}

XP_PRIVATE long xp_alloc_calls(void) { return atomic_load(&xp_fail_calls); }

XP_PRIVATE int xp_alloc_failed(void) {
  return atomic_load(&xp_fail_happened);
}

XP_PRIVATE long xp_alloc_live(void) { return atomic_load(&xp_live_blocks); }

/* Whether this allocation is the one (or, persistent, one of those) to
 * fail. */
static int xp_alloc_fails(void) {
  if (!atomic_load(&xp_fail_armed)) return 0;
  long call = atomic_fetch_add(&xp_fail_calls, 1) + 1;
  long at = atomic_load(&xp_fail_at);
  if (call != at && !(call > at && atomic_load(&xp_fail_persistent)))
    return 0;
  atomic_store(&xp_fail_happened, 1);
  return 1;
}

/* p, a new block or NULL, counted. */
static void *xp_alloc_counted(void *p) {
  if (p) atomic_fetch_add(&xp_live_blocks, 1);
  return p;
}
#define XP_FAILS() xp_alloc_fails()
#define XP_COUNTED(p) xp_alloc_counted(p)
#define XP_UNCOUNT(p) \
  ((p) ? (void)atomic_fetch_sub(&xp_live_blocks, 1) : (void)0)
#else
#define XP_FAILS() 0
#define XP_COUNTED(p) (p)
#define XP_UNCOUNT(p) ((void)0)
#endif

XP_PRIVATE void *xp_malloc(size_t size) {
  return XP_FAILS() ? NULL : XP_COUNTED(malloc(size ? size : 1));
}

XP_PRIVATE void *xp_calloc(size_t n, size_t size) {
  return XP_FAILS() ? NULL : XP_COUNTED(calloc(n ? n : 1, size ? size : 1));
}

XP_PRIVATE void xp_free(void *p) {
  XP_UNCOUNT(p);
  free(p);
}

static void *xp_allocator_alloc(void *self, size_t size) {
  (void)self;
  return xp_malloc(size);
}

static void xp_allocator_free(void *self, void *p) {
  (void)self;
  xp_free(p);
}

XP_PRIVATE xrt_allocator xp_allocator(void) {
  xrt_allocator a = {NULL, xp_allocator_alloc, xp_allocator_free};
  return a;
}

/* ---- the handle table ---- */

/* XP_IDX_BITS, XP_DIR_SIZE, XP_CHUNK, the slot, the lookup and the
 * retiring and renewing of kept slots: internal.h. */

XP_PRIVATE_DATA _Atomic(xp_slot *) xp_dir[XP_DIR_SIZE];
static atomic_flag xp_lock = ATOMIC_FLAG_INIT;
static uint32_t xp_used;               /* slots ever handed out */
static uint32_t xp_free_head = XP_NO_SLOT;

static void xp_lock_take(void) {
  while (atomic_flag_test_and_set_explicit(&xp_lock, memory_order_acquire))
    sched_yield(); /* held for a few instructions only */
}

static void xp_lock_give(void) {
  atomic_flag_clear_explicit(&xp_lock, memory_order_release);
}

static xp_slot *xp_slot_at(uint32_t idx) {
  xp_slot *chunk =
      atomic_load_explicit(&xp_dir[idx / XP_CHUNK], memory_order_acquire);
  return chunk ? &chunk[idx % XP_CHUNK] : NULL;
}

/* A free slot index (under xp_lock); XP_NO_SLOT when the table is full
 * or a new chunk cannot be allocated. */
static uint32_t xp_slot_take(void) {
  if (xp_free_head != XP_NO_SLOT) {
    uint32_t idx = xp_free_head;
    xp_free_head = xp_slot_at(idx)->next_free;
    return idx;
  }
  if ((uint64_t)xp_used >= (uint64_t)XP_DIR_SIZE * XP_CHUNK ||
      (uint64_t)xp_used >= XP_IDX_MASK)
    return XP_NO_SLOT;
  if (xp_used % XP_CHUNK == 0) {
    xp_slot *chunk = (xp_slot *)xp_calloc(XP_CHUNK, sizeof *chunk);
    if (!chunk) return XP_NO_SLOT;
    atomic_store_explicit(&xp_dir[xp_used / XP_CHUNK], chunk,
                          memory_order_release);
  }
  return xp_used++;
}

XP_PRIVATE void *xp_handle_new(void *obj, xp_kind kind) {
  xp_lock_take();
  uint32_t idx = xp_slot_take();
  uintptr_t h = 0;
  if (idx != XP_NO_SLOT) {
    xp_slot *s = xp_slot_at(idx);
    uint64_t gen =
        ((atomic_load_explicit(&s->tag, memory_order_relaxed) >> XP_KIND_BITS) +
         1) & XP_GEN_MASK;
    if (gen == 0) gen = 1;
    atomic_store_explicit(&s->obj, obj, memory_order_relaxed);
    atomic_store_explicit(&s->tag, gen << XP_KIND_BITS | (uint64_t)kind,
                          memory_order_release);
    h = (uintptr_t)(gen << XP_IDX_BITS) | (uintptr_t)(idx + 1u);
  }
  xp_lock_give();
  return (void *)h;
}

XP_PRIVATE void xp_handle_slot_free(uint32_t idx) {
  xp_slot *s = xp_slot_at(idx);
  xp_lock_take();
  s->next_free = xp_free_head;
  xp_free_head = idx;
  xp_lock_give();
}

XP_PRIVATE void *xp_handle_retire(const void *handle, xp_kind kind) {
  void *obj = xp_handle_retire_keep(handle, kind);
  if (obj) xp_handle_slot_free(xp_handle_slot(handle));
  return obj;
}

#if defined(__GNUC__)
/* The chunks are freed when the library is unloaded (dlclose, or the
 * process's exit), not before: lookups may read any slot while it is
 * loaded.  Without this, a host that unloads the plugin would leak them. */
__attribute__((destructor)) static void xp_handles_unload(void) {
  for (uint32_t c = 0; c < XP_DIR_SIZE; c++) {
    xp_slot *chunk = atomic_exchange(&xp_dir[c], NULL);
    if (!chunk) break; /* chunks are allocated in order */
    xp_free(chunk);
  }
  xp_used = 0;
  xp_free_head = XP_NO_SLOT;
}
#endif
