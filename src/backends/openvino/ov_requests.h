// An imported OpenVINO model and its pool of infer requests: what init()
// makes and execute() runs. One execute() holds one request (RequestLease);
// a caller waits up to the executable's timeout for a free one.
//
// Thread-safety: run_on_request() may be called on one executable from many
// threads; they share its pool.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backends/openvino/ov_runtime.h"
#include "core/large_alloc.h"

namespace dlrt::backend::openvino {

// The bytes a compiled model was imported from. OpenVINO 2026.x imports
// without copying (the compiled model's weights point into these bytes; 2024.x
// and 2025.x copied them), so they must live exactly as long as the compiled
// model: freed only after it. 64-byte aligned, as OpenVINO's own buffers.
class ImportedBytes {
 public:
  ImportedBytes() = default;
  ImportedBytes(const ImportedBytes&) = delete;
  ImportedBytes& operator=(const ImportedBytes&) = delete;
  ~ImportedBytes() {
    if (p_) buffer_free(p_, cap_);
  }
  // A copy of `n` bytes at `src`; false when there is no memory for it.
  bool assign(const void* src, size_t n) {
    cap_ = (std::max<size_t>(n, 1) + 63) / 64 * 64;
    p_ = buffer_alloc(cap_, false);
    if (!p_) return false;
    std::memcpy(p_, src, n);
    size_ = n;
    return true;
  }
  const char* data() const { return static_cast<const char*>(p_); }
  size_t size() const { return size_; }

 private:
  void* p_ = nullptr;
  size_t size_ = 0, cap_ = 0;
};

struct OvExecutable : Executable {
  const Runtime* rt = nullptr;
  ImportedBytes imported;  // declared before `compiled`: destroyed after it
  ov_compiled_model_t* compiled = nullptr;
  std::string device;
  std::vector<DType> in_types, out_types;
  std::vector<ov_infer_request_t*> requests;  // all of them
  std::chrono::milliseconds timeout{60000};

  std::mutex mu;
  std::condition_variable cv;
  std::vector<ov_infer_request_t*> idle;  // guarded by mu

  ~OvExecutable() override {
    for (auto* r : requests) rt->s.ov_infer_request_free(r);
    if (compiled) rt->s.ov_compiled_model_free(compiled);
  }
};

// Fills exe.requests (and idle) with its pool: the `infer_requests` option (or
// DLRT_OPENVINO_INFER_REQUESTS), else the compiled model's
// OPTIMAL_NUMBER_OF_INFER_REQUESTS (1..64); the wait for a free one is
// `request_timeout_ms` (or DLRT_OPENVINO_REQUEST_TIMEOUT_MS), else 60 s.
Status start_request_pool(OvExecutable& exe, const CompileOptions& options);

// One inference on a free request of exe's pool: binds the inputs (zero-copy
// where aligned), runs, copies the outputs out.
Result<std::vector<Tensor>> run_on_request(OvExecutable& exe, std::span<const Tensor> inputs);

}  // namespace dlrt::backend::openvino
