/* libFuzzer target: a disk cache file (xrt_cache.c), and behind its
 * checksum the core's payload and the simulator's serialized executable.
 *
 * Input: one selector byte, then the file's bytes.  The file is written
 * as the cache entry of a fixed program (its key, in a per-process
 * directory), loaded once through the disk cache's store, written again
 * and compiled by a client reading that cache, so that a payload reaches
 * the core's payload reader and the simulator's executable_deserialize.
 * When the selector is odd, the file's last 8 bytes are first replaced by
 * the right checksum (XXH3-64 of the rest), so that mutations get past
 * the checksum half of the time.  (Executables are not run: a mutated
 * but valid loop bound would time out without a bug.)  Error statuses
 * are fine; crashes, leaks, UBSan reports and timeouts are findings.
 *
 * The simulator's bytes carry their own XXH3-64, which it skips behind
 * the disk cache's checksum (the core tells it so: bytes_verified), so
 * mutations that get past that checksum reach its reader, its validation
 * of the module it read, and its planner.  XRT_FUZZ_RESEAL_SIM=1 also
 * reseals the simulator's hash when the selector's bit 1 is set (as for
 * a store that does not vouch for its bytes).
 *
 * XRT_FUZZ_WRITE_SEEDS=DIR (read at initialisation) writes real cache
 * files of the program to DIR, with both selectors, and exits
 * (fuzz/make_corpus.sh). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* A while loop, a func.call, constants, a reduce, compare/select. */
static const char kProgram[] =
    "func.func private @scale(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>\n"
    "  %r = stablehlo.multiply %a, %c : tensor<4xf32>\n"
    "  func.return %r : tensor<4xf32>\n"
    "}\n"
    "func.func public @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {\n"
    "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %three = stablehlo.constant dense<3> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<4xf32>\n"
    "  cond {\n"
    "    %c = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  } do {\n"
    "    %n = stablehlo.add %i, %one : tensor<i32>\n"
    "    %d = stablehlo.add %acc, %acc : tensor<4xf32>\n"
    "    stablehlo.return %n, %d : tensor<i32>, tensor<4xf32>\n"
    "  }\n"
    "  %s = func.call @scale(%r#1) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %sum = stablehlo.reduce(%s init: %z) applies stablehlo.add across "
    "dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
    "  %g = stablehlo.compare GT, %s, %x, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
    "  %o = stablehlo.select %g, %s, %x : tensor<4xi1>, tensor<4xf32>\n"
    "  func.return %o, %sum : tensor<4xf32>, tensor<f32>\n"
    "}\n";

static char fuzz_dir[64], fuzz_path[160];
static char fuzz_key[XRT_CACHE_KEY_CHARS + 1], fuzz_identity[256];
static xrt_disk_cache *fuzz_cache;      /* read-only on fuzz_dir */
static xrt_client *fuzz_client;         /* its store: fuzz_cache's */
static int fuzz_reseal_sim;             /* XRT_FUZZ_RESEAL_SIM=1 */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_cleanup(void) {
  unlink(fuzz_path);
  rmdir(fuzz_dir);
}

/* A store that forwards to the disk cache and records the identity the
 * core passes (the plugin's "name version"). */
static const xrt_cache_store *fuzz_inner;
static xrt_status record_load(void *self, const char *key, const char *id,
                              void **data, size_t *size) {
  (void)self;
  return fuzz_inner->load(fuzz_inner->self, key, id, data, size);
}
static void record_release(void *self, void *data) {
  (void)self;
  fuzz_inner->release_data(fuzz_inner->self, data);
}
static xrt_status record_save(void *self, const char *key, const char *id,
                              const void *data, size_t size, uint64_t ns) {
  (void)self;
  snprintf(fuzz_identity, sizeof fuzz_identity, "%s", id);
  return fuzz_inner->save(fuzz_inner->self, key, id, data, size, ns);
}

static xrt_client *client_with(const xrt_cache_store *store) {
  xrt_client_options o;
  xrt_client_options_init(&o);
  o.num_devices = 1;
  o.threads_per_device = 1;
  o.device_memory_bytes = FUZZ_DEVICE_MEMORY;
  o.cache_store = store;
  xrt_client *c = NULL;
  if (xrt_client_create(&o, &c) != XRT_OK) abort();
  return c;
}

static xrt_disk_cache *open_cache(int read_only) {
  xrt_disk_cache_options o;
  xrt_disk_cache_options_init(&o);
  o.directory = fuzz_dir;
  o.read_only = read_only;
  xrt_disk_cache *dc = NULL;
  if (xrt_disk_cache_open(&o, &dc) != XRT_OK) abort();
  return dc;
}

