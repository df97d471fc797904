/*
 * src/core/compile_cache.c - the compilation cache: keys, the in-memory
 * single-flight LRU, shared executables, the persistent store's payload,
 * aliases.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* Multi-process clients (the helpers are in section 13a, which holds
 * the process table): the global device count; the client's part of the
 * key, alike in every process; and a stored assignment (global ids at
 * a[2n..3n)) placed in this process (local devices at a[0..n), their
 * processes at a[n..2n)). */

XRT__PRIVATE void xrt__exe_shared_unref(xrt__exe_shared *sh) {
  if (!sh || atomic_fetch_sub(&sh->refs, 1) != 1) return;
  xrt__client *c = sh->client;
  const xrt_allocator *a = &c->allocator;
  if (sh->pexe && c->api->executable_destroy)
    c->api->executable_destroy(sh->pexe);
  for (int32_t i = 0; sh->targets && i < sh->num_bindings; i++)
    xrt__free(a, sh->targets[i]);
  xrt__free(a, sh->targets);
  xrt__free(a, sh->bindings);
  xrt__free(a, sh->inputs);
  xrt__free(a, sh->outputs);
  xrt__free(a, sh->assignment);
  xrt__free(a, sh->name);
  xrt__free(a, sh->module_name);
  if (sh->program) xrt__program_unref(sh->program);
  xrt__free(a, sh);
}

/* STATEFUL: the program keeps state between executions (stablehlo.rng
 * draws a new sequence each run), so its executables are never shared:
 * the entry only tells later callers to compile on their own. */
enum { XRT__CE_COMPILING, XRT__CE_DONE, XRT__CE_FAILED, XRT__CE_STATEFUL };

#define XRT__MEMO_SLOTS 1024u
#define XRT__CACHE_MAX_MSG 2048

#define XRT__CSTAT(k, field) \
  atomic_fetch_add_explicit(&(k)->field, 1, memory_order_relaxed)

/* ---- keys ---- */

static void xrt__key_hex(const uint64_t key[2],
                         char out[XRT_CACHE_KEY_CHARS + 1]) {
  snprintf(out, XRT_CACHE_KEY_CHARS + 1, "%016" PRIx64 "%016" PRIx64, key[0],
           key[1]);
}

static bool xrt__canon_ident(char ch) {
  unsigned char u = (unsigned char)ch;
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
         (u >= '0' && u <= '9') || u == '_' || u == '.' || u == '$' ||
         u == '@' || u == '%' || u == '#' || u >= 0x80;
}

static bool xrt__canon_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' ||
         ch == '\v';
}

/* The end of the string literal that starts at t[i] (a quote). */
static size_t xrt__canon_string_end(const char *t, size_t n, size_t i) {
  for (i++; i < n; i++) {
    if (t[i] == '\\') i++;
    else if (t[i] == '"') return i + 1;
  }
  return n;
}

/* The end of the parenthesised group opening at t[i]. */
static size_t xrt__canon_group_end(const char *t, size_t n, size_t i) {
  int depth = 0;
  while (i < n) {
    char ch = t[i];
    if (ch == '"') {
      i = xrt__canon_string_end(t, n, i);
      continue;
    }
    if (ch == '(') depth++;
    else if (ch == ')' && --depth == 0) return i + 1;
    i++;
  }
  return n;
}

/* After "#loc..." at a line start: the position past "=", or 0. */
static size_t xrt__canon_alias(const char *t, size_t n, size_t i) {
  if (n - i < 4 || memcmp(t + i, "#loc", 4) != 0) return 0;
  size_t j = i + 4;
  while (j < n && xrt__canon_ident(t[j]) && t[j] != '#') j++;
  while (j < n && (t[j] == ' ' || t[j] == '\t')) j++;
  return j < n && t[j] == '=' ? j + 1 : 0;
}

/* The reader below skips to the next character that may change the text
 * (a class table) and hashes the runs kept as they are straight from the
 * input: several times faster than a token at a time, same text read. */
enum { XRT__CC_PLAIN, XRT__CC_BLANK, XRT__CC_WS, XRT__CC_SLASH, XRT__CC_QUOTE,
       XRT__CC_L };
static const unsigned char xrt__canon_class[256] = {
    [' '] = XRT__CC_BLANK, ['\t'] = XRT__CC_WS, ['\n'] = XRT__CC_WS,
    ['\r'] = XRT__CC_WS,   ['\f'] = XRT__CC_WS, ['\v'] = XRT__CC_WS,
    ['/'] = XRT__CC_SLASH, ['"'] = XRT__CC_QUOTE, ['l'] = XRT__CC_L};

/* Whether t[i] starts a debug location ("loc(" not inside a name). */
static bool xrt__canon_is_loc(const char *t, size_t n, size_t i) {
  return n - i >= 4 && memcmp(t + i, "loc(", 4) == 0 &&
         (i == 0 || !xrt__canon_ident(t[i - 1]));
}

/* Whether t[i] starts a comment. */
static bool xrt__canon_comment(const char *t, size_t n, size_t i) {
  return i + 1 < n && t[i] == '/' && t[i + 1] == '/';
}

/* The end of the string literal at t[i]: the next quote not escaped. */
static size_t xrt__canon_string_skip(const char *t, size_t n, size_t i) {
  for (i++; i < n;) {
    const char *q = (const char *)memchr(t + i, '"', n - i);
    if (!q) return n;
    size_t j = (size_t)(q - t), b = 0;
    while (b < j - i && t[j - 1 - b] == '\\') b++;
    if (!(b & 1)) return j + 1;
    i = j + 1;
  }
  return n;
}

/* The end of the run of text kept as is from t[i] (a token start): plain
 * characters, strings, single blanks before a token, '/' and 'l' that
 * start no comment or location. */
static size_t xrt__canon_run(const char *t, size_t n, size_t i) {
  const unsigned char *cls = xrt__canon_class;
  for (;;) {
    while (i < n && !cls[(unsigned char)t[i]]) i++;
    if (i >= n) return n;
    switch (cls[(unsigned char)t[i]]) {
    case XRT__CC_BLANK:
      if (i + 1 < n && cls[(unsigned char)t[i + 1]] < XRT__CC_BLANK) {
        i += 2;
        continue;
      }
      if (i + 1 < n && cls[(unsigned char)t[i + 1]] > XRT__CC_WS &&
          !xrt__canon_comment(t, n, i + 1) && !xrt__canon_is_loc(t, n, i + 1)) {
        i++;
        continue;
      }
      return i;
    case XRT__CC_WS:
      return i;
    case XRT__CC_SLASH:
      if (xrt__canon_comment(t, n, i)) return i;
      i++;
      continue;
    case XRT__CC_QUOTE:
      i = xrt__canon_string_skip(t, n, i);
      continue;
    default: /* 'l' */
      if (xrt__canon_is_loc(t, n, i)) return i;
      i++;
      continue;
    }
  }
}

/* Feeds the text as the key reads it (see the section comment). */
static void xrt__canon_feed(XXH3_state_t *st, const char *t, size_t n) {
  bool space = false, line_start = true, any = false;
  size_t i = 0;
  while (i < n) {
    char ch = t[i];
    if (xrt__canon_space(ch)) {
      space = any;
      if (ch == '\n') line_start = true;
      i++;
      continue;
    }
    if (xrt__canon_comment(t, n, i)) {
      const char *nl = (const char *)memchr(t + i, '\n', n - i);
      i = nl ? (size_t)(nl - t) : n;
      continue;
    }
    size_t past;
    if (line_start && ch == '#' && (past = xrt__canon_alias(t, n, i))) {
      i = past;
      line_start = false;
      continue;
    }
    line_start = false;
    if (ch == 'l' && xrt__canon_is_loc(t, n, i)) {
      i = xrt__canon_group_end(t, n, i + 3);
      space = false; /* "x loc(...)," reads as "x," */
      continue;
    }
    size_t end = xrt__canon_run(t, n, i);
    if (space) XXH3_128bits_update(st, " ", 1);
    XXH3_128bits_update(st, t + i, end - i);
    space = false;
    any = true;
    i = end;
  }
}

/* The text digest: [0] as tokens, [1] as bytes (cache_keep_locations). */
static void xrt__text_digest(const char *text, size_t len, bool keep,
                             uint64_t out[2]) {
  XXH128_hash_t h;
  if (keep) {
    h = XXH3_128bits(text, len);
  } else {
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_128bits_reset(&st);
    xrt__canon_feed(&st, text, len);
    h = XXH3_128bits_digest(&st);
  }
  out[0] = h.high64;
  out[1] = h.low64;
}

