// The C API (include/dlrt/dlrt_c.h) over the C++ API: status, version,
// dtypes, tensors, session options, run reports and sessions. Devices are in
// dlrt_c_devices.cpp, the embedder in dlrt_c_embedder.cpp; the helpers they
// share in capi_util.h.
#include "dlrt/dlrt_c.h"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "capi/capi_util.h"
#include "dlrt/dlrt.h"
#include "dlrt/placement.h"

using namespace dlrt::capi;  // NOLINT: this file implements the C API with its helpers


struct dlrt_tensor {
  dlrt::Tensor tensor;
};

struct dlrt_session_options {
  dlrt::SessionOptions options;
};


struct dlrt_cancel_token {
  std::atomic<bool> cancelled{false};
};

namespace {

// One input or output's info with the C views of its strings.
struct ValueInfoC {
  const dlrt::TensorInfo* info = nullptr;
  std::vector<const char*> dim_names;
};

std::vector<ValueInfoC> value_infos(const std::vector<dlrt::TensorInfo>& infos) {
  std::vector<ValueInfoC> out(infos.size());
  for (size_t i = 0; i < infos.size(); ++i) {
    out[i].info = &infos[i];
    for (const std::string& n : infos[i].dim_names) out[i].dim_names.push_back(n.c_str());
    out[i].dim_names.resize(infos[i].shape.size(), "");
  }
  return out;
}

}  // namespace

struct dlrt_session {
  std::unique_ptr<dlrt::Session> session;
  std::vector<ValueInfoC> inputs, outputs;
};



namespace {






bool valid_dtype(dlrt_dtype dtype) {
  return dtype != DLRT_DTYPE_UNDEFINED && dlrt::dtype_is_valid(static_cast<int>(dtype));
}

// Checks dtype/shape/nbytes for dlrt_tensor_create(_view); the shape as a dlrt::Shape.
dlrt_status* check_tensor_args(const char* fn, dlrt_dtype dtype, const int64_t* shape, size_t rank, size_t nbytes,
                               bool data_given, dlrt::Shape& out_shape) {
  if (!valid_dtype(dtype)) return invalid(fn, "dtype " + std::to_string(static_cast<int>(dtype)) + " is not a dlrt_dtype");
  if (dtype == DLRT_DTYPE_STRING) return invalid(fn, "string tensors are made with dlrt_tensor_create_strings");
  if (rank > 0 && !shape) return invalid(fn, "shape is NULL but rank is " + std::to_string(rank));
  if (rank > 64) return invalid(fn, "rank " + std::to_string(rank) + " is more than 64");
  out_shape = dlrt::Shape(shape, shape + rank);
  auto count = dlrt::checked_element_count(out_shape);
  if (!count.ok()) return invalid(fn, count.status().message());
  const size_t elem = dlrt::dtype_size(static_cast<dlrt::DType>(dtype));
  if (static_cast<uint64_t>(*count) > SIZE_MAX / elem) return invalid(fn, "the tensor is too large");
  const size_t want = static_cast<size_t>(*count) * elem;
  if (data_given && nbytes != want)
    return invalid(fn, "nbytes is " + std::to_string(nbytes) + " but a " + dlrt::dtype_name(static_cast<dlrt::DType>(dtype)) +
                           " tensor of shape " + dlrt::shape_to_string(out_shape) + " has " + std::to_string(want));
  return nullptr;
}

// Builds the C++ input map from the C arrays (names must be unique).
dlrt_status* gather_inputs(const char* fn, const char* const* names, const dlrt_tensor* const* inputs, size_t count,
                           std::map<std::string, dlrt::Tensor>& feeds) {
  if (count > 0 && (!names || !inputs)) return invalid(fn, "input_names and inputs must not be NULL when input_count > 0");
  for (size_t i = 0; i < count; ++i) {
    if (!names[i]) return invalid(fn, "input_names[" + std::to_string(i) + "] is NULL");
    if (!inputs[i]) return invalid(fn, "inputs[" + std::to_string(i) + "] ('" + names[i] + "') is NULL");
    if (!feeds.emplace(names[i], inputs[i]->tensor).second)
      return invalid(fn, std::string("input '") + names[i] + "' is given twice");
  }
  return nullptr;
}

dlrt_status* fill_value_info(const char* fn, const std::vector<ValueInfoC>& infos, size_t index, dlrt_value_info* info) {
  if (!info) return invalid(fn, "info is NULL");
  if (!DLRT_FITS(info, name)) return invalid(fn, "info->struct_size is too small (set it to sizeof(dlrt_value_info))");
  if (index >= infos.size())
    return make_status(DLRT_OUT_OF_RANGE, std::string(fn) + ": index " + std::to_string(index) + " but there are " +
                                              std::to_string(infos.size()));
  const ValueInfoC& v = infos[index];
  info->name = v.info->name.c_str();
  if (DLRT_FITS(info, dtype)) info->dtype = static_cast<dlrt_dtype>(v.info->dtype);
  if (DLRT_FITS(info, rank)) info->rank = v.info->shape.size();
  if (DLRT_FITS(info, shape)) info->shape = v.info->shape.empty() ? nullptr : v.info->shape.data();
  if (DLRT_FITS(info, dim_names)) info->dim_names = v.dim_names.empty() ? nullptr : v.dim_names.data();
  if (DLRT_FITS(info, is_tensor)) info->is_tensor = v.info->is_tensor ? 1 : 0;
  return nullptr;
}

dlrt_status* new_report(dlrt::RunReport&& r, dlrt_run_report** out) {
  *out = new dlrt_run_report{std::move(r)};
  return nullptr;
}


}  // namespace

