/*
 * xrt_mpi.c - several processes as one xrt system, over MPI (optional:
 * `make XRT_MPI=1` builds it in with mpicc).  MIT licensed; see LICENSE.
 *
 * The core talks to other processes only through an xrt_transport
 * (xrt.h, "Multi-process"); this file makes one over a duplicate of the
 * program's communicator and installs it.  Everything here is plain MPI-3:
 * nonblocking point-to-point messages polled against a deadline, so that
 * a dead or stalled peer gives an error instead of a hang, and an error
 * handler that returns instead of aborting.
 *
 * Contents:
 *   1. State: the communicator, thread level, timeout, topology
 *   2. Errors: MPI error codes to xrt messages
 *   3. Waiting: polling requests against the deadline
 *   4. The transport: allgather and tagged exchanges
 *   5. Topology: ranks, hosts and local ranks (MPI_Comm_split_type), or
 *      the environment
 *   6. Public calls: xrt_mpi_init, xrt_mpi_finalize, xrt_mpi_topology
 */
#define _POSIX_C_SOURCE 200809L
#include "xrt.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ======================================================================
 * 1. State
 * ==================================================================== */

typedef struct mpi_state {
  int active;
  int we_initialized; /* xrt_mpi_init called MPI_Init_thread */
  int serialize;      /* MPI below THREAD_MULTIPLE: one caller at a time */
  MPI_Comm comm;      /* xrt's duplicate, errors returned */
  int rank, size;
  int *rank_of;       /* process index -> rank in comm */
  int tag_ub;
  _Atomic int64_t timeout_ms;
  xrt_topology topo;
  xrt_transport tp;
  pthread_mutex_t mu; /* MPI calls when serialize */
} mpi_state;

static mpi_state mpi_st = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void mpi_lock(void) {
  if (mpi_st.serialize) pthread_mutex_lock(&mpi_st.mu);
}
static void mpi_unlock(void) {
  if (mpi_st.serialize) pthread_mutex_unlock(&mpi_st.mu);
}

