/* dlrt plugin ABI, version 1: how an out-of-tree backend plugs into dlrt.
 *
 * A plugin is a shared library, libdlrt_plugin_<name>.so, exporting every function declared
 * below with C linkage. dlrt loads it at run time (never links it) when DLRT_PLUGINS names it,
 * from $DLRT_PLUGIN_<NAME>_LIB (a file or a folder) or the loader path, first calls
 * dlrt_plugin_api_version() and refuses a plugin built for another version, then resolves all
 * other functions at once (a plugin missing one is not used, and dlrt says which is missing).
 *
 * Rules for every function:
 *  - Plain C: no C++ exception, longjmp or abort may cross the boundary.
 *  - Functions that can fail return DLRT_PLUGIN_OK (0) or a DLRT_PLUGIN_ERR_* code, and on
 *    failure write a NUL-terminated message (what failed and, where there is one, the fix) into
 *    the caller's `err` buffer of `err_size` bytes, truncating as needed (err may be NULL when
 *    err_size is 0).
 *  - Ownership is symmetric: whoever allocates frees. Memory the plugin allocates (compiled
 *    blobs) is freed by the caller with dlrt_plugin_free(); memory dlrt allocates (output
 *    tensors, through the allocator passed to execute) is dlrt's. Strings and arrays passed in
 *    are valid only for the duration of the call.
 *  - Every struct crossing the boundary starts with `api_version`: the writer sets it to the
 *    DLRT_PLUGIN_API_VERSION it was built with, so either side can tell an older layout.
 *  - Thread-safety: every function may be called from any thread, concurrently, except that
 *    dlrt_plugin_destroy() is called once per handle after every execute on it has returned.
 *  - Device names are the plugin's own ("0", "NPU"); dlrt passes them back unchanged.
 */
#ifndef DLRT_PLUGIN_H_
#define DLRT_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DLRT_PLUGIN_API_VERSION 1u

/* Error codes (int). dlrt maps them to its StatusCode in brackets. */
#define DLRT_PLUGIN_OK 0
#define DLRT_PLUGIN_ERR_INVALID_ARGUMENT 1   /* a bad argument from dlrt [kInvalidArgument] */
#define DLRT_PLUGIN_ERR_UNSUPPORTED 2        /* an op/dtype/shape it cannot take [kUnsupported] */
#define DLRT_PLUGIN_ERR_DEVICE_UNAVAILABLE 3 /* runtime/device missing, or a virtual device [kDeviceUnavailable] */
#define DLRT_PLUGIN_ERR_BACKEND 4            /* the vendor runtime failed; stale/foreign blob [kBackendError] */
#define DLRT_PLUGIN_ERR_OUT_OF_MEMORY 5      /* [kOutOfMemory] */

/* Device types; the values equal dlrt::DeviceType. */
#define DLRT_PLUGIN_DEVICE_CPU 0
#define DLRT_PLUGIN_DEVICE_GPU 1
#define DLRT_PLUGIN_DEVICE_NPU 2
#define DLRT_PLUGIN_DEVICE_ACCELERATOR 3

/* One device the plugin can drive (or only compile for, when is_virtual). Written by the
 * plugin into caller-provided memory; strings are NUL-terminated, "" when unknown. */
typedef struct dlrt_plugin_device {
  uint32_t api_version;
  char name[64];            /* the plugin's name for it: "0", "NPU", "V" */
  int32_t type;             /* DLRT_PLUGIN_DEVICE_* */
  int32_t is_virtual;       /* 1: compiles, never executes (ahead-of-time targets) */
  char vendor[64];          /* "Intel" */
  char pci_bus_id[32];      /* "0000:00:02.0": pairs it with the hardware dlrt discovered */
  char driver_version[64];
  uint64_t memory_bytes;    /* device-local memory, 0 when unknown */
} dlrt_plugin_device;

/* One node dlrt asks about. dtypes are dlrt::DType values (= ONNX TensorProto.DataType),
 * 0 where unknown or for an omitted optional input. */
typedef struct dlrt_plugin_op_query {
  uint32_t api_version;
  const char* op_type;      /* "MatMul" */
  const char* domain;       /* "" for the default ONNX domain */
  int64_t opset;            /* the model's opset for `domain` */
  int32_t num_inputs;
  const int32_t* input_dtypes;
  int32_t num_outputs;
  const int32_t* output_dtypes;
} dlrt_plugin_op_query;

