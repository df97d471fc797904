/* ---- src/include/parallel.h, part of xrt.h: sharding specs, sharded arrays
 * and pmap, variables, several processes, host functions. */

/* ======================================================================
 * Sharding specs, sharded arrays and pmap
 *
 * A sharding spec says how one logical array is cut into per-device
 * pieces, exactly as JAX's pmap ShardingSpec does.  Per array dimension:
 * NoSharding (every piece has the whole dimension), Chunked([c0, c1, ...])
 * (the dimension is cut into c0*c1*... equal chunks; each c is one sharded
 * mesh axis, c0 outermost) or Unstacked(n) (the dimension, of size n, is
 * removed: piece k gets index k).  The sharded axes are numbered in the
 * order they appear over the dimensions.  Per mesh dimension:
 * ShardedAxis(i) (this mesh dimension walks sharded axis i) or
 * Replicated(r) (r devices hold the same pieces).  Devices are laid out
 * row-major over the mesh dimensions in the order given, so with the
 * replication last (the usual spec) copies of a piece sit on neighbouring
 * devices.
 * ==================================================================== */

#define XRT_MAX_CHUNKS 8     /* chunk factors of one Chunked dimension */
#define XRT_MAX_MESH_DIMS 16 /* mesh dimensions of one sharding spec */

/* How one dimension of an array is cut (JAX: NoSharding, Chunked,
 * Unstacked). */
typedef enum xrt_dim_sharding_kind {
  XRT_DIM_NO_SHARDING = 0,
  XRT_DIM_CHUNKED = 1,
  XRT_DIM_UNSTACKED = 2
} xrt_dim_sharding_kind;

/* The sharding of one array dimension: its kind and that kind's fields. */
typedef struct xrt_dim_sharding {
  xrt_dim_sharding_kind kind;
  int num_chunks;                   /* Chunked: how many factors */
  int64_t chunks[XRT_MAX_CHUNKS];   /* Chunked: the factors */
  int64_t size;                     /* Unstacked: the dimension's size */
} xrt_dim_sharding;

/* What one mesh dimension does (JAX: ShardedAxis, Replicated). */
typedef enum xrt_mesh_mapping_kind {
  XRT_MESH_SHARDED_AXIS = 0,
  XRT_MESH_REPLICATED = 1
} xrt_mesh_mapping_kind;

/* One mesh dimension: its kind and that kind's field. */
typedef struct xrt_mesh_mapping {
  xrt_mesh_mapping_kind kind;
  int axis;          /* ShardedAxis: the sharded axis */
  int64_t replicas;  /* Replicated: how many copies */
} xrt_mesh_mapping;

/* A sharding spec (JAX's pmap ShardingSpec, see above): rank dimension
 * shardings and num_mesh_dims mesh mappings.  A plain value; start from
 * xrt_sharding_spec_init. */
typedef struct xrt_sharding_spec {
  int rank;                                   /* of the logical array */
  xrt_dim_sharding dims[XRT_MAX_RANK];
  int num_mesh_dims;
  xrt_mesh_mapping mesh[XRT_MAX_MESH_DIMS];
} xrt_sharding_spec;

/* A spec of the given rank with every dimension NoSharding and no mesh
 * dimension (one device holds the whole array).  Thread-safe. */
XRT_API void xrt_sharding_spec_init(xrt_sharding_spec *spec, int rank);

/* Checks the spec against a logical shape: chunks divide their dimension,
 * Unstacked sizes match, every sharded axis is mapped exactly once.
 * XRT_INVALID_ARGUMENT with a message naming the dimension otherwise.
 * Thread-safe. */
XRT_API xrt_status xrt_sharding_spec_validate(const xrt_sharding_spec *spec,
                                      const xrt_shape *logical);

/* Number of devices the spec spans (the product of the mesh sizes), or -1
 * if the spec is malformed. Thread-safe. */
XRT_API int64_t xrt_sharding_spec_num_devices(const xrt_sharding_spec *spec);

