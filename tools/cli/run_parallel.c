/*
 * run_parallel.c - interpreter.run_parallel for the xrt command-line tool:
 * a launch of several programs at once, on a client of its own, and with
 * --mpi spread over the processes of the job.  MIT licensed; see LICENSE.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- interpreter.run_parallel ----
 *
 * Runs programs = [[@f00, @f01, ...], [@f10, ...], ...] (one list per
 * replica, one function per partition) as one launch of R x P
 * participants, as the StableHLO interpreter does: the operands go to the
 * participants in order of their functions' parameters, the results come
 * back in the same order.  The launch runs on a second client of R * P
 * devices: the client running @main is busy with this very call. */

typedef struct rp_part {
  const xrt_ir_func *f;
  const char *name;
  int wrapped;          /* tokens cross its boundary: run its wrapper */
  xrt_executable *exe;  /* owned by the first participant of that name */
  int owns_exe;
  xrt_buffer **args, **outs;
  int nargs, nouts;
  xrt_event *done;
  int proc, local;      /* its process; whether that is this one */
} rp_part;

typedef struct rp_launch {
  interp_state *st;
  xrt_host_call *call;
  int R, P, n;
  rp_part *parts;
  xrt_program *wprog; /* the chunk plus the wrappers, when needed */
  size_t recs_before; /* --mpi: probe records made before the launch */
} rp_launch;

static const xrt_ir_func *find_func(const xrt_ir_module *m, const char *name, size_t n) {
  for (int32_t i = 0; m && i < m->num_funcs; i++)
    if (strlen(m->funcs[i].name) == n && memcmp(m->funcs[i].name, name, n) == 0)
      return &m->funcs[i];
  return NULL;
}

static int is_token(const xrt_ir_type *t) { return t->kind == XRT_TYPE_TOKEN; }

static int same_shape(const xrt_shape *a, const xrt_shape *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return 0;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return 0;
  return 1;
}

/* Does host tensor t carry a value of type ty (a token: no bytes)? */
static int host_matches(const xrt_host_tensor *t, const xrt_ir_type *ty) {
  if (is_token(ty)) return t->bytes == 0 && t->shape.dtype == XRT_DTYPE_INVALID;
  return ty->kind == XRT_TYPE_TENSOR && same_shape(&t->shape, &ty->shape) &&
         t->bytes == xrt_shape_bytes(&ty->shape);
}

/* Finds the functions and checks operands and results against them. */
static xrt_status rp_bind(rp_launch *L) {
  xrt_host_call *call = L->call;
  const xrt_ir_attr *progs = xrt_ir_op_attr(call->op, "programs");
  int in = 0, out = 0;
  for (int r = 0; r < L->R; r++)
    for (int p = 0; p < L->P; p++) {
      const xrt_ir_attr *sym = &progs->items[r].items[p];
      rp_part *pt = &L->parts[r * L->P + p];
      pt->f = find_func(L->st->module, sym->s, (size_t)sym->n);
      if (!pt->f)
        return xrt_host_call_fail(call, XRT_NOT_FOUND, "%s: the module has no function @%.*s",
                                  call->target, (int)sym->n, sym->s);
      pt->name = pt->f->name;
      const xrt_ir_func *f = pt->f;
      for (int32_t k = 0; k < f->body.num_args; k++, in++) {
        const xrt_ir_type *ty = &f->value_types[f->body.args[k]];
        pt->wrapped |= is_token(ty);
        pt->nargs += !is_token(ty);
        if (in < call->num_inputs && !host_matches(&call->inputs[in], ty))
          return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s: operand %d does not "
                                    "match argument %d of @%s (replica %d, partition %d)",
                                    call->target, in, (int)k, f->name, r, p);
      }
      for (int32_t k = 0; k < f->num_results; k++, out++) {
        const xrt_ir_type *ty = &f->result_types[k];
        pt->wrapped |= is_token(ty);
        pt->nouts += !is_token(ty);
        if (out < call->num_outputs && !host_matches(&call->outputs[out], ty))
          return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s: result %d does not "
                                    "match result %d of @%s (replica %d, partition %d)",
                                    call->target, out, (int)k, f->name, r, p);
      }
    }
  if (in != call->num_inputs || out != call->num_outputs)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s has %d operand(s) and %d "
                              "result(s) but its programs take %d and return %d", call->target,
                              call->num_inputs, call->num_outputs, in, out);
  return XRT_OK;
}

