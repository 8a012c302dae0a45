/* dlrt_session_options_set_outputs from a C11 program: a session over some of
 * a model's outputs runs only what they need, and the options' errors.
 *
 *   capi_outputs_test TWO_TOWERS_ONNX
 *
 * TWO_TOWERS_ONNX (tests/models/make_test_models.py): inputs x, z float32 [3];
 * outputs a = Relu(x), b = Neg(z), c = a + b. Exit status 0 when every check
 * passes. */
#include <stdio.h>
#include <string.h>

#include "dlrt/dlrt_c.h"

#include "capi_check.h"

static dlrt_tensor* vector3(const float* values) {
  const int64_t shape[1] = {3};
  dlrt_tensor* t = NULL;
  OK(dlrt_tensor_create(DLRT_DTYPE_FLOAT32, shape, 1, values, 3 * sizeof(float), &t));
  return t;
}

static const char* value_name(const dlrt_session* s, size_t index, int output) {
  dlrt_value_info info = DLRT_VALUE_INFO_INIT;
  dlrt_status* st = output ? dlrt_session_output_info(s, index, &info) : dlrt_session_input_info(s, index, &info);
  CHECK(st == NULL);
  dlrt_status_free(&st);
  return info.name ? info.name : "";
}

/* outputs = {"b"}: one output, and z the one input a run needs. */
static void test_one_output(const char* path) {
  const char* wanted[1] = {"b"};
  const float z[3] = {1.0f, -2.0f, 3.0f};
  const char* names[1] = {"z"};
  dlrt_session_options* options = NULL;
  dlrt_session* session = NULL;
  dlrt_tensor* inputs[1] = {NULL};
  dlrt_tensor* outputs[1] = {NULL};
  OK(dlrt_session_options_create(&options));
  OK(dlrt_session_options_set_outputs(options, wanted, 1));
  OK(dlrt_session_create(path, options, &session));
  dlrt_session_options_free(&options);
  if (!session) return;
  CHECK(dlrt_session_output_count(session) == 1);
  CHECK(strcmp(value_name(session, 0, 1), "b") == 0);
  CHECK(dlrt_session_input_count(session) == 1); /* x feeds only a and c */
  CHECK(strcmp(value_name(session, 0, 0), "z") == 0);
  inputs[0] = vector3(z);
  OK(dlrt_session_run(session, names, (const dlrt_tensor* const*)inputs, 1, outputs, 1, NULL));
  if (outputs[0]) {
    const float* b = (const float*)dlrt_tensor_const_data(outputs[0]);
    CHECK(dlrt_tensor_element_count(outputs[0]) == 3);
    CHECK(b && b[0] == -1.0f && b[1] == 2.0f && b[2] == -3.0f);
  }
  dlrt_tensor_free(&outputs[0]);
  dlrt_tensor_free(&inputs[0]);
  dlrt_session_free(&session);
}

/* {"c", "a"}: kept in the model's order; count 0 afterwards selects all again. */
static void test_order_and_reset(const char* path) {
  const char* wanted[2] = {"c", "a"};
  dlrt_session_options* options = NULL;
  dlrt_session* session = NULL;
  OK(dlrt_session_options_create(&options));
  OK(dlrt_session_options_set_outputs(options, wanted, 2));
  OK(dlrt_session_create(path, options, &session));
  if (session) {
    CHECK(dlrt_session_output_count(session) == 2);
    CHECK(strcmp(value_name(session, 0, 1), "a") == 0);
    CHECK(strcmp(value_name(session, 1, 1), "c") == 0);
    CHECK(dlrt_session_input_count(session) == 2);
  }
  dlrt_session_free(&session);
  OK(dlrt_session_options_set_outputs(options, NULL, 0));
  OK(dlrt_session_create(path, options, &session));
  CHECK(session && dlrt_session_output_count(session) == 3);
  dlrt_session_free(&session);
  dlrt_session_options_free(&options);
}

static void test_errors(const char* path) {
  const char* unknown[2] = {"b", "logits"};
  const char* empty[1] = {""};
  const char* null_name[1] = {NULL};
  dlrt_session_options* options = NULL;
  dlrt_session* session = NULL;
  OK(dlrt_session_options_create(&options));
  FAILS(dlrt_session_options_set_outputs(NULL, unknown, 1), DLRT_INVALID_ARGUMENT, "options is NULL");
  FAILS(dlrt_session_options_set_outputs(options, NULL, 1), DLRT_INVALID_ARGUMENT, "names is NULL");
  FAILS(dlrt_session_options_set_outputs(options, empty, 1), DLRT_INVALID_ARGUMENT, "names[0] is NULL or empty");
  FAILS(dlrt_session_options_set_outputs(options, null_name, 1), DLRT_INVALID_ARGUMENT, "names[0] is NULL");
  OK(dlrt_session_options_set_outputs(options, unknown, 2));
  FAILS(dlrt_session_create(path, options, &session), DLRT_INVALID_ARGUMENT,
        "\"logits\", which is not an output of the model (its outputs: a, b, c)");
  CHECK(session == NULL);
  dlrt_session_options_free(&options);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s TWO_TOWERS_ONNX\n", argv[0]);
    return 2;
  }
  CHECK(dlrt_c_api_version() >= 4u);
  test_one_output(argv[1]);
  test_order_and_reset(argv[1]);
  test_errors(argv[1]);
  printf("capi_outputs_test: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
