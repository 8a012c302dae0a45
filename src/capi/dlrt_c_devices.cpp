// The C API's device discovery (dlrt_devices_*, dlrt_device_list_*) and the
// process's memory budget (dlrt_memory_info_get).
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

#include "dlrt/device.h"
#include "dlrt/memory.h"
#include "capi/capi_util.h"

using namespace dlrt::capi;  // NOLINT: this file implements the C API with its helpers

struct dlrt_device_list {
  std::vector<dlrt::Device> devices;
};

extern "C" {

// --------------------------------------------------------------- devices

dlrt_status* dlrt_devices_discover(dlrt_device_list** out) {
  constexpr const char* fn = "dlrt_devices_discover";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = new dlrt_device_list{dlrt::discover_devices()};
    return nullptr;
  });
}

void dlrt_device_list_free(dlrt_device_list** list) { free_handle(list); }

size_t dlrt_device_list_count(const dlrt_device_list* list) { return list ? list->devices.size() : 0; }

namespace {

dlrt_status* device_at(const char* fn, const dlrt_device_list* list, size_t index, const dlrt::Device** d) {
  if (!list) return invalid(fn, "list is NULL");
  if (index >= list->devices.size())
    return make_status(DLRT_OUT_OF_RANGE, std::string(fn) + ": index " + std::to_string(index) + " but there are " +
                                              std::to_string(list->devices.size()) + " devices");
  *d = &list->devices[index];
  return nullptr;
}

}  // namespace

dlrt_status* dlrt_device_list_get(const dlrt_device_list* list, size_t index, dlrt_device_info* info) {
  return guarded("dlrt_device_list_get", [&]() -> dlrt_status* {
    constexpr const char* fn = "dlrt_device_list_get";
    if (!info) return invalid(fn, "info is NULL");
    if (!DLRT_FITS(info, id)) return invalid(fn, "info->struct_size is too small (set it to sizeof(dlrt_device_info))");
    const dlrt::Device* d = nullptr;
    if (dlrt_status* st = device_at(fn, list, index, &d)) return st;
    info->id = d->id.c_str();
    if (DLRT_FITS(info, type)) info->type = dlrt::device_type_name(d->type);
    if (DLRT_FITS(info, vendor)) info->vendor = d->vendor.c_str();
    if (DLRT_FITS(info, name)) info->name = d->name.c_str();
    if (DLRT_FITS(info, vendor_id)) info->vendor_id = d->vendor_id;
    if (DLRT_FITS(info, device_id)) info->device_id = d->device_id;
    if (DLRT_FITS(info, metadata_count)) info->metadata_count = d->metadata.size();
    return nullptr;
  });
}

dlrt_status* dlrt_device_list_metadata(const dlrt_device_list* list, size_t index, size_t meta_index, const char** key,
                                       const char** value) {
  return guarded("dlrt_device_list_metadata", [&]() -> dlrt_status* {
    constexpr const char* fn = "dlrt_device_list_metadata";
    if (!key || !value) return invalid(fn, "key and value must not be NULL");
    *key = *value = nullptr;
    const dlrt::Device* d = nullptr;
    if (dlrt_status* st = device_at(fn, list, index, &d)) return st;
    if (meta_index >= d->metadata.size())
      return make_status(DLRT_OUT_OF_RANGE, std::string(fn) + ": metadata index " + std::to_string(meta_index) +
                                                " but device " + d->id + " has " + std::to_string(d->metadata.size()));
    auto it = std::next(d->metadata.begin(), static_cast<std::ptrdiff_t>(meta_index));
    *key = it->first.c_str();
    *value = it->second.c_str();
    return nullptr;
  });
}

const char* dlrt_device_list_find_metadata(const dlrt_device_list* list, size_t index, const char* key) {
  if (!list || !key || index >= list->devices.size()) return nullptr;
  try {
    const auto& m = list->devices[index].metadata;
    auto it = m.find(key);
    return it == m.end() ? nullptr : it->second.c_str();
  } catch (...) {
    return nullptr;
  }
}

// --------------------------------------------------------- memory budget

dlrt_status* dlrt_memory_info_get(dlrt_memory_info* info) {
  return guarded("dlrt_memory_info_get", [&]() -> dlrt_status* {
    constexpr const char* fn = "dlrt_memory_info_get";
    if (!info) return invalid(fn, "info is NULL");
    if (!DLRT_FITS(info, max_tensor_bytes))
      return invalid(fn, "info->struct_size is too small (set it to sizeof(dlrt_memory_info))");
    // Read once: the strings handed out live as long as the process.
    static const dlrt::MemoryInfo m = dlrt::memory_info();
    info->max_tensor_bytes = m.max_tensor_bytes;
    if (DLRT_FITS(info, max_tensor_source)) info->max_tensor_source = m.max_tensor_source.c_str();
    if (DLRT_FITS(info, available_bytes)) info->available_bytes = m.available_bytes;
    if (DLRT_FITS(info, available_source)) info->available_source = m.available_source.c_str();
    if (DLRT_FITS(info, physical_bytes)) info->physical_bytes = m.physical_bytes;
    if (DLRT_FITS(info, cgroup_limit_bytes)) info->cgroup_limit_bytes = m.cgroup_limit_bytes.value_or(0);
    if (DLRT_FITS(info, rlimit_as_bytes)) info->rlimit_as_bytes = m.rlimit_as_bytes.value_or(0);
    if (DLRT_FITS(info, describe)) info->describe = m.describe.c_str();
    return nullptr;
  });
}

}  // extern "C"
