#include "backends/openvino/ov_requests.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "backends/openvino/openvino_backend.h"
#include "backends/openvino/ov_library.h"

namespace dlrt::backend::openvino {

namespace {

// Holds one infer request of an executable's pool for one execute().
class RequestLease {
 public:
  explicit RequestLease(OvExecutable& e) : e_(e) {}
  ~RequestLease() {
    if (r_ == nullptr) return;
    {
      std::lock_guard<std::mutex> lk(e_.mu);
      e_.idle.push_back(r_);
    }
    e_.cv.notify_one();
  }
  bool acquire() {
    std::unique_lock<std::mutex> lk(e_.mu);
    if (!e_.cv.wait_for(lk, e_.timeout, [&] { return !e_.idle.empty(); })) return false;
    r_ = e_.idle.back();
    e_.idle.pop_back();
    return true;
  }
  ov_infer_request_t* get() const { return r_; }

 private:
  OvExecutable& e_;
  ov_infer_request_t* r_ = nullptr;
};

std::atomic<uint64_t> g_zero_copy_inputs{0};
std::atomic<uint64_t> g_copied_inputs{0};

Result<Tensor> copy_out(const Runtime& rt, ov_tensor_t* ot, DType want, size_t index) {
  const OvSymbols& s = rt.s;
  ov_shape_t shape{};
  ov_status_e st = s.ov_tensor_get_shape(ot, &shape);
  if (st != OV_STATUS_OK) return rt.error(StatusCode::kBackendError, "OpenVINO output shape", st);
  Shape dims;
  if (shape.rank < 0 || shape.rank > 64 || (shape.rank > 0 && shape.dims == nullptr)) {
    s.ov_shape_free(&shape);
    return Status(StatusCode::kBackendError, "OpenVINO output " + std::to_string(index) + " has an invalid shape");
  }
  dims.assign(shape.dims, shape.dims + shape.rank);
  s.ov_shape_free(&shape);
  ov_element_type_e et = 0;
  st = s.ov_tensor_get_element_type(ot, &et);
  if (st != OV_STATUS_OK) return rt.error(StatusCode::kBackendError, "OpenVINO output element type", st);
  auto dt = from_ov_element(rt.numbering, et);
  if (!dt || *dt != want)
    return Status(StatusCode::kBackendError, "OpenVINO output " + std::to_string(index) + " has element code " +
                                                 std::to_string(et) + ", expected " + dtype_name(want));
  DLRT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(want, dims));
  size_t bytes = 0;
  void* src = nullptr;
  if ((st = s.ov_tensor_get_byte_size(ot, &bytes)) != OV_STATUS_OK || (st = s.ov_tensor_data(ot, &src)) != OV_STATUS_OK)
    return rt.error(StatusCode::kBackendError, "OpenVINO output data", st);
  if (bytes != t.nbytes() || (bytes > 0 && src == nullptr))
    return Status(StatusCode::kBackendError, "OpenVINO output " + std::to_string(index) + " holds " +
                                                 std::to_string(bytes) + " bytes for shape " + shape_to_string(dims) +
                                                 ", expected " + std::to_string(t.nbytes()));
  if (bytes) std::memcpy(t.raw_data(), src, bytes);
  return t;
}

}  // namespace

Status start_request_pool(OvExecutable& exe, const CompileOptions& options) {
  const OvSymbols& s = exe.rt->s;
  ov_status_e st = OV_STATUS_OK;
  // The pool: OPTIMAL_NUMBER_OF_INFER_REQUESTS unless overridden.
  int pool = 0;
  std::string want = options.get("infer_requests", env_or("DLRT_OPENVINO_INFER_REQUESTS"));
  if (!want.empty()) {
    pool = std::atoi(want.c_str());
    if (pool <= 0 || pool > 1024) return InvalidArgument("openvino: infer_requests='" + want + "' is not 1..1024");
  } else {
    char* v = nullptr;
    if (s.ov_compiled_model_get_property(exe.compiled, "OPTIMAL_NUMBER_OF_INFER_REQUESTS", &v) == OV_STATUS_OK &&
        v != nullptr) {
      pool = std::atoi(v);
      s.ov_free(v);
    }
    pool = std::clamp(pool, 1, 64);
  }
  std::string timeout = options.get("request_timeout_ms", env_or("DLRT_OPENVINO_REQUEST_TIMEOUT_MS"));
  if (!timeout.empty()) {
    long ms = std::atol(timeout.c_str());
    if (ms <= 0) return InvalidArgument("openvino: request_timeout_ms='" + timeout + "' is not a positive number");
    exe.timeout = std::chrono::milliseconds(ms);
  }
  for (int i = 0; i < pool; ++i) {
    ov_infer_request_t* r = nullptr;
    st = s.ov_compiled_model_create_infer_request(exe.compiled, &r);
    if (st != OV_STATUS_OK || r == nullptr)
      return exe.rt->error(StatusCode::kBackendError, "OpenVINO infer request " + std::to_string(i), st);
    exe.requests.push_back(r);
  }
  exe.idle = exe.requests;
  return Status::Ok();
}

