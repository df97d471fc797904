/*
 * src/sim/exec.c - planning functions, executables and execution.
 * Part of the simulated device; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ======================================================================
 * Planning functions
 * ==================================================================== */

/* The entry's results that an op writes are bound to the output buffers
 * (each value once); the rest are copied after the run. */
static xrt_status sim_bind_outputs(sim_fcc *fc, sim_fplan *fp) {
  uint8_t *direct = (uint8_t *)sim_palloc(fc, (size_t)fp->nrets + 1);
  if (!direct) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t j = 0; j < fp->nrets; j++) {
    sim_vinfo *v = &fc->v[fp->rets[j]];
    if (v->kind != SIM_V_SLOT) continue;
    v->kind = SIM_V_OUT;
    direct[j] = 1;
  }
  fp->ret_direct = direct;
  return XRT_OK;
}

/* Tables that let a frame point every slot and constant value. */
static xrt_status sim_frame_tables(sim_fcc *fc, sim_fplan *fp) {
  int32_t ns = 0, nc = 0, nb = 0;
  for (int32_t i = 0; i < fc->nv; i++) {
    ns += fc->v[i].kind == SIM_V_SLOT && !fc->v[i].in_out;
    nb += fc->v[i].kind == SIM_V_SLOT && fc->v[i].in_out;
    nc += fc->v[i].kind == SIM_V_CONST;
  }
  int32_t *sid = (int32_t *)sim_palloc(fc, sizeof *sid * (size_t)(ns + 1));
  size_t *soff = (size_t *)sim_palloc(fc, sizeof *soff * (size_t)(ns + 1));
  int32_t *cid = (int32_t *)sim_palloc(fc, sizeof *cid * (size_t)(nc + 1));
  void **cptr = (void **)sim_palloc(fc, sizeof *cptr * (size_t)(nc + 1));
  int32_t *bid = (int32_t *)sim_palloc(fc, sizeof *bid * (size_t)(2 * nb + 1));
  size_t *boff = (size_t *)sim_palloc(fc, sizeof *boff * (size_t)(nb + 1));
  if (!sid || !soff || !cid || !cptr || !bid || !boff)
    return XRT_RESOURCE_EXHAUSTED;
  fp->nobind = nb, fp->obind_ids = bid, fp->obind_base = bid + nb;
  fp->obind_offs = boff;
  ns = nc = nb = 0;
  for (int32_t i = 0; i < fc->nv; i++) {
    if (fc->v[i].kind == SIM_V_SLOT && fc->v[i].in_out) {
      bid[nb] = i;
      bid[fp->nobind + nb] = fc->v[i].in_out - 1;
      boff[nb++] = fc->v[i].off;
    } else if (fc->v[i].kind == SIM_V_SLOT) {
      sid[ns] = i;
      soff[ns++] = fc->v[i].bytes ? fc->v[i].off : 0;
    } else if (fc->v[i].kind == SIM_V_CONST) {
      cid[nc] = i;
      cptr[nc++] = fc->v[i].cptr;
    }
  }
  fp->nslots = ns, fp->slot_ids = sid, fp->slot_offs = soff;
  fp->nconsts = nc, fp->const_ids = cid, fp->const_ptrs = cptr;
  return XRT_OK;
}

static xrt_status sim_plan_body(sim_fcc *fc, sim_fplan *fp, int is_entry) {
  const xrt_ir_func *f = fc->f;
  const xrt_ir_op *term = NULL;
  for (int32_t i = 0; i < f->body.num_args; i++) {
    if (f->body.args[i] < 0 || f->body.args[i] >= f->num_values)
      return sim_fail(fc->cc->err, XRT_INTERNAL, "@%s: bad argument id",
                      f->name);
    fc->v[f->body.args[i]].kind = SIM_V_BOUND;
  }
  xrt_status rc = sim_lower_block(fc, &f->body, &fp->body, &term);
  if (rc) return rc;
  fp->nargs = f->body.num_args;
  fp->args = f->body.args;
  fp->nrets = term->num_operands;
  fp->rets = term->operands;
  size_t *rb = (size_t *)sim_palloc(fc, sizeof *rb * (size_t)(fp->nrets + 1));
  if (!rb) return XRT_RESOURCE_EXHAUSTED;
  for (int32_t j = 0; j < fp->nrets; j++)
    rb[j] = sim_vbytes(fc, fp->rets[j]);
  fp->ret_bytes = rb;
  if (is_entry && (rc = sim_bind_outputs(fc, fp))) return rc;
  if ((rc = sim_assign_slots(fc, &fp->asize))) return rc;
  fp->nvals = fc->nv;
  return sim_frame_tables(fc, fp);
}

