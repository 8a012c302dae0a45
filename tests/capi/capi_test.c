/* The C API (include/dlrt/dlrt_c.h) from a C11 program: every function, its
 * error paths, ownership (run under AddressSanitizer, which also reports
 * leaks) and concurrent runs. Built with -std=c11 -pedantic -Werror.
 *
 *   capi_test MLP_ONNX MLP_INPUT_NPY MLP_EXPECTED_NPY EMBED_FOLDER EMBED_EXPECTED_JSON
 *
 * MLP_ONNX takes x float32 [2, 4] and gives probs float32 [2, 3] (the .npy
 * files hold both); EMBED_FOLDER is a sentence-transformers folder (mean
 * pooling, normalised) and EMBED_EXPECTED_JSON its numpy reference
 * (tests/embed/make_tiny_model.py). Exit status 0 when every check passes.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlrt/dlrt_c.h"

#include "capi_check.h"

/* ------------------------------------------------------------- file helpers */

static char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  char* buf = NULL;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
      buf[n] = '\0';
      *size = (size_t)n;
    } else {
      free(buf);
      buf = NULL;
    }
  }
  fclose(f);
  return buf;
}

/* The float32 data of a little-endian, C-order .npy file (version 1 or 2);
 * *count elements. NULL when the file is not one. */
static float* read_npy_f32(const char* path, size_t* count) {
  size_t size = 0, header_len, offset;
  char* buf = read_file(path, &size);
  float* out = NULL;
  if (!buf || size < 12 || memcmp(buf, "\x93NUMPY", 6) != 0) goto done;
  if (buf[6] == 1) {
    header_len = (unsigned char)buf[8] | ((size_t)(unsigned char)buf[9] << 8);
    offset = 10;
  } else {
    header_len = (unsigned char)buf[8] | ((size_t)(unsigned char)buf[9] << 8) |
                 ((size_t)(unsigned char)buf[10] << 16) | ((size_t)(unsigned char)buf[11] << 24);
    offset = 12;
  }
  if (offset + header_len > size || !strstr(buf + offset, "'<f4'") || strstr(buf + offset, "'fortran_order': True"))
    goto done;
  offset += header_len;
  *count = (size - offset) / sizeof(float);
  out = malloc(*count * sizeof(float) + 1);
  if (out) memcpy(out, buf + offset, *count * sizeof(float));
done:
  free(buf);
  return out;
}

/* The `index`-th element of the JSON array under "key" in `json`: a string
 * without escapes (copied into out) ... */
static int json_string_at(const char* json, const char* key, int index, char* out, size_t cap) {
  char pat[64];
  const char* p;
  int i;
  snprintf(pat, sizeof pat, "\"%s\": [", key);
  p = strstr(json, pat);
  if (!p) return 0;
  p += strlen(pat);
  for (i = 0; i <= index; ++i) {
    const char* end;
    p = strchr(p, '"');
    if (!p) return 0;
    end = strchr(p + 1, '"');
    if (!end) return 0;
    if (i == index) {
      size_t n = (size_t)(end - p - 1);
      if (n >= cap) return 0;
      memcpy(out, p + 1, n);
      out[n] = '\0';
      return 1;
    }
    p = end + 1;
  }
  return 0;
}

/* ... or a row of numbers of an array of arrays (up to cap values). */
static size_t json_row_at(const char* json, const char* key, int index, double* out, size_t cap) {
  char pat[64];
  const char* p;
  size_t n = 0;
  int i;
  snprintf(pat, sizeof pat, "\"%s\": [", key);
  p = strstr(json, pat);
  if (!p) return 0;
  p += strlen(pat);
  for (i = 0; i <= index; ++i) {
    p = strchr(p, '[');
    if (!p) return 0;
    ++p;
  }
  while (n < cap && *p && *p != ']') {
    char* end;
    out[n] = strtod(p, &end);
    if (end == p) return 0;
    ++n;
    p = end;
    while (*p == ',' || *p == ' ' || *p == '\n') ++p;
  }
  return n;
}

/* ------------------------------------------------------------------- tests */

static void test_basics(void) {
  dlrt_status* none = NULL;
  CHECK(strcmp(dlrt_version(), DLRT_VERSION_STRING) == 0);
  CHECK(dlrt_c_api_version() == DLRT_C_API_VERSION);
  CHECK(dlrt_status_get_code(NULL) == DLRT_OK);
  CHECK(strcmp(dlrt_status_get_message(NULL), "") == 0);
  CHECK(strcmp(dlrt_status_code_name(DLRT_INVALID_MODEL), "InvalidModel") == 0);
  CHECK(strcmp(dlrt_status_code_name(DLRT_DEVICE_UNAVAILABLE), "DeviceUnavailable") == 0);
  CHECK(strcmp(dlrt_status_code_name((dlrt_status_code)12345), "Unknown") == 0);
  dlrt_status_free(NULL);
  dlrt_status_free(&none);
  CHECK(strcmp(dlrt_dtype_name(DLRT_DTYPE_FLOAT32), "float32") == 0);
  CHECK(strcmp(dlrt_dtype_name(DLRT_DTYPE_BFLOAT16), "bfloat16") == 0);
  CHECK(strcmp(dlrt_dtype_name((dlrt_dtype)99), "undefined") == 0);
  CHECK(dlrt_dtype_size(DLRT_DTYPE_INT64) == 8);
  CHECK(dlrt_dtype_size(DLRT_DTYPE_FLOAT16) == 2);
  CHECK(dlrt_dtype_size(DLRT_DTYPE_STRING) == 0);
  CHECK(dlrt_dtype_size((dlrt_dtype)99) == 0);
}

