/* The C API's introspection (include/dlrt/dlrt_c.h: backends, model info,
 * node placement) from a C11 program, with error paths and ownership (run
 * under AddressSanitizer, which also reports leaks). Built with -std=c11
 * -pedantic -Werror.
 *
 *   capi_introspect_test MLP_ONNX
 *
 * MLP_ONNX is tests/models/make_test_models.py's mlp: x float32 [2, 4] ->
 * MatMul, Add, Relu, MatMul, Add, Softmax -> probs float32 [2, 3], 67
 * parameters, producer "dlrt-test-models". Exit status 0 when every check passes.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dlrt/dlrt_c.h"

#include "capi_check.h"

static void test_backends(void) {
  dlrt_backend_list* list = NULL;
  dlrt_backend_info b = DLRT_BACKEND_INFO_INIT;
  dlrt_backend_device_info d = DLRT_BACKEND_DEVICE_INFO_INIT;
  const char *key = NULL, *value = NULL, *tried = NULL;
  size_t i, j;
  /* Only the cpu backend: asking all would probe OpenVINO, which dlrt loads with
   * RTLD_DEEPBIND, and AddressSanitizer aborts on that flag (the C++ and Python
   * tests list every backend). */
  OK(dlrt_backends_list("cpu", 0, &list));
  CHECK(dlrt_backend_list_count(list) == 1);
  /* cpu first, built in, with its device */
  OK(dlrt_backend_list_get(list, 0, &b));
  CHECK(strcmp(b.name, "cpu") == 0 && b.available == 1 && b.device_count >= 1);
  OK(dlrt_backend_list_device(list, 0, 0, &d));
  CHECK(strncmp(d.spec, "cpu:", 4) == 0 && strcmp(d.backend, "cpu") == 0 && strcmp(d.type, "cpu") == 0);
  CHECK(d.is_virtual == 0 && d.hardware_id != NULL);
  for (i = 0; i < d.metadata_count; ++i) {
    OK(dlrt_backend_list_device_metadata(list, 0, 0, i, &key, &value));
    CHECK(key && value);
  }
  /* every backend listed: an unavailable one says why and offers no device */
  for (i = 0; i < dlrt_backend_list_count(list); ++i) {
    OK(dlrt_backend_list_get(list, i, &b));
    CHECK(b.name && b.name[0] && b.reason && b.fix && b.library_path && b.version && b.compatibility);
    if (!b.available) CHECK(b.reason[0] != '\0' && b.device_count == 0);
    for (j = 0; j < b.tried_count; ++j) {
      OK(dlrt_backend_list_tried(list, i, j, &tried));
      CHECK(tried && tried[0]);
    }
    FAILS(dlrt_backend_list_tried(list, i, b.tried_count, &tried), DLRT_OUT_OF_RANGE, "tried index");
    FAILS(dlrt_backend_list_device(list, i, b.device_count, &d), DLRT_OUT_OF_RANGE, "device index");
  }
  FAILS(dlrt_backend_list_get(list, 999, &b), DLRT_OUT_OF_RANGE, "backend index 999");
  FAILS(dlrt_backend_list_get(NULL, 0, &b), DLRT_INVALID_ARGUMENT, "list is NULL");
  FAILS(dlrt_backend_list_get(list, 0, NULL), DLRT_INVALID_ARGUMENT, "info is NULL");
  b.struct_size = 2;
  FAILS(dlrt_backend_list_get(list, 0, &b), DLRT_INVALID_ARGUMENT, "struct_size");
  FAILS(dlrt_backend_list_device_metadata(list, 0, 0, 0, NULL, &value), DLRT_INVALID_ARGUMENT, "NULL");
  FAILS(dlrt_backends_list("cpu", 0, NULL), DLRT_INVALID_ARGUMENT, "out is NULL");
  CHECK(dlrt_backend_list_count(NULL) == 0);
  dlrt_backend_list_free(&list);
  CHECK(list == NULL);
  dlrt_backend_list_free(&list);
  OK(dlrt_backends_list("cpu", 1, &list)); /* refresh: asks again */
  CHECK(dlrt_backend_list_count(list) == 1);
  dlrt_backend_list_free(&list);
  OK(dlrt_backends_list("no-such-backend", 0, &list));
  CHECK(list != NULL && dlrt_backend_list_count(list) == 0);
  dlrt_backend_list_free(&list);
}

