/* dlrt's C API (C11): load an ONNX model, run it, see where it ran, list the
 * machine's devices and turn text into embedding vectors, from C or any
 * language with a C foreign-function interface.
 *
 * Rules that hold for every function below:
 *  - Errors: a function that can fail returns a dlrt_status*. NULL means
 *    success; otherwise the caller owns the returned status, reads its code
 *    (the same numbers as dlrt::StatusCode) and message, and frees it with
 *    dlrt_status_free(). On failure, out-parameters are left NULL / zero.
 *  - Handles are opaque. Each dlrt_X_create/load has a dlrt_X_free(dlrt_X**)
 *    that frees the handle, sets the caller's pointer to NULL and accepts
 *    NULL or a pointer to NULL, so freeing twice through the same variable
 *    is harmless.
 *  - Strings passed in are UTF-8, NUL-terminated, and only read during the
 *    call. Strings and arrays returned by accessors are owned by the handle
 *    they came from and stay valid until that handle is freed.
 *  - Structs with a struct_size first field are versioned: the caller sets
 *    struct_size = sizeof(the struct) (the DLRT_*_INIT macros do), and dlrt
 *    reads or writes only the fields that fit, so a program compiled against
 *    an older header keeps working with a newer library.
 *  - Thread-safety is stated per function. "Thread-safe" means any number of
 *    threads may call it at once on the same handle; a handle must not be
 *    freed while another thread uses it.
 *  - No C++ exception, longjmp or abort crosses this API. A NULL where a
 *    handle or an out-parameter is required gives DLRT_INVALID_ARGUMENT.
 *
 * The C++ API (dlrt/dlrt.h) and this one are the same library; a handle from
 * one is not usable with the other.
 */
#ifndef DLRT_DLRT_C_H_
#define DLRT_DLRT_C_H_

#include <stddef.h>
#include <stdint.h>

#include "dlrt/version.h"

#if defined(DLRT_BUILDING_LIBRARY)
#define DLRT_C_API __attribute__((visibility("default")))
#else
#define DLRT_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The C API's version: raised when a function or a struct field is added. */
#define DLRT_C_API_VERSION 4u

/* The enums' underlying type in C++ (in C it is the compiler's choice for an
 * enum, an int-sized type on the platforms dlrt supports): any int a caller
 * passes is a value the library can check and refuse, not undefined
 * behaviour. */
#ifdef __cplusplus
#define DLRT_ENUM_INT : int
#else
#define DLRT_ENUM_INT
#endif

/* ---------------------------------------------------------------- status */

/* The same numbers as dlrt::StatusCode, grouped by range. */
typedef enum dlrt_status_code DLRT_ENUM_INT {
  DLRT_OK = 0,
  DLRT_INVALID_ARGUMENT = 100, /* the caller's arguments, tensors or files */
  DLRT_NOT_FOUND = 101,
  DLRT_OUT_OF_RANGE = 102,
  DLRT_INVALID_MODEL = 200, /* the model */
  DLRT_UNSUPPORTED = 201,
  DLRT_IO_ERROR = 300, /* resources and the system */
  DLRT_OUT_OF_MEMORY = 301,
  DLRT_DEVICE_UNAVAILABLE = 400, /* devices and backends */
  DLRT_BACKEND_ERROR = 401,
  DLRT_RUNTIME_ERROR = 500, /* everything else that failed while running */
  DLRT_INTERNAL = 501,
  DLRT_CANCELLED = 502 /* a run stopped by its timeout or cancel token (dlrt_run_options) */
} dlrt_status_code;

typedef struct dlrt_status dlrt_status;

/* The code of `status`; DLRT_OK for NULL. Thread-safe. */
DLRT_C_API dlrt_status_code dlrt_status_get_code(const dlrt_status* status);
/* The message ("" for NULL), owned by the status. Thread-safe. */
DLRT_C_API const char* dlrt_status_get_message(const dlrt_status* status);
/* "InvalidArgument", "InvalidModel", ... ("Unknown" for a number not in the
 * table). Static storage. Thread-safe. */
DLRT_C_API const char* dlrt_status_code_name(dlrt_status_code code);
/* Frees *status and sets it to NULL; NULL and *NULL are fine. */
DLRT_C_API void dlrt_status_free(dlrt_status** status);

/* --------------------------------------------------------------- version */

/* The version of the library loaded ("0.2.0"); compare with
 * DLRT_VERSION_STRING, the headers'. Static storage. Thread-safe. */
DLRT_C_API const char* dlrt_version(void);
/* DLRT_C_API_VERSION of the library loaded. Thread-safe. */
DLRT_C_API uint32_t dlrt_c_api_version(void);

/* ---------------------------------------------------------------- dtypes */