/* The shape of each device's piece of an array of shape logical.
 * Thread-safe. */
XRT_API xrt_status xrt_sharding_spec_shard_shape(const xrt_sharding_spec *spec,
                                         const xrt_shape *logical,
                                         xrt_shape *out);

/* The logical shape whose pieces have shape shard.  Thread-safe. */
XRT_API xrt_status xrt_sharding_spec_logical_shape(const xrt_sharding_spec *spec,
                                           const xrt_shape *shard,
                                           xrt_shape *out);

/* Where device number `device` (0-based, in mesh order) reads its piece:
 * start[d] of every logical dimension (an Unstacked dimension gives its
 * index; the piece's extent there is 1 and the dimension is dropped).
 * Thread-safe. */
XRT_API xrt_status xrt_sharding_spec_shard_start(const xrt_sharding_spec *spec,
                                         const xrt_shape *logical,
                                         int64_t device, int64_t *start);

/* One logical array held as pieces on several devices (one buffer per
 * device, in mesh order), with its sharding spec.  Owned by the caller
 * that created it; released with xrt_sharded_array_release. */
typedef struct xrt_sharded_array xrt_sharded_array;

/* Splits a dense row-major host array into per-device buffers by spec:
 * devices[k] gets piece k (num_devices must equal the spec's device count;
 * a device may appear more than once).  The uploads run concurrently, one
 * per device; a piece contiguous in data is uploaded from it directly,
 * others are gathered once per distinct piece.  The caller owns
 * *out_array.  Synchronous.  Thread-safe. */
XRT_API xrt_status xrt_sharded_array_from_host(xrt_client *client,
                                       const xrt_shape *logical,
                                       const void *data,
                                       const xrt_sharding_spec *spec,
                                       xrt_device *const *devices,
                                       int num_devices,
                                       xrt_sharded_array **out_array);

/* Assembles the logical array into host memory (dst_bytes at least its
 * size); replicated pieces are read once.  Waits for pending pieces and
 * returns the first one's error if any failed.  Thread-safe. */
XRT_API xrt_status xrt_sharded_array_to_host(xrt_sharded_array *array, void *dst,
                                     size_t dst_bytes);

/* Wraps existing buffers (one per device, in mesh order, each of the
 * spec's piece shape) as a sharded array.  On success the array owns the
 * buffers (release them through the array only); on failure the caller
 * still does.  Thread-safe. */
XRT_API xrt_status xrt_sharded_array_create(xrt_client *client,
                                    const xrt_shape *logical,
                                    const xrt_sharding_spec *spec,
                                    xrt_buffer *const *buffers,
                                    int num_buffers,
                                    xrt_sharded_array **out_array);

/* xrt_sharded_array_create for an array whose devices may span processes
 * (see "Objects that span processes"): devices[k] is piece k's global
 * device, in mesh order, and buffers[k] its buffer, NULL where devices[k]
 * belongs to another process (this process's buffers must sit on their
 * devices[k]).  Ownership as xrt_sharded_array_create.  Thread-safe. */
XRT_API xrt_status xrt_sharded_array_create_global(
    xrt_client *client, const xrt_shape *logical,
    const xrt_sharding_spec *spec, xrt_device *const *devices,
    xrt_buffer *const *buffers, int num_pieces,
    xrt_sharded_array **out_array);

/* Releases the array and its buffers.  NULL is ignored, a stale handle is
 * reported. Not thread-safe with other calls on the same array. */
XRT_API xrt_status xrt_sharded_array_release(xrt_sharded_array *array);

/* Number of pieces (devices) of the array; -1 if invalid. Thread-safe. */
XRT_API int xrt_sharded_array_num_shards(const xrt_sharded_array *array);
/* Piece number index (borrowed: owned by the array, do not release it), or
 * NULL with XRT_OUT_OF_RANGE / XRT_INVALID_ARGUMENT in xrt_last_error()
 * (XRT_FAILED_PRECONDITION: the piece is held by another process).
 * Thread-safe. */