extern "C" {

// ---------------------------------------------------------------- status

dlrt_status_code dlrt_status_get_code(const dlrt_status* status) { return status ? status->code : DLRT_OK; }

const char* dlrt_status_get_message(const dlrt_status* status) { return status ? status->message.c_str() : ""; }

const char* dlrt_status_code_name(dlrt_status_code code) {
  return dlrt::status_code_name(static_cast<dlrt::StatusCode>(code));
}

void dlrt_status_free(dlrt_status** status) { free_handle(status); }

// --------------------------------------------------------------- version

const char* dlrt_version(void) { return dlrt::version(); }

uint32_t dlrt_c_api_version(void) { return DLRT_C_API_VERSION; }

// ---------------------------------------------------------------- dtypes

const char* dlrt_dtype_name(dlrt_dtype dtype) {
  return valid_dtype(dtype) ? dlrt::dtype_name(static_cast<dlrt::DType>(dtype)) : "undefined";
}

size_t dlrt_dtype_size(dlrt_dtype dtype) {
  if (!valid_dtype(dtype) || dtype == DLRT_DTYPE_STRING) return 0;
  return dlrt::dtype_size(static_cast<dlrt::DType>(dtype));
}

// --------------------------------------------------------------- tensors

dlrt_status* dlrt_tensor_create(dlrt_dtype dtype, const int64_t* shape, size_t rank, const void* data, size_t nbytes,
                                dlrt_tensor** out) {
  constexpr const char* fn = "dlrt_tensor_create";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = nullptr;
    dlrt::Shape s;
    if (dlrt_status* st = check_tensor_args(fn, dtype, shape, rank, nbytes, data != nullptr, s)) return st;
    auto t = dlrt::Tensor::allocate(static_cast<dlrt::DType>(dtype), std::move(s));
    if (!t.ok()) return from_status(t.status());
    if (data && nbytes) std::memcpy(t->raw_data(), data, nbytes);
    *out = new dlrt_tensor{std::move(*t)};
    return nullptr;
  });
}