/* Element types; the values equal dlrt::DType and ONNX's TensorProto types. */
typedef enum dlrt_dtype DLRT_ENUM_INT {
  DLRT_DTYPE_UNDEFINED = 0,
  DLRT_DTYPE_FLOAT32 = 1,
  DLRT_DTYPE_UINT8 = 2,
  DLRT_DTYPE_INT8 = 3,
  DLRT_DTYPE_UINT16 = 4,
  DLRT_DTYPE_INT16 = 5,
  DLRT_DTYPE_INT32 = 6,
  DLRT_DTYPE_INT64 = 7,
  DLRT_DTYPE_STRING = 8,
  DLRT_DTYPE_BOOL = 9,
  DLRT_DTYPE_FLOAT16 = 10,
  DLRT_DTYPE_FLOAT64 = 11,
  DLRT_DTYPE_UINT32 = 12,
  DLRT_DTYPE_UINT64 = 13,
  DLRT_DTYPE_BFLOAT16 = 16,
  /* float8 kinds: one bit pattern per byte */
  DLRT_DTYPE_FLOAT8E4M3FN = 17,
  DLRT_DTYPE_FLOAT8E4M3FNUZ = 18,
  DLRT_DTYPE_FLOAT8E5M2 = 19,
  DLRT_DTYPE_FLOAT8E5M2FNUZ = 20,
  DLRT_DTYPE_UINT4 = 21, /* one element per byte in memory (0..15) */
  DLRT_DTYPE_INT4 = 22,  /* one element per byte in memory, sign-extended (-8..7) */
  DLRT_DTYPE_FLOAT4E2M1 = 23, /* one 4-bit pattern per byte */
  DLRT_DTYPE_FLOAT8E8M0 = 24,
  DLRT_DTYPE_UINT2 = 25, /* one element per byte in memory (0..3) */
  DLRT_DTYPE_INT2 = 26   /* one element per byte in memory, sign-extended (-2..1) */
} dlrt_dtype;

/* "float32", "int64", ... (numpy's spelling); "undefined" for a value not in
 * the table. Static storage. Thread-safe. */
DLRT_C_API const char* dlrt_dtype_name(dlrt_dtype dtype);
/* Bytes per element; 0 for DLRT_DTYPE_STRING (use the string functions) and
 * for values not in the table. Thread-safe. */
DLRT_C_API size_t dlrt_dtype_size(dlrt_dtype dtype);

/* --------------------------------------------------------------- tensors */

/* A typed n-dimensional array: owning its memory, or a view over the
 * caller's. Not synchronised: use one tensor from one thread at a time, except
 * that any number of threads may read a tensor (and run sessions on it as an
 * input) at once. */
typedef struct dlrt_tensor dlrt_tensor;

/* A new tensor of `shape` (rank dims, each >= 0; shape may be NULL when
 * rank is 0) with its own zero-filled, 64-byte aligned storage. `data`, when
 * not NULL, is copied in and must hold exactly `nbytes` = element count *
 * dlrt_dtype_size(dtype) bytes. Not for strings (dlrt_tensor_create_strings).
 * Thread-safe. */
DLRT_C_API dlrt_status* dlrt_tensor_create(dlrt_dtype dtype, const int64_t* shape, size_t rank,
                                           const void* data, size_t nbytes, dlrt_tensor** out);
/* A tensor over the caller's memory, no copy: `data` (nbytes as above) must
 * stay valid, and unchanged while a run reads it, until the tensor is freed.
 * As an input it is read in place; as a dlrt_session_run_into output it is
 * written in place. Not for strings. Thread-safe. */
DLRT_C_API dlrt_status* dlrt_tensor_create_view(dlrt_dtype dtype, const int64_t* shape, size_t rank,
                                                void* data, size_t nbytes, dlrt_tensor** out);
/* A string tensor of `shape` from `count` = element count NUL-terminated UTF-8
 * strings (copied). Thread-safe. */
DLRT_C_API dlrt_status* dlrt_tensor_create_strings(const int64_t* shape, size_t rank,
                                                   const char* const* strings, size_t count,
                                                   dlrt_tensor** out);
/* Frees *tensor (a view leaves the caller's memory alone) and sets it to NULL;
 * NULL and *NULL are fine. Tensors a run returned are freed the same way. */
DLRT_C_API void dlrt_tensor_free(dlrt_tensor** tensor);

/* Accessors; NULL gives DLRT_DTYPE_UNDEFINED / 0 / NULL. The shape pointer is
 * owned by the tensor (NULL for rank 0). */
