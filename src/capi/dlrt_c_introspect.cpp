// The C API's view of what the runtime knows: the backends
// (dlrt_backends_list, dlrt_backend_list_*), a model's declaration
// (dlrt_model_info_*) and, in dlrt_c.cpp, a session's node placement.
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

#include "capi/capi_util.h"
#include "dlrt/backends.h"
#include "dlrt/model_info.h"

using namespace dlrt::capi;  // NOLINT: this file implements the C API with its helpers

struct dlrt_backend_list {
  std::vector<dlrt::BackendInfo> backends;
};

// A model's info with the C views of its inputs and outputs (dim name arrays).
struct dlrt_model_info {
  dlrt::ModelInfo info;
  std::vector<std::vector<const char*>> input_dims, output_dims;
};

namespace {

dlrt_status* out_of_range(const char* fn, const char* what, size_t index, size_t count) {
  return make_status(DLRT_OUT_OF_RANGE, std::string(fn) + ": " + what + " index " + std::to_string(index) +
                                            " but there are " + std::to_string(count));
}

dlrt_status* backend_at(const char* fn, const dlrt_backend_list* list, size_t index, const dlrt::BackendInfo** b) {
  if (!list) return invalid(fn, "list is NULL");
  if (index >= list->backends.size()) return out_of_range(fn, "backend", index, list->backends.size());
  *b = &list->backends[index];
  return nullptr;
}

dlrt_status* device_at(const char* fn, const dlrt_backend_list* list, size_t index, size_t device_index,
                       const dlrt::BackendDeviceInfo** d) {
  const dlrt::BackendInfo* b = nullptr;
  if (dlrt_status* st = backend_at(fn, list, index, &b)) return st;
  if (device_index >= b->devices.size()) return out_of_range(fn, "device", device_index, b->devices.size());
  *d = &b->devices[device_index];
  return nullptr;
}

std::vector<const char*> c_strings(const std::vector<std::string>& v) {
  std::vector<const char*> out;
  for (const std::string& s : v) out.push_back(s.c_str());
  return out;
}

dlrt_status* value_at(const char* fn, const dlrt_model_info* info, bool input, size_t index,
                      dlrt_model_value_info* value) {
  if (!info || !value) return invalid(fn, "info and value must not be NULL");
  if (!DLRT_FITS(value, name)) return invalid(fn, "value->struct_size is too small (set it to sizeof(dlrt_model_value_info))");
  const auto& values = input ? info->info.inputs : info->info.outputs;
  if (index >= values.size()) return out_of_range(fn, input ? "input" : "output", index, values.size());
  const dlrt::ModelValueInfo& v = values[index];
  const std::vector<const char*>& dims = (input ? info->input_dims : info->output_dims)[index];
  value->name = v.name.c_str();
  if (DLRT_FITS(value, kind)) value->kind = v.kind.c_str();
  if (DLRT_FITS(value, dtype)) value->dtype = static_cast<dlrt_dtype>(v.dtype);
  if (DLRT_FITS(value, key_dtype)) value->key_dtype = static_cast<dlrt_dtype>(v.key_dtype);
  if (DLRT_FITS(value, has_shape)) value->has_shape = v.has_shape ? 1 : 0;
  if (DLRT_FITS(value, rank)) value->rank = v.shape.size();
  if (DLRT_FITS(value, shape)) value->shape = v.shape.empty() ? nullptr : v.shape.data();
  if (DLRT_FITS(value, dim_names)) value->dim_names = dims.empty() ? nullptr : dims.data();
  if (DLRT_FITS(value, type)) value->type = v.type.c_str();
  return nullptr;
}

template <typename Map>
auto entry_at(const Map& m, size_t index) {
  return std::next(m.begin(), static_cast<std::ptrdiff_t>(index));
}

}  // namespace

namespace dlrt::capi {

dlrt_model_info* new_model_info(const dlrt::ModelInfo& info) {
  auto* out = new dlrt_model_info{info, {}, {}};
  for (const auto& v : out->info.inputs) out->input_dims.push_back(c_strings(v.dim_names));
  for (const auto& v : out->info.outputs) out->output_dims.push_back(c_strings(v.dim_names));
  return out;
}

}  // namespace dlrt::capi

extern "C" {

// -------------------------------------------------------------- backends

dlrt_status* dlrt_backends_list(const char* only, int refresh, dlrt_backend_list** out) {
  constexpr const char* fn = "dlrt_backends_list";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = nullptr;
    dlrt::BackendsOptions options;
    options.refresh = refresh != 0;
    if (only) options.only = only;
    *out = new dlrt_backend_list{dlrt::backends(options)};
    return nullptr;
  });
}