dlrt_status* dlrt_tensor_create_view(dlrt_dtype dtype, const int64_t* shape, size_t rank, void* data, size_t nbytes,
                                     dlrt_tensor** out) {
  constexpr const char* fn = "dlrt_tensor_create_view";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = nullptr;
    dlrt::Shape s;
    if (dlrt_status* st = check_tensor_args(fn, dtype, shape, rank, nbytes, true, s)) return st;
    if (!data && nbytes) return invalid(fn, "data is NULL");
    if (!data) {  // an empty view: any non-null address, never dereferenced
      auto t = dlrt::Tensor::allocate(static_cast<dlrt::DType>(dtype), std::move(s));
      if (!t.ok()) return from_status(t.status());
      *out = new dlrt_tensor{std::move(*t)};
      return nullptr;
    }
    *out = new dlrt_tensor{dlrt::Tensor::view(static_cast<dlrt::DType>(dtype), std::move(s), data)};
    return nullptr;
  });
}

dlrt_status* dlrt_tensor_create_strings(const int64_t* shape, size_t rank, const char* const* strings, size_t count,
                                        dlrt_tensor** out) {
  constexpr const char* fn = "dlrt_tensor_create_strings";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = nullptr;
    if (rank > 0 && !shape) return invalid(fn, "shape is NULL but rank is " + std::to_string(rank));
    if (rank > 64) return invalid(fn, "rank " + std::to_string(rank) + " is more than 64");
    dlrt::Shape s(shape, shape + rank);
    auto n = dlrt::checked_element_count(s);
    if (!n.ok()) return invalid(fn, n.status().message());
    if (static_cast<uint64_t>(*n) != count)
      return invalid(fn, "count is " + std::to_string(count) + " but shape " + dlrt::shape_to_string(s) + " has " +
                             std::to_string(*n) + " elements");
    if (count > 0 && !strings) return invalid(fn, "strings is NULL");
    for (size_t i = 0; i < count; ++i)
      if (!strings[i]) return invalid(fn, "strings[" + std::to_string(i) + "] is NULL");
    auto t = dlrt::Tensor::allocate(dlrt::DType::kString, std::move(s));
    if (!t.ok()) return from_status(t.status());
    std::string* dst = t->data<std::string>();
    for (size_t i = 0; i < count; ++i) dst[i] = strings[i];
    *out = new dlrt_tensor{std::move(*t)};
    return nullptr;
  });
}

void dlrt_tensor_free(dlrt_tensor** tensor) { free_handle(tensor); }

dlrt_dtype dlrt_tensor_dtype(const dlrt_tensor* tensor) {
  return tensor ? static_cast<dlrt_dtype>(tensor->tensor.dtype()) : DLRT_DTYPE_UNDEFINED;
}

size_t dlrt_tensor_rank(const dlrt_tensor* tensor) { return tensor ? tensor->tensor.rank() : 0; }

const int64_t* dlrt_tensor_shape(const dlrt_tensor* tensor) {
  return tensor && tensor->tensor.rank() > 0 ? tensor->tensor.shape().data() : nullptr;
}

int64_t dlrt_tensor_element_count(const dlrt_tensor* tensor) { return tensor ? tensor->tensor.size() : 0; }

size_t dlrt_tensor_nbytes(const dlrt_tensor* tensor) {
  if (!tensor || tensor->tensor.dtype() == dlrt::DType::kString) return 0;
  return tensor->tensor.nbytes();
}

void* dlrt_tensor_data(dlrt_tensor* tensor) {
  if (!tensor || tensor->tensor.dtype() == dlrt::DType::kString || tensor->tensor.size() == 0) return nullptr;
  return tensor->tensor.raw_data();
}

const void* dlrt_tensor_const_data(const dlrt_tensor* tensor) {
  return dlrt_tensor_data(const_cast<dlrt_tensor*>(tensor));
}

dlrt_status* dlrt_tensor_string_at(const dlrt_tensor* tensor, int64_t index, const char** str, size_t* length) {
  constexpr const char* fn = "dlrt_tensor_string_at";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!tensor || !str || !length) return invalid(fn, "tensor, str and length must not be NULL");
    *str = nullptr;
    *length = 0;
    if (tensor->tensor.dtype() != dlrt::DType::kString)
      return invalid(fn, std::string("the tensor is ") + dlrt::dtype_name(tensor->tensor.dtype()) + ", not string");
    if (index < 0 || index >= tensor->tensor.size())
      return make_status(DLRT_OUT_OF_RANGE, std::string(fn) + ": index " + std::to_string(index) + " but the tensor has " +
                                                std::to_string(tensor->tensor.size()) + " elements");
    const std::string& s = tensor->tensor.data<std::string>()[index];
    *str = s.c_str();
    *length = s.size();
    return nullptr;
  });
}

