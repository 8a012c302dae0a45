/* The checks both C API tests use (capi_test.c, capi_introspect_test.c):
 * CHECK(cond), OK(status expression) and FAILS(expr, code, message part),
 * counted in g_checks / g_failures. Included once per test program. */
#ifndef DLRT_TESTS_CAPI_CHECK_H
#define DLRT_TESTS_CAPI_CHECK_H

#include <stdio.h>
#include <string.h>

#include "dlrt/dlrt_c.h"

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    ++g_checks;                                                                \
    if (!(cond)) {                                                             \
      ++g_failures;                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* Checks that `expr` (a dlrt_status*) succeeded; prints the message if not. */
#define OK(expr)                                                                               \
  do {                                                                                         \
    dlrt_status* st_ = (expr);                                                                 \
    ++g_checks;                                                                                \
    if (st_) {                                                                                 \
      ++g_failures;                                                                            \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #expr,                 \
              dlrt_status_code_name(dlrt_status_get_code(st_)), dlrt_status_get_message(st_)); \
      dlrt_status_free(&st_);                                                                  \
    }                                                                                          \
  } while (0)

/* Checks that `expr` failed with `code` and a message containing `part`. */
#define FAILS(expr, code, part) expect_failure((expr), (code), (part), #expr, __LINE__)

static void expect_failure(dlrt_status* st, dlrt_status_code code, const char* part, const char* what, int line) {
  ++g_checks;
  if (!st) {
    ++g_failures;
    fprintf(stderr, "%s:%d: %s succeeded, expected %s\n", __FILE__, line, what, dlrt_status_code_name(code));
    return;
  }
  if (dlrt_status_get_code(st) != code || !strstr(dlrt_status_get_message(st), part)) {
    ++g_failures;
    fprintf(stderr, "%s:%d: %s gave %s \"%s\", expected %s with \"%s\"\n", __FILE__, line, what,
            dlrt_status_code_name(dlrt_status_get_code(st)), dlrt_status_get_message(st), dlrt_status_code_name(code),
            part);
  }
  dlrt_status_free(&st);
  CHECK(st == NULL); /* dlrt_status_free clears the pointer it was given */
}

#endif
