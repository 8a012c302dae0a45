// What the C API's files share (src/capi/*.cpp): the handle types more than
// one of them uses, statuses made from messages and dlrt::Status, the guard
// that turns exceptions into statuses, versioned-struct checks.
#pragma once

#include <cstddef>
#include <exception>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "dlrt/dlrt_c.h"
#include "dlrt/model_info.h"
#include "dlrt/session.h"
#include "dlrt/status.h"

struct dlrt_status {
  dlrt_status_code code;
  std::string message;
};

struct dlrt_run_report {
  dlrt::RunReport report;
};

namespace dlrt::capi {

inline dlrt_status* make_status(dlrt_status_code code, std::string message) {
  // A status must be returned even when memory is short: fall back to one
  // without a message rather than throw out of the C API.
  try {
    return new dlrt_status{code, std::move(message)};
  } catch (...) {
    return new (std::nothrow) dlrt_status{code, std::string()};
  }
}

inline dlrt_status* invalid(const char* function, const std::string& what) {
  return make_status(DLRT_INVALID_ARGUMENT, std::string(function) + ": " + what);
}

inline dlrt_status* from_status(const dlrt::Status& s) {
  if (s.ok()) return nullptr;
  return make_status(static_cast<dlrt_status_code>(s.code()), s.message());
}

// Runs `body` (returning dlrt_status*), turning exceptions into statuses.
template <typename F>
dlrt_status* guarded(const char* function, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return make_status(DLRT_OUT_OF_MEMORY, std::string(function) + ": out of memory");
  } catch (const std::exception& e) {
    return make_status(DLRT_INTERNAL, std::string(function) + ": " + e.what());
  } catch (...) {
    return make_status(DLRT_INTERNAL, std::string(function) + ": unknown exception");
  }
}

// True when the caller-sized struct *s has room for its member `field`.
#define DLRT_FITS(s, field) \
  ((s)->struct_size >= offsetof(std::remove_cvref_t<decltype(*(s))>, field) + sizeof((s)->field))

// A new dlrt_model_info holding a copy of `info` (dlrt_c_introspect.cpp).
dlrt_model_info* new_model_info(const dlrt::ModelInfo& info);

// Frees *handle and sets it to null (dlrt_X_free(&h)); null and *null are fine.
template <typename T>
void free_handle(T** handle) noexcept {
  if (!handle) return;
  delete *handle;
  *handle = nullptr;
}

}  // namespace dlrt::capi