static void test_tensors(void) {
  const int64_t shape[2] = {2, 3};
  const int64_t bad_shape[2] = {2, -1};
  const int64_t huge[3] = {INT64_MAX / 2, 4, 4};
  float values[6] = {1, 2, 3, 4, 5, 6};
  const char* strs[3] = {"a", "", "three"};
  dlrt_tensor* t = NULL;
  const char* s = NULL;
  size_t len = 0;

  OK(dlrt_tensor_create(DLRT_DTYPE_FLOAT32, shape, 2, values, sizeof values, &t));
  CHECK(t != NULL);
  CHECK(dlrt_tensor_dtype(t) == DLRT_DTYPE_FLOAT32);
  CHECK(dlrt_tensor_rank(t) == 2);
  CHECK(dlrt_tensor_shape(t)[0] == 2 && dlrt_tensor_shape(t)[1] == 3);
  CHECK(dlrt_tensor_element_count(t) == 6);
  CHECK(dlrt_tensor_nbytes(t) == sizeof values);
  CHECK(dlrt_tensor_data(t) != (void*)values); /* a copy */
  CHECK(((const float*)dlrt_tensor_const_data(t))[5] == 6.0f);
  CHECK(((uintptr_t)dlrt_tensor_data(t)) % 64 == 0);
  FAILS(dlrt_tensor_string_at(t, 0, &s, &len), DLRT_INVALID_ARGUMENT, "not string");
  dlrt_tensor_free(&t);
  CHECK(t == NULL);
  dlrt_tensor_free(&t); /* freeing twice through the same variable is harmless */
  dlrt_tensor_free(NULL);

  /* zero-filled without data; rank 0 with a NULL shape */
  OK(dlrt_tensor_create(DLRT_DTYPE_INT64, NULL, 0, NULL, 0, &t));
  CHECK(dlrt_tensor_rank(t) == 0 && dlrt_tensor_shape(t) == NULL && dlrt_tensor_element_count(t) == 1);
  CHECK(*(const int64_t*)dlrt_tensor_const_data(t) == 0);
  dlrt_tensor_free(&t);

  /* a view writes through to the caller's memory */
  OK(dlrt_tensor_create_view(DLRT_DTYPE_FLOAT32, shape, 2, values, sizeof values, &t));
  CHECK(dlrt_tensor_data(t) == (void*)values);
  dlrt_tensor_free(&t);
  CHECK(values[0] == 1.0f);

  /* an empty view without data */
  {
    const int64_t empty[2] = {0, 3};
    OK(dlrt_tensor_create_view(DLRT_DTYPE_FLOAT32, empty, 2, NULL, 0, &t));
    CHECK(dlrt_tensor_element_count(t) == 0 && dlrt_tensor_data(t) == NULL);
    dlrt_tensor_free(&t);
  }

  /* strings */
  {
    const int64_t three[1] = {3};
    OK(dlrt_tensor_create_strings(three, 1, strs, 3, &t));
    CHECK(dlrt_tensor_dtype(t) == DLRT_DTYPE_STRING);
    CHECK(dlrt_tensor_nbytes(t) == 0 && dlrt_tensor_data(t) == NULL);
    OK(dlrt_tensor_string_at(t, 2, &s, &len));
    CHECK(len == 5 && strcmp(s, "three") == 0);
    OK(dlrt_tensor_string_at(t, 1, &s, &len));
    CHECK(len == 0 && strcmp(s, "") == 0);
    FAILS(dlrt_tensor_string_at(t, 3, &s, &len), DLRT_OUT_OF_RANGE, "index 3");
    FAILS(dlrt_tensor_string_at(t, -1, &s, &len), DLRT_OUT_OF_RANGE, "index -1");
    FAILS(dlrt_tensor_string_at(t, 0, NULL, &len), DLRT_INVALID_ARGUMENT, "NULL");
    FAILS(dlrt_tensor_string_at(NULL, 0, &s, &len), DLRT_INVALID_ARGUMENT, "NULL");
    dlrt_tensor_free(&t);
    FAILS(dlrt_tensor_create_strings(three, 1, strs, 2, &t), DLRT_INVALID_ARGUMENT, "count is 2");
    FAILS(dlrt_tensor_create_strings(three, 1, NULL, 3, &t), DLRT_INVALID_ARGUMENT, "strings is NULL");
    {
      const char* with_null[3] = {"a", NULL, "c"};
      FAILS(dlrt_tensor_create_strings(three, 1, with_null, 3, &t), DLRT_INVALID_ARGUMENT, "strings[1]");
    }
    FAILS(dlrt_tensor_create_strings(NULL, 1, strs, 3, &t), DLRT_INVALID_ARGUMENT, "shape is NULL");
    FAILS(dlrt_tensor_create_strings(three, 1, strs, 3, NULL), DLRT_INVALID_ARGUMENT, "out is NULL");
    CHECK(t == NULL);
  }

  /* errors */
  FAILS(dlrt_tensor_create(DLRT_DTYPE_FLOAT32, shape, 2, values, 4, &t), DLRT_INVALID_ARGUMENT, "nbytes is 4");
  CHECK(t == NULL);
  FAILS(dlrt_tensor_create(DLRT_DTYPE_FLOAT32, bad_shape, 2, NULL, 0, &t), DLRT_INVALID_ARGUMENT, "negative");
  FAILS(dlrt_tensor_create(DLRT_DTYPE_FLOAT32, huge, 3, NULL, 0, &t), DLRT_INVALID_ARGUMENT, "");
  FAILS(dlrt_tensor_create((dlrt_dtype)99, shape, 2, NULL, 0, &t), DLRT_INVALID_ARGUMENT, "not a dlrt_dtype");
  FAILS(dlrt_tensor_create(DLRT_DTYPE_UNDEFINED, shape, 2, NULL, 0, &t), DLRT_INVALID_ARGUMENT, "not a dlrt_dtype");
  FAILS(dlrt_tensor_create(DLRT_DTYPE_STRING, shape, 2, NULL, 0, &t), DLRT_INVALID_ARGUMENT, "create_strings");
  FAILS(dlrt_tensor_create(DLRT_DTYPE_FLOAT32, NULL, 2, NULL, 0, &t), DLRT_INVALID_ARGUMENT, "shape is NULL");
  FAILS(dlrt_tensor_create(DLRT_DTYPE_FLOAT32, shape, 2, NULL, 0, NULL), DLRT_INVALID_ARGUMENT, "out is NULL");
  FAILS(dlrt_tensor_create_view(DLRT_DTYPE_FLOAT32, shape, 2, NULL, sizeof values, &t), DLRT_INVALID_ARGUMENT,
        "data is NULL");
  FAILS(dlrt_tensor_create_view(DLRT_DTYPE_FLOAT32, shape, 2, values, 0, &t), DLRT_INVALID_ARGUMENT, "nbytes is 0");
  CHECK(t == NULL);

  /* accessors on NULL */
  CHECK(dlrt_tensor_dtype(NULL) == DLRT_DTYPE_UNDEFINED && dlrt_tensor_rank(NULL) == 0);
  CHECK(dlrt_tensor_shape(NULL) == NULL && dlrt_tensor_element_count(NULL) == 0 && dlrt_tensor_nbytes(NULL) == 0);
  CHECK(dlrt_tensor_data(NULL) == NULL && dlrt_tensor_const_data(NULL) == NULL);
}