/* The MLIR spelling of a parameter or result type a wrapper can use. */
static int type_text(const xrt_ir_type *t, char *buf, size_t cap) {
  if (is_token(t)) {
    snprintf(buf, cap, "!stablehlo.token");
    return 0;
  }
  if (t->kind != XRT_TYPE_TENSOR || t->quant) return -1;
  xrt_shape_format(&t->shape, buf, cap);
  return 0;
}

/* Appends a function @__xrt_rp_F that makes the tokens F takes (an
 * after_all), calls F, and returns F's results without its tokens: only
 * tensors cross an entry function's boundary. */
static int rp_wrapper(sbuf *b, const xrt_ir_func *f) {
  char ty[300], line[512];
  int nres = 0, nargs = 0;
  snprintf(line, sizeof line, "\nfunc.func @__xrt_rp_%s(", f->name);
  sb_add(b, line);
  for (int32_t k = 0; k < f->body.num_args; k++) {
    const xrt_ir_type *t = &f->value_types[f->body.args[k]];
    if (type_text(t, ty, sizeof ty)) return -1;
    if (is_token(t)) continue;
    snprintf(line, sizeof line, "%s%%a%d: %s", nargs++ ? ", " : "", (int)k, ty);
    sb_add(b, line);
  }
  sb_add(b, ") -> (");
  for (int32_t k = 0; k < f->num_results; k++) {
    if (type_text(&f->result_types[k], ty, sizeof ty)) return -1;
    if (is_token(&f->result_types[k])) continue;
    sb_add(b, nres++ ? ", " : "");
    sb_add(b, ty);
  }
  sb_add(b, ") {\n  %t = stablehlo.after_all : !stablehlo.token\n  ");
  if (f->num_results > 0) {
    snprintf(line, sizeof line, "%%r:%d = ", (int)f->num_results);
    sb_add(b, f->num_results == 1 ? "%r = " : line);
  }
  snprintf(line, sizeof line, "func.call @%s(", f->name);
  sb_add(b, line);
  for (int32_t k = 0; k < f->body.num_args; k++) {
    const xrt_ir_type *t = &f->value_types[f->body.args[k]];
    snprintf(line, sizeof line, "%%a%d", (int)k);
    sb_add(b, k ? ", " : "");
    sb_add(b, is_token(t) ? "%t" : line);
  }
  sb_add(b, ") : (");
  for (int32_t k = 0; k < f->body.num_args; k++) {
    type_text(&f->value_types[f->body.args[k]], ty, sizeof ty);
    sb_add(b, k ? ", " : "");
    sb_add(b, ty);
  }
  sb_add(b, ") -> (");
  for (int32_t k = 0; k < f->num_results; k++) {
    type_text(&f->result_types[k], ty, sizeof ty);
    sb_add(b, k ? ", " : "");
    sb_add(b, ty);
  }
  sb_add(b, ")\n  func.return");
  for (int32_t k = 0, i = 0; k < f->num_results; k++) {
    if (is_token(&f->result_types[k])) continue;
    if (f->num_results == 1) snprintf(line, sizeof line, " %%r");
    else snprintf(line, sizeof line, "%s %%r#%d", i ? "," : "", (int)k);
    i++;
    sb_add(b, line);
  }
  for (int32_t k = 0, i = 0; k < f->num_results; k++) {
    if (is_token(&f->result_types[k])) continue;
    type_text(&f->result_types[k], ty, sizeof ty);
    sb_add(b, i++ ? ", " : " : ");
    sb_add(b, ty);
  }
  sb_add(b, "\n}\n");
  return 0;
}

/* Where a wrapper goes: before the module's closing brace (the last '}'
 * outside a comment) when the chunk is a `module {...}`, else the end. */