XRT__PRIVATE void xrt__cache_digest_program(xrt__program *p, const char *text,
                                      size_t len) {
  if (xrt__is_bytecode(text, len)) {
    /* A portable artifact has no comments or loc(...) text to leave out:
     * its bytes are its key either way (tokenizing 100 MB of weights cost
     * more than reading them). */
    xrt__text_digest(text, len, true, p->text_digest[1]);
    memcpy(p->text_digest[0], p->text_digest[1], sizeof p->text_digest[0]);
    p->has_digest = true;
    return;
  }
  xrt__text_digest(text, len, false, p->text_digest[0]);
  xrt__text_digest(text, len, true, p->text_digest[1]);
  p->has_digest = true;
}

/* The options of a key, as fixed-size words: the entry and the device
 * assignment by their own hashes.  false when they cannot be keyed: a
 * device assignment whose length depends on the module (num_replicas or
 * num_partitions 0) or that is out of range (compiles uncached and fails
 * or succeeds as it would without a cache). */
typedef struct xrt__key_opts {
  uint64_t words[8];
} xrt__key_opts;

static bool xrt__key_options(const xrt__client *c,
                             const xrt_compile_options *o, xrt__key_opts *k) {
  memset(k, 0, sizeof *k);
  k->words[0] = 0x787274636b657931ull; /* "xrtckey1" */
  if (!o) return true;
  if (o->entry) {
    k->words[1] = 1;
    k->words[2] = XXH3_64bits(o->entry, strlen(o->entry));
  }
  k->words[3] = (uint64_t)(uint32_t)o->num_replicas;
  k->words[4] = (uint64_t)(uint32_t)o->num_partitions;
  k->words[5] = o->cache_keep_locations ? 1 : 0;
  if (o->device_assignment) {
    int64_t n = (int64_t)o->num_replicas * o->num_partitions;
    if (o->num_replicas < 1 || o->num_partitions < 1 ||
        n > xrt__cache_ndev(c))
      return false;
    k->words[6] = 1;
    k->words[7] = XXH3_64bits(o->device_assignment,
                              (size_t)n * sizeof(int));
  }
  /* The argument shapes a shape-polymorphic program is refined for (so
   * keys without them stay as they were). */
  for (int i = 0; o->arg_shapes && i < o->num_arg_shapes; i++) {
    const xrt_shape *a = &o->arg_shapes[i];
    int64_t w[2 + XRT_MAX_RANK] = {(int64_t)a->dtype, a->rank};
    for (int32_t d = 0; d < a->rank && d < XRT_MAX_RANK; d++)
      w[2 + d] = a->dims[d];
    k->words[0] = XXH3_64bits_withSeed(w, sizeof w, k->words[0] + (uint64_t)i);
  }
  return true;
}

/* The key from the client's digest, the options and a text digest. */
static void xrt__key_make(const xrt__cache *k, const xrt__key_opts *ko,
                          const uint64_t text[2], uint64_t out[2]) {
  uint64_t w[2 + 8 + 2];
  memcpy(w, k->digest, 16);
  memcpy(w + 2, ko->words, sizeof ko->words);
  memcpy(w + 10, text, 16);
  XXH128_hash_t h = XXH3_128bits(w, sizeof w);
  out[0] = h.high64;
  out[1] = h.low64;
}

/* The client's part of every key (see the section comment). */
static void xrt__cache_client_digest(xrt__client *c, uint64_t out[2]) {
  XXH3_state_t st;
  XXH3_INITSTATE(&st);
  XXH3_128bits_reset(&st);
  const char *name = c->api->name ? c->api->name : "";
  const char *version = c->api->version ? c->api->version : "";
  XXH3_128bits_update(&st, name, strlen(name) + 1);
  XXH3_128bits_update(&st, version, strlen(version) + 1);
  if (c->mp) {
    xrt__cache_mp_digest(c, &st);
  } else {
    int32_t words[3] = {c->num_devices, c->topology.process_count,
                        c->topology.local_world_size};
    XXH3_128bits_update(&st, words, sizeof words);
  }
  for (int i = 0; i < c->num_devices; i++) {
    const char *kind = c->devices[i].desc.kind ? c->devices[i].desc.kind : "";
    XXH3_128bits_update(&st, kind, strlen(kind) + 1);
  }
  XXH128_hash_t h = XXH3_128bits_digest(&st);
  out[0] = h.high64;
  out[1] = h.low64;
}

xrt_status xrt_compile_cache_key(xrt_client *client, const char *text,
                                 size_t len,
                                 const xrt_compile_options *options,
                                 char out_key[XRT_CACHE_KEY_CHARS + 1]) {
  XRT__CHECK_ARG(out_key, "out_key is NULL");
  out_key[0] = 0;
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(text || len == 0, "text is NULL");
  XRT__CHECK_ARG(c->cache, "invalid client");
  xrt__key_opts ko;
  if (!xrt__key_options(c, options, &ko))
    return xrt__fail(XRT_INVALID_ARGUMENT, "xrt_compile_cache_key: a "
                     "device_assignment is keyed only with num_replicas and "
                     "num_partitions set (>= 1, fitting the client's %d "
                     "devices)", xrt__cache_ndev(c));
  uint64_t td[2], key[2];
  xrt__text_digest(text ? text : "", len,
                   options && options->cache_keep_locations, td);
  xrt__key_make(c->cache, &ko, td, key);
  xrt__key_hex(key, out_key);
  return XRT_OK;
}

/* ---- the client's cache object ---- */

/* A store is used only with a plugin that serializes executables. */
static bool xrt__cache_plugin_serializes(const xrt_plugin_api *api) {
  return XRT_STRUCT_HAS(api, xrt_plugin_api, executable_deserialize) &&
         api->executable_serialize && api->serialized_free &&
         api->executable_deserialize;
}

XRT__PRIVATE xrt_status xrt__cache_create(xrt__client *c,
                                    const xrt_client_options *o) {
  const xrt_cache_store *store = o->cache_store;
  if (store && (store->struct_size < sizeof *store || !store->load ||
                !store->save || !store->release_data))
    return xrt__fail(XRT_INVALID_ARGUMENT, "cache_store: struct_size %zu "
                     "(want %zu) or a NULL load, save or release_data",
                     store->struct_size, sizeof *store);
  xrt__cache *k = (xrt__cache *)xrt__calloc(&c->allocator, 1, sizeof *k);
  if (!k) return xrt__nomem("the compilation cache");
  k->budget = o->compile_cache_bytes;
  k->store = store && xrt__cache_plugin_serializes(c->api) ? store : NULL;
  if (store && !k->store)
    xrt__log(XRT_LOG_INFO, "cache", "plugin '%s' does not serialize "
             "executables: its cache_store is not used", c->api->name);
  snprintf(k->identity, sizeof k->identity, "%.70s %.70s",
           c->api->name ? c->api->name : "",
           c->api->version ? c->api->version : "");
  k->lru.prev = k->lru.next = &k->lru;
  pthread_mutex_init(&k->mu, NULL);
  pthread_cond_init(&k->cv, NULL);
  xrt__cache_client_digest(c, k->digest);
  c->cache = k;
  return XRT_OK;
}

XRT__PRIVATE bool xrt__cache_wanted(const xrt__client *c,
                              const xrt_compile_options *o) {
  const xrt__cache *k = c->cache;
  return k && !(o && o->cache_disable) && (k->budget || k->store);
}

static void xrt__centry_free(xrt__client *c, xrt__centry *e) {
  xrt__exe_shared_unref(e->sh);
  xrt__free(&c->allocator, e->message);
  xrt__free(&c->allocator, e);
}

/* Entries unlinked under the lock, freed after it (their executables'
 * destruction calls the plugin). */
typedef struct xrt__cfree {
  xrt__centry *head;
} xrt__cfree;

static void xrt__cfree_run(xrt__client *c, xrt__cfree *f) {
  while (f->head) {
    xrt__centry *e = f->head;
    f->head = e->hnext;
    xrt__centry_free(c, e);
  }
}

static size_t xrt__cache_bucket(const xrt__cache *k, const uint64_t key[2]) {
  return (size_t)(key[0] ^ (key[1] >> 7)) & (k->nbuckets - 1);
}

static xrt__centry *xrt__cache_find(xrt__cache *k, const uint64_t key[2]) {
  if (!k->nbuckets) return NULL;
  for (xrt__centry *e = k->buckets[xrt__cache_bucket(k, key)]; e;
       e = e->hnext)
    if (e->key[0] == key[0] && e->key[1] == key[1]) return e;
  return NULL;
}

/* Doubles the table (starting at 64 buckets); false when out of memory. */
static bool xrt__cache_grow(xrt__client *c, xrt__cache *k) {
  size_t n = k->nbuckets ? 2 * k->nbuckets : 64;
  xrt__centry **b = (xrt__centry **)xrt__calloc(&c->allocator, n, sizeof *b);
  if (!b) return false;
  xrt__centry **old = k->buckets;
  size_t old_n = k->nbuckets;
  k->buckets = b;
  k->nbuckets = n;
  for (size_t i = 0; i < old_n; i++)
    while (old[i]) {
      xrt__centry *e = old[i];
      old[i] = e->hnext;
      size_t h = xrt__cache_bucket(k, e->key);
      e->hnext = b[h];
      b[h] = e;
    }
  xrt__free(&c->allocator, old);
  return true;
}