// ------------------------------------------------------- session options

dlrt_status* dlrt_session_options_create(dlrt_session_options** out) {
  constexpr const char* fn = "dlrt_session_options_create";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = new dlrt_session_options{};
    return nullptr;
  });
}

void dlrt_session_options_free(dlrt_session_options** options) { free_handle(options); }

dlrt_status* dlrt_session_options_set_threads(dlrt_session_options* options, int threads) {
  constexpr const char* fn = "dlrt_session_options_set_threads";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!options) return invalid(fn, "options is NULL");
    if (threads < 0 || threads > dlrt::kMaxThreads)
      return invalid(fn, "threads is " + std::to_string(threads) + "; use 0 (one per core) to " +
                             std::to_string(dlrt::kMaxThreads));
    options->options.threads = threads;
    return nullptr;
  });
}

dlrt_status* dlrt_session_options_set_device(dlrt_session_options* options, const char* device) {
  constexpr const char* fn = "dlrt_session_options_set_device";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!options) return invalid(fn, "options is NULL");
    options->options.device = device ? device : "";
    return nullptr;
  });
}

dlrt_status* dlrt_session_options_set_strict(dlrt_session_options* options, int strict) {
  return guarded("dlrt_session_options_set_strict", [&]() -> dlrt_status* {
    if (!options) return invalid("dlrt_session_options_set_strict", "options is NULL");
    options->options.strict = strict != 0;
    return nullptr;
  });
}

dlrt_status* dlrt_session_options_set_optimize(dlrt_session_options* options, int optimize) {
  return guarded("dlrt_session_options_set_optimize", [&]() -> dlrt_status* {
    if (!options) return invalid("dlrt_session_options_set_optimize", "options is NULL");
    options->options.optimize = optimize != 0;
    return nullptr;
  });
}

dlrt_status* dlrt_session_options_set_warm_start(dlrt_session_options* options, int warm_start) {
  return guarded("dlrt_session_options_set_warm_start", [&]() -> dlrt_status* {
    if (!options) return invalid("dlrt_session_options_set_warm_start", "options is NULL");
    options->options.warm_start = warm_start != 0;
    return nullptr;
  });
}

dlrt_status* dlrt_session_options_set_cpu_precision(dlrt_session_options* options, const char* precision) {
  constexpr const char* fn = "dlrt_session_options_set_cpu_precision";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!options) return invalid(fn, "options is NULL");
    // Checked here, as the header says: a typo fails at the call that made it.
    if (precision && *precision && !dlrt::is_cpu_precision(precision))
      return invalid(fn, std::string("precision is '") + precision +
                             "'; use \"f32\", \"bf16\", \"bf16x3\", \"auto\", or \"\" / NULL for the default");
    options->options.cpu_precision = precision ? precision : "";
    return nullptr;
  });
}

dlrt_status* dlrt_session_options_set_max_tensor_bytes(dlrt_session_options* options, uint64_t bytes) {
  return guarded("dlrt_session_options_set_max_tensor_bytes", [&]() -> dlrt_status* {
    if (!options) return invalid("dlrt_session_options_set_max_tensor_bytes", "options is NULL");
    options->options.max_tensor_bytes = bytes;
    return nullptr;
  });
}

dlrt_status* dlrt_session_options_set_backend_option(dlrt_session_options* options, const char* key, const char* value) {
  constexpr const char* fn = "dlrt_session_options_set_backend_option";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!options) return invalid(fn, "options is NULL");
    if (!key || !*key) return invalid(fn, "key is NULL or empty");
    if (value) options->options.backend_options[key] = value;
    else options->options.backend_options.erase(key);
    return nullptr;
  });
}