DLRT_C_API dlrt_dtype dlrt_tensor_dtype(const dlrt_tensor* tensor);
DLRT_C_API size_t dlrt_tensor_rank(const dlrt_tensor* tensor);
DLRT_C_API const int64_t* dlrt_tensor_shape(const dlrt_tensor* tensor);
DLRT_C_API int64_t dlrt_tensor_element_count(const dlrt_tensor* tensor);
/* Bytes of the element data (0 for strings). */
DLRT_C_API size_t dlrt_tensor_nbytes(const dlrt_tensor* tensor);
/* The element data, row-major; NULL for strings and empty tensors. */
DLRT_C_API void* dlrt_tensor_data(dlrt_tensor* tensor);
DLRT_C_API const void* dlrt_tensor_const_data(const dlrt_tensor* tensor);
/* Element `index` of a string tensor: *str (owned by the tensor, valid until
 * it is freed or written) and *length in bytes (the string may contain NULs;
 * str is also NUL-terminated). Errors: not a string tensor, index out of range. */
DLRT_C_API dlrt_status* dlrt_tensor_string_at(const dlrt_tensor* tensor, int64_t index, const char** str,
                                              size_t* length);

/* ------------------------------------------------------- session options */

/* How a session is created. Not synchronised: configure from one thread,
 * then any number of dlrt_session_create calls may read it at once. */
typedef struct dlrt_session_options dlrt_session_options;

/* Defaults: threads 0 (one per core), device "" (DLRT_DEVICE, else auto),
 * strict off (DLRT_STRICT=1 turns it on), optimize on, warm start off,
 * cpu precision "" (DLRT_CPU_PRECISION, config file, else "f32"), no backend
 * options, every output. */
DLRT_C_API dlrt_status* dlrt_session_options_create(dlrt_session_options** out);
DLRT_C_API void dlrt_session_options_free(dlrt_session_options** options);
/* Intra-op threads of the CPU backend, 0 (one per core) to 4096; more is DLRT_INVALID_ARGUMENT. */
DLRT_C_API dlrt_status* dlrt_session_options_set_threads(dlrt_session_options* options, int threads);
/* Device spec: "auto", "cpu", "gpu", "npu", a backend name or backend:device,
 * comma-separated as a priority list; "" or NULL: DLRT_DEVICE, else auto.
 * Checked when the session is created. */
DLRT_C_API dlrt_status* dlrt_session_options_set_device(dlrt_session_options* options, const char* device);
/* Non-zero: every fallback to another device is an error instead. */
DLRT_C_API dlrt_status* dlrt_session_options_set_strict(dlrt_session_options* options, int strict);
/* Zero: no graph optimisation (constant folding, fusion) at create time. */
DLRT_C_API dlrt_status* dlrt_session_options_set_optimize(dlrt_session_options* options, int optimize);
/* Non-zero: serve on the CPU while accelerator partitions compile in the
 * background (ignored in strict mode). */
DLRT_C_API dlrt_status* dlrt_session_options_set_warm_start(dlrt_session_options* options, int warm_start);
/* "f32", "bf16", "bf16x3", "auto" (measured at create on inputs generated from
 * the model's input shapes, see docs/performance.md), or "" / NULL for the
 * default; any other text is DLRT_INVALID_ARGUMENT here (the options keep
 * their previous value). */
DLRT_C_API dlrt_status* dlrt_session_options_set_cpu_precision(dlrt_session_options* options,
                                                               const char* precision);
/* The largest single tensor a run may allocate, in bytes: beyond it a run
 * fails with DLRT_OUT_OF_MEMORY before allocating. 0 (the default):
 * DLRT_MAX_TENSOR_MB, then the config file's max_tensor_mb, else half the
 * physical memory (at least 1 GiB). */
DLRT_C_API dlrt_status* dlrt_session_options_set_max_tensor_bytes(dlrt_session_options* options, uint64_t bytes);
/* One option handed to accelerator backends when they compile (OpenVINO:
 * performance_hint, inference_precision, ov.<PROPERTY>, ... see
 * docs/openvino.md); setting a key again replaces it, a NULL value removes it. */
DLRT_C_API dlrt_status* dlrt_session_options_set_backend_option(dlrt_session_options* options,
                                                                const char* key, const char* value);
/* The outputs the session computes: `count` output names (copied), kept in
 * the model's order; count 0 (names may then be NULL): all, the default.
 * Replaces the previous list. Nodes only the other outputs need are dropped,
 * and so are the inputs only they read: a run need not feed those, and the
 * session's output and input counts and infos list what remains. A name that
 * is not an output of the model is DLRT_INVALID_ARGUMENT when the session is
 * created; a NULL or empty name is DLRT_INVALID_ARGUMENT here (the options
 * keep their previous list). Since C API version 4. */
DLRT_C_API dlrt_status* dlrt_session_options_set_outputs(dlrt_session_options* options, const char* const* names,
                                                         size_t count);