/* A dense, row-major host tensor. */
typedef struct dlrt_plugin_tensor {
  uint32_t api_version;
  int32_t dtype;            /* dlrt::DType value; strings (8) never cross the boundary */
  int32_t rank;
  const int64_t* dims;      /* `rank` entries */
  void* data;               /* inputs: read-only to the plugin */
  uint64_t nbytes;
} dlrt_plugin_tensor;

/* How execute gets memory for its outputs, from dlrt, once it knows their shapes. allocate()
 * returns zeroed, 64-byte aligned memory for output `index` of dtype/rank/dims, owned by dlrt
 * (the plugin must not free it and must not touch it after execute returns), or NULL on failure
 * (bad index, allocated twice, bad shape, out of memory). Call it exactly once per output. */
typedef struct dlrt_plugin_output_allocator {
  uint32_t api_version;
  void* context;
  void* (*allocate)(void* context, int32_t index, int32_t dtype, int32_t rank, const int64_t* dims);
} dlrt_plugin_output_allocator;

/* DLRT_PLUGIN_API_VERSION as the plugin was built. Called first, before anything else. */
uint32_t dlrt_plugin_api_version(void);

/* The plugin's name (lowercase, as in libdlrt_plugin_<name>.so); static storage. */
const char* dlrt_plugin_name(void);

/* Whether the plugin's own runtime can be used; may load it. DLRT_PLUGIN_OK when it can, with
 * its version in `version` (NUL-terminated, may be ""); otherwise an error code and the reason
 * and fix in `err`. dlrt calls it once per load attempt. */
int dlrt_plugin_is_available(char* version, size_t version_size, char* err, size_t err_size);

/* Writes up to `capacity` devices into `devices` and the total number into *count (call with
 * capacity 0 to count). */
int dlrt_plugin_devices(dlrt_plugin_device* devices, size_t capacity, size_t* count, char* err, size_t err_size);

/* DLRT_PLUGIN_OK when `device` can take the node `query` describes, else
 * DLRT_PLUGIN_ERR_UNSUPPORTED with the reason in `err`. No side effects. */
int dlrt_plugin_supports(const char* device, const dlrt_plugin_op_query* query, char* err, size_t err_size);

/* Compiles a subgraph, given as a serialized ONNX ModelProto (its graph inputs are the tensors
 * flowing in, its initializers the constants), for `device` (virtual devices too). `options` is
 * "key=value;key=value" (may be ""). On success *blob and *blob_size describe plugin-allocated
 * memory the caller frees with dlrt_plugin_free(). */
int dlrt_plugin_compile(const char* device, const void* onnx, size_t onnx_size, const char* options,
                        void** blob, size_t* blob_size, char* err, size_t err_size);

/* Frees memory the plugin handed out (blobs). NULL is ignored. */
void dlrt_plugin_free(void* ptr);

/* Makes an executable from a blob (which the plugin must copy if it keeps it). Fails with
 * DLRT_PLUGIN_ERR_DEVICE_UNAVAILABLE on a virtual device and DLRT_PLUGIN_ERR_BACKEND on a blob
 * it cannot use. *handle is freed by dlrt_plugin_destroy(). */
int dlrt_plugin_init(const char* device, const void* blob, size_t blob_size, const char* options,
                     void** handle, char* err, size_t err_size);

/* Largest number of concurrent execute() calls `handle` takes; 0 = no limit. */
int32_t dlrt_plugin_max_concurrent_runs(void* handle);

/* Runs `handle` on host inputs (in subgraph-input order) and writes each output (in
 * subgraph-output order) into memory from `outputs`, exactly once per output. */
int dlrt_plugin_execute(void* handle, const dlrt_plugin_tensor* inputs, size_t num_inputs,
                        const dlrt_plugin_output_allocator* outputs, size_t num_outputs, char* err,
                        size_t err_size);

/* Frees everything dlrt_plugin_init() made for `handle`. */
void dlrt_plugin_destroy(void* handle);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* DLRT_PLUGIN_H_ */