static bool xrt__cache_insert(xrt__client *c, xrt__cache *k, xrt__centry *e) {
  if (k->count >= k->nbuckets && !xrt__cache_grow(c, k) && !k->nbuckets)
    return false;
  size_t h = xrt__cache_bucket(k, e->key);
  e->hnext = k->buckets[h];
  k->buckets[h] = e;
  e->in_table = true;
  k->count++;
  return true;
}

/* Queues a dropped entry on f once nobody waits on it. */
static void xrt__cache_release_if_unused(xrt__centry *e, xrt__cfree *f) {
  if (e->in_table || e->pins || e->freeing) return;
  e->freeing = true;
  e->hnext = f->head;
  f->head = e;
}

/* Takes e out of the table and the LRU list; queues it on f once nobody
 * waits on it (else the last pin frees it). */
static void xrt__cache_detach(xrt__cache *k, xrt__centry *e, xrt__cfree *f) {
  if (e->in_table) {
    xrt__centry **p = &k->buckets[xrt__cache_bucket(k, e->key)];
    while (*p != e) p = &(*p)->hnext;
    *p = e->hnext;
    e->hnext = NULL;
    e->in_table = false;
    k->count--;
  }
  if (e->in_lru) {
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->in_lru = false;
    k->bytes -= e->bytes;
  }
  xrt__cache_release_if_unused(e, f);
}

static void xrt__cache_lru_front(xrt__cache *k, xrt__centry *e) {
  if (e->in_lru) {
    e->prev->next = e->next;
    e->next->prev = e->prev;
  } else {
    e->in_lru = true;
    k->bytes += e->bytes;
  }
  e->next = k->lru.next;
  e->prev = &k->lru;
  k->lru.next->prev = e;
  k->lru.next = e;
}

/* Keeps a finished entry (most recent) and evicts the least recently used
 * ones beyond the budget; one larger than the whole budget is not kept. */
static void xrt__cache_keep(xrt__cache *k, xrt__centry *e, xrt__cfree *f) {
  if (!e->in_table) return;
  if (e->bytes > k->budget) {
    xrt__cache_detach(k, e, f);
    XRT__CSTAT(k, evictions);
    return;
  }
  xrt__cache_lru_front(k, e);
  while (k->bytes > k->budget && k->lru.prev != &k->lru) {
    xrt__cache_detach(k, k->lru.prev, f);
    XRT__CSTAT(k, evictions);
  }
}

XRT__PRIVATE void xrt__cache_free(xrt__client *c) {
  xrt__cache *k = c->cache;
  if (!k) return;
  xrt__cfree f = {NULL};
  for (size_t i = 0; i < k->nbuckets; i++)
    while (k->buckets[i]) xrt__cache_detach(k, k->buckets[i], &f);
  xrt__cfree_run(c, &f);
  xrt__free(&c->allocator, k->buckets);
  xrt__free(&c->allocator, k->memo);
  pthread_mutex_destroy(&k->mu);
  pthread_cond_destroy(&k->cv);
  xrt__free(&c->allocator, k);
  c->cache = NULL;
}

xrt_status xrt_client_clear_cache(xrt_client *client) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c && c->cache, "invalid client");
  xrt__cache *k = c->cache;
  xrt__cfree f = {NULL};
  pthread_mutex_lock(&k->mu);
  for (size_t i = 0; i < k->nbuckets; i++)
    while (k->buckets[i]) xrt__cache_detach(k, k->buckets[i], &f);
  if (k->memo) memset(k->memo, 0, sizeof *k->memo * XRT__MEMO_SLOTS);
  pthread_mutex_unlock(&k->mu);
  xrt__cfree_run(c, &f);
  return XRT_OK;
}

xrt_status xrt_client_get_cache_stats(const xrt_client *client,
                                      xrt_cache_stats *out) {
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c && c->cache, "invalid client");
  XRT__CHECK_ARG(out, "out is NULL");
  xrt__cache *k = c->cache;
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&k->mu);
  out->entries = k->count;
  out->bytes = k->bytes;
  pthread_mutex_unlock(&k->mu);
  out->hits = atomic_load(&k->hits);
  out->misses = atomic_load(&k->misses);
  out->evictions = atomic_load(&k->evictions);
  out->failures_cached = atomic_load(&k->failures_cached);
  out->store_hits = atomic_load(&k->store_hits);
  out->store_misses = atomic_load(&k->store_misses);
  out->store_writes = atomic_load(&k->store_writes);
  out->store_errors = atomic_load(&k->store_errors);
  return XRT_OK;
}

/* ---- shared executables ---- */

/* Whether a failure depends only on the program and options (kept in
 * memory), or on something that may change (compiled again next time). */
static bool xrt__cache_failure_kept(xrt_status s) {
  switch (s) {
  case XRT_INVALID_ARGUMENT: case XRT_UNIMPLEMENTED:
  case XRT_FAILED_PRECONDITION: case XRT_OUT_OF_RANGE:
  case XRT_ALREADY_EXISTS: case XRT_DATA_LOSS:
    return true;
  default: /* NOT_FOUND (host functions), exhausted memory, INTERNAL... */
    return false;
  }
}

/* Frees what a failed build left in a scratch executable. */
static void xrt__exe_fields_free(xrt__client *c, xrt__executable *e) {
  if (e->pexe && c->api->executable_destroy)
    c->api->executable_destroy(e->pexe);
  xrt__free(&c->allocator, e->bindings);
  xrt__free(&c->allocator, e->inputs);
  xrt__free(&c->allocator, e->outputs);
  xrt__free(&c->allocator, e->assignment);
  if (e->program) xrt__program_unref(e->program);
}

static xrt__exe_shared *xrt__shared_new(xrt__client *c, int32_t nbind) {
  xrt__exe_shared *sh =
      (xrt__exe_shared *)xrt__calloc(&c->allocator, 1, sizeof *sh);
  if (!sh) return NULL;
  atomic_init(&sh->refs, 1);
  sh->client = c;
  sh->entry = -1;
  sh->num_bindings = nbind;
  sh->targets = (char **)xrt__calloc(&c->allocator, (size_t)nbind + 1,
                                     sizeof(char *));
  if (!sh->targets) {
    xrt__free(&c->allocator, sh);
    return NULL;
  }
  return sh;
}

/* Moves a built scratch executable into a new shared object. */
static xrt_status xrt__shared_adopt(xrt__client *c, xrt__executable *t,
                                    xrt__exe_shared **out) {
  const xrt__program *p = t->program;
  int32_t n = p->module->num_custom_calls;
  xrt__exe_shared *sh = xrt__shared_new(c, n);
  if (!sh) return xrt__nomem("a cached executable");
  const xrt_ir_func *f = &p->module->funcs[t->entry];
  sh->name = xrt__strdup_with(&c->allocator, f->name);
  sh->module_name = xrt__strdup_with(&c->allocator, p->module->name);
  bool ok = sh->name && sh->module_name;
  for (int32_t i = 0; ok && i < n; i++)
    ok = (sh->targets[i] = xrt__strdup_with(
              &c->allocator, xrt__host_target(p->custom_calls[i]))) != NULL;
  if (!ok) {
    sh->num_bindings = n;
    xrt__exe_shared_unref(sh);
    return xrt__nomem("a cached executable");
  }
  sh->program = t->program;
  sh->pexe = t->pexe;
  sh->entry = t->entry;
  sh->bindings = t->bindings;
  sh->num_inputs = t->num_inputs;
  sh->num_outputs = t->num_outputs;
  sh->inputs = t->inputs;
  sh->outputs = t->outputs;
  sh->num_replicas = t->num_replicas;
  sh->num_partitions = t->num_partitions;
  sh->assignment = t->assignment;
  sh->inline_ok = t->inline_ok;
  memset(t, 0, sizeof *t);
  *out = sh;
  return XRT_OK;
}

/* Whether a region uses an op whose executable keeps state. */
static bool xrt__region_stateful(const xrt_ir_region *r) {
  for (int32_t i = 0; i < r->num_ops; i++) {
    if (r->ops[i].code == XRT_OP_RNG) return true;
    for (int32_t k = 0; k < r->ops[i].num_regions; k++)
      if (xrt__region_stateful(&r->ops[i].regions[k])) return true;
  }
  return false;
}

static bool xrt__module_stateful(const xrt_ir_module *m) {
  for (int32_t f = 0; f < m->num_funcs; f++)
    if (xrt__region_stateful(&m->funcs[f].body)) return true;
  return false;
}