XRT_API xrt_buffer *xrt_sharded_array_shard(const xrt_sharded_array *array,
                                    int index);
/* The logical (whole-array) shape, copied into *out.  XRT_INVALID_ARGUMENT
 * for an invalid array or NULL out.  Thread-safe. */
XRT_API xrt_status xrt_sharded_array_shape(const xrt_sharded_array *array,
                                   xrt_shape *out);
/* The array's sharding spec, copied into *out.  XRT_INVALID_ARGUMENT for
 * an invalid array or NULL out.  Thread-safe. */
XRT_API xrt_status xrt_sharded_array_spec(const xrt_sharded_array *array,
                                  xrt_sharding_spec *out);

/* Runs the executable once per shard of the arguments (every argument
 * spans the same devices in the same order; their count must be the
 * executable's num_replicas * num_partitions) and returns one sharded
 * array per output (options->output_specs, or a new leading dimension
 * Unstacked over the devices).  Logical id i runs on the arguments' shard
 * i device: options->devices, if given, must list the same devices; with
 * no argument the devices are options->devices or the executable's
 * assignment.  An output spec must span the launch's device count and
 * have pieces of the output's per-device shape.  Asynchronous like
 * xrt_execute_multi; the caller owns the outputs.  Thread-safe. */
XRT_API xrt_status xrt_execute_sharded(xrt_executable *executable,
                               xrt_sharded_array *const *args, int num_args,
                               xrt_sharded_array **outputs, int num_outputs,
                               const xrt_execute_options *options,
                               xrt_event **out_done);

/* ---- pmap: compile once per argument signature ---- */

/* A function mapped over devices, compiled once per argument signature
 * (JAX's pmap); created with xrt_pmap_create, released with
 * xrt_pmap_release. */
typedef struct xrt_pmap xrt_pmap;

/* Produces the program text for one signature (the per-device shard
 * shapes of the arguments), as JAX traces a function per signature.  Set
 * *out_text to memory from malloc (xrt frees it) and *out_len; a non-OK
 * return is remembered for the signature like a compile error. */
typedef xrt_status (*xrt_pmap_source_fn)(void *user,
                                         const xrt_shape *shard_shapes,
                                         int num_args, char **out_text,
                                         size_t *out_len);

/* Options of xrt_pmap_create; fill with xrt_pmap_options_init. */
typedef struct xrt_pmap_options {
  /* The program: either fixed text (text, len; compiled once per
   * signature, so a signature that does not match its entry fails) or a
   * source callback called once per new signature. */
  const char *text;
  size_t len;
  xrt_pmap_source_fn source;
  void *source_user;
  xrt_compile_options compile; /* entry, filename... */
} xrt_pmap_options;

/* Fills *options with defaults. Thread-safe. */
XRT_API void xrt_pmap_options_init(xrt_pmap_options *options);

/* Creates a pmap over the client.  The caller owns *out_pmap.
 * Thread-safe. */
XRT_API xrt_status xrt_pmap_create(xrt_client *client, const xrt_pmap_options *options,
                           xrt_pmap **out_pmap);

/* Calls the pmap on sharded arguments (at least one: they give the
 * devices): compiles for their signature on first use and runs like
 * xrt_execute_sharded.  The signature is the arguments' piece shapes and
 * their device list; it is compiled with num_replicas = the number of
 * devices and device_assignment = those devices.  Concurrent callers with
 * the same signature wait for one compilation; a failure (of the source
 * callback, the compile, or a program whose entry does not take the
 * pieces) is remembered and returned to every later caller of that
 * signature.  Thread-safe. */
XRT_API xrt_status xrt_pmap_call(xrt_pmap *pmap, xrt_sharded_array *const *args,
                         int num_args, xrt_sharded_array **outputs,
                         int num_outputs, const xrt_execute_options *options,
                         xrt_event **out_done);

/* Number of distinct signatures compiled (or failed) so far. Thread-safe. */
XRT_API int xrt_pmap_num_compiled(const xrt_pmap *pmap);