SIM_PRIVATE xrt_status sim_plan_func(sim_cc *cc, int32_t fidx, int is_entry) {
  sim_fplan *fp = &cc->exe->fp[fidx];
  if (fp->state == 2) return XRT_OK;
  fp->state = 1;
  sim_fcc fc;
  memset(&fc, 0, sizeof fc);
  fc.cc = cc;
  fc.f = &cc->m->funcs[fidx];
  fc.defs.es = fc.nested.es = sizeof(int32_t);
  xrt_status rc = XRT_OK;
  /* The real values at once, in the capacity sim_new_value would have
   * grown to (copying the table at each doubling cost a twentieth of a
   * plan; tables sized otherwise, larger ones too, made malloc map and
   * fault in fresh pages on every compile), with room for pseudo values
   * (a scratch per dot_general or fused loop: about one per four values
   * in an MLP; growing for them once copied the whole table). */
  int32_t cap = 64, nv = fc.f->num_values > 0 ? fc.f->num_values : 0;
  int32_t want = nv <= INT32_MAX - nv / 4 ? nv + nv / 4 : nv;
  while (cap < want && cap <= INT32_MAX / 2) cap *= 2;
  if (cap >= nv) {
    fc.v = (sim_vinfo *)cc->al.alloc(cc->al.self, sizeof *fc.v * (size_t)cap);
    if (!fc.v) {
      rc = sim_oom(&fc);
    } else {
      memset(fc.v, 0, sizeof *fc.v * (size_t)nv);
      fc.capv = cap;
      fc.nv = nv;
    }
  }
  for (int32_t i = fc.nv; i < fc.f->num_values && !rc; i++) {
    int32_t id;
    rc = sim_new_value(&fc, &id);
  }
  if (!rc) rc = sim_plan_body(&fc, fp, is_entry);
  sim_fz_release(&fc);
  cc->al.free(cc->al.self, fc.v);
  sim_vec_free(&cc->al, &fc.defs);
  sim_vec_free(&cc->al, &fc.nested);
  fp->state = rc ? 0 : 2;
  return rc;
}

/* ======================================================================
 * Executables and execution
 * ==================================================================== */

SIM_PRIVATE void sim_frame_free(const sim_exe *e, sim_frame *fr) {
  if (fr->block) e->cl->al.free(e->cl->al.self, fr->block);
  memset(fr, 0, sizeof *fr);
}

/* One allocation: the vals of every planned function, then the arena. */
SIM_PRIVATE xrt_status sim_frame_make(const sim_exe *e, sim_frame *fr,
                                 xrt_plugin_error *err) {
  size_t vb = sim_align_up(sizeof(void *) * (size_t)(e->total_vals + 1));
  const xrt_allocator *al = &e->cl->al;
  char *block = (char *)al->alloc(al->self, vb + e->arena_bytes + SIM_ALIGN);
  if (!block)
    return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory for a "
                    "%zu-byte scratch arena", e->arena_bytes);
  fr->block = block;
  fr->vals = (void **)(void *)block;
  uintptr_t a = ((uintptr_t)(block + vb) + SIM_ALIGN - 1) &
                ~(uintptr_t)(SIM_ALIGN - 1);
  fr->arena = block + (a - (uintptr_t)block);
  memset(fr->vals, 0, sizeof(void *) * (size_t)e->total_vals);
  for (int32_t f = 0; f < e->m->num_funcs; f++) {
    const sim_fplan *fp = &e->fp[f];
    if (fp->state != 2) continue;
    void **v = fr->vals + fp->vbase;
    for (int32_t i = 0; i < fp->nslots; i++)
      v[fp->slot_ids[i]] = fr->arena + fp->abase + fp->slot_offs[i];
    for (int32_t i = 0; i < fp->nconsts; i++)
      v[fp->const_ids[i]] = fp->const_ptrs[i];
  }
  return XRT_OK;
}

SIM_PRIVATE void sim_executable_destroy(void *executable) {
  sim_exe *e = (sim_exe *)executable;
  if (!e) return;
  sim_frame_free(e, &e->frame);
  for (int i = 0; e->dframes && i < e->cl->ndev; i++)
    sim_frame_free(e, &e->dframes[i]);
  for (int32_t i = 0; i < e->owned_ctx.n; i++)
    e->cl->al.free(e->cl->al.self, ((void **)(void *)e->owned_ctx.p)[i]);
  sim_vec_free(&e->cl->al, &e->owned_ctx);
  sim_vec_free(&e->cl->al, &e->fzrec);
  if (e->mu_ok) pthread_mutex_destroy(&e->mu);
  sim_pool_release(&e->pool);
  e->cl->al.free(e->cl->al.self, e);
}