static void *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) abort();
  char *b = malloc(1 << 20);
  if (!b) abort();
  *n = fread(b, 1, 1 << 20, f);
  fclose(f);
  return b;
}

static void write_seed(const char *dir, const char *name, uint8_t selector,
                       const void *file, size_t n) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  fputc(selector, f);
  fwrite(file, 1, n, f);
  fclose(f);
}

/* Compiles the program once through a recording store: learns the key and
 * the identity, and leaves the real cache file at fuzz_path. */
static void make_real_file(void) {
  xrt_disk_cache *dc = open_cache(0);
  fuzz_inner = xrt_disk_cache_store(dc);
  xrt_cache_store rec = {sizeof rec, NULL, record_load, record_release,
                         record_save};
  xrt_client *c = client_with(&rec);
  xrt_executable *e = NULL;
  if (xrt_compile_cache_key(c, kProgram, sizeof kProgram - 1, NULL,
                            fuzz_key) != XRT_OK ||
      xrt_compile(c, kProgram, sizeof kProgram - 1, NULL, &e) != XRT_OK ||
      !fuzz_identity[0])
    abort();
  xrt_executable_release(e);
  xrt_client_release(c);
  xrt_disk_cache_close(dc);
  snprintf(fuzz_path, sizeof fuzz_path, "%s/%s.xrtc", fuzz_dir, fuzz_key);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  xrt_log_configure("off"); /* damaged files warn by design */
  snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/xrt-fuzz-cache-XXXXXX");
  if (!mkdtemp(fuzz_dir)) abort();
  atexit(fuzz_cleanup);
  make_real_file();
  const char *seeds = getenv("XRT_FUZZ_WRITE_SEEDS");
  if (seeds) {
    size_t n = 0;
    unsigned char *f = read_all(fuzz_path, &n);
    write_seed(seeds, "real", 0, f, n);
    write_seed(seeds, "real_resealed", 1, f, n);
    f[n / 2] ^= 1; /* a payload byte: the checksum catches it... */
    write_seed(seeds, "flipped", 0, f, n);
    write_seed(seeds, "flipped_resealed", 1, f, n); /* ...unless resealed */
    write_seed(seeds, "truncated", 1, f, n / 3);
    free(f);
    exit(0);
  }
  const char *rs = getenv("XRT_FUZZ_RESEAL_SIM");
  fuzz_reseal_sim = rs && strcmp(rs, "1") == 0;
  fuzz_cache = open_cache(1);
  fuzz_client = client_with(xrt_disk_cache_store(fuzz_cache));
  return 0;
}

static int write_file(const uint8_t *data, size_t size) {
  FILE *f = fopen(fuzz_path, "wb");
  if (!f) return 0;
  int ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > (1u << 20)) return 0;
  size_t n = size - 1;
  uint8_t *file = malloc(n ? n : 1);
  if (!file) return 0;
  if (n) memcpy(file, data + 1, n);
  if (fuzz_reseal_sim && (data[0] & 2) && n >= 8) {
    /* The simulator's bytes run from its magic to the file's checksum;
     * their hash sits 16 bytes in and covers what follows byte 24. */
    for (size_t m = 0; m + 32 <= n - 8; m++) {
      if (memcmp(file + m, "XSIMEXE1", 8) != 0) continue;
      uint64_t h = XXH3_64bits(file + m + 24, n - 8 - (m + 24));
      memcpy(file + m + 16, &h, sizeof h);
      break;
    }
  }
  if ((data[0] & 1) && n >= 8) {
    uint64_t h = XXH3_64bits(file, n - 8);
    for (int i = 0; i < 8; i++) file[n - 8 + i] = (uint8_t)(h >> (8 * i));
  }
  /* The store on its own (it removes a damaged file)... */
  const xrt_cache_store *st = xrt_disk_cache_store(fuzz_cache);
  void *p = NULL;
  size_t psize = 0;
  if (write_file(file, n) &&
      st->load(st->self, fuzz_key, fuzz_identity, &p, &psize) == XRT_OK)
    st->release_data(st->self, p);
  /* ...then the whole path: store, core payload, plugin. */
  xrt_executable *e = NULL;
  if (write_file(file, n) && xrt_client_clear_cache(fuzz_client) == XRT_OK &&
      xrt_compile(fuzz_client, kProgram, sizeof kProgram - 1, NULL, &e) ==
          XRT_OK) {
    xrt_executable_release(e);
  }
  unlink(fuzz_path);
  free(file);
  return 0;
}