/* ----------------------------------------------------------- run reports */

/* Where each part of the graph ran and how long it took. Immutable once
 * returned: thread-safe to read. */
typedef struct dlrt_run_report dlrt_run_report;

/* One partition of a report. The strings are owned by the report. */
typedef struct dlrt_partition_info {
  size_t struct_size;     /* sizeof(dlrt_partition_info), set by the caller */
  const char* backend;    /* "cpu", "openvino", "opencl", ... */
  const char* device;     /* "cpu:0", "npu:0", ... */
  int32_t node_count;
  int32_t degraded;       /* 1: it was meant for another device and fell back */
  const char* reason;     /* why it degraded ("" otherwise) */
  double time_ms;         /* 0 in a placement report */
  const char* precision;  /* CPU partitions: "f32", "bf16x3", then ", int8 ..." (see session.h) */
  const char* vector_isa; /* CPU partitions: "avx512", "avx2", "neon" or "generic"; "" for accelerators */
} dlrt_partition_info;
#define DLRT_PARTITION_INFO_INIT {sizeof(dlrt_partition_info), NULL, NULL, 0, 0, NULL, 0.0, NULL, NULL}

DLRT_C_API size_t dlrt_run_report_partition_count(const dlrt_run_report* report);
/* Fills *info for partition `index`. Errors: index out of range, NULL info or
 * a struct_size too small for the first fields. */
DLRT_C_API dlrt_status* dlrt_run_report_partition(const dlrt_run_report* report, size_t index,
                                                  dlrt_partition_info* info);
/* Wall time of the whole run in milliseconds (0 in a placement report). */
DLRT_C_API double dlrt_run_report_run_ms(const dlrt_run_report* report);
DLRT_C_API void dlrt_run_report_free(dlrt_run_report** report);

/* --------------------------------------------------------------- session */

/* A loaded, placed model. Created once, then thread-safe: any number of
 * threads may run it at once (each run has its own intermediate buffers). */
typedef struct dlrt_session dlrt_session;

/* Loads and prepares the model at `path` (external data is read from its
 * folder). `options` may be NULL (defaults). Errors: DLRT_IO_ERROR
 * (unreadable), DLRT_INVALID_MODEL, DLRT_UNSUPPORTED, DLRT_DEVICE_UNAVAILABLE
 * (strict mode), DLRT_INVALID_ARGUMENT (a bad option). Thread-safe. */
DLRT_C_API dlrt_status* dlrt_session_create(const char* path, const dlrt_session_options* options,
                                            dlrt_session** out);
/* Same from the `size` bytes of a serialized model; external data is resolved
 * relative to `base_dir` (NULL or "": a model with external data is refused).
 * The bytes are not needed after the call. Thread-safe. */
DLRT_C_API dlrt_status* dlrt_session_create_from_bytes(const void* bytes, size_t size,
                                                       const dlrt_session_options* options,
                                                       const char* base_dir, dlrt_session** out);
/* Frees *session and sets it to NULL. No run may be in progress on it. */
DLRT_C_API void dlrt_session_free(dlrt_session** session);

/* A model input or output as the model declares it. Owned by the session. */
typedef struct dlrt_value_info {
  size_t struct_size;           /* sizeof(dlrt_value_info), set by the caller */
  const char* name;
  dlrt_dtype dtype;
  size_t rank;
  const int64_t* shape;         /* rank dims; -1 where the dim is dynamic */
  const char* const* dim_names; /* rank names of dims; "" where the model names none */
  int32_t is_tensor;            /* 0 for sequences, maps and optionals (dlrt_session_run
                                   cannot return those; C++ Session::run_values can) */
} dlrt_value_info;
#define DLRT_VALUE_INFO_INIT {sizeof(dlrt_value_info), NULL, DLRT_DTYPE_UNDEFINED, 0, NULL, NULL, 0}

/* Counts, and the info of input/output `index` (model order). Thread-safe. */
DLRT_C_API size_t dlrt_session_input_count(const dlrt_session* session);
DLRT_C_API size_t dlrt_session_output_count(const dlrt_session* session);
DLRT_C_API dlrt_status* dlrt_session_input_info(const dlrt_session* session, size_t index,
                                                dlrt_value_info* info);
DLRT_C_API dlrt_status* dlrt_session_output_info(const dlrt_session* session, size_t index,
                                                 dlrt_value_info* info);

/* Runs the model on `input_count` named inputs (every graph input without an
 * initializer must be there). On success writes one new tensor per model
 * output, in model order, into outputs[0 .. output_capacity), which must have
 * room for dlrt_session_output_count() entries; the caller frees each. When
 * `report` is not NULL, *report receives the run's report (caller frees).
 * Errors: DLRT_INVALID_ARGUMENT (unknown, missing or duplicate input name, a
 * wrong dtype, rank or dim, too small an output array), DLRT_RUNTIME_ERROR (a
 * kernel failed). Thread-safe. */