/* Places every planned function in the shared frame. */
static void sim_layout(sim_exe *e) {
  int32_t vals = 0;
  size_t arena = 0;
  for (int32_t f = 0; f < e->m->num_funcs; f++) {
    sim_fplan *fp = &e->fp[f];
    if (fp->state != 2) continue;
    fp->vbase = vals;
    fp->abase = arena;
    vals += fp->nvals;
    arena += sim_align_up(fp->asize);
  }
  e->total_vals = vals;
  e->arena_bytes = arena;
}

/* sim_compile, following the fusion decisions fzin (nfzin ints; NULL:
 * none) that serialized bytes carry (see "Serialized executables"). */
SIM_PRIVATE xrt_status sim_compile_given(void *client,
                                    const xrt_plugin_compile_args *args,
                                    const int32_t *fzin, int32_t nfzin,
                                    void **out_executable,
                                    xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  if (!c || !args || !out_executable ||
      args->struct_size < SIM_COMPILE_ARGS_MIN || !args->module)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad compile arguments");
  *out_executable = NULL;
  const xrt_ir_module *m = args->module;
  if (args->entry < 0 || args->entry >= m->num_funcs)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "entry %d is not a function",
                    (int)args->entry);
  sim_exe *e = (sim_exe *)c->al.alloc(c->al.self, sizeof *e);
  if (!e) return sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  memset(e, 0, sizeof *e);
  e->cl = c;
  e->pool.al = c->al;
  e->m = m;
  e->entry = args->entry;
  e->owned_ctx.es = sizeof(void *);
  sim_cc cc = {c->al, e, m, err, args->host_bindings, {{0}}, 0,
               nfzin > 0 ? fzin : NULL, nfzin, 0, 0, 0, 0};
  xrt_status rc = sim_compile_launch_shape(e, args, err);
  if (!rc) rc = sim_xp_compile(e, args, err);
  e->fp = (sim_fplan *)sim_pool_alloc(&e->pool, sizeof *e->fp *
                                                    (size_t)m->num_funcs);
  e->dframes = (sim_frame *)sim_pool_alloc(&e->pool, sizeof *e->dframes *
                                                         (size_t)c->ndev);
  e->dbusy = (_Atomic unsigned char *)sim_pool_alloc(&e->pool,
                                                     (size_t)c->ndev);
  if (!rc && (!e->fp || !e->dframes || !e->dbusy))
    rc = sim_fail(err, XRT_RESOURCE_EXHAUSTED, "out of host memory");
  if (!rc) rc = sim_plan_func(&cc, args->entry, 1);
  if (!rc) sim_layout(e); /* frames: per device, on first use */
  if (!rc && pthread_mutex_init(&e->mu, NULL) != 0)
    rc = sim_fail(err, XRT_INTERNAL, "pthread_mutex_init failed");
  e->mu_ok = !rc;
  if (rc) {
    sim_executable_destroy(e);
    return rc;
  }
  *out_executable = e;
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_compile(void *client, const xrt_plugin_compile_args *args,
                              void **out_executable, xrt_plugin_error *err) {
  return sim_compile_given(client, args, NULL, 0, out_executable, err);
}

/* Binds arguments and outputs, runs the entry plan, copies the results
 * that are not bound to their output buffer. */
static xrt_status sim_run_entry(const sim_exe *e, sim_frame *fr,
                                void *const *args, void *const *outs,
                                sim_cx *cx) {
  const sim_fplan *fp = &e->fp[e->entry];
  void **vals = fr->vals + fp->vbase;
  for (int32_t i = 0; i < fp->nargs; i++) vals[fp->args[i]] = args[i];
  for (int32_t j = 0; j < fp->nrets; j++)
    if (fp->ret_direct[j]) vals[fp->rets[j]] = outs[j];
  for (int32_t i = 0; i < fp->nobind; i++)
    vals[fp->obind_ids[i]] = (char *)vals[fp->obind_base[i]] + fp->obind_offs[i];
  cx->allvals = fr->vals;
  cx->exe = e;
  xrt_status rc = sim_run_plan(&fp->body, vals, cx);
  if (rc) return rc;
  for (int32_t j = 0; j < fp->nrets; j++) {
    const void *src = vals[fp->rets[j]];
    if (!fp->ret_direct[j] && fp->ret_bytes[j] && src != outs[j])
      memcpy(outs[j], src, fp->ret_bytes[j]);
  }
  return XRT_OK;
}

/* The device's frame of e when it is free and already made: one exchange
 * and no lock, the common case of repeated executes (sim_frame_acquire
 * takes e->mu to make it on first use, or builds a temporary one). */
