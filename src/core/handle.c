/*
 * src/core/handle.c - generation-checked object handles.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

#define XRT__HCHUNK 4096u
#define XRT__HMAXCHUNKS 4096u
#define XRT__HIDX_BITS 24u /* 16M live handles */
#define XRT__HIDX_MASK ((1u << XRT__HIDX_BITS) - 1u)
#define XRT__HGEN_MASK ((uint64_t)(UINTPTR_MAX >> XRT__HIDX_BITS))

typedef struct xrt__hslot {
  _Atomic uint64_t tag; /* generation << 8 | kind */
  void *obj;
  uint32_t next_free;
} xrt__hslot;

static _Atomic(xrt__hslot *) xrt__hchunks[XRT__HMAXCHUNKS];
static atomic_flag xrt__hmu = ATOMIC_FLAG_INIT; /* the free list */
static uint32_t xrt__hcount;
static uint32_t xrt__hfree = UINT32_MAX;
static uint32_t xrt__hused; /* slots taken and not freed (under xrt__hmu) */

/* Spin locks guard the free list, the stripes, the client's object lists
 * and the device queues: a few instructions each, and a lock/unlock pair
 * costs one atomic exchange where a mutex costs two (dispatch takes about
 * ten of them per call). */
#define XRT__HSTRIPES 64u
static atomic_flag xrt__hstripes[XRT__HSTRIPES];

static xrt__hslot *xrt__hslot_at(uint32_t idx) {
  xrt__hslot *c = atomic_load_explicit(&xrt__hchunks[idx / XRT__HCHUNK],
                                       memory_order_acquire);
  return c ? &c[idx % XRT__HCHUNK] : NULL;
}

/* Takes a free slot index (under xrt__hmu); UINT32_MAX when full. */
static uint32_t xrt__hslot_take(void) {
  if (xrt__hfree != UINT32_MAX) {
    uint32_t idx = xrt__hfree;
    xrt__hfree = xrt__hslot_at(idx)->next_free;
    return idx;
  }
  if (xrt__hcount >= XRT__HIDX_MASK) return UINT32_MAX;
  uint32_t chunk = xrt__hcount / XRT__HCHUNK;
  if (xrt__hcount % XRT__HCHUNK == 0) {
    /* Handle chunks are process-wide and live until exit. */
    xrt__hslot *c = (xrt__hslot *)calloc(XRT__HCHUNK, sizeof(xrt__hslot));
    if (!c) return UINT32_MAX;
    atomic_store_explicit(&xrt__hchunks[chunk], c, memory_order_release);
  }
  return xrt__hcount++;
}

/* Registers obj; returns its handle, or 0 when out of memory. */
XRT__PRIVATE uintptr_t xrt__hnew(void *obj, int kind) {
  xrt__spin_lock(&xrt__hmu);
  uint32_t idx = xrt__hslot_take();
  uintptr_t h = 0;
  if (idx != UINT32_MAX) {
    xrt__hused++;
    xrt__hslot *s = xrt__hslot_at(idx);
    uint64_t gen = ((atomic_load(&s->tag) >> 8) + 1) & XRT__HGEN_MASK;
    if (gen == 0) gen = 1;
    s->obj = obj;
    atomic_store_explicit(&s->tag, gen << 8 | (uint64_t)kind,
                          memory_order_release);
    h = (uintptr_t)(gen << XRT__HIDX_BITS) | (uintptr_t)(idx + 1);
  }
  xrt__spin_unlock(&xrt__hmu);
  return h;
}

XRT__PRIVATE void *xrt__hget(const void *handle, int kind) {
  uintptr_t h = (uintptr_t)handle;
  uint32_t idx = (uint32_t)(h & XRT__HIDX_MASK);
  if (idx == 0 || idx - 1 >= XRT__HCHUNK * XRT__HMAXCHUNKS) return NULL;
  xrt__hslot *s = xrt__hslot_at(idx - 1);
  if (!s) return NULL;
  uint64_t want = (uint64_t)(h >> XRT__HIDX_BITS) << 8 | (uint64_t)kind;
  if (atomic_load_explicit(&s->tag, memory_order_acquire) != want) return NULL;
  return s->obj;
}

/* Invalidates a handle (the generation stays, so old copies fail). */
XRT__PRIVATE void xrt__hfree_handle(uintptr_t h) {
  if (!h) return;
  uint32_t idx = (uint32_t)(h & XRT__HIDX_MASK) - 1;
  xrt__spin_lock(&xrt__hmu);
  xrt__hslot *s = xrt__hslot_at(idx);
  uint64_t tag = atomic_load(&s->tag);
  atomic_store_explicit(&s->tag, tag & ~(uint64_t)0xff, memory_order_release);
  s->obj = NULL;
  s->next_free = xrt__hfree;
  xrt__hfree = idx;
  xrt__hused--;
  xrt__spin_unlock(&xrt__hmu);
}