static size_t wrapper_at(const char *text, size_t len) {
  const char *p = text, *end = text + len;
  int in_module = 0;
  size_t last = len;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *q = cli_skip_blanks(p, eol);
    if (!in_module && eol - q >= 6 && strncmp(q, "module", 6) == 0) in_module = 1;
    for (; q < eol && !(q + 1 < eol && q[0] == '/' && q[1] == '/'); q++)
      if (*q == '}') last = (size_t)(q - text);
    p = eol + 1;
  }
  return in_module ? last : len;
}

/* Parses the chunk again with a wrapper for every function that takes or
 * returns tokens; lines of the chunk keep their numbers. */
static xrt_status rp_wrap(rp_launch *L) {
  interp_state *st = L->st;
  sbuf w = {NULL, 0, 0, 0};
  for (int i = 0; i < L->n; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++) seen |= L->parts[j].f == L->parts[i].f;
    if (!L->parts[i].wrapped || seen) continue;
    if (rp_wrapper(&w, L->parts[i].f)) {
      free(w.s);
      return xrt_host_call_fail(L->call, XRT_UNIMPLEMENTED, "%s: @%s takes or returns tokens "
                                "together with tuples or quantized tensors", L->call->target,
                                L->parts[i].name);
    }
  }
  if (!w.s) return XRT_OK;
  size_t at = wrapper_at(st->text, st->len);
  char *text = w.oom ? NULL : malloc(st->len + w.n + 1);
  if (!text) {
    free(w.s);
    return xrt_host_call_fail(L->call, XRT_RESOURCE_EXHAUSTED, "out of memory");
  }
  memcpy(text, st->text, at);
  memcpy(text + at, w.s, w.n);
  memcpy(text + at + w.n, st->text + at, st->len - at);
  xrt_compile_options co;
  xrt_compile_options_init(&co);
  co.filename = st->file;
  co.line_offset = st->line_offset;
  xrt_status s = xrt_program_parse(text, st->len + w.n, &co, &L->wprog);
  free(text);
  free(w.s);
  if (s)
    return xrt_host_call_fail(L->call, s, "%s: wrapping token functions: %s", L->call->target,
                              xrt_last_error());
  st->module2 = xrt_program_module(L->wprog);
  return XRT_OK;
}

/* The client of the launches, with at least n devices (--mpi: of all
 * processes, each with as many; creating it is collective). */
static xrt_status rp_client(rp_launch *L, int n) {
  interp_state *st = L->st;
  if (st->par && st->par_devices >= n) return XRT_OK;
  xrt_client_release(st->par);
  st->par = NULL;
  xrt_client_options o;
  xrt_client_options_init(&o);
  int nproc = cli_mpi_job.on ? cli_mpi_job.nproc : 1;
  o.num_devices = (n + nproc - 1) / nproc;
  if (!cli_mpi_job.on) o.topology.process_count = 1;
  xrt_status s = xrt_client_create(&o, &st->par);
  if (!s) s = interp_register(st->par, st);
  if (s) {
    xrt_client_release(st->par);
    st->par = NULL;
    return xrt_host_call_fail(L->call, s, "%s: %s", L->call->target, xrt_last_error());
  }
  st->par_devices = o.num_devices * nproc;
  return XRT_OK;
}

/* Compiles each distinct function once for the R x P launch. */
static xrt_status rp_compile(rp_launch *L) {
  for (int i = 0; i < L->n; i++) {
    rp_part *pt = &L->parts[i];
    for (int j = 0; j < i && !pt->exe; j++)
      if (L->parts[j].f == pt->f) pt->exe = L->parts[j].exe;
    if (pt->exe) continue;
    char entry[300];
    snprintf(entry, sizeof entry, "%s%s", pt->wrapped ? "__xrt_rp_" : "", pt->name);
    xrt_compile_options co;
    xrt_compile_options_init(&co);
    co.entry = entry;
    co.num_replicas = L->R;
    co.num_partitions = L->P;
    xrt_status s = xrt_compile_program(L->st->par, L->wprog ? L->wprog : L->st->prog, &co,
                                       &pt->exe);
    if (s) return xrt_host_call_fail(L->call, s, "%s", xrt_last_error());
    pt->owns_exe = 1;
  }
  return XRT_OK;
}