DLRT_C_API dlrt_status* dlrt_session_run(const dlrt_session* session, const char* const* input_names,
                                         const dlrt_tensor* const* inputs, size_t input_count,
                                         dlrt_tensor** outputs, size_t output_capacity,
                                         dlrt_run_report** report);
/* As dlrt_session_run, but each named output is written into the caller's
 * tensor (usually a view over the caller's buffer, see
 * dlrt_tensor_create_view), which must have the output's dtype and shape.
 * Outputs not named are computed and dropped. Buffers must not overlap the
 * inputs. Thread-safe, but two concurrent runs must not share an output. */
DLRT_C_API dlrt_status* dlrt_session_run_into(const dlrt_session* session, const char* const* input_names,
                                              const dlrt_tensor* const* inputs, size_t input_count,
                                              const char* const* output_names, dlrt_tensor* const* outputs,
                                              size_t output_count, dlrt_run_report** report);
/* A flag that stops the runs watching it (dlrt_run_options.cancel). */
typedef struct dlrt_cancel_token dlrt_cancel_token;
/* A new token, not cancelled. Thread-safe. */
DLRT_C_API dlrt_status* dlrt_cancel_token_create(dlrt_cancel_token** out);
/* Cancels: the runs watching the token stop with DLRT_CANCELLED. Any thread, any time. */
DLRT_C_API void dlrt_cancel_token_cancel(dlrt_cancel_token* token);
/* Frees *token and sets it to NULL; no run may still watch it. */
DLRT_C_API void dlrt_cancel_token_free(dlrt_cancel_token** token);

/* Bounds of one run: it stops with DLRT_CANCELLED (checked between the nodes
 * it executes, Loop/Scan bodies included) once timeout_ms passes or the token
 * is cancelled. The session stays usable. */
typedef struct dlrt_run_options {
  size_t struct_size;              /* sizeof(dlrt_run_options), set by the caller */
  double timeout_ms;               /* 0: none */
  const dlrt_cancel_token* cancel; /* may be NULL */
} dlrt_run_options;
#define DLRT_RUN_OPTIONS_INIT {sizeof(dlrt_run_options), 0.0, NULL}

/* dlrt_session_run with bounds (`options` may be NULL: none). Thread-safe. */
DLRT_C_API dlrt_status* dlrt_session_run_with_options(const dlrt_session* session, const char* const* input_names,
                                                      const dlrt_tensor* const* inputs, size_t input_count,
                                                      dlrt_tensor** outputs, size_t output_capacity,
                                                      const dlrt_run_options* options, dlrt_run_report** report);

/* How the session was placed, before any run (times are 0). Thread-safe. */
DLRT_C_API dlrt_status* dlrt_session_placement(const dlrt_session* session, dlrt_run_report** out);

/* --------------------------------------------------------------- devices */

/* The machine's devices as `dlrt devices` lists them, found without any
 * vendor runtime. Immutable: thread-safe to read. */
typedef struct dlrt_device_list dlrt_device_list;

/* One device. The strings are owned by the list. */
typedef struct dlrt_device_info {
  size_t struct_size;  /* sizeof(dlrt_device_info), set by the caller */
  const char* id;      /* "cpu:0", "gpu:0", "npu:0", ... */
  const char* type;    /* "cpu", "gpu", "npu", "accelerator" */
  const char* vendor;
  const char* name;
  uint32_t vendor_id;  /* PCI ids where there are any, else 0 */
  uint32_t device_id;
  size_t metadata_count;
} dlrt_device_info;
#define DLRT_DEVICE_INFO_INIT {sizeof(dlrt_device_info), NULL, NULL, NULL, NULL, 0, 0, 0}

/* Discovers the devices now (reads /proc and /sys). Thread-safe. */
DLRT_C_API dlrt_status* dlrt_devices_discover(dlrt_device_list** out);
DLRT_C_API void dlrt_device_list_free(dlrt_device_list** list);
DLRT_C_API size_t dlrt_device_list_count(const dlrt_device_list* list);
DLRT_C_API dlrt_status* dlrt_device_list_get(const dlrt_device_list* list, size_t index, dlrt_device_info* info);
/* Metadata entry `meta_index` of device `index` (keys in sorted order: isa,
 * cores, driver, pci_bus_id, ... see dlrt/device.h). */
DLRT_C_API dlrt_status* dlrt_device_list_metadata(const dlrt_device_list* list, size_t index, size_t meta_index,
                                                  const char** key, const char** value);
/* The value of metadata `key` of device `index`, or NULL when it has none. */
DLRT_C_API const char* dlrt_device_list_find_metadata(const dlrt_device_list* list, size_t index,
                                                      const char* key);