/* Parses (unless prog is given) and compiles into a shared object;
 * *compile_ns gets the time it took. */
static xrt_status xrt__shared_compile(xrt__client *c, const char *text,
                                      size_t len, xrt__program *prog,
                                      const xrt_compile_options *o,
                                      xrt__exe_shared **out,
                                      uint64_t *compile_ns) {
  int64_t start = xrt__now_ns();
  xrt__program *p = prog;
  xrt_status s = XRT_OK;
  if (p) atomic_fetch_add(&p->refs, 1);
  else if ((s = xrt__program_create(c->allocator, text, len, o, &p)))
    return s;
  xrt__executable t;
  memset(&t, 0, sizeof t);
  t.client = c;
  t.program = p;
  int64_t t0 = xrt__compile_begin();
  s = xrt__executable_build(&t, o);
  if (!s) s = xrt__shared_adopt(c, &t, out);
  if (s) {
    xrt__exe_fields_free(c, &t);
    return s;
  }
  if (t0) xrt__compiled(c, (*out)->module_name, (*out)->name, t0);
  int64_t end = xrt__now_ns();
  *compile_ns = end > start ? (uint64_t)(end - start) : 0;
  return XRT_OK;
}

/* A new executable handle over sh (whose reference it takes over). */
static xrt_status xrt__exe_from_shared(xrt__client *c, xrt__exe_shared *sh,
                                       xrt_executable **out) {
  xrt__executable *e = xrt__executable_obj(c);
  if (!e) {
    xrt__exe_shared_unref(sh);
    return xrt__nomem("an executable");
  }
  e->client = c;
  e->program = sh->program;
  e->entry = sh->entry;
  e->pexe = sh->pexe;
  e->bindings = sh->bindings;
  e->num_inputs = sh->num_inputs;
  e->num_outputs = sh->num_outputs;
  e->inputs = sh->inputs;
  e->outputs = sh->outputs;
  e->num_replicas = sh->num_replicas;
  e->num_partitions = sh->num_partitions;
  e->assignment = sh->assignment;
  e->shared = sh;
  e->name = sh->name;
  e->module_name = sh->module_name;
  e->inline_ok = sh->inline_ok;
  xrt_status s = xrt__executable_publish(e);
  if (s) {
    xrt__executable_destroy(e);
    return s;
  }
  xrt__spin_lock(&c->objs_lock);
  xrt__link_add(&c->executables, &e->link);
  xrt__spin_unlock(&c->objs_lock);
  *out = (xrt_executable *)e->handle;
  return XRT_OK;
}

/* Whether the client's host functions are still those sh was bound to. */
static bool xrt__shared_bindings_current(xrt__client *c,
                                         const xrt__exe_shared *sh) {
  for (int32_t i = 0; i < sh->num_bindings; i++) {
    xrt_host_fn fn;
    void *user;
    if (!xrt__host_lookup(c, sh->targets[i], &fn, &user) ||
        fn != sh->bindings[i].fn || user != sh->bindings[i].user)
      return false;
  }
  return true;
}

/* The bytes an entry is charged (see the section comment). */
static size_t xrt__shared_bytes(const xrt__exe_shared *sh, size_t payload) {
  size_t n = sizeof(xrt__centry) + sizeof *sh +
             sizeof(xrt_shape) * (size_t)(sh->num_inputs + sh->num_outputs) +
             sizeof(int32_t) * (size_t)(sh->num_replicas * sh->num_partitions) +
             (sizeof(xrt_host_binding) + sizeof(char *)) *
                 (size_t)sh->num_bindings;
  for (int32_t i = 0; i < sh->num_bindings; i++)
    n += strlen(sh->targets[i]) + 1;
  if (sh->program) n += 2 * sh->program->arena.total;
  return n + 2 * payload;
}

/* ---- the store's payload ----
 *
 * Little-endian:  "XRTCEXE" NUL | u32 version (2) | u32 flags (bit 0:
 * inline_ok) | i32 num_replicas | i32 num_partitions | u32 num_inputs |
 * u32 num_outputs | u32 num_bindings | str entry name | str module name |
 * shapes (inputs, then outputs: u32 dtype, u32 rank, i64 dims[rank]) |
 * i32 device_assignment[replicas * partitions] (global device ids, so
 * that every process of a multi-process client reads the same bytes) |
 * str host target per binding | u64 source[2] (the alias id of the text
 * compiled, zero if none) | u64 plugin bytes | the plugin's bytes.
 * A str is a u32 length and that many bytes, no NUL.  Nothing may
 * follow.  Version 1 (no source) reads as unusable: compiled anew. */

#define XRT__PAYLOAD_VERSION 2u
#define XRT__PAYLOAD_MAX_STR 65536u
static const char xrt__payload_magic[8] = "XRTCEXE";

typedef struct xrt__wbuf {
  unsigned char *p;
  size_t len; /* written (or needed, when p is NULL) */
} xrt__wbuf;

static void xrt__w_bytes(xrt__wbuf *w, const void *s, size_t n) {
  if (w->p && n) memcpy(w->p + w->len, s, n);
  w->len += n;
}

static void xrt__w_u64(xrt__wbuf *w, uint64_t v, int bytes) {
  unsigned char b[8];
  for (int i = 0; i < bytes; i++) b[i] = (unsigned char)(v >> (8 * i));
  xrt__w_bytes(w, b, (size_t)bytes);
}

static void xrt__w_str(xrt__wbuf *w, const char *s) {
  size_t n = strlen(s);
  xrt__w_u64(w, n, 4);
  xrt__w_bytes(w, s, n);
}

/* Writes the payload of sh around the plugin's bytes (sizing it when w->p
 * is NULL). */
static void xrt__payload_write(xrt__wbuf *w, const xrt__exe_shared *sh,
                               const void *pbytes, size_t psize) {
  xrt__w_bytes(w, xrt__payload_magic, sizeof xrt__payload_magic);
  xrt__w_u64(w, XRT__PAYLOAD_VERSION, 4);
  xrt__w_u64(w, sh->inline_ok ? 1u : 0u, 4);
  xrt__w_u64(w, (uint32_t)sh->num_replicas, 4);
  xrt__w_u64(w, (uint32_t)sh->num_partitions, 4);
  xrt__w_u64(w, (uint32_t)sh->num_inputs, 4);
  xrt__w_u64(w, (uint32_t)sh->num_outputs, 4);
  xrt__w_u64(w, (uint32_t)sh->num_bindings, 4);
  xrt__w_str(w, sh->name);
  xrt__w_str(w, sh->module_name);
  for (int i = 0; i < sh->num_inputs + sh->num_outputs; i++) {
    const xrt_shape *s = i < sh->num_inputs ? &sh->inputs[i]
                                            : &sh->outputs[i - sh->num_inputs];
    xrt__w_u64(w, (uint32_t)s->dtype, 4);
    xrt__w_u64(w, (uint32_t)s->rank, 4);
    for (int d = 0; d < s->rank; d++) xrt__w_u64(w, (uint64_t)s->dims[d], 8);
  }
  int32_t n = sh->num_replicas * sh->num_partitions;
  const int32_t *gids = sh->client->mp ? sh->assignment + 2 * n
                                       : sh->assignment;
  for (int32_t i = 0; i < n; i++) xrt__w_u64(w, (uint32_t)gids[i], 4);
  for (int32_t i = 0; i < sh->num_bindings; i++) xrt__w_str(w, sh->targets[i]);
  xrt__w_u64(w, sh->source[0], 8);
  xrt__w_u64(w, sh->source[1], 8);
  xrt__w_u64(w, psize, 8);
  xrt__w_bytes(w, pbytes, psize);
}

/* A reader that turns every overrun into a failure with where it was. */
typedef struct xrt__rbuf {
  const unsigned char *p;
  size_t len, at;
  const char *why; /* the first problem, NULL while fine */
} xrt__rbuf;

static bool xrt__r_need(xrt__rbuf *r, size_t n, const char *what) {
  if (r->why) return false;
  if (r->len - r->at < n) {
    r->why = what;
    return false;
  }
  return true;
}

static uint64_t xrt__r_u64(xrt__rbuf *r, int bytes, const char *what) {
  if (!xrt__r_need(r, (size_t)bytes, what)) return 0;
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)r->p[r->at + (size_t)i] << (8 * i);
  r->at += (size_t)bytes;
  return v;
}

/* A string copied with a NUL (allocated), or NULL with r->why set. */
static char *xrt__r_str(xrt__rbuf *r, xrt__client *c, bool nonempty,
                        const char *what) {
  uint64_t n = xrt__r_u64(r, 4, what);
  if (r->why) return NULL;
  if (n > XRT__PAYLOAD_MAX_STR || (nonempty && n == 0)) {
    r->why = what;
    return NULL;
  }
  if (!xrt__r_need(r, (size_t)n, what)) return NULL;
  const unsigned char *s = r->p + r->at;
  if (memchr(s, 0, (size_t)n)) {
    r->why = what;
    return NULL;
  }
  char *d = (char *)xrt__alloc(&c->allocator, (size_t)n + 1);
  if (!d) {
    r->why = "out of host memory";
    return NULL;
  }
  memcpy(d, s, (size_t)n);
  d[n] = 0;
  r->at += (size_t)n;
  return d;
}