/* Runs the infeed = [@f, ...] functions; their results fill the queue. */
static xrt_status rp_infeed(rp_launch *L) {
  const xrt_ir_attr *feed = xrt_ir_op_attr(L->call->op, "infeed");
  for (int32_t i = 0; feed && i < feed->num_items; i++) {
    char name[300];
    snprintf(name, sizeof name, "%.*s", (int)feed->items[i].n, feed->items[i].s);
    xrt_compile_options co;
    xrt_compile_options_init(&co);
    co.entry = name;
    /* On this process's first device: with --mpi, device_assignment takes
     * global ids, and global id 0 may be another process's. */
    int here = xrt_device_global_id(xrt_client_device(L->st->par, 0));
    co.num_replicas = co.num_partitions = 1;
    co.device_assignment = &here;
    xrt_executable *exe = NULL;
    xrt_status s = xrt_compile_program(L->st->par, L->st->prog, &co, &exe);
    int nout = s ? 0 : xrt_executable_num_outputs(exe);
    xrt_buffer *outs[64] = {NULL};
    xrt_host_tensor t[64];
    if (!s && (nout > 64 || xrt_executable_num_inputs(exe) != 0))
      s = xrt_host_call_fail(L->call, XRT_INVALID_ARGUMENT, "%s: infeed function @%s must take "
                             "no arguments", L->call->target, name);
    else if (!s)
      s = xrt_execute(exe, xrt_client_device(L->st->par, 0), NULL, 0, outs, nout, NULL);
    if (s && !L->call->error[0]) xrt_host_call_fail(L->call, s, "%s", xrt_last_error());
    int k = 0;
    for (; !s && k < nout; k++) {
      xrt_buffer_shape(outs[k], &t[k].shape);
      t[k].bytes = xrt_buffer_bytes(outs[k]);
      t[k].data = malloc(t[k].bytes ? t[k].bytes : 1);
      if (!t[k].data) s = xrt_host_call_fail(L->call, XRT_RESOURCE_EXHAUSTED, "out of memory");
      else if (t[k].bytes && (s = xrt_buffer_to_host(outs[k], t[k].data, t[k].bytes)))
        xrt_host_call_fail(L->call, s, "%s", xrt_last_error());
    }
    hmsg *m = s ? NULL : hmsg_new(t, nout);
    if (!s && !m) s = xrt_host_call_fail(L->call, XRT_RESOURCE_EXHAUSTED, "out of memory");
    for (int j = 0; j < k; j++) free(t[j].data);
    for (int j = 0; j < nout; j++) xrt_buffer_release(outs[j]);
    xrt_executable_release(exe);
    if (s) return s;
    pthread_mutex_lock(&L->st->qmu);
    hq_push(&L->st->infeed, m);
    pthread_mutex_unlock(&L->st->qmu);
  }
  return XRT_OK;
}

/* Uploads each participant's operands to its device. */
static xrt_status rp_upload(rp_launch *L) {
  int in = 0;
  for (int i = 0; i < L->n; i++) {
    rp_part *pt = &L->parts[i];
    pt->args = calloc((size_t)pt->nargs + 1, sizeof *pt->args);
    pt->outs = calloc((size_t)pt->nouts + 1, sizeof *pt->outs);
    if (!pt->args || !pt->outs)
      return xrt_host_call_fail(L->call, XRT_RESOURCE_EXHAUSTED, "out of memory");
    xrt_device *dev = xrt_executable_device(pt->exe, i);
    for (int32_t k = 0, a = 0; k < pt->f->body.num_args; k++, in++) {
      if (!pt->local || is_token(&pt->f->value_types[pt->f->body.args[k]])) continue;
      const xrt_host_tensor *t = &L->call->inputs[in];
      xrt_status s = xrt_buffer_from_host(L->st->par, dev, &t->shape, t->data, &pt->args[a++]);
      if (s) return xrt_host_call_fail(L->call, s, "%s", xrt_last_error());
    }
  }
  return XRT_OK;
}

/* Enqueues every participant under one launch id and waits for all; the
 * first failure is the call's. */