/* ---------------------------------------------------------- memory budget */

/* The process's memory budget as sessions apply it (dlrt/memory.h): the
 * largest tensor a run may allocate by default, and the memory available to
 * the process that the default (half of it) derives from. A bound that does
 * not apply is 0. The strings are static storage. */
typedef struct dlrt_memory_info {
  size_t struct_size;             /* sizeof(dlrt_memory_info), set by the caller */
  uint64_t max_tensor_bytes;      /* the limit a session made now gets (no max_tensor_bytes option) */
  const char* max_tensor_source;  /* "DLRT_MAX_TENSOR_MB", "the default, half ..." */
  uint64_t available_bytes;       /* the smallest bound below less what the process holds against it */
  const char* available_source;   /* "physical memory", "cgroup memory.max", "RLIMIT_AS" */
  uint64_t physical_bytes;
  uint64_t cgroup_limit_bytes;    /* 0: no memory cgroup limit */
  uint64_t rlimit_as_bytes;       /* 0: RLIMIT_AS unlimited */
  const char* describe;           /* one line, e.g. "RLIMIT_AS 7.6 GiB less 120.0 MiB mapped" */
} dlrt_memory_info;
#define DLRT_MEMORY_INFO_INIT {sizeof(dlrt_memory_info), 0, NULL, 0, NULL, 0, 0, 0, NULL}

/* Fills *info with the budget as read at the first call in this process (the
 * same figures `dlrt devices` prints under "Memory"). Thread-safe. */
DLRT_C_API dlrt_status* dlrt_memory_info_get(dlrt_memory_info* info);

/* -------------------------------------------------------------- backends */

/* The backends compiled in (cpu, cuda, opencl, openvino) and those named in
 * DLRT_PLUGINS, as `dlrt devices` lists them: available or not and why, and
 * the devices each drives (dlrt/backends.h). Immutable: thread-safe to read. */
typedef struct dlrt_backend_list dlrt_backend_list;

/* One backend. The strings are owned by the list. */
typedef struct dlrt_backend_info {
  size_t struct_size;        /* sizeof(dlrt_backend_info), set by the caller */
  const char* name;          /* "cpu", "cuda", "opencl", "openvino", or a plugin's */
  int32_t available;         /* 1: usable on this machine */
  const char* reason;        /* unavailable: what is missing ("" otherwise) */
  const char* fix;           /* unavailable: what to do about it ("" otherwise) */
  const char* library_path;  /* the vendor library loaded ("" for built-in code) */
  const char* version;       /* the vendor runtime's version, "" when unknown */
  const char* compatibility; /* "tested release", or the verdict of the check of an untested one */
  size_t tried_count;        /* places searched for the vendor library (dlrt_backend_list_tried) */
  size_t device_count;       /* devices it drives (dlrt_backend_list_device); 0 when unavailable */
} dlrt_backend_info;
#define DLRT_BACKEND_INFO_INIT {sizeof(dlrt_backend_info), NULL, 0, NULL, NULL, NULL, NULL, NULL, 0, 0}

/* A device as one backend drives it. The strings are owned by the list. */
typedef struct dlrt_backend_device_info {
  size_t struct_size;      /* sizeof(dlrt_backend_device_info), set by the caller */
  const char* spec;        /* "openvino:NPU": usable as a device spec */
  const char* backend;     /* "openvino" */
  const char* name;        /* the backend's own name for it: "NPU", "GPU.0", "0", "cpu" */
  const char* type;        /* "cpu", "gpu", "npu", "accelerator" */
  int32_t is_virtual;      /* 1: compiles (dlrt compile), never runs */
  const char* hardware_id; /* the dlrt_devices_discover id it drives ("gpu:0"), "" when not matched */
  size_t metadata_count;   /* dlrt_backend_list_device_metadata */
} dlrt_backend_device_info;
#define DLRT_BACKEND_DEVICE_INFO_INIT {sizeof(dlrt_backend_device_info), NULL, NULL, NULL, NULL, 0, NULL, 0}

/* Asks every backend whether it is available (loading its vendor runtime the
 * first time) and pairs it with the discovered devices. `only` names one
 * backend to ask (NULL or "": all; the others' vendor runtimes stay unloaded;
 * a name no backend has gives an empty list). refresh non-zero: retry the
 * backends whose runtime failed to load earlier. Thread-safe. */