static bool xrt__r_shape(xrt__rbuf *r, xrt_shape *s) {
  memset(s, 0, sizeof *s);
  uint64_t dt = xrt__r_u64(r, 4, "a shape's dtype");
  uint64_t rank = xrt__r_u64(r, 4, "a shape's rank");
  if (r->why) return false;
  if (dt == XRT_DTYPE_INVALID || dt >= XRT_DTYPE_COUNT ||
      rank > XRT_MAX_RANK) {
    r->why = "a shape (dtype or rank out of range)";
    return false;
  }
  s->dtype = (xrt_dtype)dt;
  s->rank = (int32_t)rank;
  uint64_t numel = 1; /* kept below 2^48 so that byte sizes cannot wrap */
  for (uint64_t d = 0; d < rank; d++) {
    uint64_t v = xrt__r_u64(r, 8, "a shape's dims");
    if (r->why) return false;
    if (v > ((uint64_t)1 << 48) || (v && numel > ((uint64_t)1 << 48) / v)) {
      r->why = "a shape (negative or huge dimensions)";
      return false;
    }
    numel *= v;
    s->dims[d] = (int64_t)v;
  }
  return true;
}

/* The launch shape and assignment of a payload, checked against the
 * client and the options (whose nonzero fields are in the key). */
static bool xrt__r_launch(xrt__rbuf *r, const xrt__client *c,
                          const xrt_compile_options *o, xrt__exe_shared *sh) {
  int64_t n = (int64_t)sh->num_replicas * sh->num_partitions;
  int ndev = xrt__cache_ndev(c);
  if (sh->num_replicas < 1 || sh->num_partitions < 1 || n > ndev ||
      (o && o->num_replicas && o->num_replicas != sh->num_replicas) ||
      (o && o->num_partitions && o->num_partitions != sh->num_partitions)) {
    r->why = "the launch shape (replicas, partitions)";
    return false;
  }
  /* A multi-process client's executables hold 3n entries (section 13a);
   * the global ids read here go to the last n. */
  int64_t slots = c->mp ? 3 * n : n;
  sh->assignment = (int32_t *)xrt__calloc(&c->allocator, (size_t)slots,
                                          sizeof(int32_t));
  if (!sh->assignment) {
    r->why = "out of host memory";
    return false;
  }
  int32_t *gids = sh->assignment + (slots - n);
  for (int64_t i = 0; i < n; i++) {
    uint64_t v = xrt__r_u64(r, 4, "the device assignment");
    if (r->why) return false;
    bool bad = v >= (uint64_t)ndev ||
               (o && o->device_assignment &&
                o->device_assignment[i] != (int)v);
    for (int64_t j = 0; j < i && !bad; j++) bad = gids[j] == (int32_t)v;
    if (bad) {
      r->why = "the device assignment";
      return false;
    }
    gids[i] = (int32_t)v;
  }
  if (c->mp) xrt__cache_mp_place(c, sh->assignment, n);
  return true;
}

/* Reads everything but the plugin's bytes into sh. */
static bool xrt__payload_read(xrt__rbuf *r, xrt__client *c,
                              const xrt_compile_options *o,
                              xrt__exe_shared **out) {
  if (!xrt__r_need(r, sizeof xrt__payload_magic, "the magic") ||
      memcmp(r->p, xrt__payload_magic, sizeof xrt__payload_magic) != 0) {
    r->why = "the magic";
    return false;
  }
  r->at = sizeof xrt__payload_magic;
  uint64_t version = xrt__r_u64(r, 4, "the version");
  uint64_t flags = xrt__r_u64(r, 4, "the flags");
  int32_t R = (int32_t)(uint32_t)xrt__r_u64(r, 4, "num_replicas");
  int32_t P = (int32_t)(uint32_t)xrt__r_u64(r, 4, "num_partitions");
  uint64_t nin = xrt__r_u64(r, 4, "num_inputs");
  uint64_t nout = xrt__r_u64(r, 4, "num_outputs");
  uint64_t nbind = xrt__r_u64(r, 4, "num_bindings");
  if (r->why) return false;
  if (version != XRT__PAYLOAD_VERSION || flags > 1) {
    r->why = version != XRT__PAYLOAD_VERSION ? "the version" : "the flags";
    return false;
  }
  /* Every shape takes 8 bytes and every string 4 at least: counts the
   * rest cannot hold are garbage, caught before allocating for them. */
  size_t rest = r->len - r->at;
  if (nin + nout > rest / 8 || nbind > rest / 4 || nin + nout > (1u << 24) ||
      nbind > (1u << 24)) {
    r->why = "the counts of inputs, outputs or bindings";
    return false;
  }
  xrt__exe_shared *sh = xrt__shared_new(c, (int32_t)nbind);
  if (!sh) {
    r->why = "out of host memory";
    return false;
  }
  *out = sh;
  sh->inline_ok = flags & 1;
  sh->num_replicas = R;
  sh->num_partitions = P;
  sh->num_inputs = (int)nin;
  sh->num_outputs = (int)nout;
  sh->name = xrt__r_str(r, c, true, "the entry name");
  sh->module_name = xrt__r_str(r, c, false, "the module name");
  if (r->why) return false;
  sh->inputs = (xrt_shape *)xrt__calloc(&c->allocator, nin + 1,
                                        sizeof(xrt_shape));
  sh->outputs = (xrt_shape *)xrt__calloc(&c->allocator, nout + 1,
                                         sizeof(xrt_shape));
  if (!sh->inputs || !sh->outputs) {
    r->why = "out of host memory";
    return false;
  }
  for (uint64_t i = 0; i < nin + nout; i++)
    if (!xrt__r_shape(r, i < nin ? &sh->inputs[i] : &sh->outputs[i - nin]))
      return false;
  if (!xrt__r_launch(r, c, o, sh)) return false;
  for (uint64_t i = 0; i < nbind; i++)
    if (!(sh->targets[i] = xrt__r_str(r, c, true, "a host target")))
      return false;
  sh->source[0] = xrt__r_u64(r, 8, "the source");
  sh->source[1] = xrt__r_u64(r, 8, "the source");
  uint64_t psize = xrt__r_u64(r, 8, "the plugin's size");
  if (!r->why && psize != r->len - r->at) r->why = "the plugin's size";
  if (o && o->entry && !r->why && strcmp(o->entry, sh->name) != 0)
    r->why = "the entry name";
  return !r->why;
}

/* Binds sh's host targets to the client's functions; false if one is
 * missing (the compile will then say which). */
static bool xrt__shared_bind(xrt__client *c, xrt__exe_shared *sh) {
  sh->bindings = (xrt_host_binding *)xrt__calloc(
      &c->allocator, (size_t)sh->num_bindings + 1, sizeof(xrt_host_binding));
  if (!sh->bindings) return false;
  for (int32_t i = 0; i < sh->num_bindings; i++)
    if (!xrt__host_lookup(c, sh->targets[i], &sh->bindings[i].fn,
                          &sh->bindings[i].user))
      return false;
  return true;
}

/* Whether sh was compiled from the text of alias id source (see
 * "aliases"); it is checked before the plugin reads its bytes. */
static bool xrt__shared_from(const xrt__exe_shared *sh,
                             const uint64_t source[2]) {
  return sh->source[0] == source[0] && sh->source[1] == source[1];
}

#ifdef XRT_HAVE_DISK_CACHE
/* In xrt_cache.c (not public API): whether store is a disk cache's, whose
 * load checked the file's checksum over every byte it returned. */
int xrt__disk_cache_verifies(const xrt_cache_store *store);
#endif

/* Whether the store's loads come integrity-checked (ABI 1.2's
 * bytes_verified): only xrt's own disk cache says so; a user's store
 * (even one wrapping the disk cache) does not. */
static bool xrt__store_verifies(const xrt_cache_store *store) {
#ifdef XRT_HAVE_DISK_CACHE
  return xrt__disk_cache_verifies(store) != 0;
#else
  (void)store;
  return false;
#endif
}

/* Rebuilds an executable from a payload: NULL (logged, counted) when any
 * part of it is wrong or the plugin refuses its bytes; NULL with
 * *foreign set (neither logged nor counted) when source is given and the
 * entry was compiled from another text. */