/* Releases the pmap and its executables (pending executions finish).
 * NULL and stale handles are ignored; it may come after the release of
 * the pmap's client.  Not thread-safe with calls on the same pmap. */
XRT_API void xrt_pmap_release(xrt_pmap *pmap);

/* ======================================================================
 * Variables
 *
 * A variable is one named logical array that lives on a set of devices
 * under a sharding spec and persists between executions (a model's
 * parameters).  Its format is (spec, device list); its format key is a
 * stable 64-bit fingerprint of that format and the logical shape: equal
 * keys mean identical layouts.  A reshard moves variables to a new format
 * by device-to-device copies of only the pieces that must move, and is
 * atomic over all the variables of the call.  Each variable has a lock:
 * executes and reshards of the same variable are serialised, those of
 * different variables run in parallel.  Variables need distinct devices
 * in their device lists.
 * ==================================================================== */

/* A target layout: spec over devices[0..num_devices) in mesh order. */
typedef struct xrt_variable_format {
  const xrt_sharding_spec *spec; /* read during the call only */
  xrt_device *const *devices;    /* distinct, in mesh order */
  int num_devices;               /* the spec's device count */
} xrt_variable_format;

/* The format key a variable of this shape would have in this format (0 if
 * the format is invalid for the shape).  Thread-safe. */
XRT_API uint64_t xrt_variable_format_key_of(const xrt_shape *logical,
                                    const xrt_variable_format *format);

/* Creates a variable from a dense row-major host array (data must hold
 * xrt_shape_bytes(logical) bytes).  name is copied (for messages and
 * traces).  The caller owns *out_variable. Thread-safe. */
XRT_API xrt_status xrt_variable_create(xrt_client *client, const char *name,
                               const xrt_shape *logical, const void *data,
                               const xrt_variable_format *format,
                               xrt_variable **out_variable);

/* Creates a variable that takes over a sharded array's pieces (no copy):
 * on success the array handle is consumed (released); on failure the
 * caller still owns it.  Thread-safe. */
XRT_API xrt_status xrt_variable_from_array(const char *name, xrt_sharded_array *array,
                                   xrt_variable **out_variable);

/* Releases the variable and its device memory, after any execute or
 * reshard of it in progress.  NULL is ignored, a stale handle is reported.
 * Thread-safe. */
XRT_API xrt_status xrt_variable_release(xrt_variable *variable);

/* Accessors (borrowed results; consistent snapshots under the variable's
 * lock).  Thread-safe. */
XRT_API const char *xrt_variable_name(const xrt_variable *variable);
/* The logical shape, copied into *out.  XRT_INVALID_ARGUMENT for an
 * invalid variable or NULL out.  Thread-safe. */
XRT_API xrt_status xrt_variable_shape(const xrt_variable *variable, xrt_shape *out);
/* The current sharding spec (it changes with reshards), copied into
 * *out.  XRT_INVALID_ARGUMENT for an invalid variable or NULL out.
 * Thread-safe. */
XRT_API xrt_status xrt_variable_spec(const xrt_variable *variable,
                             xrt_sharding_spec *out);
/* Number of devices of the current format; -1 if invalid.  Thread-safe. */
XRT_API int xrt_variable_num_devices(const xrt_variable *variable);
/* Device number index of the current format, in mesh order (borrowed
 * from the client), or NULL with XRT_OUT_OF_RANGE / XRT_INVALID_ARGUMENT
 * in xrt_last_error().  Thread-safe. */
XRT_API xrt_device *xrt_variable_device(const xrt_variable *variable, int index);
XRT_API uint64_t xrt_variable_format_key(const xrt_variable *variable); /* 0: invalid */

/* Assembles the logical array into host memory (dst_bytes at least its
 * size). Thread-safe. */
XRT_API xrt_status xrt_variable_to_host(xrt_variable *variable, void *dst,
                                size_t dst_bytes);

