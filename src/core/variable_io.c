/*
 * src/core/variable_io.c - variables: save and load.
 * Part of the core of xrt; MIT licensed, see LICENSE.
 */
#include "internal.h"

/* ---- save and load ---- */

/* Writes the array as .npy at path through a temporary file beside it. */
static xrt_status xrt__mpv_write_file(const xrt_allocator *a, const char *path,
                                      const xrt_shape *shape,
                                      const void *data, size_t bytes) {
  size_t n = strlen(path) + 16;
  char *tmp = (char *)xrt__alloc(a, n);
  if (!tmp) return xrt__nomem("a temporary file name");
  char why[512];
  snprintf(tmp, n, "%s.tmpXXXXXX", path);
  int err = xrt__os_temp_file(tmp, why, sizeof why);
  xrt_status s = XRT_OK;
  if (err)
    s = xrt__fail(err == ENOENT ? XRT_NOT_FOUND : XRT_INVALID_ARGUMENT,
                  "%s: cannot create a temporary file beside it: %s", path,
                  why);
  else if (!(s = xrt__npy_write_host(tmp, shape, data, bytes)) &&
           xrt__os_replace_file(tmp, path, why, sizeof why) != 0)
    s = xrt__fail(XRT_DATA_LOSS, "%s: cannot rename %s over it: %s", path,
                  tmp, why);
  if (s && !err) remove(tmp);
  xrt__free(a, tmp);
  return s;
}

/* xrt_variable_save on a multi-process client (v open; closed here): the
 * whole array gathered, process 0 writes, every process returns the same
 * status. */
static xrt_status xrt__mpv_save(xrt__var *v, const char *path) {
  xrt__client *c = v->client;
  xrt_shape shape = v->logical;
  size_t bytes = xrt_shape_bytes(&shape);
  xrt_allocator a = v->al;
  void *data = xrt__alloc(&a, bytes ? bytes : 1);
  xrt_status s = data ? xrt__var_read(v, data, bytes) /* collective */
                      : xrt__nomem("a variable's host copy");
  xrt__var_close(v);
  if (!s && c->mp->me == 0) s = xrt__mpv_write_file(&a, path, &shape, data,
                                                    bytes);
  xrt__free(&a, data);
  return xrt__mpv_agree(c, s, 0, 0, NULL, "xrt_variable_save");
}

/* xrt_variable_load on a multi-process client (v open and locked): every
 * process reads the file and uploads its pieces; all commit or none. */
static xrt_status xrt__mpv_load(xrt__var *v, const char *path) {
  xrt__client *c = v->client;
  void *data = NULL;
  xrt_buffer **nb = (xrt_buffer **)xrt__calloc(&v->al, (size_t)v->n,
                                               sizeof *nb);
  xrt_shape have;
  size_t bytes;
  xrt_status s = nb ? xrt__npy_read_host(&v->al, path, &v->logical, &have,
                                         &data, &bytes)
                    : xrt__nomem("a variable's new pieces");
  xrt__vformat f;
  memset(&f, 0, sizeof f);
  f.spec = v->spec;
  f.axes = v->axes;
  f.piece = v->piece;
  f.n = v->n;
  f.devices = v->devices;
  for (int k = 0; !s && k < v->n; k++)
    if (v->bufs[k]) s = xrt__mpv_upload(c, &v->logical, &f, (const char *)data,
                                        k, &nb[k]);
  s = xrt__mpv_agree(c, s, v->key, 0, NULL, "xrt_variable_load");
  for (int k = 0; nb && k < v->n; k++) {
    if (s) {
      xrt_buffer_release(nb[k]);
      continue;
    }
    if (!nb[k]) continue;
    xrt__piece_release(v->bufs[k]);
    v->bufs[k] = nb[k];
  }
  xrt__free(&v->al, nb);
  xrt__free(&v->al, data);
  return s;
}

/* Lays k's arrays out in one zeroed block (returned, NULL when out of
 * memory): na entries for each per-argument array, no for each per-output
 * one. */
static void *xrt__xv_alloc(const xrt_allocator *al, int na, int no,
                           xrt__xv_call *k) {
  memset(k, 0, sizeof *k);
  size_t n = 4 * (size_t)na + 2 * (size_t)no;
  void **p = (void **)xrt__calloc(al, n ? n : 1, sizeof(void *));
  if (!p) return NULL;
  k->vars = (xrt__var **)(void *)p;
  k->uniq = (xrt__var **)(void *)(p + na);
  k->views = (xrt__sharded **)(void *)(p + 2 * (size_t)na);
  k->arrays = (xrt_sharded_array **)(void *)(p + 3 * (size_t)na);
  k->specs = (const xrt_sharding_spec **)(void *)(p + 4 * (size_t)na);
  k->outs = (xrt_sharded_array **)(void *)(p + 4 * (size_t)na + (size_t)no);
  return p;
}