dlrt_status* dlrt_session_options_set_outputs(dlrt_session_options* options, const char* const* names, size_t count) {
  constexpr const char* fn = "dlrt_session_options_set_outputs";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!options) return invalid(fn, "options is NULL");
    if (count > 0 && !names) return invalid(fn, "names is NULL with count " + std::to_string(count));
    std::vector<std::string> outputs;
    for (size_t i = 0; i < count; ++i) {
      if (!names[i] || !*names[i]) return invalid(fn, "names[" + std::to_string(i) + "] is NULL or empty");
      outputs.emplace_back(names[i]);
    }
    options->options.outputs = std::move(outputs);
    return nullptr;
  });
}

// ----------------------------------------------------------- run reports

size_t dlrt_run_report_partition_count(const dlrt_run_report* report) {
  return report ? report->report.partitions.size() : 0;
}

dlrt_status* dlrt_run_report_partition(const dlrt_run_report* report, size_t index, dlrt_partition_info* info) {
  return guarded("dlrt_run_report_partition", [&]() -> dlrt_status* {
    constexpr const char* fn = "dlrt_run_report_partition";
    if (!report || !info) return invalid(fn, "report and info must not be NULL");
    if (!DLRT_FITS(info, backend))
      return invalid(fn, "info->struct_size is too small (set it to sizeof(dlrt_partition_info))");
    const auto& parts = report->report.partitions;
    if (index >= parts.size())
      return make_status(DLRT_OUT_OF_RANGE, std::string(fn) + ": index " + std::to_string(index) + " but the report has " +
                                                std::to_string(parts.size()) + " partitions");
    const dlrt::PartitionReport& p = parts[index];
    info->backend = p.backend.c_str();
    if (DLRT_FITS(info, device)) info->device = p.device.c_str();
    if (DLRT_FITS(info, node_count)) info->node_count = p.node_count;
    if (DLRT_FITS(info, degraded)) info->degraded = p.degraded ? 1 : 0;
    if (DLRT_FITS(info, reason)) info->reason = p.reason.c_str();
    if (DLRT_FITS(info, time_ms)) info->time_ms = p.time_ms;
    if (DLRT_FITS(info, precision)) info->precision = p.precision.c_str();
    if (DLRT_FITS(info, vector_isa)) info->vector_isa = p.vector_isa.c_str();
    return nullptr;
  });
}

double dlrt_run_report_run_ms(const dlrt_run_report* report) { return report ? report->report.run_ms : 0.0; }

void dlrt_run_report_free(dlrt_run_report** report) { free_handle(report); }

// --------------------------------------------------------------- session

namespace {

dlrt_status* finish_session(dlrt::Result<std::unique_ptr<dlrt::Session>> created, dlrt_session** out) {
  if (!created.ok()) return from_status(created.status());
  auto s = std::make_unique<dlrt_session>();
  s->session = std::move(*created);
  s->inputs = value_infos(s->session->inputs());
  s->outputs = value_infos(s->session->outputs());
  *out = s.release();
  return nullptr;
}

const dlrt::SessionOptions& options_or_default(const dlrt_session_options* options) {
  static const dlrt::SessionOptions kDefaults;
  return options ? options->options : kDefaults;
}

}  // namespace

dlrt_status* dlrt_session_create(const char* path, const dlrt_session_options* options, dlrt_session** out) {
  constexpr const char* fn = "dlrt_session_create";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = nullptr;
    if (!path) return invalid(fn, "path is NULL");
    return finish_session(dlrt::Session::create(path, options_or_default(options)), out);
  });
}

dlrt_status* dlrt_session_create_from_bytes(const void* bytes, size_t size, const dlrt_session_options* options,
                                            const char* base_dir, dlrt_session** out) {
  constexpr const char* fn = "dlrt_session_create_from_bytes";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = nullptr;
    if (!bytes && size) return invalid(fn, "bytes is NULL");
    std::string model(size ? static_cast<const char*>(bytes) : "", size);
    return finish_session(
        dlrt::Session::create_from_bytes(model, options_or_default(options), base_dir ? base_dir : ""), out);
  });
}