static xrt_status rp_execute(rp_launch *L) {
  xrt_execute_options o;
  xrt_execute_options_init(&o);
  o.launch_id = xrt_client_new_launch_id(L->st->par);
  xrt_status s = XRT_OK;
  int queued = 0;
  for (; queued < L->n && !s; queued++) {
    rp_part *pt = &L->parts[queued];
    if (!pt->local) continue; /* another process runs it */
    o.replica = queued / L->P;
    o.partition = queued % L->P;
    s = xrt_execute_async(pt->exe, xrt_executable_device(pt->exe, queued), pt->args,
                          pt->nargs, pt->outs, pt->nouts, &o, &pt->done);
    if (s) xrt_host_call_fail(L->call, s, "%s: replica %d, partition %d: %s", L->call->target,
                              o.replica, o.partition, xrt_last_error());
  }
  /* An incomplete launch cannot meet in its collectives: wait boundedly. */
  int64_t limit = s ? cli_recv_timeout_ms() * 1000000 : -1;
  for (int i = 0; i < L->n; i++) {
    if (!L->parts[i].done) continue;
    xrt_status e = limit < 0 ? xrt_event_await(L->parts[i].done)
                             : xrt_event_await_for(L->parts[i].done, limit);
    if (e && !s) s = xrt_host_call_fail(L->call, e, "%s", xrt_last_error());
  }
  return s;
}

/* Copies the participants' results into the call's outputs, in order. */
static xrt_status rp_download(rp_launch *L) {
  int out = 0;
  for (int i = 0; i < L->n; i++) {
    rp_part *pt = &L->parts[i];
    for (int32_t k = 0, j = 0; k < pt->f->num_results; k++, out++) {
      if (!pt->local || is_token(&pt->f->result_types[k])) continue;
      xrt_host_tensor *t = &L->call->outputs[out];
      xrt_status s = t->bytes ? xrt_buffer_to_host(pt->outs[j], t->data, t->bytes) : XRT_OK;
      j++;
      if (s) return xrt_host_call_fail(L->call, s, "%s", xrt_last_error());
    }
  }
  return XRT_OK;
}

static void rp_release(rp_launch *L) {
  for (int i = 0; L->parts && i < L->n; i++) {
    rp_part *pt = &L->parts[i];
    for (int k = 0; pt->args && k < pt->nargs; k++) xrt_buffer_release(pt->args[k]);
    for (int k = 0; pt->outs && k < pt->nouts; k++) xrt_buffer_release(pt->outs[k]);
    xrt_event_release(pt->done);
    free(pt->args);
    free(pt->outs);
  }
  for (int i = 0; L->parts && i < L->n; i++)
    if (L->parts[i].owns_exe) xrt_executable_release(L->parts[i].exe);
  free(L->parts);
  L->st->module2 = NULL;
  xrt_program_release(L->wprog);
}

/* ---- --mpi: a launch spread over the processes ----
 *
 * Every process runs the same program, so every process makes the same
 * run_parallel calls: each makes the launch client (a client of the whole
 * MPI job, with ceil(R*P / processes) devices of its own), compiles every
 * function, and runs the participants of its own devices (global ids
 * 0..R*P-1); then rp_share gives every process every participant's
 * results, the text they printed, their probes and the first failure of
 * any process, so that @main continues alike everywhere.  Host transfers between
 * participants of different processes meet through the client's exchange
 * (route_peer). */

/* Notes that proc sends (or receives) on handle; the first one of each
 * side is the route's. */
static void rp_route_add(interp_state *st, int64_t handle, int sending, int proc) {
  rp_route *r = NULL;
  for (int i = 0; i < st->nroutes && !r; i++)
    if (st->routes[i].handle == handle) r = &st->routes[i];
  if (!r && st->nroutes == RP_MAX_ROUTES) return; /* more channels: they stay local */
  if (!r) {
    r = &st->routes[st->nroutes++];
    memset(r, 0, sizeof *r);
    r->handle = handle;
    r->send_proc = r->recv_proc = -1;
  }
  int *side = sending ? &r->send_proc : &r->recv_proc;
  if (*side >= 0 && *side != proc) r->spread = 1;
  if (*side < 0) *side = proc;
}