static void test_options(void) {
  dlrt_session_options* o = NULL;
  OK(dlrt_session_options_create(&o));
  OK(dlrt_session_options_set_threads(o, 1));
  OK(dlrt_session_options_set_device(o, "cpu"));
  OK(dlrt_session_options_set_device(o, NULL));
  OK(dlrt_session_options_set_strict(o, 1));
  OK(dlrt_session_options_set_optimize(o, 0));
  OK(dlrt_session_options_set_warm_start(o, 1));
  OK(dlrt_session_options_set_cpu_precision(o, "f32"));
  OK(dlrt_session_options_set_cpu_precision(o, NULL));
  OK(dlrt_session_options_set_max_tensor_bytes(o, (uint64_t)64 << 20));
  OK(dlrt_session_options_set_max_tensor_bytes(o, 0));
  OK(dlrt_session_options_set_backend_option(o, "performance_hint", "LATENCY"));
  OK(dlrt_session_options_set_backend_option(o, "performance_hint", NULL));
  FAILS(dlrt_session_options_set_threads(o, -1), DLRT_INVALID_ARGUMENT, "threads is -1");
  /* the core's bound (dlrt::kMaxThreads), refused here rather than by a session that would start them */
  OK(dlrt_session_options_set_threads(o, 4096));
  FAILS(dlrt_session_options_set_threads(o, 4097), DLRT_INVALID_ARGUMENT, "threads is 4097; use 0 (one per core) to 4096");
  FAILS(dlrt_session_options_set_threads(o, 100000), DLRT_INVALID_ARGUMENT, "threads is 100000");
  FAILS(dlrt_session_options_set_backend_option(o, "", "x"), DLRT_INVALID_ARGUMENT, "key");
  FAILS(dlrt_session_options_set_backend_option(o, NULL, "x"), DLRT_INVALID_ARGUMENT, "key");
  FAILS(dlrt_session_options_set_threads(NULL, 1), DLRT_INVALID_ARGUMENT, "options is NULL");
  FAILS(dlrt_session_options_set_device(NULL, "cpu"), DLRT_INVALID_ARGUMENT, "options is NULL");
  FAILS(dlrt_session_options_set_strict(NULL, 1), DLRT_INVALID_ARGUMENT, "options is NULL");
  FAILS(dlrt_session_options_set_optimize(NULL, 1), DLRT_INVALID_ARGUMENT, "options is NULL");
  FAILS(dlrt_session_options_set_warm_start(NULL, 1), DLRT_INVALID_ARGUMENT, "options is NULL");
  FAILS(dlrt_session_options_set_cpu_precision(NULL, "f32"), DLRT_INVALID_ARGUMENT, "options is NULL");
  /* checked at the call, as the header says (issue 80) */
  OK(dlrt_session_options_set_cpu_precision(o, "bf16x3"));
  OK(dlrt_session_options_set_cpu_precision(o, "bf16"));
  OK(dlrt_session_options_set_cpu_precision(o, "auto"));
  OK(dlrt_session_options_set_cpu_precision(o, ""));
  FAILS(dlrt_session_options_set_cpu_precision(o, "junk"), DLRT_INVALID_ARGUMENT, "precision is 'junk'");
  FAILS(dlrt_session_options_set_cpu_precision(o, "F32"), DLRT_INVALID_ARGUMENT, "precision is 'F32'");
  FAILS(dlrt_session_options_set_max_tensor_bytes(NULL, 1), DLRT_INVALID_ARGUMENT, "options is NULL");
  FAILS(dlrt_session_options_set_backend_option(NULL, "k", "v"), DLRT_INVALID_ARGUMENT, "options is NULL");
  FAILS(dlrt_session_options_create(NULL), DLRT_INVALID_ARGUMENT, "out is NULL");
  dlrt_session_options_free(&o);
  CHECK(o == NULL);
  dlrt_session_options_free(&o);
  dlrt_session_options_free(NULL);
}

static int close_to(const float* got, const float* want, size_t n, float tol) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (!(fabsf(got[i] - want[i]) <= tol * (1.0f + fabsf(want[i])))) return 0;
  return 1;
}