static xrt__exe_shared *xrt__payload_load(xrt__client *c, const char *hex,
                                          const void *data, size_t size,
                                          const xrt_compile_options *o,
                                          const uint64_t *source,
                                          bool *foreign) {
  xrt__cache *k = c->cache;
  xrt__rbuf r = {(const unsigned char *)data, data ? size : 0, 0, NULL};
  xrt__exe_shared *sh = NULL;
  bool ok = xrt__payload_read(&r, c, o, &sh);
  if (ok && source && !xrt__shared_from(sh, source)) {
    *foreign = true;
    xrt__exe_shared_unref(sh);
    return NULL;
  }
  if (ok && !xrt__shared_bind(c, sh)) {
    xrt__exe_shared_unref(sh); /* a host function is missing: compile */
    return NULL;
  }
  xrt_plugin_error err = {{0}};
  xrt_status s = XRT_OK;
  if (ok) {
    xrt_plugin_compile_args args;
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.entry = -1;
    args.host_bindings = sh->bindings;
    args.num_replicas = sh->num_replicas;
    args.num_partitions = sh->num_partitions;
    args.device_assignment = sh->assignment;
    if (c->mp) { /* as section 13a's compile arguments */
      args.participant_process =
          sh->assignment + (size_t)sh->num_replicas * sh->num_partitions;
      args.process_index = c->topology.process_index;
    }
    args.num_host_bindings = sh->num_bindings; /* ABI 1.2: checked */
    args.num_inputs = sh->num_inputs;
    args.num_outputs = sh->num_outputs;
    args.input_shapes = sh->inputs;
    args.output_shapes = sh->outputs;
    /* the plugin's bytes lie inside what the store's checksum covered */
    args.bytes_verified = xrt__store_verifies(k->store);
    s = c->api->executable_deserialize(c->pc, &args, r.p + r.at,
                                       r.len - r.at, &sh->pexe, &err);
    if (!s && !sh->pexe) s = XRT_INTERNAL;
  }
  if (ok && !s) return sh;
  XRT__CSTAT(k, store_errors);
  if (!ok)
    xrt__log(XRT_LOG_WARN, "cache", "cache store entry %s is unusable (%s, "
             "at byte %zu of %zu); compiling instead", hex, r.why, r.at,
             size);
  else
    xrt__log(XRT_LOG_WARN, "cache", "plugin '%s' refused cache store entry "
             "%s (%s: %s); compiling instead", c->api->name, hex,
             xrt_strerror(s), xrt__plugin_msg(&err));
  if (sh) {
    sh->pexe = NULL;
    xrt__exe_shared_unref(sh);
  }
  return NULL;
}

/* Asks the store for key: a shared object, or NULL (with *foreign set
 * when source is given and the entry was compiled from another text). */
static xrt__exe_shared *xrt__cache_store_load(xrt__client *c, const char *hex,
                                              const xrt_compile_options *o,
                                              size_t *payload,
                                              const uint64_t *source,
                                              bool *foreign) {
  xrt__cache *k = c->cache;
  void *data = NULL;
  size_t size = 0;
  xrt_status s = k->store->load(k->store->self, hex, k->identity, &data,
                                &size);
  if (s == XRT_NOT_FOUND) {
    XRT__CSTAT(k, store_misses);
    return NULL;
  }
  if (s) {
    XRT__CSTAT(k, store_errors);
    xrt__log(XRT_LOG_WARN, "cache", "cache store could not load %s (%s); "
             "compiling instead", hex, xrt_strerror(s));
    return NULL;
  }
  xrt__exe_shared *sh = xrt__payload_load(c, hex, data, size, o, source,
                                          foreign);
  if (data) k->store->release_data(k->store->self, data);
  if (sh) XRT__CSTAT(k, store_hits);
  *payload = size;
  return sh;
}

/* Offers a compiled executable to the store; failures are counted. */
static void xrt__cache_store_save(xrt__client *c, const char *hex,
                                  const xrt__exe_shared *sh,
                                  uint64_t compile_ns) {
  xrt__cache *k = c->cache;
  void *pbytes = NULL;
  size_t psize = 0;
  xrt_plugin_error err = {{0}};
  xrt_status s = c->api->executable_serialize(sh->pexe, &pbytes, &psize, &err);
  if (s == XRT_UNIMPLEMENTED) return; /* this executable stays in memory */
  if (s || (!pbytes && psize)) {
    XRT__CSTAT(k, store_errors);
    xrt__log(XRT_LOG_WARN, "cache", "plugin '%s' could not serialize %s "
             "(%s: %s)", c->api->name, hex, xrt_strerror(s),
             xrt__plugin_msg(&err));
    if (pbytes) c->api->serialized_free(pbytes);
    return;
  }
  xrt__wbuf w = {NULL, 0};
  xrt__payload_write(&w, sh, pbytes, psize);
  w.p = (unsigned char *)xrt__alloc(&c->allocator, w.len);
  if (w.p) {
    w.len = 0;
    xrt__payload_write(&w, sh, pbytes, psize);
    s = k->store->save(k->store->self, hex, k->identity, w.p, w.len,
                       compile_ns);
  } else {
    s = XRT_RESOURCE_EXHAUSTED;
  }
  c->api->serialized_free(pbytes);
  xrt__free(&c->allocator, w.p);
  if (s == XRT_OK) {
    XRT__CSTAT(k, store_writes);
  } else {
    XRT__CSTAT(k, store_errors);
    xrt__log(XRT_LOG_WARN, "cache", "cache store could not save %s (%s)", hex,
             xrt_strerror(s));
  }
}

/* ---- compiles through the cache ---- */

/* The compile the cache stands in for (options it cannot key). */
static xrt_status xrt__compile_uncached(xrt__client *c, const char *text,
                                        size_t len, xrt__program *prog,
                                        const xrt_compile_options *o,
                                        xrt_executable **out) {
  if (prog) return xrt__compile(c, prog, o, out);
  xrt__program *p;
  xrt_status s = xrt__program_create(c->allocator, text, len, o, &p);
  if (s) return s;
  s = xrt__compile(c, p, o, out);
  xrt__program_unref(p);
  return s;
}

/* The fingerprint of raw text and options (the memo's key); raw gets
 * the text's own XXH3-128. */
static void xrt__cache_fingerprint(const char *text, size_t len,
                                   const xrt__key_opts *ko, uint64_t out[2],
                                   uint64_t raw_out[2]) {
  XXH128_hash_t raw = XXH3_128bits(text, len);
  raw_out[0] = raw.high64;
  raw_out[1] = raw.low64;
  uint64_t w[2 + 8];
  w[0] = raw.high64;
  w[1] = raw.low64;
  memcpy(w + 2, ko->words, sizeof ko->words);
  XXH128_hash_t h = XXH3_128bits(w, sizeof w);
  out[0] = h.high64;
  out[1] = h.low64;
}

/* The memo slot of a fingerprint (k->mu held; NULL without a memo). */
static xrt__memo *xrt__cache_memo_slot(xrt__client *c, xrt__cache *k,
                                       const uint64_t fp[2], bool create) {
  if (!k->memo && create)
    k->memo = (xrt__memo *)xrt__calloc(&c->allocator, XRT__MEMO_SLOTS,
                                       sizeof(xrt__memo));
  return k->memo ? &k->memo[fp[0] & (XRT__MEMO_SLOTS - 1)] : NULL;
}

/* ---- aliases: raw text to key, in the store ----
 * A fresh process has an empty memo, and reading a large text as tokens
 * costs more than loading its executable.  So next to each executable the
 * store keeps an alias: key "a-" and 30 hex digits of XXH3-128 over the
 * client's digest, the options, the raw text's XXH3-128 and a tag (no
 * canonical key has a '-'), payload the 32 hex digits of the key.  A memo
 * miss tries the alias first; its key is used only when that key is in
 * memory already or its store entry loads, and that executable records
 * this alias id as its source (an alias is not trusted blindly: a stale
 * or forged one, behind a valid checksum, must not run another program);
 * else the text is read as tokens as before, with a warning when the key
 * read differs from the alias's.  An alias is written when the lookup
 * found none (or a useless one) and the executable was saved or loaded,
 * and after a parsed program's executable is saved.  An executable
 * compiled from text variants with one key (other locations) records the
 * first; the others' aliases cost a read of the text. */

#define XRT__ALIAS_PREFIX "a-"

/* What the key phase did with the store (see above). */
typedef struct xrt__cache_pre {
  xrt__exe_shared *sh;   /* loaded through the alias (the key's entry) */
  size_t payload;
  uint64_t tried[2];     /* a key whose store entry failed to load */
  bool has_tried;
  bool write_alias;      /* alias_id is set and should be written */
  uint64_t alias_id[2];
  uint64_t key_ns;       /* time spent reading the text as tokens */
  bool alias_foreign;    /* the alias named alias_key, compiled from */
  uint64_t alias_key[2]; /* another text (checked after the read) */
} xrt__cache_pre;