Result<std::vector<Tensor>> run_on_request(OvExecutable& exe_ref, std::span<const Tensor> inputs) {
  OvExecutable* exe = &exe_ref;
  const Runtime* rt = exe->rt;
  const OvSymbols& s = rt->s;
  if (inputs.size() != exe->in_types.size())
    return InvalidArgument("openvino: expected " + std::to_string(exe->in_types.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].dtype() != exe->in_types[i])
      return InvalidArgument("openvino: input " + std::to_string(i) + " is " + dtype_name(inputs[i].dtype()) +
                             ", the compiled model takes " + dtype_name(exe->in_types[i]));

  RequestLease lease(*exe);
  if (!lease.acquire())
    return Status(StatusCode::kBackendError, "openvino: no free infer request on " + exe->device + " within " +
                                                 std::to_string(exe->timeout.count()) + " ms (pool of " +
                                                 std::to_string(exe->requests.size()) +
                                                 "); raise infer_requests or DLRT_OPENVINO_REQUEST_TIMEOUT_MS");
  ov_infer_request_t* req = lease.get();

  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    ov_element_type_e et = *to_ov_element(rt->numbering, t.dtype());
    ov_shape_t shape{};
    ov_status_e st = s.ov_shape_create(static_cast<int64_t>(t.rank()), t.shape().data(), &shape);
    if (st != OV_STATUS_OK) return rt->error(StatusCode::kBackendError, "ov_shape_create", st);
    ov_tensor_t* ot = nullptr;
    void* p = const_cast<void*>(t.raw_data());
    // Zero-copy when the data is there and aligned as OpenVINO's own allocations are.
    bool zero_copy = p != nullptr && t.nbytes() > 0 && reinterpret_cast<uintptr_t>(p) % 64 == 0;
    st = zero_copy ? s.ov_tensor_create_from_host_ptr(et, shape, p, &ot) : s.ov_tensor_create(et, shape, &ot);
    s.ov_shape_free(&shape);
    if (st != OV_STATUS_OK || ot == nullptr) {
      if (ot) s.ov_tensor_free(ot);
      return rt->error(StatusCode::kBackendError, "OpenVINO input tensor " + std::to_string(i), st);
    }
    // Before OpenVINO reads our buffer (zero-copy) or we write its own: both must hold exactly
    // the tensor's bytes, or one side would read or write past the other's end.
    size_t vendor_bytes = 0;
    void* vendor_data = nullptr;
    st = s.ov_tensor_get_byte_size(ot, &vendor_bytes);
    if (st == OV_STATUS_OK && t.nbytes() > 0) st = s.ov_tensor_data(ot, &vendor_data);
    if (st != OV_STATUS_OK || vendor_bytes != t.nbytes() || (t.nbytes() > 0 && vendor_data == nullptr) ||
        (zero_copy && vendor_data != p)) {
      s.ov_tensor_free(ot);
      if (st != OV_STATUS_OK)
        return rt->error(StatusCode::kBackendError, "OpenVINO input tensor " + std::to_string(i), st);
      return Status(StatusCode::kBackendError,
                    "OpenVINO's tensor for input " + std::to_string(i) + " (" + dtype_name(t.dtype()) + " " +
                        shape_to_string(t.shape()) + ") holds " + std::to_string(vendor_bytes) + " bytes, not " +
                        std::to_string(t.nbytes()) + (zero_copy && vendor_data != p ? ", or not at our buffer" : "") +
                        ": the element types disagree; not handing it over");
    }
    if (!zero_copy && t.nbytes() > 0) std::memcpy(vendor_data, p, t.nbytes());
    (zero_copy ? g_zero_copy_inputs : g_copied_inputs).fetch_add(1, std::memory_order_relaxed);
    st = s.ov_infer_request_set_input_tensor_by_index(req, i, ot);
    s.ov_tensor_free(ot);  // the request keeps its own reference
    if (st != OV_STATUS_OK) return rt->error(StatusCode::kBackendError, "OpenVINO set input " + std::to_string(i), st);
  }
  ov_status_e st = s.ov_infer_request_infer(req);
  if (st != OV_STATUS_OK) return rt->error(StatusCode::kBackendError, "OpenVINO inference on " + exe->device, st);

  std::vector<Tensor> outputs;
  outputs.reserve(exe->out_types.size());
  for (size_t i = 0; i < exe->out_types.size(); ++i) {
    ov_tensor_t* ot = nullptr;
    st = s.ov_infer_request_get_output_tensor_by_index(req, i, &ot);
    if (st != OV_STATUS_OK || ot == nullptr)
      return rt->error(StatusCode::kBackendError, "OpenVINO output " + std::to_string(i), st);
    auto out = copy_out(*rt, ot, exe->out_types[i], i);
    s.ov_tensor_free(ot);
    if (!out.ok()) return out.status();
    outputs.push_back(std::move(out).value());
  }
  return outputs;
}

OpenVinoStats openvino_stats() {
  return {g_zero_copy_inputs.load(std::memory_order_relaxed), g_copied_inputs.load(std::memory_order_relaxed)};
}

}  // namespace dlrt::backend::openvino