/* Options of xrt_variables_reshard; fill with xrt_reshard_options_init. */
typedef struct xrt_reshard_options {
  /* Move the data through host memory instead of device-to-device
   * copies (for plugins whose devices cannot copy to each other). */
  bool via_host;
} xrt_reshard_options;

/* Fills *options with defaults. Thread-safe. */
XRT_API void xrt_reshard_options_init(xrt_reshard_options *options);

/* Moves variables[i] to formats[i], for i < count, as one atomic step:
 * either every variable ends in its new format with its values, or every
 * one keeps its old format and data (an invalid format, memory
 * exhaustion, a device fault: the first error is returned).  A variable
 * already in its target format costs nothing (no allocation, no copy);
 * a call where all are is a few hundred nanoseconds.  Pieces that stay on
 * their device in the same place are kept, not copied.  When a device
 * cannot hold the old and new pieces at once, old pieces whose data has
 * already been copied everywhere it is needed are freed early; when even
 * that cannot make room, the call fails with XRT_RESOURCE_EXHAUSTED and
 * nothing changes.  A variable may appear once per call.  options may be
 * NULL.  On a client of several processes (see "Objects that span
 * processes") the call is collective, pieces move between processes
 * through host memory, no piece is freed early (new pieces that do not
 * fit beside the old ones fail the call with XRT_RESOURCE_EXHAUSTED in
 * every process, nothing changed) and a call where all variables are in
 * their target format still costs one exchange between the processes.
 * Synchronous.  Thread-safe. */
XRT_API xrt_status xrt_variables_reshard(xrt_variable *const *variables,
                                 const xrt_variable_format *formats, int count,
                                 const xrt_reshard_options *options);

/* One argument of xrt_execute_variables: exactly one of the two set. */
typedef struct xrt_variable_arg {
  xrt_variable *variable;    /* a variable argument, or NULL */
  xrt_sharded_array *array;  /* a sharded array argument, or NULL */
} xrt_variable_arg;

/* Runs the executable like xrt_execute_sharded over arguments that are
 * variables or sharded arrays (all spanning the same devices in the same
 * order).  updates[k] (updates may be NULL: none) is the index of a
 * variable argument that output k replaces (donation: the variable takes
 * over the output's pieces and keeps its format; the output's per-device
 * shape must equal the variable's piece shape), or -1: output k is
 * returned in outputs[k] as a new sharded array (outputs[k] is NULL for
 * updating outputs).  Waits for the execution.  On failure no variable
 * changes and no output is returned.  The variables involved are locked
 * for the call (in a global order, so concurrent calls cannot deadlock).
 * Thread-safe. */
XRT_API xrt_status xrt_execute_variables(xrt_executable *executable,
                                 const xrt_variable_arg *args, int num_args,
                                 const int *updates,
                                 xrt_sharded_array **outputs, int num_outputs,
                                 const xrt_execute_options *options);

/* Writes the whole logical array as a .npy file (as xrt_buffer_to_npy),
 * atomically: to a temporary file beside path, renamed over it only when
 * complete.  Thread-safe. */
XRT_API xrt_status xrt_variable_save(xrt_variable *variable, const char *path);

/* Replaces the variable's values with a .npy file's (same dtype and
 * shape, else XRT_INVALID_ARGUMENT naming both); the format is kept.  Any
 * error (missing, truncated, not .npy, other type or shape, device
 * failure) leaves the variable unchanged.  Thread-safe. */
XRT_API xrt_status xrt_variable_load(xrt_variable *variable, const char *path);

/* Creates a variable from a .npy file in the given format.  The caller
 * owns *out_variable. Thread-safe. */
XRT_API xrt_status xrt_variable_create_from_npy(xrt_client *client, const char *name,
                                        const char *path,
                                        const xrt_variable_format *format,
                                        xrt_variable **out_variable);