void dlrt_backend_list_free(dlrt_backend_list** list) { free_handle(list); }

size_t dlrt_backend_list_count(const dlrt_backend_list* list) { return list ? list->backends.size() : 0; }

dlrt_status* dlrt_backend_list_get(const dlrt_backend_list* list, size_t index, dlrt_backend_info* info) {
  constexpr const char* fn = "dlrt_backend_list_get";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!info) return invalid(fn, "info is NULL");
    if (!DLRT_FITS(info, name)) return invalid(fn, "info->struct_size is too small (set it to sizeof(dlrt_backend_info))");
    const dlrt::BackendInfo* b = nullptr;
    if (dlrt_status* st = backend_at(fn, list, index, &b)) return st;
    info->name = b->name.c_str();
    if (DLRT_FITS(info, available)) info->available = b->available ? 1 : 0;
    if (DLRT_FITS(info, reason)) info->reason = b->reason.c_str();
    if (DLRT_FITS(info, fix)) info->fix = b->fix.c_str();
    if (DLRT_FITS(info, library_path)) info->library_path = b->library_path.c_str();
    if (DLRT_FITS(info, version)) info->version = b->version.c_str();
    if (DLRT_FITS(info, compatibility)) info->compatibility = b->compatibility.c_str();
    if (DLRT_FITS(info, tried_count)) info->tried_count = b->tried.size();
    if (DLRT_FITS(info, device_count)) info->device_count = b->devices.size();
    return nullptr;
  });
}

dlrt_status* dlrt_backend_list_tried(const dlrt_backend_list* list, size_t index, size_t tried_index,
                                     const char** tried) {
  constexpr const char* fn = "dlrt_backend_list_tried";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!tried) return invalid(fn, "tried is NULL");
    *tried = nullptr;
    const dlrt::BackendInfo* b = nullptr;
    if (dlrt_status* st = backend_at(fn, list, index, &b)) return st;
    if (tried_index >= b->tried.size()) return out_of_range(fn, "tried", tried_index, b->tried.size());
    *tried = b->tried[tried_index].c_str();
    return nullptr;
  });
}

dlrt_status* dlrt_backend_list_device(const dlrt_backend_list* list, size_t index, size_t device_index,
                                      dlrt_backend_device_info* info) {
  constexpr const char* fn = "dlrt_backend_list_device";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!info) return invalid(fn, "info is NULL");
    if (!DLRT_FITS(info, spec))
      return invalid(fn, "info->struct_size is too small (set it to sizeof(dlrt_backend_device_info))");
    const dlrt::BackendDeviceInfo* d = nullptr;
    if (dlrt_status* st = device_at(fn, list, index, device_index, &d)) return st;
    info->spec = d->spec.c_str();
    if (DLRT_FITS(info, backend)) info->backend = d->backend.c_str();
    if (DLRT_FITS(info, name)) info->name = d->name.c_str();
    if (DLRT_FITS(info, type)) info->type = dlrt::device_type_name(d->type);
    if (DLRT_FITS(info, is_virtual)) info->is_virtual = d->is_virtual ? 1 : 0;
    if (DLRT_FITS(info, hardware_id)) info->hardware_id = d->hardware ? d->hardware->id.c_str() : "";
    if (DLRT_FITS(info, metadata_count)) info->metadata_count = d->metadata.size();
    return nullptr;
  });
}

dlrt_status* dlrt_backend_list_device_metadata(const dlrt_backend_list* list, size_t index, size_t device_index,
                                               size_t meta_index, const char** key, const char** value) {
  constexpr const char* fn = "dlrt_backend_list_device_metadata";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!key || !value) return invalid(fn, "key and value must not be NULL");
    *key = *value = nullptr;
    const dlrt::BackendDeviceInfo* d = nullptr;
    if (dlrt_status* st = device_at(fn, list, index, device_index, &d)) return st;
    if (meta_index >= d->metadata.size()) return out_of_range(fn, "metadata", meta_index, d->metadata.size());
    auto it = entry_at(d->metadata, meta_index);
    *key = it->first.c_str();
    *value = it->second.c_str();
    return nullptr;
  });
}

// ------------------------------------------------------------ model info

dlrt_status* dlrt_model_info_read(const char* path, dlrt_model_info** out) {
  constexpr const char* fn = "dlrt_model_info_read";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = nullptr;
    if (!path) return invalid(fn, "path is NULL");
    auto info = dlrt::read_model_info(path);
    if (!info.ok()) return from_status(info.status());
    *out = new_model_info(*info);
    return nullptr;
  });
}

void dlrt_model_info_free(dlrt_model_info** info) { free_handle(info); }