static xrt_status sim_frame_get(sim_exe *e, int device, sim_frame *tmp,
                                sim_frame **out, xrt_plugin_error *err) {
  if (!atomic_exchange_explicit(&e->dbusy[device], 1, memory_order_acquire)) {
    if (e->dframes[device].block) {
      *out = &e->dframes[device];
      return XRT_OK;
    }
    atomic_store_explicit(&e->dbusy[device], 0, memory_order_release);
  }
  return sim_frame_acquire(e, device, tmp, out, err);
}

static void sim_frame_put(sim_exe *e, int device, sim_frame *fr,
                          sim_frame *tmp) {
  if (fr == &e->dframes[device])
    atomic_store_explicit(&e->dbusy[device], 0, memory_order_release);
  else sim_frame_release(e, device, fr, tmp);
}

/* Runs participant a of launch l (NULL: a launch of its own without
 * collectives). */
static xrt_status sim_execute_in(sim_client *c, sim_exe *e,
                                 const xrt_plugin_execute_args *a,
                                 struct sim_launch *l, xrt_plugin_error *err) {
  const sim_fplan *fp = &e->fp[e->entry];
  if (a->num_args != fp->nargs || a->num_outs != fp->nrets ||
      (a->num_args && !a->args) || (a->num_outs && !a->outs))
    return sim_fail(err, XRT_INVALID_ARGUMENT, "@%s takes %d argument(s) and "
                    "%d result(s), got %d and %d", e->m->funcs[e->entry].name,
                    (int)fp->nargs, (int)fp->nrets, a->num_args, a->num_outs);
  if (e->has_coll &&
      (a->num_replicas != e->nrep || a->num_partitions != e->npart))
    return sim_fail(err, XRT_INVALID_ARGUMENT, "@%s was compiled for %d "
                    "replica(s) x %d partition(s); the launch has %d x %d",
                    e->m->funcs[e->entry].name, (int)e->nrep, (int)e->npart,
                    (int)a->num_replicas, (int)a->num_partitions);
  sim_frame tmp, *fr;
  xrt_status rc = sim_frame_get(e, a->device, &tmp, &fr, err);
  if (rc) return rc;
  sim_cx cx;
  memset(&cx, 0, sizeof cx);
  cx.err = err;
  cx.xa = a;
  cx.launch = l;
  cx.fault_steps = cx.fault_after = sim_fault_take(c, a->device);
  cx.tp = sim_tpool_of(c, a->device);
  rc = sim_run_entry(e, fr, a->args, a->outs, &cx);
  sim_frame_put(e, a->device, fr, &tmp);
  return rc;
}

/* The launch shape and this participant's place in it. */
static xrt_status sim_check_launch_args(const xrt_plugin_execute_args *a,
                                        xrt_plugin_error *err) {
  if (a->num_replicas < 1 || a->num_partitions < 1 ||
      (int64_t)a->num_replicas * a->num_partitions > SIM_MAX_PROCS)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad launch shape: %d "
                    "replica(s) x %d partition(s)", (int)a->num_replicas,
                    (int)a->num_partitions);
  if (a->replica < 0 || a->replica >= a->num_replicas || a->partition < 0 ||
      a->partition >= a->num_partitions)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "participant (replica %d, "
                    "partition %d) is outside a launch of %d x %d",
                    (int)a->replica, (int)a->partition, (int)a->num_replicas,
                    (int)a->num_partitions);
  return XRT_OK;
}

SIM_PRIVATE xrt_status sim_execute(void *client, const xrt_plugin_execute_args *a,
                              xrt_plugin_error *err) {
  sim_client *c = (sim_client *)client;
  if (!a || a->struct_size < sizeof *a)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad execute arguments");
  sim_exe *e = (sim_exe *)a->executable;
  xrt_status rc = sim_check_device(c, a->device, err);
  if (rc) return rc;
  if (!e || e->cl != c)
    return sim_fail(err, XRT_INVALID_ARGUMENT, "bad executable");
  if ((rc = sim_check_launch_args(a, err))) return rc;
  int proc = a->replica * a->num_partitions + a->partition;
  int n = a->num_replicas * a->num_partitions;
  struct sim_launch *l = NULL, own;
  sim_part own_part;
  if (n > 1) {
    if ((rc = sim_launch_join(c, a, proc, &l, err))) return rc;
  } else if (e->has_coll) { /* a launch of one: private */
    if ((rc = sim_launch_own(&own, &own_part, a, err))) return rc;
    l = &own;
  }
  if (!a->abort_message) rc = sim_execute_in(c, e, a, l, err);
  if (l == &own) sim_launch_own_end(c, &own);
  else if (l)
    sim_launch_leave(c, l, proc, a->abort_message ? XRT_ABORTED : rc,
                     a->abort_message ? a->abort_message
                                      : err ? err->message : "failed");
  return rc;
}