DLRT_C_API dlrt_status* dlrt_backends_list(const char* only, int refresh, dlrt_backend_list** out);
DLRT_C_API void dlrt_backend_list_free(dlrt_backend_list** list);
DLRT_C_API size_t dlrt_backend_list_count(const dlrt_backend_list* list);
/* Fills *info for backend `index` (registration order, cpu first). */
DLRT_C_API dlrt_status* dlrt_backend_list_get(const dlrt_backend_list* list, size_t index, dlrt_backend_info* info);
/* Place `tried_index` backend `index` searched for its vendor library, with the outcome. */
DLRT_C_API dlrt_status* dlrt_backend_list_tried(const dlrt_backend_list* list, size_t index, size_t tried_index,
                                                const char** tried);
/* Device `device_index` of backend `index`. */
DLRT_C_API dlrt_status* dlrt_backend_list_device(const dlrt_backend_list* list, size_t index, size_t device_index,
                                                 dlrt_backend_device_info* info);
/* Metadata entry `meta_index` (sorted by key) of that device. */
DLRT_C_API dlrt_status* dlrt_backend_list_device_metadata(const dlrt_backend_list* list, size_t index,
                                                          size_t device_index, size_t meta_index, const char** key,
                                                          const char** value);

/* ------------------------------------------------------------ model info */

/* What a model declares and what it is made of (dlrt/model_info.h): inputs
 * and outputs with their symbolic dims, opsets, producer and metadata_props,
 * op counts (subgraphs included), parameter size. Immutable: thread-safe to
 * read. */
typedef struct dlrt_model_info dlrt_model_info;

/* The model's fields. The strings are owned by the model info. */
typedef struct dlrt_model_summary {
  size_t struct_size;            /* sizeof(dlrt_model_summary), set by the caller */
  int64_t ir_version;
  const char* producer_name;     /* "pytorch", "skl2onnx", ... */
  const char* producer_version;
  const char* domain;            /* ModelProto.domain */
  const char* description;       /* ModelProto.doc_string */
  int32_t has_model_version;     /* 1 when the model sets model_version */
  int64_t model_version;
  const char* graph_name;
  const char* graph_description;
  size_t input_count;            /* dlrt_model_info_input */
  size_t output_count;           /* dlrt_model_info_output */
  size_t opset_count;            /* dlrt_model_info_opset */
  size_t metadata_count;         /* metadata_props, dlrt_model_info_metadata */
  size_t op_count;               /* distinct ops, dlrt_model_info_op */
  int64_t node_count;            /* nodes, subgraphs included */
  int64_t subgraph_count;
  int64_t parameter_count;       /* elements of initializers and constants */
  int64_t parameter_bytes;
} dlrt_model_summary;
#define DLRT_MODEL_SUMMARY_INIT \
  {sizeof(dlrt_model_summary), 0, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0}

/* A graph input or output as the model declares it. Owned by the model info. */
typedef struct dlrt_model_value_info {
  size_t struct_size;           /* sizeof(dlrt_model_value_info), set by the caller */
  const char* name;
  const char* kind;             /* "tensor", "sequence", "optional", "map" or "unknown" */
  dlrt_dtype dtype;             /* element type (a map's value type) */
  dlrt_dtype key_dtype;         /* maps: the key type; DLRT_DTYPE_UNDEFINED otherwise */
  int32_t has_shape;            /* 0: the model does not give the rank */
  size_t rank;
  const int64_t* shape;         /* rank dims; -1 where the dim is not fixed */
  const char* const* dim_names; /* rank symbols ("batch"); "" where a dim has none */
  const char* type;             /* as ONNX writes it: "tensor(float)", "seq(tensor(int64))" */
} dlrt_model_value_info;
#define DLRT_MODEL_VALUE_INFO_INIT \
  {sizeof(dlrt_model_value_info), NULL, NULL, DLRT_DTYPE_UNDEFINED, DLRT_DTYPE_UNDEFINED, 0, 0, NULL, NULL, NULL}

/* Reads the model at `path` without creating a session. Errors:
 * DLRT_IO_ERROR, DLRT_INVALID_MODEL, DLRT_UNSUPPORTED. Thread-safe. */
DLRT_C_API dlrt_status* dlrt_model_info_read(const char* path, dlrt_model_info** out);
/* The model `session` was created from, as imported (before graph
 * optimisation); a copy the caller frees. Thread-safe. */
DLRT_C_API dlrt_status* dlrt_session_model_info(const dlrt_session* session, dlrt_model_info** out);
DLRT_C_API void dlrt_model_info_free(dlrt_model_info** info);
DLRT_C_API dlrt_status* dlrt_model_info_summary(const dlrt_model_info* info, dlrt_model_summary* summary);
DLRT_C_API dlrt_status* dlrt_model_info_input(const dlrt_model_info* info, size_t index, dlrt_model_value_info* value);
DLRT_C_API dlrt_status* dlrt_model_info_output(const dlrt_model_info* info, size_t index, dlrt_model_value_info* value);
/* Opset `index` (sorted by domain): *domain ("" for ai.onnx) and *version. */
DLRT_C_API dlrt_status* dlrt_model_info_opset(const dlrt_model_info* info, size_t index, const char** domain,
                                              int64_t* version);