static void xrt__alias_make(const xrt__cache *k, const xrt__key_opts *ko,
                            const uint64_t raw[2], uint64_t out[2]) {
  uint64_t w[2 + 8 + 2 + 1];
  memcpy(w, k->digest, 16);
  memcpy(w + 2, ko->words, sizeof ko->words);
  memcpy(w + 10, raw, 16);
  w[12] = 0x7872746361696c31ull; /* "xrtcail1" */
  XXH128_hash_t h = XXH3_128bits(w, sizeof w);
  out[0] = h.high64;
  out[1] = h.low64;
}

static void xrt__alias_hex(const uint64_t id[2],
                           char out[XRT_CACHE_KEY_CHARS + 1]) {
  snprintf(out, XRT_CACHE_KEY_CHARS + 1, XRT__ALIAS_PREFIX "%016" PRIx64
           "%014" PRIx64, id[0], id[1] >> 8);
}

/* Parses 32 lowercase hex digits; false for anything else. */
static bool xrt__key_parse(const void *data, size_t size, uint64_t key[2]) {
  const char *p = (const char *)data;
  if (!p || size != XRT_CACHE_KEY_CHARS) return false;
  key[0] = key[1] = 0;
  for (size_t i = 0; i < XRT_CACHE_KEY_CHARS; i++) {
    char ch = p[i];
    unsigned v = ch >= '0' && ch <= '9'   ? (unsigned)(ch - '0')
                 : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10)
                                          : 16u;
    if (v == 16u) return false;
    key[i / 16] = key[i / 16] << 4 | v;
  }
  return true;
}

/* The key the alias names, or false (none, damaged, not a key). */
static bool xrt__alias_read(xrt__client *c, const char *ahex,
                            uint64_t key[2]) {
  xrt__cache *k = c->cache;
  void *data = NULL;
  size_t size = 0;
  xrt_status s = k->store->load(k->store->self, ahex, k->identity, &data,
                                &size);
  if (s) {
    if (s != XRT_NOT_FOUND)
      xrt__log(XRT_LOG_INFO, "cache", "cache store alias %s unusable (%s); "
               "reading the text", ahex, xrt_strerror(s));
    return false;
  }
  bool ok = xrt__key_parse(data, size, key);
  if (data) k->store->release_data(k->store->self, data);
  if (!ok) {
    XRT__CSTAT(k, store_errors);
    xrt__log(XRT_LOG_WARN, "cache", "cache store alias %s holds no key "
             "(%zu bytes); reading the text", ahex, size);
  }
  return ok;
}

static xrt__exe_shared *xrt__cache_store_load(xrt__client *c, const char *hex,
                                              const xrt_compile_options *o,
                                              size_t *payload,
                                              const uint64_t *source,
                                              bool *foreign);

/* The alias named key, whose entry was compiled from another text: the
 * caller reads the text, and says so if that gives another key. */
static bool xrt__alias_foreign(xrt__cache_pre *pre, const uint64_t key[2]) {
  memcpy(pre->alias_key, key, sizeof pre->alias_key);
  pre->alias_foreign = true;
  return false;
}

/* Resolves a memo miss through the store's alias: true with key set (and
 * pre->sh, unless the key is in memory already; k->mu held on return).
 * The alias is trusted only when its entry records that it was compiled
 * from the alias's text (sh->source); an entry in memory that cannot say
 * (still compiling, failed) sends the caller to read the text. */
static bool xrt__alias_resolve(xrt__client *c, const xrt_compile_options *o,
                               uint64_t key[2], xrt__cache_pre *pre) {
  xrt__cache *k = c->cache;
  char ahex[XRT_CACHE_KEY_CHARS + 1], hex[XRT_CACHE_KEY_CHARS + 1];
  xrt__alias_hex(pre->alias_id, ahex);
  if (!xrt__alias_read(c, ahex, key)) return false;
  pthread_mutex_lock(&k->mu);
  xrt__centry *e = xrt__cache_find(k, key);
  bool done = e && e->state == XRT__CE_DONE;
  if (done && xrt__shared_from(e->sh, pre->alias_id)) return true;
  pthread_mutex_unlock(&k->mu);
  if (done) return xrt__alias_foreign(pre, key);
  if (e) return false;
  xrt__key_hex(key, hex);
  bool foreign = false;
  pre->sh = xrt__cache_store_load(c, hex, o, &pre->payload, pre->alias_id,
                                  &foreign);
  if (foreign) return xrt__alias_foreign(pre, key);
  if (!pre->sh) {
    memcpy(pre->tried, key, sizeof pre->tried);
    pre->has_tried = true;
    return false;
  }
  xrt__log(XRT_LOG_DEBUG, "cache", "cache alias %s -> %s", ahex, hex);
  pthread_mutex_lock(&k->mu);
  return true;
}

/* Writes pre's alias for key (after its executable was saved or loaded). */
static void xrt__alias_write(xrt__client *c, const xrt__cache_pre *pre,
                             const uint64_t key[2], uint64_t ns) {
  xrt__cache *k = c->cache;
  char ahex[XRT_CACHE_KEY_CHARS + 1], hex[XRT_CACHE_KEY_CHARS + 1];
  xrt__alias_hex(pre->alias_id, ahex);
  xrt__key_hex(key, hex);
  xrt_status s = k->store->save(k->store->self, ahex, k->identity, hex,
                                XRT_CACHE_KEY_CHARS, ns);
  if (s)
    xrt__log(XRT_LOG_INFO, "cache", "cache store could not save alias %s "
             "(%s)", ahex, xrt_strerror(s));
}

/* An alias that named another text's entry (stale, damaged or forged
 * behind a valid checksum): said once per compile; the caller replaces
 * it (process 0) once the key's executable is saved or loaded. */
static void xrt__alias_stale(const xrt__cache_pre *pre,
                             const uint64_t key[2]) {
  char ahex[XRT_CACHE_KEY_CHARS + 1], named[XRT_CACHE_KEY_CHARS + 1],
      hex[XRT_CACHE_KEY_CHARS + 1];
  xrt__alias_hex(pre->alias_id, ahex);
  xrt__key_hex(pre->alias_key, named);
  xrt__key_hex(key, hex);
  xrt__log(XRT_LOG_WARN, "cache", "cache store alias %s names %s, an "
           "executable compiled from another text; the text's key is %s",
           ahex, named, hex);
}

/* The key of a compile.  Returns with k->mu held. */
static void xrt__cache_key_locked(xrt__client *c, const char *text, size_t len,
                                  const xrt__program *prog,
                                  const xrt_compile_options *o,
                                  const xrt__key_opts *ko, uint64_t key[2],
                                  xrt__cache_pre *pre) {
  xrt__cache *k = c->cache;
  bool keep = o && o->cache_keep_locations;
  bool aliased = k->store && !keep;
  if (prog) {
    xrt__key_make(k, ko, prog->text_digest[keep], key);
    if (aliased) {
      xrt__alias_make(k, ko, prog->text_digest[1], pre->alias_id);
      pre->write_alias = true;
    }
    pthread_mutex_lock(&k->mu);
    return;
  }
  uint64_t fp[2], td[2], raw[2];
  xrt__cache_fingerprint(text, len, ko, fp, raw);
  if (aliased) xrt__alias_make(k, ko, raw, pre->alias_id);
  pthread_mutex_lock(&k->mu);
  xrt__memo *m = xrt__cache_memo_slot(c, k, fp, false);
  if (m && m->fp[0] == fp[0] && m->fp[1] == fp[1]) {
    key[0] = m->key[0];
    key[1] = m->key[1];
    return;
  }
  pthread_mutex_unlock(&k->mu);
  if (!aliased || !xrt__alias_resolve(c, o, key, pre)) {
    int64_t t0 = xrt__now_ns();
    xrt__log(XRT_LOG_DEBUG, "cache", "reading %zu bytes of text as tokens",
             len);
    xrt__text_digest(text, len, keep, td); /* the slow read, unlocked */
    xrt__key_make(k, ko, td, key);
    pre->key_ns = (uint64_t)(xrt__now_ns() - t0);
    pre->write_alias = aliased;
    pre->has_tried = pre->has_tried && pre->tried[0] == key[0] &&
                     pre->tried[1] == key[1];
    if (pre->alias_foreign &&
        (pre->alias_key[0] != key[0] || pre->alias_key[1] != key[1]))
      xrt__alias_stale(pre, key);
    pthread_mutex_lock(&k->mu);
  }
  if ((m = xrt__cache_memo_slot(c, k, fp, true))) {
    memcpy(m->fp, fp, sizeof m->fp);
    memcpy(m->key, key, sizeof m->key);
  }
}