static void check_report(const dlrt_run_report* report, int ran) {
  dlrt_partition_info p = DLRT_PARTITION_INFO_INIT;
  dlrt_partition_info tiny = DLRT_PARTITION_INFO_INIT;
  CHECK(dlrt_run_report_partition_count(report) >= 1);
  OK(dlrt_run_report_partition(report, 0, &p));
  CHECK(p.backend && strcmp(p.backend, "cpu") == 0);
  CHECK(p.device && strcmp(p.device, "cpu:0") == 0);
  CHECK(p.node_count > 0 && p.degraded == 0 && p.reason && p.precision);
  CHECK(strncmp(p.precision, "f32", 3) == 0);
  CHECK(p.vector_isa && (strcmp(p.vector_isa, "avx512") == 0 || strcmp(p.vector_isa, "avx2") == 0 ||
                         strcmp(p.vector_isa, "generic") == 0));
  CHECK(ran ? dlrt_run_report_run_ms(report) > 0 : dlrt_run_report_run_ms(report) == 0);
  FAILS(dlrt_run_report_partition(report, 99, &p), DLRT_OUT_OF_RANGE, "index 99");
  FAILS(dlrt_run_report_partition(report, 0, NULL), DLRT_INVALID_ARGUMENT, "NULL");
  FAILS(dlrt_run_report_partition(NULL, 0, &p), DLRT_INVALID_ARGUMENT, "NULL");
  tiny.struct_size = 4;
  FAILS(dlrt_run_report_partition(report, 0, &tiny), DLRT_INVALID_ARGUMENT, "struct_size");
  /* an older, shorter struct: only the fields that fit are written */
  tiny.struct_size = sizeof(size_t) + 2 * sizeof(const char*);
  tiny.node_count = -7;
  OK(dlrt_run_report_partition(report, 0, &tiny));
  CHECK(tiny.device && strcmp(tiny.device, "cpu:0") == 0 && tiny.node_count == -7);
  CHECK(dlrt_run_report_partition_count(NULL) == 0 && dlrt_run_report_run_ms(NULL) == 0);
}

struct run_job {
  const dlrt_session* session;
  const dlrt_tensor* input;
  const float* expected;
  int iterations;
  int failures;
};

static void* run_many(void* arg) {
  struct run_job* job = arg;
  const char* names[1] = {"x"};
  int i;
  for (i = 0; i < job->iterations; ++i) {
    dlrt_tensor* out[1] = {NULL};
    dlrt_status* st = dlrt_session_run(job->session, names, &job->input, 1, out, 1, NULL);
    if (st || !close_to(dlrt_tensor_const_data(out[0]), job->expected, 6, 1e-4f)) ++job->failures;
    dlrt_status_free(&st);
    dlrt_tensor_free(&out[0]);
  }
  return NULL;
}