/* The host transfers of a region, through the functions it calls. */
static void rp_scan(interp_state *st, const xrt_ir_region *r, int proc, int depth) {
  const xrt_ir_module *m = st->module;
  for (int32_t i = 0; i < r->num_ops && depth < 16; i++) {
    const xrt_ir_op *op = &r->ops[i];
    const xrt_ir_attr *host = xrt_ir_op_attr(op, "is_host_transfer");
    int64_t handle;
    if ((op->code == XRT_OP_SEND || op->code == XRT_OP_RECV) && host &&
        host->kind == XRT_ATTR_BOOL && host->i && !cli_channel_handle(op, &handle))
      rp_route_add(st, handle, op->code == XRT_OP_SEND, proc);
    if (op->code == XRT_OP_FUNC_CALL && op->callee >= 0 && op->callee < m->num_funcs)
      rp_scan(st, &m->funcs[op->callee].body, proc, depth + 1);
    for (int32_t k = 0; k < op->num_regions; k++) rp_scan(st, &op->regions[k], proc, depth + 1);
  }
}

/* Where each participant runs, and the routes of the host transfers. */
static void rp_place(rp_launch *L) {
  interp_state *st = L->st;
  pthread_mutex_lock(&st->qmu);
  st->nroutes = 0;
  st->launch_no++;
  for (int i = 0; i < L->n; i++) {
    rp_part *pt = &L->parts[i];
    xrt_device *dev = xrt_executable_device(pt->exe, i);
    pt->proc = cli_mpi_job.on ? xrt_device_process_index(dev) : 0;
    pt->local = !cli_mpi_job.on || xrt_device_is_addressable(dev) == 1;
    if (cli_mpi_job.on) rp_scan(st, &pt->f->body, pt->proc, 0);
  }
  pthread_mutex_unlock(&st->qmu);
}

/* What each process contributes to rp_share, before its results. */
typedef struct rp_head {
  int32_t status, pad;
  uint64_t printed; /* bytes of text held */
  uint64_t probed;  /* bytes of the probe records made (rp_probes_pack) */
  char message[488];
} rp_head;

/* Byte offset of each result of the call within the results. */
static size_t rp_result_at(const xrt_host_call *call, int k) {
  size_t off = 0;
  for (int i = 0; i < k; i++) off += call->outputs[i].bytes;
  return off;
}

/* Copies the results of the participants of process proc between the
 * call's outputs and packed (to: into packed). */
static void rp_pack(rp_launch *L, char *packed, int proc, int to) {
  int out = 0;
  for (int i = 0; i < L->n; i++) {
    const rp_part *pt = &L->parts[i];
    for (int32_t k = 0; k < pt->f->num_results; k++, out++) {
      xrt_host_tensor *t = &L->call->outputs[out];
      if (pt->proc != proc || !t->bytes) continue;
      char *at = packed + rp_result_at(L->call, out);
      if (to) memcpy(at, t->data, t->bytes);
      else memcpy(t->data, at, t->bytes);
    }
  }
}

/* This launch's probe records (from L->recs_before on), one after the
 * other: id length (uint32), id, shape, bytes (uint64), data.  *n gets
 * the size; NULL when out of memory.  mu held. */
static char *rp_probes_pack(const rp_launch *L, size_t *n) {
  const interp_state *st = L->st;
  size_t total = 0;
  for (size_t i = L->recs_before; i < st->num_recs; i++)
    total += 4 + strlen(st->recs[i].id) + sizeof(xrt_shape) + 8 + st->recs[i].bytes;
  char *b = malloc(total ? total : 1), *at = b;
  for (size_t i = L->recs_before; b && i < st->num_recs; i++) {
    const probe_rec *r = &st->recs[i];
    uint32_t idn = (uint32_t)strlen(r->id);
    uint64_t bytes = r->bytes;
    memcpy(at, &idn, 4);
    memcpy(at + 4, r->id, idn);
    at += 4 + idn;
    memcpy(at, &r->shape, sizeof r->shape);
    memcpy(at + sizeof r->shape, &bytes, 8);
    at += sizeof r->shape + 8;
    if (bytes) memcpy(at, r->data, r->bytes);
    at += r->bytes;
  }
  *n = total;
  return b;
}

/* Appends the probe records packed in b (n bytes, from a process alike
 * to this one); -1 when out of memory.  mu held. */