static void xrt__cache_log(xrt__client *c, const char *what,
                           const uint64_t key[2], const char *entry) {
  XRT__UNUSED(c);
  if (!xrt_log_enabled(XRT_LOG_INFO, "cache")) return;
  char hex[XRT_CACHE_KEY_CHARS + 1];
  xrt__key_hex(key, hex);
  xrt__log(XRT_LOG_INFO, "cache", "cache %s %s @%s", what, hex,
           entry ? entry : "main");
}

/* A hit on e (k->mu held; released here): waits for a compile in
 * progress, then shares its executable or its failure. */
static xrt_status xrt__cache_hit(xrt__client *c, xrt__centry *e,
                                 const char *text, size_t len,
                                 xrt__program *prog, const uint64_t key[2],
                                 const xrt_compile_options *o, int64_t t0,
                                 xrt_executable **out) {
  xrt__cache *k = c->cache;
  if (e->state == XRT__CE_COMPILING) {
    e->pins++;
    while (e->state == XRT__CE_COMPILING) pthread_cond_wait(&k->cv, &k->mu);
    e->pins--;
  }
  bool stateful = e->state == XRT__CE_STATEFUL;
  if (stateful) {
    XRT__CSTAT(k, misses);
  } else {
    XRT__CSTAT(k, hits);
    XRT__STAT(c, CACHE_HITS, 1);
  }
  xrt__exe_shared *sh = NULL;
  xrt_status code = XRT_OK;
  char msg[XRT__CACHE_MAX_MSG];
  if (e->in_lru) xrt__cache_lru_front(k, e);
  if (e->state == XRT__CE_DONE) {
    sh = e->sh;
    atomic_fetch_add_explicit(&sh->refs, 1, memory_order_relaxed);
  } else if (!stateful) {
    code = e->code;
    snprintf(msg, sizeof msg, "%s", e->message ? e->message : "out of memory");
  }
  xrt__cfree f = {NULL};
  xrt__cache_release_if_unused(e, &f); /* dropped while we waited */
  pthread_mutex_unlock(&k->mu);
  xrt__cfree_run(c, &f);
  if (stateful) return xrt__compile_uncached(c, text, len, prog, o, out);
  xrt__cache_log(c, "hit", key, sh ? sh->name : o ? o->entry : NULL);
  if (!sh) return xrt__fail(code, "%s", msg);
  if (t0) xrt__trace_cache_hit(c, "compile", sh->name, t0);
  return xrt__exe_from_shared(c, sh, out);
}

/* Records the outcome of e's compile (k->mu held): a shared object (s OK,
 * one reference for the entry taken here) or the failure in the thread's
 * last error. */
static void xrt__cache_settle(xrt__client *c, xrt__centry *e, xrt_status s,
                              xrt__exe_shared *sh, size_t payload,
                              xrt__cfree *f) {
  xrt__cache *k = c->cache;
  e->pins--;
  if (!s && sh->program && xrt__module_stateful(sh->program->module)) {
    e->state = XRT__CE_STATEFUL; /* sh stays its compiler's alone */
    e->bytes = sizeof *e;
  } else if (!s) {
    atomic_fetch_add_explicit(&sh->refs, 1, memory_order_relaxed);
    e->sh = sh;
    e->state = XRT__CE_DONE;
    e->bytes = xrt__shared_bytes(sh, payload);
  } else {
    e->state = XRT__CE_FAILED;
    e->code = s;
    e->message = xrt__strdup_with(&c->allocator, xrt_last_error());
    e->bytes = sizeof *e + (e->message ? strlen(e->message) + 1 : 0);
  }
  if (!s || xrt__cache_failure_kept(s)) {
    if (s && e->in_table) XRT__CSTAT(k, failures_cached);
    xrt__cache_keep(k, e, f);
  } else {
    xrt__cache_detach(k, e, f); /* waiters share it; later callers retry */
  }
  xrt__cache_release_if_unused(e, f); /* dropped while it compiled */
  pthread_cond_broadcast(&k->cv);
}

/* Whether this process writes the store: of a multi-process client only
 * process 0 does (the others would write the same bytes); the others say
 * what they did not write (XRT_LOG=info,cache). */
static bool xrt__cache_writer(xrt__client *c, const char *what,
                              const char *hex) {
  if (!c->mp || c->topology.process_index == 0) return true;
  xrt__log(XRT_LOG_INFO, "cache", "cache store: %s %s not written: process "
           "%d (process 0 writes the store)", what, hex,
           c->topology.process_index);
  return false;
}

/* A miss: the store, else a compile; e (may be NULL: no in-memory cache)
 * is settled for its waiters. */
static xrt_status xrt__cache_fill(xrt__client *c, const char *text,
                                  size_t len, xrt__program *prog,
                                  const xrt_compile_options *o,
                                  const uint64_t key[2], xrt__centry *e,
                                  xrt__cache_pre *pre,
                                  xrt_executable **out) {
  xrt__cache *k = c->cache;
  XRT__CSTAT(k, misses);
  char hex[XRT_CACHE_KEY_CHARS + 1];
  xrt__key_hex(key, hex);
  size_t payload = pre->payload;
  uint64_t compile_ns = 0;
  xrt__exe_shared *sh = pre->sh;
  pre->sh = NULL; /* ours now */
  if (!sh && k->store && !pre->has_tried)
    sh = xrt__cache_store_load(c, hex, o, &payload, NULL, NULL);
  bool loaded = sh != NULL;
  xrt_status s =
      sh ? XRT_OK : xrt__shared_compile(c, text, len, prog, o, &sh,
                                        &compile_ns);
  if (!s && !loaded) /* still private: recorded before others see it */
    memcpy(sh->source, pre->alias_id, sizeof sh->source);
  if (e) {
    xrt__cfree f = {NULL};
    char saved[XRT__CACHE_MAX_MSG];
    if (s) snprintf(saved, sizeof saved, "%s", xrt_last_error());
    pthread_mutex_lock(&k->mu);
    xrt__cache_settle(c, e, s, sh, payload, &f);
    pthread_mutex_unlock(&k->mu);
    xrt__cfree_run(c, &f);
    if (s) xrt__fail(s, "%s", saved);
  }
  xrt__cache_log(c, "miss", key, sh ? sh->name : o ? o->entry : NULL);
  if (s) return s;
  /* A stateful program is compiled by each caller, never loaded. */
  if (k->store && !loaded && !xrt__module_stateful(sh->program->module)) {
    if (xrt__cache_writer(c, "executable", hex)) {
      xrt__cache_store_save(c, hex, sh, compile_ns);
      if (pre->write_alias) xrt__alias_write(c, pre, key, compile_ns);
    }
  } else if (loaded && pre->write_alias && !prog && /* none was found */
             xrt__cache_writer(c, "alias of", hex)) {
    xrt__alias_write(c, pre, key, pre->key_ns);
  }
  return xrt__exe_from_shared(c, sh, out);
}

XRT__PRIVATE xrt_status xrt__cache_compile(xrt__client *c, const char *text,
                                     size_t len, xrt__program *prog,
                                     const xrt_compile_options *o,
                                     xrt_executable **out) {
  xrt__cache *k = c->cache;
  xrt__key_opts ko;
  if (!xrt__key_options(c, o, &ko))
    return xrt__compile_uncached(c, text, len, prog, o, out);
  int64_t t0 = xrt__trace_begin();
  uint64_t key[2];
  xrt__cache_pre pre;
  memset(&pre, 0, sizeof pre);
  xrt__cache_key_locked(c, text, len, prog, o, &ko, key, &pre);
  if (!k->budget) { /* the store alone */
    pthread_mutex_unlock(&k->mu);
    return xrt__cache_fill(c, text, len, prog, o, key, NULL, &pre, out);
  }
  xrt__cfree f = {NULL};
  xrt__centry *e = xrt__cache_find(k, key);
  if (e && e->state == XRT__CE_DONE && e->sh->num_bindings &&
      !xrt__shared_bindings_current(c, e->sh)) {
    xrt__cache_detach(k, e, &f); /* a host function changed: compile again */
    e = NULL;
  }
  if (e) {
    xrt_status s = xrt__cache_hit(c, e, text, len, prog, key, o, t0, out);
    xrt__exe_shared_unref(pre.sh); /* loaded while another caller did */
    return s;
  }
  e = (xrt__centry *)xrt__calloc(&c->allocator, 1, sizeof *e);
  if (e) {
    memcpy(e->key, key, sizeof e->key);
    e->state = XRT__CE_COMPILING;
    e->pins = 1;
    if (!xrt__cache_insert(c, k, e)) {
      xrt__free(&c->allocator, e);
      e = NULL;
    }
  }
  pthread_mutex_unlock(&k->mu);
  xrt__cfree_run(c, &f);
  if (!e) {
    xrt__exe_shared_unref(pre.sh);
    return xrt__compile_uncached(c, text, len, prog, o, out);
  }
  return xrt__cache_fill(c, text, len, prog, o, key, e, &pre, out);
}