/* The mlp's fields, from a file or from a session. */
static void check_mlp_info(const dlrt_model_info* info) {
  dlrt_model_summary s = DLRT_MODEL_SUMMARY_INIT;
  dlrt_model_value_info v = DLRT_MODEL_VALUE_INFO_INIT;
  const char *domain = NULL, *op = NULL;
  int64_t version = 0, count = 0, total = 0, matmuls = 0;
  size_t i;
  OK(dlrt_model_info_summary(info, &s));
  CHECK(s.ir_version > 0 && strcmp(s.producer_name, "dlrt-test-models") == 0 && strcmp(s.graph_name, "mlp") == 0);
  CHECK(s.input_count == 1 && s.output_count == 1 && s.opset_count == 1 && s.metadata_count == 0);
  CHECK(s.node_count == 6 && s.subgraph_count == 0 && s.op_count == 4);
  CHECK(s.parameter_count == 4 * 8 + 8 + 8 * 3 + 3 && s.parameter_bytes == 4 * s.parameter_count);
  OK(dlrt_model_info_input(info, 0, &v));
  CHECK(strcmp(v.name, "x") == 0 && strcmp(v.kind, "tensor") == 0 && v.dtype == DLRT_DTYPE_FLOAT32);
  CHECK(v.key_dtype == DLRT_DTYPE_UNDEFINED && v.has_shape == 1 && v.rank == 2 && v.shape[0] == 2 && v.shape[1] == 4);
  CHECK(v.dim_names && strcmp(v.dim_names[0], "") == 0 && strcmp(v.type, "tensor(float)") == 0);
  OK(dlrt_model_info_output(info, 0, &v));
  CHECK(strcmp(v.name, "probs") == 0 && v.rank == 2 && v.shape[1] == 3);
  OK(dlrt_model_info_opset(info, 0, &domain, &version));
  CHECK(strcmp(domain, "") == 0 && version >= 7);
  for (i = 0; i < s.op_count; ++i) {
    OK(dlrt_model_info_op(info, i, &domain, &op, &count));
    total += count;
    if (strcmp(op, "MatMul") == 0) matmuls = count;
  }
  CHECK(total == 6 && matmuls == 2);
  FAILS(dlrt_model_info_input(info, 1, &v), DLRT_OUT_OF_RANGE, "input index 1");
  FAILS(dlrt_model_info_op(info, s.op_count, &domain, &op, &count), DLRT_OUT_OF_RANGE, "op index");
  FAILS(dlrt_model_info_metadata(info, 0, &domain, &op), DLRT_OUT_OF_RANGE, "metadata index 0");
  FAILS(dlrt_model_info_opset(info, 0, NULL, &version), DLRT_INVALID_ARGUMENT, "NULL");
  v.struct_size = 3;
  FAILS(dlrt_model_info_input(info, 0, &v), DLRT_INVALID_ARGUMENT, "struct_size");
}

static void test_model_info(const char* model) {
  dlrt_model_info* info = NULL;
  dlrt_session* session = NULL;
  dlrt_node_placement n = DLRT_NODE_PLACEMENT_INIT;
  dlrt_run_report* placement = NULL;
  size_t i;
  OK(dlrt_model_info_read(model, &info));
  if (info) check_mlp_info(info);
  dlrt_model_info_free(&info);
  CHECK(info == NULL);
  dlrt_model_info_free(&info);
  FAILS(dlrt_model_info_read("/nonexistent/model.onnx", &info), DLRT_IO_ERROR, "model.onnx");
  CHECK(info == NULL);
  FAILS(dlrt_model_info_read(NULL, &info), DLRT_INVALID_ARGUMENT, "path is NULL");
  FAILS(dlrt_model_info_read(model, NULL), DLRT_INVALID_ARGUMENT, "out is NULL");

  OK(dlrt_session_create(model, NULL, &session));
  if (!session) return;
  OK(dlrt_session_model_info(session, &info));
  if (info) check_mlp_info(info); /* as imported, before optimisation fuses anything */
  dlrt_model_info_free(&info);
  FAILS(dlrt_session_model_info(NULL, &info), DLRT_INVALID_ARGUMENT, "session is NULL");

  OK(dlrt_session_placement(session, &placement));
  CHECK(dlrt_session_node_count(session) >= 1);
  for (i = 0; i < dlrt_session_node_count(session); ++i) {
    OK(dlrt_session_node_placement(session, i, &n));
    CHECK(n.node && n.op_type && n.op_type[0] && n.cpu_reason);
    CHECK(n.partition >= 0 && (size_t)n.partition < dlrt_run_report_partition_count(placement));
  }
  FAILS(dlrt_session_node_placement(session, dlrt_session_node_count(session), &n), DLRT_OUT_OF_RANGE, "index");
  FAILS(dlrt_session_node_placement(session, 0, NULL), DLRT_INVALID_ARGUMENT, "NULL");
  CHECK(dlrt_session_node_count(NULL) == 0);
  dlrt_run_report_free(&placement);
  dlrt_session_free(&session);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MLP_ONNX\n", argv[0]);
    return 2;
  }
  CHECK(dlrt_c_api_version() >= 3u);
  test_backends();
  test_model_info(argv[1]);
  printf("capi_introspect_test: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