/* Op `index` (sorted by domain, then op type) and its node count. */
DLRT_C_API dlrt_status* dlrt_model_info_op(const dlrt_model_info* info, size_t index, const char** domain,
                                           const char** op_type, int64_t* count);
/* metadata_props entry `index` (sorted by key). */
DLRT_C_API dlrt_status* dlrt_model_info_metadata(const dlrt_model_info* info, size_t index, const char** key,
                                                 const char** value);

/* -------------------------------------------------------- node placement */

/* Where one node of a session's model was placed (dlrt/placement.h). The
 * strings are owned by the session. */
typedef struct dlrt_node_placement {
  size_t struct_size;     /* sizeof(dlrt_node_placement), set by the caller */
  const char* node;       /* the node's name ("" where the model names none) */
  const char* op_type;    /* with its domain ("com.microsoft.QAttention") when not ai.onnx */
  int32_t partition;      /* index into the placement report's partitions */
  const char* cpu_reason; /* why it stayed on the CPU although an accelerator was asked for ("" otherwise) */
} dlrt_node_placement;
#define DLRT_NODE_PLACEMENT_INIT {sizeof(dlrt_node_placement), NULL, NULL, 0, NULL}

/* Nodes of the session's planned graph (after optimisation), in plan order. Thread-safe. */
DLRT_C_API size_t dlrt_session_node_count(const dlrt_session* session);
DLRT_C_API dlrt_status* dlrt_session_node_placement(const dlrt_session* session, size_t index,
                                                    dlrt_node_placement* info);

/* -------------------------------------------------------------- embedder */

/* A sentence-transformers / Hugging Face ONNX export folder (model.onnx,
 * tokenizer.json or vocab.txt, optional pooling config) as text -> vector.
 * Created once, then thread-safe: any number of threads may embed at once. */
typedef struct dlrt_embedder dlrt_embedder;

typedef struct dlrt_embedder_options {
  size_t struct_size;  /* sizeof(dlrt_embedder_options), set by the caller */
  const char* device;  /* device spec as for sessions; NULL or "": DLRT_DEVICE, else auto */
  int32_t strict;      /* non-zero: fallbacks are errors */
  int32_t threads;     /* CPU threads, 0: one per core; at most 4096 */
  size_t max_length;   /* tokens per text incl. [CLS]/[SEP]; 0: the folder's, capped by the model */
} dlrt_embedder_options;
#define DLRT_EMBEDDER_OPTIONS_INIT {sizeof(dlrt_embedder_options), NULL, 0, 0, 0}

/* Loads `model_dir` and creates its session. `options` may be NULL (defaults).
 * Errors: DLRT_NOT_FOUND (no folder, model or vocabulary), DLRT_INVALID_MODEL,
 * DLRT_UNSUPPORTED (a tokenizer dlrt does not implement; a folder of a kind
 * without one dense vector per text: sparse, multi_vector, cross_encoder,
 * llm_reranker, its message naming "(kind KIND)"), and those of
 * dlrt_session_create. Thread-safe. */
DLRT_C_API dlrt_status* dlrt_embedder_create(const char* model_dir, const dlrt_embedder_options* options,
                                             dlrt_embedder** out);
DLRT_C_API void dlrt_embedder_free(dlrt_embedder** embedder);
/* Length of each vector. Thread-safe. */
DLRT_C_API size_t dlrt_embedder_dimension(const dlrt_embedder* embedder);
/* Tokens per text, [CLS]/[SEP] included (longer texts are truncated). */
DLRT_C_API size_t dlrt_embedder_max_length(const dlrt_embedder* embedder);
/* 1 when the folder's pipeline L2-normalises the vectors. */
DLRT_C_API int dlrt_embedder_normalizes(const dlrt_embedder* embedder);
/* Embeds `count` texts as one batch into `vectors`, row i = text i, which
 * must hold count * dlrt_embedder_dimension() floats (`capacity` says how
 * many it holds). `lengths` may be NULL (texts are NUL-terminated), else
 * lengths[i] bytes of texts[i] are read. `report` as for runs (may be NULL).
 * Errors: DLRT_INVALID_ARGUMENT (NULL text, too small a buffer, invalid
 * UTF-8), and those of a run. Thread-safe. */
DLRT_C_API dlrt_status* dlrt_embedder_embed(const dlrt_embedder* embedder, const char* const* texts,
                                            const size_t* lengths, size_t count, float* vectors,
                                            size_t capacity, dlrt_run_report** report);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLRT_DLRT_C_H_ */
