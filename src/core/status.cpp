#include "dlrt/status.h"

namespace dlrt {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "Ok";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kOutOfRange: return "OutOfRange";
    case StatusCode::kInvalidModel: return "InvalidModel";
    case StatusCode::kUnsupported: return "Unsupported";
    case StatusCode::kIoError: return "IoError";
    case StatusCode::kOutOfMemory: return "OutOfMemory";
    case StatusCode::kDeviceUnavailable: return "DeviceUnavailable";
    case StatusCode::kBackendError: return "BackendError";
    case StatusCode::kRuntimeError: return "RuntimeError";
    case StatusCode::kInternal: return "Internal";
    case StatusCode::kCancelled: return "Cancelled";
  }
  return "Unknown";
}

std::string Status::to_string() const {
  if (ok()) return "Ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace dlrt