static void test_session(const char* model, const char* input_npy, const char* expected_npy) {
  size_t n_in = 0, n_want = 0, bytes_size = 0;
  float* x = read_npy_f32(input_npy, &n_in);
  float* want = read_npy_f32(expected_npy, &n_want);
  char* bytes = read_file(model, &bytes_size);
  const int64_t x_shape[2] = {2, 4};
  const int64_t y_shape[2] = {2, 3};
  const int64_t wrong_shape[2] = {3, 4};
  const char* in_names[1] = {"x"};
  dlrt_session_options* opts = NULL;
  dlrt_session* s = NULL;
  dlrt_session* from_bytes = NULL;
  dlrt_tensor* input = NULL;
  dlrt_tensor* out[2] = {NULL, NULL};
  dlrt_run_report* report = NULL;
  dlrt_value_info info = DLRT_VALUE_INFO_INIT;

  CHECK(x && n_in == 8 && want && n_want == 6 && bytes);
  if (!x || n_in != 8 || !want || n_want != 6 || !bytes) goto done;

  /* creation errors */
  FAILS(dlrt_session_create(NULL, NULL, &s), DLRT_INVALID_ARGUMENT, "path is NULL");
  FAILS(dlrt_session_create(model, NULL, NULL), DLRT_INVALID_ARGUMENT, "out is NULL");
  FAILS(dlrt_session_create("/nonexistent/model.onnx", NULL, &s), DLRT_IO_ERROR, "/nonexistent/model.onnx");
  FAILS(dlrt_session_create_from_bytes("not a model", 11, NULL, NULL, &s), DLRT_INVALID_MODEL, "");
  FAILS(dlrt_session_create_from_bytes(NULL, 5, NULL, NULL, &s), DLRT_INVALID_ARGUMENT, "bytes is NULL");
  FAILS(dlrt_session_create_from_bytes(bytes, bytes_size, NULL, NULL, NULL), DLRT_INVALID_ARGUMENT, "out is NULL");
  OK(dlrt_session_options_create(&opts));
  FAILS(dlrt_session_options_set_cpu_precision(opts, "f64"), DLRT_INVALID_ARGUMENT, "precision is 'f64'");
  OK(dlrt_session_options_set_device(opts, "nosuchdevice"));
  FAILS(dlrt_session_create(model, opts, &s), DLRT_INVALID_ARGUMENT, "nosuchdevice");
  CHECK(s == NULL);
  /* a device after ':' is an index (CUDA's are) or a name; none of these names one (issue 80) */
  OK(dlrt_session_options_set_device(opts, "cuda:-1"));
  FAILS(dlrt_session_create(model, opts, &s), DLRT_INVALID_ARGUMENT, "malformed device 'cuda:-1'");
  OK(dlrt_session_options_set_device(opts, "cuda:abc"));
  FAILS(dlrt_session_create(model, opts, &s), DLRT_INVALID_ARGUMENT, "names its devices by index");
  OK(dlrt_session_options_set_device(opts, "cuda:99999999999999999999"));
  FAILS(dlrt_session_create(model, opts, &s), DLRT_INVALID_ARGUMENT, "at most 2147483647");
  CHECK(s == NULL);

  /* from a path with options, and from bytes with defaults */
  OK(dlrt_session_options_set_device(opts, "cpu"));
  OK(dlrt_session_options_set_threads(opts, 2));
  OK(dlrt_session_create(model, opts, &s));
  OK(dlrt_session_create_from_bytes(bytes, bytes_size, NULL, NULL, &from_bytes));
  dlrt_session_options_free(&opts);  /* the session does not need it any more */
  if (!s || !from_bytes) goto done;

  CHECK(dlrt_session_input_count(s) == 1 && dlrt_session_output_count(s) == 1);
  OK(dlrt_session_input_info(s, 0, &info));
  CHECK(strcmp(info.name, "x") == 0 && info.dtype == DLRT_DTYPE_FLOAT32 && info.rank == 2);
  CHECK(info.shape[0] == 2 && info.shape[1] == 4 && info.is_tensor == 1);
  CHECK(info.dim_names && strcmp(info.dim_names[0], "") == 0);
  OK(dlrt_session_output_info(s, 0, &info));
  CHECK(strcmp(info.name, "probs") == 0 && info.rank == 2 && info.shape[1] == 3);
  FAILS(dlrt_session_input_info(s, 1, &info), DLRT_OUT_OF_RANGE, "index 1");
  FAILS(dlrt_session_output_info(s, 5, &info), DLRT_OUT_OF_RANGE, "index 5");
  FAILS(dlrt_session_input_info(s, 0, NULL), DLRT_INVALID_ARGUMENT, "info is NULL");
  FAILS(dlrt_session_input_info(NULL, 0, &info), DLRT_INVALID_ARGUMENT, "session is NULL");
  FAILS(dlrt_session_output_info(NULL, 0, &info), DLRT_INVALID_ARGUMENT, "session is NULL");
  info.struct_size = 1;
  FAILS(dlrt_session_input_info(s, 0, &info), DLRT_INVALID_ARGUMENT, "struct_size");
  CHECK(dlrt_session_input_count(NULL) == 0 && dlrt_session_output_count(NULL) == 0);

  /* run: returned tensors, with a report */
  OK(dlrt_tensor_create_view(DLRT_DTYPE_FLOAT32, x_shape, 2, x, 8 * sizeof(float), &input));
  OK(dlrt_session_run(s, in_names, (const dlrt_tensor* const*)&input, 1, out, 2, &report));
  CHECK(out[0] && out[1] == NULL);
  if (out[0]) {
    CHECK(dlrt_tensor_dtype(out[0]) == DLRT_DTYPE_FLOAT32 && dlrt_tensor_element_count(out[0]) == 6);
    CHECK(close_to(dlrt_tensor_const_data(out[0]), want, 6, 1e-4f));
  }
  if (report) check_report(report, 1);
  dlrt_run_report_free(&report);
  dlrt_run_report_free(&report);
  dlrt_tensor_free(&out[0]);
  OK(dlrt_session_run(from_bytes, in_names, (const dlrt_tensor* const*)&input, 1, out, 1, NULL));
  if (out[0]) CHECK(close_to(dlrt_tensor_const_data(out[0]), want, 6, 1e-4f));
  dlrt_tensor_free(&out[0]);

  /* run errors */
  {
    const char* unknown[1] = {"y"};
    const char* twice[2] = {"x", "x"};
    const dlrt_tensor* two[2] = {input, input};
    const dlrt_tensor* null_input[1] = {NULL};
    dlrt_tensor* wrong = NULL;
    dlrt_tensor* ints = NULL;
    FAILS(dlrt_session_run(s, unknown, (const dlrt_tensor* const*)&input, 1, out, 1, NULL), DLRT_INVALID_ARGUMENT,
          "'y'");
    FAILS(dlrt_session_run(s, NULL, NULL, 0, out, 1, NULL), DLRT_INVALID_ARGUMENT, "x");
    FAILS(dlrt_session_run(s, twice, two, 2, out, 1, NULL), DLRT_INVALID_ARGUMENT, "given twice");
    FAILS(dlrt_session_run(s, in_names, null_input, 1, out, 1, NULL), DLRT_INVALID_ARGUMENT, "inputs[0]");
    FAILS(dlrt_session_run(s, in_names, NULL, 1, out, 1, NULL), DLRT_INVALID_ARGUMENT, "must not be NULL");
    FAILS(dlrt_session_run(s, in_names, (const dlrt_tensor* const*)&input, 1, out, 0, NULL), DLRT_INVALID_ARGUMENT,
          "output_capacity is 0");
    FAILS(dlrt_session_run(s, in_names, (const dlrt_tensor* const*)&input, 1, NULL, 1, NULL), DLRT_INVALID_ARGUMENT,
          "outputs is NULL");
    FAILS(dlrt_session_run(NULL, in_names, (const dlrt_tensor* const*)&input, 1, out, 1, &report),
          DLRT_INVALID_ARGUMENT, "session is NULL");
    CHECK(report == NULL);
    OK(dlrt_tensor_create(DLRT_DTYPE_FLOAT32, wrong_shape, 2, NULL, 0, &wrong));
    FAILS(dlrt_session_run(s, in_names, (const dlrt_tensor* const*)&wrong, 1, out, 1, NULL), DLRT_INVALID_ARGUMENT,
          "");
    OK(dlrt_tensor_create(DLRT_DTYPE_INT32, x_shape, 2, NULL, 0, &ints));
    FAILS(dlrt_session_run(s, in_names, (const dlrt_tensor* const*)&ints, 1, out, 1, NULL), DLRT_INVALID_ARGUMENT,
          "int32");
    CHECK(out[0] == NULL);
    dlrt_tensor_free(&wrong);
    dlrt_tensor_free(&ints);
  }

  /* run_into the caller's buffer, twice (the second run writes in place) */
  {
    float y[6] = {0};
    float y_small[3] = {0};
    const int64_t small_shape[2] = {1, 3};
    const char* out_names[1] = {"probs"};
    const char* bad_names[1] = {"nope"};
    dlrt_tensor* y_view = NULL;
    dlrt_tensor* small = NULL;
    int round;
    OK(dlrt_tensor_create_view(DLRT_DTYPE_FLOAT32, y_shape, 2, y, sizeof y, &y_view));
    for (round = 0; round < 2; ++round) {
      memset(y, 0, sizeof y);
      OK(dlrt_session_run_into(s, in_names, (const dlrt_tensor* const*)&input, 1, out_names, &y_view, 1,
                               round ? &report : NULL));
      CHECK(close_to(y, want, 6, 1e-4f));
    }
    CHECK(report != NULL);
    dlrt_run_report_free(&report);
    FAILS(dlrt_session_run_into(s, in_names, (const dlrt_tensor* const*)&input, 1, bad_names, &y_view, 1, NULL),
          DLRT_INVALID_ARGUMENT, "no output named 'nope'");
    OK(dlrt_tensor_create_view(DLRT_DTYPE_FLOAT32, small_shape, 2, y_small, sizeof y_small, &small));
    FAILS(dlrt_session_run_into(s, in_names, (const dlrt_tensor* const*)&input, 1, out_names, &small, 1, NULL),
          DLRT_INVALID_ARGUMENT, "[1, 3]");
    {
      dlrt_tensor* both[2] = {y_view, y_view};
      const char* twice[2] = {"probs", "probs"};
      dlrt_tensor* null_out[1] = {NULL};
      FAILS(dlrt_session_run_into(s, in_names, (const dlrt_tensor* const*)&input, 1, twice, both, 2, NULL),
            DLRT_INVALID_ARGUMENT, "named twice");
      FAILS(dlrt_session_run_into(s, in_names, (const dlrt_tensor* const*)&input, 1, out_names, null_out, 1, NULL),
            DLRT_INVALID_ARGUMENT, "outputs[0]");
      FAILS(dlrt_session_run_into(s, in_names, (const dlrt_tensor* const*)&input, 1, out_names, NULL, 1, NULL),
            DLRT_INVALID_ARGUMENT, "must not be NULL");
      FAILS(dlrt_session_run_into(NULL, in_names, (const dlrt_tensor* const*)&input, 1, out_names, &y_view, 1, NULL),
            DLRT_INVALID_ARGUMENT, "session is NULL");
    }
    /* no outputs named: the run still happens, nothing is written */
    OK(dlrt_session_run_into(s, in_names, (const dlrt_tensor* const*)&input, 1, NULL, NULL, 0, NULL));
    dlrt_tensor_free(&small);
    dlrt_tensor_free(&y_view);
  }

  /* run bounds: an expired timeout and a cancelled token stop the run with
   * DLRT_CANCELLED (checked before the first node already); the session stays usable */
  {
    dlrt_run_options ro = DLRT_RUN_OPTIONS_INIT;
    dlrt_cancel_token* token = NULL;
    ro.timeout_ms = 1e-6;
    FAILS(dlrt_session_run_with_options(s, in_names, (const dlrt_tensor* const*)&input, 1, out, 1, &ro, NULL),
          DLRT_CANCELLED, "timeout");
    CHECK(out[0] == NULL);
    OK(dlrt_cancel_token_create(&token));
    ro.timeout_ms = 0;
    ro.cancel = token;
    OK(dlrt_session_run_with_options(s, in_names, (const dlrt_tensor* const*)&input, 1, out, 1, &ro, NULL));
    if (out[0]) CHECK(close_to(dlrt_tensor_const_data(out[0]), want, 6, 1e-4f));
    dlrt_tensor_free(&out[0]);
    dlrt_cancel_token_cancel(token);
    dlrt_cancel_token_cancel(NULL);
    FAILS(dlrt_session_run_with_options(s, in_names, (const dlrt_tensor* const*)&input, 1, out, 1, &ro, NULL),
          DLRT_CANCELLED, "cancelled");
    OK(dlrt_session_run_with_options(s, in_names, (const dlrt_tensor* const*)&input, 1, out, 1, NULL, NULL));
    dlrt_tensor_free(&out[0]);
    ro.timeout_ms = -1;
    FAILS(dlrt_session_run_with_options(s, in_names, (const dlrt_tensor* const*)&input, 1, out, 1, &ro, NULL),
          DLRT_INVALID_ARGUMENT, "negative");
    ro.struct_size = 4;
    FAILS(dlrt_session_run_with_options(s, in_names, (const dlrt_tensor* const*)&input, 1, out, 1, &ro, NULL),
          DLRT_INVALID_ARGUMENT, "struct_size");
    FAILS(dlrt_cancel_token_create(NULL), DLRT_INVALID_ARGUMENT, "out is NULL");
    CHECK(strcmp(dlrt_status_code_name(DLRT_CANCELLED), "Cancelled") == 0);
    dlrt_cancel_token_free(&token);
    CHECK(token == NULL);
    dlrt_cancel_token_free(&token);
  }

  /* the placement */
  OK(dlrt_session_placement(s, &report));
  if (report) check_report(report, 0);
  dlrt_run_report_free(&report);
  FAILS(dlrt_session_placement(NULL, &report), DLRT_INVALID_ARGUMENT, "session is NULL");
  FAILS(dlrt_session_placement(s, NULL), DLRT_INVALID_ARGUMENT, "out is NULL");

  /* one session, four threads at once */
  {
    pthread_t threads[4];
    struct run_job jobs[4];
    int i, failures = 0;
    for (i = 0; i < 4; ++i) {
      jobs[i].session = s;
      jobs[i].input = input;
      jobs[i].expected = want;
      jobs[i].iterations = 50;
      jobs[i].failures = 0;
      CHECK(pthread_create(&threads[i], NULL, run_many, &jobs[i]) == 0);
    }
    for (i = 0; i < 4; ++i) {
      pthread_join(threads[i], NULL);
      failures += jobs[i].failures;
    }
    CHECK(failures == 0);
  }

done:
  dlrt_tensor_free(&input);
  dlrt_session_free(&s);
  CHECK(s == NULL);
  dlrt_session_free(&s);
  dlrt_session_free(&from_bytes);
  dlrt_session_free(NULL);
  dlrt_session_options_free(&opts);
  free(x);
  free(want);
  free(bytes);
}