void dlrt_session_free(dlrt_session** session) { free_handle(session); }

size_t dlrt_session_input_count(const dlrt_session* session) { return session ? session->inputs.size() : 0; }

size_t dlrt_session_output_count(const dlrt_session* session) { return session ? session->outputs.size() : 0; }

dlrt_status* dlrt_session_input_info(const dlrt_session* session, size_t index, dlrt_value_info* info) {
  return guarded("dlrt_session_input_info", [&]() -> dlrt_status* {
    if (!session) return invalid("dlrt_session_input_info", "session is NULL");
    return fill_value_info("dlrt_session_input_info", session->inputs, index, info);
  });
}

dlrt_status* dlrt_session_output_info(const dlrt_session* session, size_t index, dlrt_value_info* info) {
  return guarded("dlrt_session_output_info", [&]() -> dlrt_status* {
    if (!session) return invalid("dlrt_session_output_info", "session is NULL");
    return fill_value_info("dlrt_session_output_info", session->outputs, index, info);
  });
}

dlrt_status* dlrt_cancel_token_create(dlrt_cancel_token** out) {
  constexpr const char* fn = "dlrt_cancel_token_create";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = new dlrt_cancel_token;
    return nullptr;
  });
}

void dlrt_cancel_token_cancel(dlrt_cancel_token* token) {
  if (token) token->cancelled.store(true);
}

void dlrt_cancel_token_free(dlrt_cancel_token** token) { free_handle(token); }

dlrt_status* dlrt_session_run(const dlrt_session* session, const char* const* input_names,
                              const dlrt_tensor* const* inputs, size_t input_count, dlrt_tensor** outputs,
                              size_t output_capacity, dlrt_run_report** report) {
  return dlrt_session_run_with_options(session, input_names, inputs, input_count, outputs, output_capacity, nullptr,
                                       report);
}

dlrt_status* dlrt_session_run_with_options(const dlrt_session* session, const char* const* input_names,
                                           const dlrt_tensor* const* inputs, size_t input_count, dlrt_tensor** outputs,
                                           size_t output_capacity, const dlrt_run_options* options,
                                           dlrt_run_report** report) {
  constexpr const char* fn = "dlrt_session_run";
  return guarded(fn, [&]() -> dlrt_status* {
    dlrt::RunOptions run_options;
    if (options) {
      if (!DLRT_FITS(options, timeout_ms))
        return invalid(fn, "options->struct_size is too small (set it to sizeof(dlrt_run_options))");
      if (!(options->timeout_ms >= 0)) return invalid(fn, "options->timeout_ms must not be negative");
      run_options.timeout_ms = options->timeout_ms;
      if (DLRT_FITS(options, cancel) && options->cancel) run_options.cancel = &options->cancel->cancelled;
    }
    if (report) *report = nullptr;
    if (!session) return invalid(fn, "session is NULL");
    const size_t n_out = session->outputs.size();
    if (!outputs && n_out) return invalid(fn, "outputs is NULL");
    for (size_t i = 0; i < output_capacity && outputs; ++i) outputs[i] = nullptr;
    if (output_capacity < n_out)
      return invalid(fn, "output_capacity is " + std::to_string(output_capacity) + " but the model has " +
                             std::to_string(n_out) + " outputs");
    std::map<std::string, dlrt::Tensor> feeds;
    if (dlrt_status* st = gather_inputs(fn, input_names, inputs, input_count, feeds)) return st;
    dlrt::RunReport r;
    auto got = session->session->run(feeds, run_options, report ? &r : nullptr);
    if (!got.ok()) return from_status(got.status());
    // Allocate every handle before handing any out, so a failure leaks nothing.
    std::vector<std::unique_ptr<dlrt_tensor>> made;
    made.reserve(got->size());
    for (dlrt::Tensor& t : *got) made.push_back(std::make_unique<dlrt_tensor>(dlrt_tensor{std::move(t)}));
    std::unique_ptr<dlrt_run_report> rep;
    if (report) rep = std::make_unique<dlrt_run_report>(dlrt_run_report{std::move(r)});
    for (size_t i = 0; i < made.size(); ++i) outputs[i] = made[i].release();
    if (report) *report = rep.release();
    return nullptr;
  });
}

