// Errors are values: every fallible call returns a Status or a Result<T>.
// Nothing in dlrt throws across its API; messages say what failed and, where
// there is one, the fix.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "dlrt/export.h"

namespace dlrt {

// Grouped by range, as a caller usually only needs the group.
enum class StatusCode : int {
  kOk = 0,
  // 1xx: the caller's input (arguments, tensors, files named by the caller).
  kInvalidArgument = 100,
  kNotFound = 101,
  kOutOfRange = 102,
  // 2xx: the model.
  kInvalidModel = 200,
  kUnsupported = 201,
  // 3xx: resources and the system.
  kIoError = 300,
  kOutOfMemory = 301,
  // 4xx: devices and backends.
  kDeviceUnavailable = 400,
  kBackendError = 401,
  // 5xx: everything else that went wrong while running.
  kRuntimeError = 500,
  kInternal = 501,
  kCancelled = 502,  // a run stopped by its timeout or its cancel flag (RunOptions)
};

DLRT_API const char* status_code_name(StatusCode code);

class [[nodiscard]] DLRT_API Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidModel: <message>"
  std::string to_string() const;

  // Returns a copy with `context` prepended ("context: message").
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Shorthands used throughout the code base.
inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status InvalidModel(std::string m) { return {StatusCode::kInvalidModel, std::move(m)}; }
inline Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status RuntimeError(std::string m) { return {StatusCode::kRuntimeError, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: must not be ok()

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &std::get<T>(v_); }
  const T* operator->() const { return &std::get<T>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace dlrt

#define DLRT_CONCAT_INNER(a, b) a##b
#define DLRT_CONCAT(a, b) DLRT_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` is not ok.
#define DLRT_RETURN_IF_ERROR(expr)                   \
  do {                                               \
    ::dlrt::Status dlrt_status_ = (expr);            \
    if (!dlrt_status_.ok()) return dlrt_status_;     \
  } while (0)

// `DLRT_ASSIGN_OR_RETURN(auto x, f());` declares x from a Result or returns its Status.
#define DLRT_ASSIGN_OR_RETURN(lhs, expr) \
  DLRT_ASSIGN_OR_RETURN_IMPL(DLRT_CONCAT(dlrt_result_, __LINE__), lhs, expr)
#define DLRT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