static void test_devices(void) {
  dlrt_device_list* list = NULL;
  dlrt_device_info d = DLRT_DEVICE_INFO_INIT;
  const char *key = NULL, *value = NULL;
  size_t i;
  OK(dlrt_devices_discover(&list));
  CHECK(dlrt_device_list_count(list) >= 1);
  OK(dlrt_device_list_get(list, 0, &d));
  CHECK(strcmp(d.id, "cpu:0") == 0 && strcmp(d.type, "cpu") == 0 && d.vendor && d.name);
  CHECK(d.metadata_count >= 1);
  for (i = 0; i < d.metadata_count; ++i) {
    OK(dlrt_device_list_metadata(list, 0, i, &key, &value));
    CHECK(key && value && dlrt_device_list_find_metadata(list, 0, key) == value);
  }
  CHECK(dlrt_device_list_find_metadata(list, 0, "cores") != NULL);
  CHECK(dlrt_device_list_find_metadata(list, 0, "no such key") == NULL);
  CHECK(dlrt_device_list_find_metadata(list, 999, "cores") == NULL);
  CHECK(dlrt_device_list_find_metadata(NULL, 0, "cores") == NULL);
  FAILS(dlrt_device_list_metadata(list, 0, d.metadata_count, &key, &value), DLRT_OUT_OF_RANGE, "metadata index");
  FAILS(dlrt_device_list_metadata(list, 999, 0, &key, &value), DLRT_OUT_OF_RANGE, "index 999");
  FAILS(dlrt_device_list_metadata(list, 0, 0, NULL, &value), DLRT_INVALID_ARGUMENT, "NULL");
  FAILS(dlrt_device_list_get(list, 999, &d), DLRT_OUT_OF_RANGE, "index 999");
  FAILS(dlrt_device_list_get(NULL, 0, &d), DLRT_INVALID_ARGUMENT, "list is NULL");
  FAILS(dlrt_device_list_get(list, 0, NULL), DLRT_INVALID_ARGUMENT, "info is NULL");
  d.struct_size = 2;
  FAILS(dlrt_device_list_get(list, 0, &d), DLRT_INVALID_ARGUMENT, "struct_size");
  FAILS(dlrt_devices_discover(NULL), DLRT_INVALID_ARGUMENT, "out is NULL");
  CHECK(dlrt_device_list_count(NULL) == 0);
  dlrt_device_list_free(&list);
  CHECK(list == NULL);
  dlrt_device_list_free(&list);
}