static int rp_probes_unpack(interp_state *st, const char *b, size_t n) {
  const char *at = b, *end = b + n;
  while (at < end) {
    uint32_t idn;
    uint64_t bytes;
    probe_rec r;
    memcpy(&idn, at, 4);
    memcpy(&r.shape, at + 4 + idn, sizeof r.shape);
    memcpy(&bytes, at + 4 + idn + sizeof r.shape, 8);
    r.bytes = (size_t)bytes;
    r.id = malloc((size_t)idn + 1);
    r.data = malloc(r.bytes ? r.bytes : 1);
    cli_probe_room(st);
    if (!r.id || !r.data || st->num_recs == st->cap_recs) {
      free(r.id);
      free(r.data);
      return -1;
    }
    memcpy(r.id, at + 4, idn);
    r.id[idn] = 0;
    at += 4 + idn + sizeof r.shape + 8;
    if (r.bytes) memcpy(r.data, at, r.bytes);
    at += r.bytes;
    st->recs[st->num_recs++] = r;
  }
  return 0;
}

/* What every process printed and probed during the launch, to every
 * process, in process order: the text to the output, the probe records
 * (this process's own included, so that all keep them in one order). */
static xrt_status rp_share_extra(rp_launch *L, const char *heads, size_t rec) {
  interp_state *st = L->st;
  uint64_t most = 0;
  for (int p = 0; p < cli_mpi_job.nproc; p++) {
    const rp_head *h = (const rp_head *)(const void *)(heads + (size_t)p * rec);
    most = h->printed + h->probed > most ? h->printed + h->probed : most;
  }
  if (!most) return XRT_OK;
  const rp_head *me = (const rp_head *)(const void *)(heads + (size_t)cli_mpi_job.me * rec);
  char *mine = calloc(1, (size_t)most), *all = calloc((size_t)cli_mpi_job.nproc, (size_t)most);
  size_t pn = 0;
  pthread_mutex_lock(&st->mu);
  char *probes = rp_probes_pack(L, &pn);
  if (mine && me->printed) memcpy(mine, st->hold.s, me->printed);
  if (mine && probes && pn == me->probed) memcpy(mine + me->printed, probes, pn);
  pthread_mutex_unlock(&st->mu);
  free(probes);
  /* Every process must take part, even one short of memory. */
  xrt_status s = mine && all ? xrt_client_process_allgather(st->par, mine, all, (size_t)most)
                             : XRT_RESOURCE_EXHAUSTED;
  if (s && mine && all)
    xrt_host_call_fail(L->call, s, "%s: gathering printed text and probes: %s", L->call->target,
                       xrt_last_error());
  else if (s)
    xrt_host_call_fail(L->call, s, "%s: out of memory", L->call->target);
  pthread_mutex_lock(&st->mu);
  for (size_t i = L->recs_before; !s && i < st->num_recs; i++) {
    free(st->recs[i].id);
    free(st->recs[i].data);
  }
  if (!s) st->num_recs = L->recs_before;
  for (int p = 0; !s && p < cli_mpi_job.nproc; p++) {
    const rp_head *h = (const rp_head *)(const void *)(heads + (size_t)p * rec);
    const char *blob = all + (size_t)p * most;
    ob_add(&st->out, blob, (size_t)h->printed);
    if (rp_probes_unpack(st, blob + h->printed, (size_t)h->probed))
      s = xrt_host_call_fail(L->call, XRT_RESOURCE_EXHAUSTED, "out of memory recording probe");
  }
  pthread_mutex_unlock(&st->mu);
  free(mine);
  free(all);
  return s;
}

/* Gives every process every participant's results and the first failure
 * of any process (s: this process's).  Collective over the processes. */