xrt_status xrt_execute_variables(xrt_executable *executable,
                                 const xrt_variable_arg *args, int num_args,
                                 const int *updates,
                                 xrt_sharded_array **outputs, int num_outputs,
                                 const xrt_execute_options *options) {
  XRT__CHECK_ARG(outputs || num_outputs == 0, "outputs is NULL");
  XRT__CHECK_ARG(num_args >= 0 && num_outputs >= 0,
                 "bad argument or output count");
  for (int j = 0; j < num_outputs; j++) outputs[j] = NULL;
  XRT__CHECK_ARG(args || num_args == 0, "args is NULL");
  xrt__executable *xe = xrt__executable_get(executable);
  XRT__CHECK_ARG(xe, "invalid or released executable");
  xrt_allocator al = xe->client->allocator;
  xrt__xv_call k;
  void *block = xrt__xv_alloc(&al, num_args, num_outputs, &k);
  if (!block) return xrt__nomem("the arguments of an execute over variables");
  xrt_sharded_array **outs = k.outs;
  xrt_status s = xrt__xv_acquire(args, num_args, &k);
  if (!s) s = xrt__xv_check_updates(executable, &k, num_args, updates,
                                    num_outputs);
  if (!s) {
    xrt__vars_lock(k.uniq, k.nuniq);
    bool mp = xrt__executable_get(executable)->client->mp != NULL;
    s = mp ? xrt__mpv_execute(executable, args, num_args, &k, updates,
                              outputs, num_outputs, options)
           : xrt__xv_views(args, num_args, &k);
    if (!s && !mp) s = xrt__xv_run(executable, &k, num_args, updates, outs,
                                   num_outputs, options);
    for (int j = 0; !s && !mp && j < num_outputs; j++) {
      if (updates && updates[j] >= 0) xrt__xv_donate(k.vars[updates[j]], outs[j]);
      else outputs[j] = outs[j];
    }
    for (int i = 0; i < num_args; i++)
      if (k.views[i]) xrt__sharded_free(k.views[i], false);
    xrt__vars_unlock(k.uniq, k.nuniq);
  }
  xrt__saved_error err = {XRT_OK, ""};
  xrt__save_error(&err, s);
  for (int i = 0; i < num_args; i++) xrt__var_unref(k.vars[i]);
  xrt__free(&al, block);
  return xrt__restore_error(&err);
}

/* ---- .npy files ---- */

xrt_status xrt_variable_save(xrt_variable *variable, const char *path) {
  XRT__CHECK_ARG(path, "path is NULL");
  xrt__var *v;
  xrt_status s = xrt__var_open(variable, __func__, &v);
  if (s) return s;
  if (v->client->mp) return xrt__mpv_save(v, path); /* closes v */
  xrt_shape shape = v->logical;
  size_t bytes = xrt_shape_bytes(&shape);
  xrt_allocator a = v->al; /* v may go once closed */
  void *data = xrt__alloc(&a, bytes ? bytes : 1);
  s = data ? xrt__var_read(v, data, bytes)
           : xrt__nomem("a variable's host copy");
  xrt__var_close(v);
  size_t n = strlen(path) + 16;
  char *tmp = (char *)xrt__alloc(&a, n);
  bool made = false;
  char why[512];
  int err;
  if (!s && !tmp) {
    s = xrt__nomem("a temporary file name");
  } else if (!s) {
    /* Beside path, so that the rename stays in one file system. */
    snprintf(tmp, n, "%s.tmpXXXXXX", path);
    if ((err = xrt__os_temp_file(tmp, why, sizeof why)))
      s = xrt__fail(err == ENOENT ? XRT_NOT_FOUND : XRT_INVALID_ARGUMENT,
                    "%s: cannot create a temporary file beside it: %s", path,
                    why);
    else made = true;
  }
  if (!s && !(s = xrt__npy_write_host(tmp, &shape, data, bytes)) &&
      xrt__os_replace_file(tmp, path, why, sizeof why) != 0) {
    s = xrt__fail(XRT_DATA_LOSS, "%s: cannot rename %s over it: %s", path,
                  tmp, why);
  }
  if (s && made) remove(tmp);
  xrt__free(&a, tmp);
  xrt__free(&a, data);
  return s;
}

/* Reads a .npy file that must hold an array of shape want. */
static xrt_status xrt__var_read_npy(const xrt__var *v, const char *path,
                                    const xrt_shape *want, void **data) {
  xrt_shape have;
  size_t bytes;
  return xrt__npy_read_host(&v->al, path, want, &have, data, &bytes);
}

xrt_status xrt_variable_load(xrt_variable *variable, const char *path) {
  XRT__CHECK_ARG(path, "path is NULL");
  xrt__var *v;
  xrt_status s = xrt__var_open(variable, __func__, &v);
  if (s) return s;
  if (v->client->mp) { /* across processes */
    s = xrt__mpv_load(v, path);
    xrt__var_close(v);
    return s;
  }
  void *data = NULL;
  xrt_sharded_array *arr = NULL;
  s = xrt__var_read_npy(v, path, &v->logical, &data);
  if (!s)
    s = xrt_sharded_array_from_host((xrt_client *)v->client->handle,
                                    &v->logical, data, &v->spec, v->devices,
                                    v->n, &arr);
  if (!s) { /* the new pieces replace the old ones only now */
    xrt__sharded *a = xrt__sharded_get(arr);
    for (int k = 0; k < v->n; k++) {
      xrt__piece_release(v->bufs[k]);
      v->bufs[k] = a->bufs[k];
    }
    xrt__sharded_free(a, false);
  }
  xrt_allocator al = v->al;
  xrt__var_close(v);
  xrt__free(&al, data);
  return s;
}

xrt_status xrt_variable_create_from_npy(xrt_client *client, const char *name,
                                        const char *path,
                                        const xrt_variable_format *format,
                                        xrt_variable **out_variable) {
  XRT__CHECK_ARG(out_variable, "out_variable is NULL");
  *out_variable = NULL;
  xrt__client *c = xrt__client_get(client);
  XRT__CHECK_ARG(c, "invalid client");
  XRT__CHECK_ARG(path, "path is NULL");
  xrt_shape shape;
  void *data = NULL;
  size_t bytes;
  xrt_status s = xrt__npy_read_host(&c->allocator, path, NULL, &shape, &data,
                                    &bytes);
  if (!s) s = xrt_variable_create(client, name, &shape, data, format,
                                  out_variable);
  xrt__free(&c->allocator, data);
  return s;
}