static void test_memory_info(void) {
  dlrt_memory_info m = DLRT_MEMORY_INFO_INIT;
  dlrt_memory_info again = DLRT_MEMORY_INFO_INIT;
  struct {
    size_t struct_size;
    uint64_t max_tensor_bytes;
  } old = {sizeof old, 0};
  OK(dlrt_memory_info_get(&m));
  CHECK(m.physical_bytes > 0 && m.available_bytes > 0 && m.available_bytes <= m.physical_bytes);
  CHECK(m.max_tensor_bytes > 0);
  CHECK(m.max_tensor_source && m.max_tensor_source[0] && m.available_source && m.available_source[0]);
  CHECK(m.describe && m.describe[0]);
  if (!getenv("DLRT_MAX_TENSOR_MB")) CHECK(m.max_tensor_bytes <= m.available_bytes);
  /* Read once per process: the same figures and the same strings. */
  OK(dlrt_memory_info_get(&again));
  CHECK(again.max_tensor_bytes == m.max_tensor_bytes && again.describe == m.describe);
  /* A caller built against a header with only the first field gets that field. */
  OK(dlrt_memory_info_get((dlrt_memory_info*)(void*)&old));
  CHECK(old.max_tensor_bytes == m.max_tensor_bytes);
  FAILS(dlrt_memory_info_get(NULL), DLRT_INVALID_ARGUMENT, "info is NULL");
  m.struct_size = 4;
  FAILS(dlrt_memory_info_get(&m), DLRT_INVALID_ARGUMENT, "struct_size");
}

