/* A C program built outside dlrt's tree against an installed dlrt (CMake
 * package or pkg-config): runs MODEL on zeros through the C API and prints
 * what it got and where it ran. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlrt/dlrt_c.h"

static int fail(dlrt_status* st) {
  fprintf(stderr, "%s: %s\n", dlrt_status_code_name(dlrt_status_get_code(st)), dlrt_status_get_message(st));
  dlrt_status_free(&st);
  return 1;
}

int main(int argc, char** argv) {
  dlrt_session* session = NULL;
  dlrt_status* st;
  dlrt_value_info in = DLRT_VALUE_INFO_INIT;
  dlrt_partition_info part = DLRT_PARTITION_INFO_INIT;
  dlrt_tensor* input = NULL;
  dlrt_tensor* output = NULL;
  dlrt_run_report* report = NULL;
  int64_t shape[8];
  size_t i;
  int rc = 1;

  if (argc != 2) {
    fprintf(stderr, "usage: c_consumer MODEL\n");
    return 2;
  }
  if (strcmp(dlrt_version(), DLRT_VERSION_STRING) != 0) {
    fprintf(stderr, "library %s, headers %s\n", dlrt_version(), DLRT_VERSION_STRING);
    return 1;
  }
  if ((st = dlrt_session_create(argv[1], NULL, &session))) return fail(st);
  if (dlrt_session_input_count(session) != 1 || dlrt_session_output_count(session) != 1) {
    fprintf(stderr, "expected a model with one input and one output\n");
    goto done;
  }
  if ((st = dlrt_session_input_info(session, 0, &in))) {
    rc = fail(st);
    goto done;
  }
  if (in.dtype != DLRT_DTYPE_FLOAT32 || in.rank > 8) {
    fprintf(stderr, "input %s is not a float32 tensor of rank <= 8\n", in.name);
    goto done;
  }
  for (i = 0; i < in.rank; ++i) shape[i] = in.shape[i] < 0 ? 1 : in.shape[i]; /* dynamic dims: 1 */
  if ((st = dlrt_tensor_create(DLRT_DTYPE_FLOAT32, shape, in.rank, NULL, 0, &input)) ||
      (st = dlrt_session_run(session, &in.name, (const dlrt_tensor* const*)&input, 1, &output, 1, &report)) ||
      (st = dlrt_run_report_partition(report, 0, &part))) {
    rc = fail(st);
    goto done;
  }
  printf("dlrt %s (C API %u): 1 output of %lld values, ran on %s\n", dlrt_version(), dlrt_c_api_version(),
         (long long)dlrt_tensor_element_count(output), part.device);
  rc = 0;
done:
  dlrt_run_report_free(&report);
  dlrt_tensor_free(&output);
  dlrt_tensor_free(&input);
  dlrt_session_free(&session);
  return rc;
}