#if defined(__GNUC__)
/* When a shared library holding xrt is unloaded (libxrt.so, or a plugin
 * such as libxrt_pjrt.so that carries its own copy of the core) after its
 * user released everything, the chunks would otherwise become unreachable
 * memory.  With objects still alive (a process exiting without releasing
 * them, whose threads may still look handles up) they are left alone. */
__attribute__((destructor)) static void xrt__hchunks_release(void) {
  xrt__spin_lock(&xrt__hmu);
  if (xrt__hused == 0) {
    for (uint32_t c = 0; c < XRT__HMAXCHUNKS; c++) {
      xrt__hslot *p = atomic_exchange(&xrt__hchunks[c], NULL);
      free(p);
    }
    xrt__hcount = 0;
    xrt__hfree = UINT32_MAX;
  }
  xrt__spin_unlock(&xrt__hmu);
}
#endif

/* Invalidates a handle but keeps its slot for the object's next life
 * (xrt__hrenew): recycled buffers reuse their slot, so neither dispatch nor
 * release takes the free-list lock.  The slot's obj stays the object. */
XRT__PRIVATE void xrt__hkill(uintptr_t h) {
  if (!h) return;
  xrt__hslot *s = xrt__hslot_at((uint32_t)(h & XRT__HIDX_MASK) - 1);
  uint64_t tag = atomic_load_explicit(&s->tag, memory_order_relaxed);
  atomic_store_explicit(&s->tag, tag & ~(uint64_t)0xff, memory_order_release);
}

/* A new handle (the next generation) in the killed slot of h, whose obj
 * is still the object being reborn. */
XRT__PRIVATE uintptr_t xrt__hrenew(uintptr_t h, int kind) {
  uint32_t idx = (uint32_t)(h & XRT__HIDX_MASK) - 1;
  xrt__hslot *s = xrt__hslot_at(idx);
  uint64_t tag = atomic_load_explicit(&s->tag, memory_order_relaxed);
  uint64_t gen = ((tag >> 8) + 1) & XRT__HGEN_MASK;
  if (gen == 0) gen = 1;
  atomic_store_explicit(&s->tag, gen << 8 | (uint64_t)kind,
                        memory_order_release);
  return (uintptr_t)(gen << XRT__HIDX_BITS) | (uintptr_t)(idx + 1);
}

XRT__PRIVATE atomic_flag *xrt__hstripe(const void *handle) {
  return &xrt__hstripes[((uintptr_t)handle & XRT__HIDX_MASK) % XRT__HSTRIPES];
}

/* Looks up a refcounted object whose memory outlives its handles (buffers
 * and executables: dead objects are recycled, never freed while their
 * client lives) and takes a reference with one atomic operation and no
 * lock.  A stale handle may reach a dead object (refs 0: refused) or a
 * reborn one, which the second look at the handle catches: then *stale is
 * set and the caller drops the reference it got.  The owner stores a
 * nonzero count only into an object at 0, so no increment is lost. */
XRT__PRIVATE void *xrt__hpin(const void *handle, int kind, size_t refs_at,
                       bool *stale) {
  *stale = false;
  char *obj = (char *)xrt__hget(handle, kind);
  if (!obj) return NULL;
  _Atomic int *refs = (_Atomic int *)(void *)(obj + refs_at);
  int r = atomic_load_explicit(refs, memory_order_relaxed);
  do {
    if (r == 0) return NULL;
  } while (!atomic_compare_exchange_weak_explicit(
      refs, &r, r + 1, memory_order_acquire, memory_order_relaxed));
  *stale = xrt__hget(handle, kind) != obj;
  return obj;
}

/* Invalidates a live handle and returns its object (whose reference the
 * caller now drops); NULL if it was not live, so of two racing releases
 * exactly one wins.  Recycled kinds keep the slot (xrt__hkill). */
XRT__PRIVATE void *xrt__hrevoke(const void *handle, int kind) {
  atomic_flag *mu = xrt__hstripe(handle);
  xrt__spin_lock(mu);
  void *obj = xrt__hget(handle, kind);
  if (obj && (kind == XRT__H_BUFFER || kind == XRT__H_EXECUTABLE))
    xrt__hkill((uintptr_t)handle);
  else if (obj) xrt__hfree_handle((uintptr_t)handle);
  xrt__spin_unlock(mu);
  return obj;
}

/* Frees h if it is still obj's live handle (client release). */
XRT__PRIVATE void xrt__hfree_if_live(uintptr_t h, int kind, const void *obj) {
  if (h && xrt__hget((const void *)h, kind) == obj) xrt__hfree_handle(h);
}