dlrt_status* dlrt_model_info_summary(const dlrt_model_info* info, dlrt_model_summary* summary) {
  constexpr const char* fn = "dlrt_model_info_summary";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!info || !summary) return invalid(fn, "info and summary must not be NULL");
    if (!DLRT_FITS(summary, ir_version))
      return invalid(fn, "summary->struct_size is too small (set it to sizeof(dlrt_model_summary))");
    const dlrt::ModelInfo& m = info->info;
    const dlrt::ModelMetadata& meta = m.metadata;
    summary->ir_version = m.ir_version;
    if (DLRT_FITS(summary, producer_name)) summary->producer_name = meta.producer_name.c_str();
    if (DLRT_FITS(summary, producer_version)) summary->producer_version = meta.producer_version.c_str();
    if (DLRT_FITS(summary, domain)) summary->domain = meta.domain.c_str();
    if (DLRT_FITS(summary, description)) summary->description = meta.description.c_str();
    if (DLRT_FITS(summary, has_model_version)) summary->has_model_version = meta.version ? 1 : 0;
    if (DLRT_FITS(summary, model_version)) summary->model_version = meta.version.value_or(0);
    if (DLRT_FITS(summary, graph_name)) summary->graph_name = meta.graph_name.c_str();
    if (DLRT_FITS(summary, graph_description)) summary->graph_description = meta.graph_description.c_str();
    if (DLRT_FITS(summary, input_count)) summary->input_count = m.inputs.size();
    if (DLRT_FITS(summary, output_count)) summary->output_count = m.outputs.size();
    if (DLRT_FITS(summary, opset_count)) summary->opset_count = m.opsets.size();
    if (DLRT_FITS(summary, metadata_count)) summary->metadata_count = meta.custom.size();
    if (DLRT_FITS(summary, op_count)) summary->op_count = m.ops.size();
    if (DLRT_FITS(summary, node_count)) summary->node_count = m.node_count;
    if (DLRT_FITS(summary, subgraph_count)) summary->subgraph_count = m.subgraph_count;
    if (DLRT_FITS(summary, parameter_count)) summary->parameter_count = m.parameter_count;
    if (DLRT_FITS(summary, parameter_bytes)) summary->parameter_bytes = m.parameter_bytes;
    return nullptr;
  });
}

dlrt_status* dlrt_model_info_input(const dlrt_model_info* info, size_t index, dlrt_model_value_info* value) {
  return guarded("dlrt_model_info_input", [&] { return value_at("dlrt_model_info_input", info, true, index, value); });
}

dlrt_status* dlrt_model_info_output(const dlrt_model_info* info, size_t index, dlrt_model_value_info* value) {
  return guarded("dlrt_model_info_output", [&] { return value_at("dlrt_model_info_output", info, false, index, value); });
}

dlrt_status* dlrt_model_info_opset(const dlrt_model_info* info, size_t index, const char** domain, int64_t* version) {
  constexpr const char* fn = "dlrt_model_info_opset";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!info || !domain || !version) return invalid(fn, "info, domain and version must not be NULL");
    *domain = nullptr;
    *version = 0;
    if (index >= info->info.opsets.size()) return out_of_range(fn, "opset", index, info->info.opsets.size());
    auto it = entry_at(info->info.opsets, index);
    *domain = it->first.c_str();
    *version = it->second;
    return nullptr;
  });
}

dlrt_status* dlrt_model_info_op(const dlrt_model_info* info, size_t index, const char** domain, const char** op_type,
                                int64_t* count) {
  constexpr const char* fn = "dlrt_model_info_op";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!info || !domain || !op_type || !count) return invalid(fn, "info, domain, op_type and count must not be NULL");
    *domain = *op_type = nullptr;
    *count = 0;
    if (index >= info->info.ops.size()) return out_of_range(fn, "op", index, info->info.ops.size());
    const dlrt::OpCount& op = info->info.ops[index];
    *domain = op.domain.c_str();
    *op_type = op.op_type.c_str();
    *count = op.count;
    return nullptr;
  });
}

dlrt_status* dlrt_model_info_metadata(const dlrt_model_info* info, size_t index, const char** key, const char** value) {
  constexpr const char* fn = "dlrt_model_info_metadata";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!info || !key || !value) return invalid(fn, "info, key and value must not be NULL");
    *key = *value = nullptr;
    const auto& custom = info->info.metadata.custom;
    if (index >= custom.size()) return out_of_range(fn, "metadata", index, custom.size());
    auto it = entry_at(custom, index);
    *key = it->first.c_str();
    *value = it->second.c_str();
    return nullptr;
  });
}

}  // extern "C"