/* ======================================================================
 * Multi-process (xrt_mpi.c)
 *
 * Several processes (one per host, as JAX runs after
 * jax.distributed.initialize) form one xrt system.  xrt_mpi.c, built in
 * with `make XRT_MPI=1` (CC=mpicc, defines XRT_HAVE_MPI), runs it over MPI;
 * without it xrt stays single-process and needs no MPI.  The core itself
 * talks to other processes only through an xrt_transport (below), which
 * xrt_mpi_init installs.
 *
 * Order: xrt_mpi_init in every process, then every process creates its
 * client with the same options.  A client whose options leave
 * topology.process_count at -1 (the default) joins the system: creating
 * it is collective (every process must create one, in the same order),
 * and it sees the devices of every process (xrt_client_global_device).
 * Give topology.process_count = 1 for a client of this process alone.
 *
 * One global device set: with N processes of D devices each, global id
 * p * D + i is device i of process p.  A process addresses only its own:
 * another process's device fails every call that would touch it with
 * XRT_INVALID_ARGUMENT.  An executable compiled for more participants
 * than this process has devices (num_replicas * num_partitions up to
 * N * D; device_assignment in global ids) is run by every process with
 * xrt_execute_multi: each process passes the lists of all participants,
 * NULL for those on other processes, and runs its own (or participant by
 * participant, MPMD-style: xrt_execute_async with a launch id of
 * xrt_client_new_launch_id, each process its own).  Every process must
 * launch the same executables in the same order (launch ids are counted
 * per process and must agree).  all_reduce across processes reduces among
 * each process's devices first, then across processes (in process order:
 * every process gets the same bits); the other collectives fetch the
 * operands of other processes' participants and compute what one process
 * would.
 *
 * Objects that span processes.  A sharded array or variable may be laid
 * out over global devices of several processes: each process holds only
 * the pieces on its own devices (xrt_sharded_array_shard gives NULL with
 * XRT_FAILED_PRECONDITION for a piece held by another process, and
 * xrt_variable_device gives the other process's device).  Such objects are
 * made and used SPMD-style: every process of the client makes the same
 * calls on them, in the same order, with the same arguments (shapes, specs
 * and global device lists), as every JAX process runs the same program.
 * Calls that need other processes are collective over all processes of
 * the client (a process that holds no piece still takes part):
 * xrt_sharded_array_to_host and xrt_variable_to_host (every process
 * receives the whole array), xrt_execute_sharded, xrt_pmap_call and
 * xrt_execute_variables (each process runs its own participants; every
 * process must call, even one that runs none), xrt_variables_reshard
 * (pieces move between processes; the processes agree on the outcome
 * before any variable changes, so the call stays all-or-nothing across
 * processes: every process returns an error, and no variable changes
 * anywhere, when any process fails), xrt_variable_save (process 0 writes
 * the file) and xrt_variable_load (every process reads the file).
 * xrt_sharded_array_from_host, xrt_sharded_array_create and
 * xrt_variable_create read or take this process's pieces only (data is
 * the whole array in every process) and need no other process.
 * Collective calls of one client must be issued in the same order in
 * every process; a peer that does not take part makes them fail with
 * XRT_DEADLINE_EXCEEDED after the timeout.
 *
 * A persistent compile cache (client options.cache_store) works across
 * processes: the key does not depend on the process index, every process
 * reads the store, and only process 0 writes it (the others log "not
 * written" under XRT_LOG=info,cache); a process that misses compiles on
 * its own, without waiting for another.
 *
 * Failure: MPI errors are returned (xrt's communicator, a duplicate of the
 * given one, has MPI_ERRORS_RETURN); a peer that dies or stalls makes a
 * collective fail with XRT_DEADLINE_EXCEEDED after timeout_ms.
 * ==================================================================== */

/* One message of an exchange: bytes to or from process peer. */
typedef struct xrt_transport_msg {
  int peer;     /* the other process's index */
  void *data;   /* bytes to send, or room for those received */
  size_t bytes; /* exactly what the peer sends or expects */
} xrt_transport_msg;

/* How processes reach each other (xrt_mpi.c makes one over MPI).  Calls
 * come from any thread, concurrently; err receives a message on failure. */