/* ======================================================================
 * 2. Errors
 * ==================================================================== */

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static xrt_status mpi_fail(char *err, size_t cap, xrt_status code,
                           const char *fmt, ...) {
  if (err && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* "MPI_Isend: <MPI's own words>" */
static xrt_status mpi_fail_rc(char *err, size_t cap, const char *call,
                              int rc) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) len = 0;
  s[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = 0;
  return mpi_fail(err, cap, XRT_UNAVAILABLE, "%s failed: %s (MPI error %d)",
                  call, len ? s : "?", rc);
}

/* ======================================================================
 * 3. Waiting
 * ==================================================================== */

static int64_t mpi_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define MPI_SPIN_POLLS 2000   /* polls before yielding */
#define MPI_YIELD_POLLS 20000 /* polls before sleeping */

/* Gives up what a timed-out exchange still has posted: receives are
 * cancelled, sends left to complete on their own. */
static void mpi_abandon(MPI_Request *req, int n) {
  for (int i = 0; i < n; i++) {
    if (req[i] == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&req[i]);
    MPI_Request_free(&req[i]);
  }
}

/* Polls req[0..n) until all complete, an error, or the deadline.  what
 * names the operation in messages.  coll: req is a nonblocking
 * collective, which MPI forbids to cancel or free (Open MPI aborts the
 * job): given up on, it stays posted. */
static xrt_status mpi_wait_all(MPI_Request *req, int n, const char *what,
                               int peer, int coll, char *err, size_t cap) {
  int64_t timeout = atomic_load(&mpi_st.timeout_ms);
  int64_t deadline = timeout > 0 ? mpi_now_ms() + timeout : 0;
  for (unsigned spins = 0;; spins++) {
    int done = 0;
    mpi_lock();
    int rc = MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
    mpi_unlock();
    if (rc != MPI_SUCCESS) {
      mpi_lock();
      if (!coll) mpi_abandon(req, n);
      mpi_unlock();
      return mpi_fail_rc(err, cap, what, rc);
    }
    if (done) return XRT_OK;
    if (deadline && (spins & 255) == 0 && mpi_now_ms() > deadline) {
      mpi_lock();
      if (!coll) mpi_abandon(req, n);
      mpi_unlock();
      if (peer >= 0)
        return mpi_fail(err, cap, XRT_DEADLINE_EXCEEDED, "%s: process %d did "
                        "not answer within %lld ms (dead or stalled?)", what,
                        peer, (long long)timeout);
      return mpi_fail(err, cap, XRT_DEADLINE_EXCEEDED, "%s: the other "
                      "processes did not answer within %lld ms (dead or "
                      "stalled?)", what, (long long)timeout);
    }
    /* Poll hard at first: a big message moves only while MPI is polled,
     * fragment by fragment.  Then yield between polls (the peer or this
     * process's other device threads may need the core), and past that
     * sleep: a wait this long is a slow or stalled peer. */
    if (spins < (unsigned)MPI_SPIN_POLLS) continue;
    if (spins < (unsigned)MPI_YIELD_POLLS) sched_yield();
    else nanosleep(&(struct timespec){0, 10000}, NULL);
  }
}

/* ======================================================================
 * 4. The transport
 * ==================================================================== */

#define MPI_MAX_PIECE ((size_t)1 << 30) /* bytes per MPI message */

/* The MPI tag of an exchange: a mix of its 64-bit tag, within the
 * communicator's tag bound. */
static int mpi_tag(uint64_t tag) {
  tag ^= tag >> 33;
  tag *= 0xff51afd7ed558ccdull;
  tag ^= tag >> 33;
  tag *= 0xc4ceb9fe1a85ec53ull;
  tag ^= tag >> 33;
  return (int)(tag % ((uint64_t)mpi_st.tag_ub + 1));
}

/* Messages a transfer of bytes takes. */
static int mpi_pieces(size_t bytes) {
  return bytes ? (int)((bytes + MPI_MAX_PIECE - 1) / MPI_MAX_PIECE) : 1;
}

static xrt_status mpi_check_msgs(const xrt_transport_msg *m, int n,
                                 const char *what, int *pieces, char *err,
                                 size_t cap) {
  for (int i = 0; i < n; i++) {
    if (m[i].peer < 0 || m[i].peer >= mpi_st.size)
      return mpi_fail(err, cap, XRT_INVALID_ARGUMENT, "exchange: %s %d goes "
                      "to process %d, outside 0..%d", what, i, m[i].peer,
                      mpi_st.size - 1);
    if (m[i].bytes && !m[i].data)
      return mpi_fail(err, cap, XRT_INVALID_ARGUMENT, "exchange: %s %d has "
                      "no data", what, i);
    *pieces += mpi_pieces(m[i].bytes);
  }
  return XRT_OK;
}

/* Posts one message (cut in pieces of at most MPI_MAX_PIECE bytes: MPI
 * counts are ints). */
static int mpi_post(const xrt_transport_msg *m, int tag, int send,
                    MPI_Request *req, int *nreq) {
  size_t off = 0;
  int np = mpi_pieces(m->bytes), rank = mpi_st.rank_of[m->peer];
  for (int k = 0; k < np; k++) {
    size_t len = m->bytes - off < MPI_MAX_PIECE ? m->bytes - off
                                                : MPI_MAX_PIECE;
    char *p = (char *)m->data + off;
    int rc = send ? MPI_Isend(p, (int)len, MPI_BYTE, rank, tag, mpi_st.comm,
                              &req[*nreq])
                  : MPI_Irecv(p, (int)len, MPI_BYTE, rank, tag, mpi_st.comm,
                              &req[*nreq]);
    if (rc != MPI_SUCCESS) return rc;
    (*nreq)++;
    off += len;
  }
  return MPI_SUCCESS;
}

static xrt_status mpi_exchange(void *self, uint64_t tag64,
                               const xrt_transport_msg *sends, int nsend,
                               const xrt_transport_msg *recvs, int nrecv,
                               char *err, size_t cap) {
  (void)self;
  int pieces = 0;
  xrt_status s;
  if (nsend < 0 || nrecv < 0 || (nsend && !sends) || (nrecv && !recvs))
    return mpi_fail(err, cap, XRT_INVALID_ARGUMENT, "exchange: bad message "
                    "lists");
  if ((s = mpi_check_msgs(sends, nsend, "send", &pieces, err, cap)) ||
      (s = mpi_check_msgs(recvs, nrecv, "receive", &pieces, err, cap)))
    return s;
  if (!pieces) return XRT_OK;
  MPI_Request stack[64], *req = stack;
  if (pieces > 64 && !(req = (MPI_Request *)malloc(sizeof *req *
                                                   (size_t)pieces)))
    return mpi_fail(err, cap, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  int tag = mpi_tag(tag64), nreq = 0, rc = MPI_SUCCESS;
  mpi_lock();
  /* Receives first, so that a peer's sends find them posted. */
  for (int i = 0; i < nrecv && rc == MPI_SUCCESS; i++)
    rc = mpi_post(&recvs[i], tag, 0, req, &nreq);
  for (int i = 0; i < nsend && rc == MPI_SUCCESS; i++)
    rc = mpi_post(&sends[i], tag, 1, req, &nreq);
  if (rc != MPI_SUCCESS) mpi_abandon(req, nreq);
  mpi_unlock();
  if (rc != MPI_SUCCESS) s = mpi_fail_rc(err, cap, "MPI_Isend/MPI_Irecv", rc);
  else
    s = mpi_wait_all(req, nreq, "exchange",
                     nrecv == 1 ? recvs[0].peer
                                : nsend == 1 && !nrecv ? sends[0].peer : -1,
                     0, err, cap);
  if (req != stack) free(req);
  return s;
}

/* The buffers of allgathers given up on (a list through their first
 * word), which MPI may still use: never freed. */
static void *mpi_orphans;
static pthread_mutex_t mpi_orphans_mu = PTHREAD_MUTEX_INITIALIZER;

/* allgather in process-index order (ranks may be permuted by the
 * environment's RANK). */
static xrt_status mpi_allgather_ranked(void *self, const void *in, void *out,
                                       size_t bytes, char *err, size_t cap) {
  (void)self;
  if (bytes > (size_t)INT32_MAX / (size_t)mpi_st.size)
    return mpi_fail(err, cap, XRT_INVALID_ARGUMENT, "allgather of %zu bytes "
                    "per process is too large", bytes);
  /* A link (see mpi_orphans), room for every process's bytes, then a copy
   * of in: a collective that times out stays posted and may still read
   * and write them. */
  void **block = (void **)malloc(sizeof(void *) +
                                 bytes * ((size_t)mpi_st.size + 1) + 1);
  if (!block)
    return mpi_fail(err, cap, XRT_RESOURCE_EXHAUSTED, "out of memory");
  char *tmp = (char *)(block + 1), *mine = tmp + bytes * (size_t)mpi_st.size;
  if (bytes) memcpy(mine, in, bytes);
  MPI_Request req = MPI_REQUEST_NULL;
  mpi_lock();
  int rc = MPI_Iallgather(mine, (int)bytes, MPI_BYTE, tmp, (int)bytes,
                          MPI_BYTE, mpi_st.comm, &req);
  mpi_unlock();
  xrt_status s = rc != MPI_SUCCESS ? mpi_fail_rc(err, cap, "MPI_Iallgather", rc)
                                   : mpi_wait_all(&req, 1, "allgather", -1, 1,
                                                  err, cap);
  for (int p = 0; !s && p < mpi_st.size; p++)
    memcpy((char *)out + (size_t)p * bytes,
           tmp + (size_t)mpi_st.rank_of[p] * bytes, bytes);
  if (s != XRT_DEADLINE_EXCEEDED) {
    free(block);
    return s;
  }
  /* Given up on, the collective keeps its buffers: kept for good. */
  pthread_mutex_lock(&mpi_orphans_mu);
  *block = mpi_orphans;
  mpi_orphans = block;
  pthread_mutex_unlock(&mpi_orphans_mu);
  return s;
}

/* ======================================================================
 * 5. Topology
 * ==================================================================== */

/* The integer in environment variable name, or -1 when unset. */
static int mpi_env_int(const char *name, int *out) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  char *end;
  long x = strtol(v, &end, 10);
  if (*end || x < 0 || x > 1 << 24) return -1;
  *out = (int)x;
  return 1;
}

/* Field f: given (>= 0), else the first set variable of env, else
 * from_mpi. */
static xrt_status mpi_topo_field(int given, const char *const *env,
                                 int from_mpi, int *out, const char *field,
                                 char *err, size_t cap) {
  if (given >= 0) {
    *out = given;
    return XRT_OK;
  }
  for (int i = 0; env[i]; i++) {
    int r = mpi_env_int(env[i], out);
    if (r < 0)
      return mpi_fail(err, cap, XRT_INVALID_ARGUMENT, "topology.%s: "
                      "environment variable %s='%s' is not a count", field,
                      env[i], getenv(env[i]));
    if (r > 0) return XRT_OK;
  }
  *out = from_mpi;
  return XRT_OK;
}

/* Local rank and size from the shared-memory split, host index as the
 * rank of this host's first process among the hosts' first processes. */
static int mpi_local_topology(int *lrank, int *lsize, int *host) {
  MPI_Comm local = MPI_COMM_NULL, leaders = MPI_COMM_NULL;
  int rc = MPI_Comm_split_type(mpi_st.comm, MPI_COMM_TYPE_SHARED,
                               mpi_st.rank, MPI_INFO_NULL, &local);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(local, lrank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(local, lsize);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_split(mpi_st.comm, *lrank == 0 ? 0 : MPI_UNDEFINED,
                        mpi_st.rank, &leaders);
  *host = 0;
  if (rc == MPI_SUCCESS && leaders != MPI_COMM_NULL)
    rc = MPI_Comm_rank(leaders, host);
  if (rc == MPI_SUCCESS) rc = MPI_Bcast(host, 1, MPI_INT, 0, local);
  if (leaders != MPI_COMM_NULL) MPI_Comm_free(&leaders);
  if (local != MPI_COMM_NULL) MPI_Comm_free(&local);
  return rc;
}

static xrt_status mpi_resolve_topology(const xrt_topology *in, char *err,
                                       size_t cap) {
  static const char *const rank[] = {"RANK", NULL};
  static const char *const world[] = {"WORLD_SIZE", NULL};
  static const char *const host[] = {"XRT_HOST_INDEX", "GROUP_RANK",
                                     "NODE_RANK", NULL};
  static const char *const lrank[] = {"LOCAL_RANK", NULL};
  static const char *const lworld[] = {"LOCAL_WORLD_SIZE", NULL};
  int m_lrank = 0, m_lsize = 1, m_host = 0;
  int rc = mpi_local_topology(&m_lrank, &m_lsize, &m_host);
  if (rc != MPI_SUCCESS)
    return mpi_fail_rc(err, cap, "MPI_Comm_split_type", rc);
  xrt_topology *t = &mpi_st.topo;
  xrt_status s;
  if ((s = mpi_topo_field(in->process_index, rank, mpi_st.rank,
                          &t->process_index, "process_index", err, cap)) ||
      (s = mpi_topo_field(in->process_count, world, mpi_st.size,
                          &t->process_count, "process_count", err, cap)) ||
      (s = mpi_topo_field(in->host_index, host, m_host, &t->host_index,
                          "host_index", err, cap)) ||
      (s = mpi_topo_field(in->local_rank, lrank, m_lrank, &t->local_rank,
                          "local_rank", err, cap)) ||
      (s = mpi_topo_field(in->local_world_size, lworld, m_lsize,
                          &t->local_world_size, "local_world_size", err,
                          cap)))
    return s;
  if (t->process_count != mpi_st.size)
    return mpi_fail(err, cap, XRT_INVALID_ARGUMENT, "topology.process_count "
                    "is %d, but the communicator has %d processes",
                    t->process_count, mpi_st.size);
  if (t->process_index >= t->process_count)
    return mpi_fail(err, cap, XRT_INVALID_ARGUMENT, "topology.process_index "
                    "%d is outside 0..%d", t->process_index,
                    t->process_count - 1);
  if (t->local_world_size < 1 || t->local_rank >= t->local_world_size)
    return mpi_fail(err, cap, XRT_INVALID_ARGUMENT, "topology.local_rank %d "
                    "is outside 0..%d", t->local_rank,
                    t->local_world_size - 1);
  return XRT_OK;
}

/* rank_of: every process's index, gathered; they must be a permutation. */
static xrt_status mpi_index_ranks(char *err, size_t cap) {
  int *idx = (int *)calloc((size_t)mpi_st.size, sizeof(int));
  mpi_st.rank_of = (int *)malloc(sizeof(int) * (size_t)mpi_st.size);
  if (!idx || !mpi_st.rank_of) {
    free(idx);
    return mpi_fail(err, cap, XRT_RESOURCE_EXHAUSTED, "out of memory");
  }
  int rc = MPI_Allgather(&mpi_st.topo.process_index, 1, MPI_INT, idx, 1,
                         MPI_INT, mpi_st.comm);
  xrt_status s = rc != MPI_SUCCESS ? mpi_fail_rc(err, cap, "MPI_Allgather",
                                                 rc) : XRT_OK;
  for (int p = 0; p < mpi_st.size; p++) mpi_st.rank_of[p] = -1;
  for (int r = 0; !s && r < mpi_st.size; r++) {
    if (mpi_st.rank_of[idx[r]] >= 0)
      s = mpi_fail(err, cap, XRT_INVALID_ARGUMENT, "ranks %d and %d both "
                   "have process_index %d", mpi_st.rank_of[idx[r]], r,
                   idx[r]);
    else mpi_st.rank_of[idx[r]] = r;
  }
  free(idx);
  return s;
}

/* ======================================================================
 * 6. Public calls
 * ==================================================================== */

static char mpi_err[1024];

void xrt_mpi_options_init(xrt_mpi_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->topology.process_index = o->topology.process_count = -1;
  o->topology.host_index = -1;
  o->topology.local_rank = o->topology.local_world_size = -1;
  o->timeout_ms = 60000;
}

/* MPI_Init_thread unless the program did; the thread level it gives. */
static xrt_status mpi_start(char *err, size_t cap) {
  int inited = 0, provided = MPI_THREAD_SINGLE;
  MPI_Initialized(&inited);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return mpi_fail(err, cap, XRT_FAILED_PRECONDITION, "MPI was finalized");
  if (!inited) {
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS) return mpi_fail_rc(err, cap, "MPI_Init_thread", rc);
    mpi_st.we_initialized = 1;
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_SERIALIZED)
    return mpi_fail(err, cap, XRT_FAILED_PRECONDITION, "MPI provides thread "
                    "level %d; xrt calls MPI from its device threads and "
                    "needs MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE",
                    provided);
  mpi_st.serialize = provided < MPI_THREAD_MULTIPLE;
  return XRT_OK;
}

/* The duplicate communicator, errors returned, and its tag bound. */
static xrt_status mpi_open_comm(const xrt_mpi_options *o, char *err,
                                size_t cap) {
  MPI_Comm base = o->comm ? *(MPI_Comm *)o->comm : MPI_COMM_WORLD;
  if (base == MPI_COMM_NULL)
    return mpi_fail(err, cap, XRT_INVALID_ARGUMENT, "xrt_mpi_init: "
                    "options.comm points at MPI_COMM_NULL");
  /* MPI_Comm_split_type (section 5) is for intracommunicators: Open MPI
   * crashes on an intercommunicator. */
  int inter = 0;
  if (MPI_Comm_test_inter(base, &inter) == MPI_SUCCESS && inter)
    return mpi_fail(err, cap, XRT_INVALID_ARGUMENT, "xrt_mpi_init: "
                    "options.comm is an intercommunicator");
  int rc = MPI_Comm_dup(base, &mpi_st.comm);
  if (rc != MPI_SUCCESS) return mpi_fail_rc(err, cap, "MPI_Comm_dup", rc);
  rc = MPI_Comm_set_errhandler(mpi_st.comm, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(mpi_st.comm, &mpi_st.rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(mpi_st.comm, &mpi_st.size);
  if (rc != MPI_SUCCESS) return mpi_fail_rc(err, cap, "MPI_Comm_rank", rc);
  int *ub = NULL, flag = 0;
  MPI_Comm_get_attr(mpi_st.comm, MPI_TAG_UB, &ub, &flag);
  mpi_st.tag_ub = flag && ub && *ub > 0 ? *ub : 32767;
  return XRT_OK;
}

/* Frees the communicator; finalize: also MPI, if xrt_mpi_init started
 * it (a failed init leaves MPI running, so that the program may try
 * again). */
static void mpi_close(int finalize) {
  if (mpi_st.comm != MPI_COMM_NULL) MPI_Comm_free(&mpi_st.comm);
  mpi_st.comm = MPI_COMM_NULL;
  free(mpi_st.rank_of);
  mpi_st.rank_of = NULL;
  if (finalize && mpi_st.we_initialized) MPI_Finalize();
  if (finalize) mpi_st.we_initialized = 0;
}

/* Reports a failure through the core's last error. */
static xrt_status mpi_report(xrt_status s) {
  return xrt_report_error(s, "%s", mpi_err);
}

xrt_status xrt_mpi_init(const xrt_mpi_options *options) {
  xrt_mpi_options o;
  xrt_mpi_options_init(&o);
  if (options) o = *options;
  if (mpi_st.active) {
    snprintf(mpi_err, sizeof mpi_err, "xrt_mpi_init: already initialized");
    return mpi_report(XRT_FAILED_PRECONDITION);
  }
  if (o.timeout_ms < 0) {
    snprintf(mpi_err, sizeof mpi_err, "xrt_mpi_init: timeout_ms is %lld",
             (long long)o.timeout_ms);
    return mpi_report(XRT_INVALID_ARGUMENT);
  }
  mpi_st.comm = MPI_COMM_NULL;
  atomic_store(&mpi_st.timeout_ms, o.timeout_ms);
  xrt_status s = mpi_start(mpi_err, sizeof mpi_err);
  if (!s) s = mpi_open_comm(&o, mpi_err, sizeof mpi_err);
  if (!s) s = mpi_resolve_topology(&o.topology, mpi_err, sizeof mpi_err);
  if (!s) s = mpi_index_ranks(mpi_err, sizeof mpi_err);
  if (!s) {
    xrt_transport *t = &mpi_st.tp;
    memset(t, 0, sizeof *t);
    t->struct_size = sizeof *t;
    t->topology = mpi_st.topo;
    t->allgather = mpi_allgather_ranked;
    t->exchange = mpi_exchange;
    s = xrt_transport_install(t);
  }
  if (s) {
    mpi_close(0);
    return mpi_report(s);
  }
  mpi_st.active = 1;
  return XRT_OK;
}

xrt_status xrt_mpi_finalize(void) {
  if (!mpi_st.active) {
    snprintf(mpi_err, sizeof mpi_err, "xrt_mpi_finalize: not initialized");
    return mpi_report(XRT_FAILED_PRECONDITION);
  }
  xrt_transport_install(NULL);
  mpi_st.active = 0;
  mpi_close(1);
  return XRT_OK;
}

xrt_status xrt_mpi_set_timeout(int64_t timeout_ms) {
  if (!mpi_st.active)
    return xrt_report_error(XRT_FAILED_PRECONDITION, "xrt_mpi_set_timeout: "
                            "xrt_mpi_init was not called");
  if (timeout_ms < 0)
    return xrt_report_error(XRT_INVALID_ARGUMENT, "xrt_mpi_set_timeout: "
                            "timeout_ms is %lld", (long long)timeout_ms);
  atomic_store(&mpi_st.timeout_ms, timeout_ms);
  return XRT_OK;
}

xrt_status xrt_mpi_topology(xrt_topology *out) {
  if (!out)
    return xrt_report_error(XRT_INVALID_ARGUMENT, "xrt_mpi_topology: out is "
                            "NULL");
  if (!mpi_st.active)
    return xrt_report_error(XRT_FAILED_PRECONDITION, "xrt_mpi_topology: "
                            "xrt_mpi_init was not called");
  *out = mpi_st.topo;
  return XRT_OK;
}