static void test_embedder(const char* folder, const char* expected_json) {
  size_t json_size = 0;
  char* json = read_file(expected_json, &json_size);
  char text[256];
  double row[16];
  size_t dim_ref = 0, i;
  dlrt_embedder* e = NULL;
  dlrt_embedder_options o = DLRT_EMBEDDER_OPTIONS_INIT;
  dlrt_run_report* report = NULL;
  float vectors[32];
  const char* texts[2];
  size_t lengths[2];

  CHECK(json != NULL);
  if (!json) return;
  /* texts[2] and its reference mean-pooled vector, normalised as the folder asks */
  CHECK(json_string_at(json, "texts", 2, text, sizeof text));
  dim_ref = json_row_at(json, "mean", 2, row, 16);
  CHECK(dim_ref == 8);

  FAILS(dlrt_embedder_create("/nonexistent/folder", NULL, &e), DLRT_NOT_FOUND, "/nonexistent/folder");
  FAILS(dlrt_embedder_create(NULL, NULL, &e), DLRT_INVALID_ARGUMENT, "model_dir is NULL");
  FAILS(dlrt_embedder_create(folder, NULL, NULL), DLRT_INVALID_ARGUMENT, "out is NULL");
  o.struct_size = 3;
  FAILS(dlrt_embedder_create(folder, &o, &e), DLRT_INVALID_ARGUMENT, "struct_size");
  o.struct_size = sizeof o;
  o.threads = -2;
  FAILS(dlrt_embedder_create(folder, &o, &e), DLRT_INVALID_ARGUMENT, "threads");
  o.threads = 100000;
  FAILS(dlrt_embedder_create(folder, &o, &e), DLRT_INVALID_ARGUMENT, "threads is 100000");
  o.threads = 1;
  o.device = "cpu";
  OK(dlrt_embedder_create(folder, &o, &e));
  if (!e) goto done;
  CHECK(dlrt_embedder_dimension(e) == dim_ref);
  CHECK(dlrt_embedder_max_length(e) > 2);
  CHECK(dlrt_embedder_normalizes(e) == 1);

  texts[0] = text;
  texts[1] = "the cat sat on the mat. and more text after it";
  lengths[0] = strlen(text);
  lengths[1] = strlen("the cat sat on the mat."); /* lengths cut the second text */
  OK(dlrt_embedder_embed(e, texts, lengths, 2, vectors, 32, &report));
  {
    double norm = 0;
    float want[16];
    for (i = 0; i < dim_ref; ++i) norm += row[i] * row[i];
    for (i = 0; i < dim_ref; ++i) want[i] = (float)(row[i] / sqrt(norm));
    CHECK(close_to(vectors, want, dim_ref, 1e-4f));
  }
  CHECK(report && dlrt_run_report_partition_count(report) >= 1);
  dlrt_run_report_free(&report);
  {
    /* the cut second text equals texts[0] of the reference */
    float alone[8];
    const char* first[1] = {"the cat sat on the mat."};
    OK(dlrt_embedder_embed(e, first, NULL, 1, alone, 8, NULL));
    CHECK(close_to(vectors + dim_ref, alone, dim_ref, 1e-5f));
  }
  /* errors and edge cases */
  OK(dlrt_embedder_embed(e, NULL, NULL, 0, NULL, 0, NULL));
  FAILS(dlrt_embedder_embed(e, texts, NULL, 2, vectors, 15, NULL), DLRT_INVALID_ARGUMENT, "holds 15 floats");
  FAILS(dlrt_embedder_embed(e, texts, NULL, 2, NULL, 32, NULL), DLRT_INVALID_ARGUMENT, "vectors is NULL");
  FAILS(dlrt_embedder_embed(e, NULL, NULL, 2, vectors, 32, NULL), DLRT_INVALID_ARGUMENT, "texts is NULL");
  {
    const char* with_null[2] = {"a", NULL};
    FAILS(dlrt_embedder_embed(e, with_null, NULL, 2, vectors, 32, &report), DLRT_INVALID_ARGUMENT, "texts[1]");
    CHECK(report == NULL);
  }
  {
    /* invalid UTF-8 is an error, as the header says (the tokenizer alone would read U+FFFD): a stray
       byte, a truncated sequence (cut by lengths), an overlong form, a surrogate, past U+10FFFF */
    const char* bad[5] = {"ok \xff\xfe", "caf\xc3\xa9", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"};
    const size_t bad_lengths[2] = {3, 4};
    const char* one[1];
    FAILS(dlrt_embedder_embed(e, bad, NULL, 1, vectors, 32, NULL), DLRT_INVALID_ARGUMENT,
          "texts[0] is not valid UTF-8 (byte 3)");
    FAILS(dlrt_embedder_embed(e, bad, bad_lengths, 2, vectors, 32, NULL), DLRT_INVALID_ARGUMENT,
          "texts[1] is not valid UTF-8 (byte 3)");
    for (i = 2; i < 5; ++i) {
      one[0] = bad[i];
      FAILS(dlrt_embedder_embed(e, one, NULL, 1, vectors, 32, NULL), DLRT_INVALID_ARGUMENT,
            "texts[0] is not valid UTF-8 (byte 0)");
    }
    one[0] = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"; /* two-, three- and four-byte forms */
    OK(dlrt_embedder_embed(e, one, NULL, 1, vectors, 32, NULL));
  }
  FAILS(dlrt_embedder_embed(NULL, texts, NULL, 2, vectors, 32, NULL), DLRT_INVALID_ARGUMENT, "embedder is NULL");
  CHECK(dlrt_embedder_dimension(NULL) == 0 && dlrt_embedder_max_length(NULL) == 0);
  CHECK(dlrt_embedder_normalizes(NULL) == 0);
done:
  dlrt_embedder_free(&e);
  CHECK(e == NULL);
  dlrt_embedder_free(&e);
  dlrt_embedder_free(NULL);
  free(json);
}

/* A folder of a kind the embedder cannot serve (an LLM reranker, a
   cross-encoder, a ColBERT model) is refused at create with a message naming
   its kind (`part`), never opened to return its logits as vectors. */
static void test_embedder_refuses_kind(const char* folder, const char* part) {
  dlrt_embedder* e = NULL;
  dlrt_embedder_options o = DLRT_EMBEDDER_OPTIONS_INIT;
  o.threads = 1;
  o.device = "cpu";
  FAILS(dlrt_embedder_create(folder, &o, &e), DLRT_UNSUPPORTED, part);
  CHECK(e == NULL);
  dlrt_embedder_free(&e);
}

int main(int argc, char** argv) {
  int i;
  if (argc < 6 || argc % 2 != 0) {
    fprintf(stderr,
            "usage: %s MLP_ONNX MLP_INPUT_NPY MLP_EXPECTED_NPY EMBED_FOLDER EMBED_EXPECTED_JSON"
            " [REFUSED_FOLDER MESSAGE_PART]...\n",
            argv[0]);
    return 2;
  }
  test_basics();
  test_tensors();
  test_options();
  test_session(argv[1], argv[2], argv[3]);
  test_devices();
  test_memory_info();
  test_embedder(argv[4], argv[5]);
  for (i = 6; i + 1 < argc; i += 2) test_embedder_refuses_kind(argv[i], argv[i + 1]);
  printf("capi_test: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