typedef struct xrt_transport {
  size_t struct_size;
  void *self; /* passed back to every call */
  /* This process's place; fields resolved (no -1). */
  xrt_topology topology;
  /* Every process contributes bytes at in; out receives
   * process_count * bytes, process order.  Collective. */
  xrt_status (*allgather)(void *self, const void *in, void *out,
                          size_t bytes, char *err, size_t err_cap);
  /* Posts every send and receive, then waits for all of them (at most the
   * transport's timeout: XRT_DEADLINE_EXCEEDED).  tag identifies the
   * exchange: a receive matches only a send of the same tag from its
   * peer. */
  xrt_status (*exchange)(void *self, uint64_t tag,
                         const xrt_transport_msg *sends, int num_sends,
                         const xrt_transport_msg *recvs, int num_recvs,
                         char *err, size_t err_cap);
} xrt_transport;

/* Sets this thread's last error (xrt_last_error) to the formatted message
 * and returns code: for transports and other code built outside the core.
 * Thread-safe. */
XRT_API xrt_status xrt_report_error(xrt_status code, const char *fmt, ...)
#if defined(__GNUC__)
    XRT_PRINTF_FORMAT(2, 3)
#endif
    ;

/* Installs the transport that clients created afterwards join through
 * (NULL: none; clients alive keep the one they joined with, which must
 * outlive them).  Thread-safe. */
XRT_API xrt_status xrt_transport_install(const xrt_transport *transport);

/* Options of xrt_mpi_init; fill with xrt_mpi_options_init. */
typedef struct xrt_mpi_options {
  /* A pointer to the MPI_Comm to use (xrt duplicates it); NULL:
   * MPI_COMM_WORLD.  A void pointer so that xrt.h needs no mpi.h. */
  void *comm;
  /* -1 fields come from the environment variables of xrt_topology when
   * they are set, else from the communicator (ranks; hosts and local
   * ranks from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)).  Given fields
   * must agree with the communicator's size and rank. */
  xrt_topology topology;
  /* A collective waiting for another process gives up after this many
   * milliseconds (default 60000; 0: never). */
  int64_t timeout_ms;
} xrt_mpi_options;

/* Fills *options with defaults. Thread-safe. */
XRT_API void xrt_mpi_options_init(xrt_mpi_options *options);

/* Joins the MPI job (MPI_Init_thread when MPI is not initialized yet; the
 * program's own MPI must provide at least MPI_THREAD_SERIALIZED) and
 * installs its transport.  Collective over the communicator.
 * XRT_UNIMPLEMENTED when xrt was built without XRT_MPI=1;
 * XRT_FAILED_PRECONDITION when already initialized; XRT_INVALID_ARGUMENT
 * for a bad option or a topology the communicator contradicts (MPI, once
 * started, stays initialized: the call may be retried).  Not
 * thread-safe. */
XRT_API xrt_status xrt_mpi_init(const xrt_mpi_options *options);

/* Uninstalls the transport and frees the communicator (MPI_Finalize only
 * if xrt_mpi_init called MPI_Init).  Call after releasing every client
 * that joined.  Collective.  Not thread-safe. */
XRT_API xrt_status xrt_mpi_finalize(void);

/* Changes timeout_ms (see xrt_mpi_options) for the waits that start
 * afterwards; this process only.  XRT_FAILED_PRECONDITION before
 * xrt_mpi_init, XRT_INVALID_ARGUMENT if negative. Thread-safe. */
XRT_API xrt_status xrt_mpi_set_timeout(int64_t timeout_ms);

/* The topology xrt_mpi_init resolved.  XRT_FAILED_PRECONDITION before
 * xrt_mpi_init. Thread-safe. */
XRT_API xrt_status xrt_mpi_topology(xrt_topology *out);

/* Devices of every process of the client's system (its own count for a
 * client of one process); -1 for an invalid client. Thread-safe. */
XRT_API int xrt_client_global_device_count(const xrt_client *client);

/* The device of global id gid (borrowed): this process's own devices are
 * the handles xrt_client_device returns; others' can only be asked for
 * their ids.  NULL with XRT_OUT_OF_RANGE outside 0..count-1.
 * Thread-safe. */
