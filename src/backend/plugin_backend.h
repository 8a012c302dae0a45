// A backend living in a plugin: a shared library implementing the C ABI of
// include/dlrt/plugin.h, loaded at run time through LazyLibrary.
//
// Plugins are named in DLRT_PLUGINS ("foo,bar"); plugin `foo` is looked for in
// $DLRT_PLUGIN_FOO_LIB (a file or a folder), then as libdlrt_plugin_foo.so on
// the loader path. Nothing is loaded at registration: the first is_available()
// (or any call that needs the plugin) loads it.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "backend/dynamic_library.h"
#include "backend/registry.h"
#include "dlrt/plugin.h"

namespace dlrt::backend {

// The plugin ABI as a symbol table; checked against plugin.h's declarations at compile time.
#define DLRT_PLUGIN_SYMBOLS(X)                                                                   \
  X(dlrt_plugin_api_version, uint32_t, (void))                                                   \
  X(dlrt_plugin_name, const char*, (void))                                                       \
  X(dlrt_plugin_is_available, int, (char*, size_t, char*, size_t))                               \
  X(dlrt_plugin_devices, int, (dlrt_plugin_device*, size_t, size_t*, char*, size_t))             \
  X(dlrt_plugin_supports, int, (const char*, const dlrt_plugin_op_query*, char*, size_t))        \
  X(dlrt_plugin_compile, int,                                                                    \
    (const char*, const void*, size_t, const char*, void**, size_t*, char*, size_t))             \
  X(dlrt_plugin_free, void, (void*))                                                             \
  X(dlrt_plugin_init, int, (const char*, const void*, size_t, const char*, void**, char*, size_t)) \
  X(dlrt_plugin_max_concurrent_runs, int32_t, (void*))                                           \
  X(dlrt_plugin_execute, int,                                                                    \
    (void*, const dlrt_plugin_tensor*, size_t, const dlrt_plugin_output_allocator*, size_t,       \
     char*, size_t))                                                                             \
  X(dlrt_plugin_destroy, void, (void*))

DLRT_DYNAMIC_SYMBOL_TABLE(PluginSymbols, DLRT_PLUGIN_SYMBOLS);

// Where plugin `name` is looked for: $DLRT_PLUGIN_<NAME>_LIB, then libdlrt_plugin_<name>.so.
LibrarySearch plugin_library_search(const std::string& name);

// Thread-safety: every method may be called from any thread (the plugin ABI requires the same
// of plugins). Blobs it makes have format "dlrt-plugin-<name>-v1" and hold dlrt's input/output
// counts ahead of the plugin's own bytes.
class PluginBackend : public Backend {
 public:
  // `name`: lowercase [a-z0-9_]+, the backend's name in device specs and reports.
  explicit PluginBackend(std::string name);
  // Same, with a custom search (tests; embedders that ship a plugin in their own folder).
  PluginBackend(std::string name, LibrarySearch search);

  std::string name() const override { return name_; }
  // Loads the plugin: checks its api version first, then resolves every ABI function (all or
  // none), checks that its name matches, and asks the plugin whether its runtime is usable.
  Availability is_available(bool refresh = false) override;
  std::vector<BackendDevice> devices(const std::vector<Device>& hardware) override;
  std::vector<NodeSupport> supports(const ir::Graph& graph, const BackendDevice& device) override;
  // Hands the plugin the subgraph serialized as ONNX.
  Result<Blob> compile(const ir::Graph& subgraph, const BackendDevice& device,
                       const CompileOptions& options) override;
  Result<Executable*> init(const Blob& blob, const CompileOptions& options, const BackendDevice& device) override;
  Result<std::vector<Tensor>> execute(Executable* exe, std::span<const Tensor> inputs) override;
  int max_concurrent_runs(const Executable* exe) const override;
  void destroy(Executable* exe) override;

  // How many times a load was attempted (tests: concurrent first calls load once).
  int load_attempts() const { return library_.load_attempts(); }

 private:
  Result<std::string> on_load(const DynamicLibrary& lib);
  // The symbol table when loaded; kDeviceUnavailable with the reason and fix otherwise.
  Result<const PluginSymbols*> loaded();
  std::string blob_format() const { return "dlrt-plugin-" + name_ + "-v1"; }

  const std::string name_;
  PluginSymbols symbols_;  // written once, by on_load under the library's lock
  LazyLibrary library_;
};

// Registers one PluginBackend per name in $DLRT_PLUGINS (comma-separated; blanks ignored).
// Loads nothing. An invalid or duplicate name is an error (kInvalidArgument); the other names
// are still registered and the first error is returned.
Status register_plugin_backends_from_env(BackendRegistry& registry);

}  // namespace dlrt::backend