dlrt_status* dlrt_session_run_into(const dlrt_session* session, const char* const* input_names,
                                   const dlrt_tensor* const* inputs, size_t input_count,
                                   const char* const* output_names, dlrt_tensor* const* outputs, size_t output_count,
                                   dlrt_run_report** report) {
  constexpr const char* fn = "dlrt_session_run_into";
  return guarded(fn, [&]() -> dlrt_status* {
    if (report) *report = nullptr;
    if (!session) return invalid(fn, "session is NULL");
    std::map<std::string, dlrt::Tensor> feeds;
    if (dlrt_status* st = gather_inputs(fn, input_names, inputs, input_count, feeds)) return st;
    if (output_count > 0 && (!output_names || !outputs))
      return invalid(fn, "output_names and outputs must not be NULL when output_count > 0");
    std::map<std::string, dlrt::Tensor> dst;
    for (size_t i = 0; i < output_count; ++i) {
      if (!output_names[i]) return invalid(fn, "output_names[" + std::to_string(i) + "] is NULL");
      if (!outputs[i]) return invalid(fn, "outputs[" + std::to_string(i) + "] ('" + output_names[i] + "') is NULL");
      if (outputs[i]->tensor.dtype() == dlrt::DType::kString)
        return invalid(fn, std::string("output '") + output_names[i] + "': string outputs are returned by dlrt_session_run");
      if (!dst.emplace(output_names[i], outputs[i]->tensor).second)
        return invalid(fn, std::string("output '") + output_names[i] + "' is named twice");
    }
    dlrt::RunReport r;
    dlrt::Status s = session->session->run_into(feeds, dst, report ? &r : nullptr);
    if (!s.ok()) return from_status(s);
    if (report) return new_report(std::move(r), report);
    return nullptr;
  });
}

dlrt_status* dlrt_session_placement(const dlrt_session* session, dlrt_run_report** out) {
  constexpr const char* fn = "dlrt_session_placement";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = nullptr;
    if (!session) return invalid(fn, "session is NULL");
    return new_report(session->session->placement(), out);
  });
}

dlrt_status* dlrt_session_model_info(const dlrt_session* session, dlrt_model_info** out) {
  constexpr const char* fn = "dlrt_session_model_info";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = nullptr;
    if (!session) return invalid(fn, "session is NULL");
    *out = new_model_info(dlrt::model_info(*session->session));
    return nullptr;
  });
}

size_t dlrt_session_node_count(const dlrt_session* session) {
  return session ? dlrt::node_placement(*session->session).size() : 0;
}

dlrt_status* dlrt_session_node_placement(const dlrt_session* session, size_t index, dlrt_node_placement* info) {
  constexpr const char* fn = "dlrt_session_node_placement";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!session || !info) return invalid(fn, "session and info must not be NULL");
    if (!DLRT_FITS(info, node)) return invalid(fn, "info->struct_size is too small (set it to sizeof(dlrt_node_placement))");
    const std::vector<dlrt::NodePlacement>& nodes = dlrt::node_placement(*session->session);
    if (index >= nodes.size())
      return make_status(DLRT_OUT_OF_RANGE, std::string(fn) + ": index " + std::to_string(index) + " but there are " +
                                                std::to_string(nodes.size()) + " nodes");
    const dlrt::NodePlacement& n = nodes[index];
    info->node = n.node.c_str();
    if (DLRT_FITS(info, op_type)) info->op_type = n.op_type.c_str();
    if (DLRT_FITS(info, partition)) info->partition = n.partition;
    if (DLRT_FITS(info, cpu_reason)) info->cpu_reason = n.cpu_reason.c_str();
    return nullptr;
  });
}

}  // extern "C"