XRT_API xrt_device *xrt_client_global_device(xrt_client *client, int gid);

/* Every process of the client's system contributes bytes at in; out
 * receives process_count * bytes, in process order (on a client of one
 * process: a copy of in).  Collective (see "Objects that span
 * processes").  XRT_DEADLINE_EXCEEDED when a peer does not take part in
 * time.  Thread-safe. */
XRT_API xrt_status xrt_client_process_allgather(xrt_client *client,
                                                const void *in, void *out,
                                                size_t bytes);

/* Tags of xrt_client_process_exchange are below this. */
#define XRT_USER_TAG_LIMIT ((uint64_t)1 << 48)

/* Host messages between this process and others of the client's system:
 * posts the sends and receives, then waits for all of them (at most the
 * transport's timeout: XRT_DEADLINE_EXCEEDED).  tag, below
 * XRT_USER_TAG_LIMIT, identifies the exchange: a receive matches only a
 * send of the same tag from its peer; xrt's own traffic never uses these
 * tags.  XRT_FAILED_PRECONDITION on a client of one process.
 * Thread-safe. */
XRT_API xrt_status xrt_client_process_exchange(xrt_client *client,
                                               uint64_t tag,
                                               const xrt_transport_msg *sends,
                                               int num_sends,
                                               const xrt_transport_msg *recvs,
                                               int num_recvs);

/* A device's global id (-1 if invalid). Thread-safe. */
XRT_API int xrt_device_global_id(const xrt_device *device);
/* The process a device belongs to (-1 if invalid). Thread-safe. */
XRT_API int xrt_device_process_index(const xrt_device *device);
/* Whether this process can use the device (1), not (0), -1 if invalid.
 * Thread-safe. */
XRT_API int xrt_device_is_addressable(const xrt_device *device);

/* ======================================================================
 * Host functions (targets of stablehlo.custom_call)
 * ==================================================================== */

struct xrt_ir_op;

/* One operand or result of a host call: dense row-major host memory.  A
 * token operand or result of a custom_call has no bytes: its shape is all
 * zero (dtype XRT_DTYPE_INVALID, rank 0) and data may be NULL. */
typedef struct xrt_host_tensor {
  xrt_shape shape;  /* dense row-major */
  void *data;       /* the elements (xrt_shape_bytes(&shape) of them) */
  size_t bytes;     /* size of data */
} xrt_host_tensor;

/* What a host function receives for one call: the target name, the op
 * (attributes, location), the inputs and the preallocated outputs, and a
 * buffer for an error message.  Valid during the call only. */
typedef struct xrt_host_call {
  const char *target;             /* call_target_name */
  const struct xrt_ir_op *op;     /* the op, with its attributes and loc */
  int num_inputs;
  const xrt_host_tensor *inputs;
  int num_outputs;
  xrt_host_tensor *outputs;       /* preallocated; the function fills them */
  char *error;                    /* message buffer for failures */
  size_t error_cap;
} xrt_host_call;

/* A host function returns XRT_OK, or a code with a message written into
 * call->error (use xrt_host_call_fail).  It runs on the thread that
 * executes the program, possibly on several threads at once. */
typedef xrt_status (*xrt_host_fn)(void *user, xrt_host_call *call);

/* Registers fn as the target name for custom calls compiled by this client
 * afterwards. Registering a name again replaces it. Thread-safe. */
XRT_API xrt_status xrt_client_register_host_function(xrt_client *client,
                                             const char *target,
                                             xrt_host_fn fn, void *user);

/* Writes a printf-style message into call->error and returns code (an OK
 * code becomes XRT_INTERNAL: a failure must not look like success).
 * Thread-safe. */
XRT_API xrt_status xrt_host_call_fail(xrt_host_call *call, xrt_status code,
                              const char *fmt, ...)
#if defined(__GNUC__)
    XRT_PRINTF_FORMAT(3, 4)
#endif
    ;
