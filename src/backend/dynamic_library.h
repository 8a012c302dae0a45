// The one place dlrt loads shared libraries at run time (dlopen/dlsym). Every
// backend that drives a vendor runtime, and every plugin, goes through it, so
// no vendor library is ever linked at build time.
//
//   LibrarySearch  where to look for a library, and what to tell the user when it is not there
//   DynamicLibrary one loaded library (RTLD_NOW | RTLD_LOCAL); never unloaded by default
//   DLRT_DYNAMIC_SYMBOL_TABLE  a typed struct of function pointers from an X-macro table,
//                  resolved all-or-nothing
//   LazyLibrary    thread-safe load on first use; remembers a failure and can retry it
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "dlrt/status.h"

namespace dlrt::backend {

// Where a library may be, tried in this order:
//   1. $env_var, when set: a file (loaded as is) or a folder (searched for `names`, then for
//      their versioned sonames `libX.so.*` found there, newest first);
//   2. the loader path: dlopen() of each bare name in `names` (LD_LIBRARY_PATH, ld.so.cache,
//      RPATH). List versioned sonames explicitly ("libOpenCL.so", "libOpenCL.so.1");
//   3. `folders`, each a folder or a glob pattern ("/opt/intel/openvino*/runtime/lib/intel64"),
//      searched like an env-var folder; matches are tried newest (last in sort order) first.
// The search stops at the first file that loads. When $env_var is set but does not load, the
// search goes on; the tried list says what happened to it.
struct LibrarySearch {
  std::string what;                  // for messages: "OpenVINO runtime"
  std::string env_var;               // "OPENVINO_LIB_PATH"; empty for none
  std::vector<std::string> names;    // "libopenvino_c.so", ...
  std::vector<std::string> folders;  // well-known install locations, glob patterns allowed
  std::string fix;                   // "install OpenVINO, or set OPENVINO_LIB_PATH to ..."
  // The library and its dependencies resolve symbols among themselves before
  // the process's (RTLD_DEEPBIND), so that C++ runtime code the host program
  // exports (its own instantiations of std::string members, say) is never
  // bound into the vendor's code. Off in sanitizer builds, whose runtimes
  // refuse RTLD_DEEPBIND, and in a program that copy-relocates the locale
  // facets' type information (program_copies_cxx_typeinfo).
  bool own_symbols_first = false;
};

class DynamicLibrary {
 public:
  // Searches as LibrarySearch describes. On failure: kDeviceUnavailable whose message names
  // `what`, lists every path tried with the loader's error, and ends with `fix`. `tried`
  // (optional) receives one "path: outcome" entry per attempt, on success too.
  static Result<std::shared_ptr<DynamicLibrary>> open(const LibrarySearch& search,
                                                      std::vector<std::string>* tried = nullptr);
  // Loads exactly `path` (a path or a bare soname). kDeviceUnavailable with dlerror's text.
  static Result<std::shared_ptr<DynamicLibrary>> open_file(const std::string& path, bool own_symbols_first = false);

  // Runtimes that start threads (OpenVINO, CUDA, most GPU drivers) crash when unmapped while
  // their threads run or at exit, so the handle is never dlclose'd unless asked for here.
  void set_unload_on_destroy(bool unload) { unload_on_destroy_ = unload; }
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  // The symbol's address, or nullptr when the library does not export it. Thread-safe.
  void* symbol(const char* name) const;
  // The path the library was opened by (as resolved by the loader when it can tell).
  const std::string& path() const { return path_; }

  // kDeviceUnavailable "symbol(s) X, Y missing from <path>", for symbol tables.
  Status missing_symbols(const std::vector<std::string>& names) const;