static xrt_status rp_share(rp_launch *L, xrt_status s) {
  interp_state *st = L->st;
  xrt_host_call *call = L->call;
  pthread_mutex_lock(&st->mu);
  st->holding = 0; /* the launch is over: nobody prints any more */
  pthread_mutex_unlock(&st->mu);
  size_t total = rp_result_at(call, call->num_outputs), rec = sizeof(rp_head) + total;
  char *mine = calloc(1, rec), *all = calloc((size_t)cli_mpi_job.nproc, rec);
  xrt_status g = XRT_RESOURCE_EXHAUSTED;
  if (mine && all) {
    rp_head *h = (rp_head *)(void *)mine;
    h->status = (int32_t)s;
    pthread_mutex_lock(&st->mu);
    h->printed = st->hold.oom ? 0 : st->hold.n;
    size_t pn = 0;
    free(rp_probes_pack(L, &pn)); /* its size (packed again with the text) */
    h->probed = pn;
    pthread_mutex_unlock(&st->mu);
    snprintf(h->message, sizeof h->message, "%s", s ? call->error : "");
    if (!s) rp_pack(L, mine + sizeof(rp_head), cli_mpi_job.me, 1);
    g = xrt_client_process_allgather(st->par, mine, all, rec);
  }
  if (g && !s)
    s = mine && all ? xrt_host_call_fail(call, g, "%s: gathering the results: %s", call->target,
                                         xrt_last_error())
                    : xrt_host_call_fail(call, g, "%s: out of memory", call->target);
  if (!g) {
    xrt_status t = rp_share_extra(L, all, rec);
    for (int p = 0; p < cli_mpi_job.nproc && !s; p++) {
      const rp_head *h = (const rp_head *)(void *)(all + (size_t)p * rec);
      if (h->status)
        s = xrt_host_call_fail(call, (xrt_status)h->status, "process %d: %s", p, h->message);
      else if (p != cli_mpi_job.me)
        rp_pack(L, all + (size_t)p * rec + sizeof(rp_head), p, 0);
    }
    if (!s) s = t;
  }
  free(mine);
  free(all);
  pthread_mutex_lock(&st->mu);
  st->hold.n = 0;
  st->hold.oom = 0;
  pthread_mutex_unlock(&st->mu);
  return s;
}

xrt_status cli_host_run_parallel(void *user, xrt_host_call *call) {
  interp_state *st = user;
  const xrt_ir_attr *progs = call->op ? xrt_ir_op_attr(call->op, "programs") : NULL;
  if (!progs || progs->kind != XRT_ATTR_LIST || progs->num_items < 1 || !st->prog)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s needs programs = [[@f, ...]] "
                              "and a program to take them from", call->target);
  rp_launch L;
  memset(&L, 0, sizeof L);
  L.st = st;
  L.call = call;
  L.R = progs->num_items;
  L.P = progs->items[0].num_items;
  if ((int64_t)L.R * L.P > RP_MAX)
    return xrt_host_call_fail(call, XRT_INVALID_ARGUMENT, "%s: %d x %d programs are more than "
                              "%d", call->target, L.R, L.P, RP_MAX);
  L.n = L.R * L.P;
  /* The launch client is shared: one run_parallel at a time. */
  pthread_mutex_lock(&st->qmu);
  int busy = st->par_busy;
  st->par_busy = 1;
  pthread_mutex_unlock(&st->qmu);
  if (busy)
    return xrt_host_call_fail(call, XRT_UNIMPLEMENTED, "%s cannot run inside or beside "
                              "another interpreter.run_parallel", call->target);
  L.parts = calloc((size_t)L.n, sizeof *L.parts);
  xrt_status s = L.parts ? XRT_OK
                         : xrt_host_call_fail(call, XRT_RESOURCE_EXHAUSTED, "out of memory");
  if (!s) s = rp_bind(&L);
  if (!s) s = rp_wrap(&L);
  if (!s) s = rp_client(&L, L.n);
  if (!s) {
    /* --mpi: from here on every process must reach rp_share. */
    pthread_mutex_lock(&st->mu);
    st->holding = cli_mpi_job.on;
    L.recs_before = st->num_recs;
    pthread_mutex_unlock(&st->mu);
    s = rp_compile(&L);
    if (!s) rp_place(&L);
    if (!s) s = rp_infeed(&L);
    if (!s) s = rp_upload(&L);
    if (!s) s = rp_execute(&L);
    if (!s) s = rp_download(&L);
    if (cli_mpi_job.on) s = rp_share(&L, s);
    pthread_mutex_lock(&st->qmu);
    st->nroutes = 0;
    pthread_mutex_unlock(&st->qmu);
  }
  rp_release(&L);
  pthread_mutex_lock(&st->qmu);
  st->par_busy = 0;
  pthread_mutex_unlock(&st->qmu);
  return s;
}