 private:
  DynamicLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_ = nullptr;
  std::string path_;
  bool unload_on_destroy_ = false;
};

// The first type-information object of a standard locale facet (typeinfo
// for std::ctype<char>, std::locale::facet, ...) that the main program
// copy-relocates into itself ("" when none): a position-dependent or PIE
// program using <regex> or locale facets directly gets such copies. A library
// loaded with RTLD_DEEPBIND into such a program looks facets up under other
// addresses than the C++ runtime registered them with.
std::string program_copies_cxx_typeinfo();

// Paths matching a glob pattern, newest version first ("lib.so.13" before
// "lib.so.9"): the order library searches try versioned sonames in.
std::vector<std::string> glob_newest_first(const std::string& pattern);

// The non-empty parts of a `sep`-separated list ("a::b" -> a, b), as search
// paths in environment variables are written.
std::vector<std::string> split_list(const std::string& s, char sep);

// Declares `struct Struct` with one typed function pointer per entry of TABLE, where TABLE is
//   #define MY_SYMBOLS(X) X(name, return_type, (arg types)) X(...) ...
// and gives it resolve(lib): all pointers or none (on any missing symbol every pointer is left
// null and the Status names each missing symbol and the file), and symbol_names().
// Resolution is not synchronised: resolve once (e.g. inside a LazyLibrary loader) and publish.
#define DLRT_DYNAMIC_SYMBOL_TABLE(Struct, TABLE)                                               \
  struct Struct {                                                                              \
    TABLE(DLRT_DL_SYMBOL_FIELD_)                                                               \
    ::dlrt::Status resolve(const ::dlrt::backend::DynamicLibrary& lib) {                       \
      Struct t;                                                                                \
      std::vector<std::string> missing;                                                        \
      TABLE(DLRT_DL_SYMBOL_RESOLVE_)                                                           \
      if (!missing.empty()) {                                                                  \
        *this = Struct{};                                                                      \
        return lib.missing_symbols(missing);                                                   \
      }                                                                                        \
      *this = t;                                                                               \
      return ::dlrt::Status::Ok();                                                             \
    }                                                                                          \
    static std::vector<std::string> symbol_names() { return {TABLE(DLRT_DL_SYMBOL_NAME_)}; } \
  }
#define DLRT_DL_SYMBOL_FIELD_(name, ret, args) ret(*name) args = nullptr;
#define DLRT_DL_SYMBOL_RESOLVE_(name, ret, args)                      \
  t.name = reinterpret_cast<ret(*) args>(lib.symbol(#name));          \
  if (t.name == nullptr) missing.push_back(#name);
#define DLRT_DL_SYMBOL_NAME_(name, ret, args) #name,

// Loads a library the first time someone asks, from any number of threads (one load; the
// others wait for its answer). A failure is kept with its reason, time and the paths tried;
// get(refresh=true) forgets it and searches again (re-reading the env var), so fixing the
// environment needs no restart. A success is final: the library stays loaded for the life of
// the process and refresh does not reload it (pointers into it may be in use).
class LazyLibrary {
 public:
  // Runs once per successful dlopen, under the lock, before the load counts as a success:
  // resolve symbol tables, check versions, start the runtime. Returns the runtime's version
  // ("" when unknown); an error makes the load fail with that reason.
  using OnLoad = std::function<Result<std::string>(const DynamicLibrary&)>;

  explicit LazyLibrary(LibrarySearch search, OnLoad on_load = {});

  // The availability, loading first if needed. Thread-safe.
  Availability get(bool refresh = false);
  // The loaded library; nullptr until a get() succeeded. Thread-safe.
  std::shared_ptr<const DynamicLibrary> library() const;
  // How many times a search ran (tests check that concurrent first calls load once).
  int load_attempts() const;
  const LibrarySearch& search() const { return search_; }

 private:
  const LibrarySearch search_;
  const OnLoad on_load_;
  mutable std::mutex mu_;
  bool attempted_ = false;
  int attempts_ = 0;
  Availability availability_;
  std::shared_ptr<DynamicLibrary> library_;
};

}  // namespace dlrt::backend
