#include "backend/dynamic_library.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backend/search_summary.h"
#include "core/env.h"

namespace dlrt::backend {
namespace {

bool is_folder(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}


// "path: reason"; dlerror() usually starts with the path already.
std::string outcome(const std::string& path, const std::string& reason) {
  return reason.rfind(path, 0) == 0 ? reason : path + ": " + reason;
}

class Searcher {
 public:
  explicit Searcher(const LibrarySearch& s) : s_(s) {}

  // Tries one file or bare soname; true when it loaded.
  bool try_path(const std::string& path) {
    auto r = DynamicLibrary::open_file(path, s_.own_symbols_first);
    if (r.ok()) {
      loaded = std::move(r).value();
      tried.push_back(loaded->path() + ": loaded");
      return true;
    }
    tried.push_back(outcome(path, r.status().message()));
    return false;
  }

  // Tries each name in `folder`, then its versioned sonames found there.
  bool try_folder(const std::string& folder) {
    bool any = false;
    for (const auto& name : s_.names) {
      std::string base = folder + "/" + name;
      std::vector<std::string> candidates;
      if (exists(base)) candidates.push_back(base);
      for (auto& v : glob_newest_first(base + ".*")) candidates.push_back(std::move(v));
      for (const auto& c : candidates) {
        any = true;
        if (try_path(c)) return true;
      }
    }
    if (!any) tried.push_back(folder + ": no " + join_names() + " there");
    return false;
  }

  std::string join_names() const {
    std::string s;
    for (const auto& n : s_.names) s += (s.empty() ? "" : " or ") + n;
    return s;
  }

  std::vector<std::string> tried;
  std::shared_ptr<DynamicLibrary> loaded;

 private:
  const LibrarySearch& s_;
};

}  // namespace

std::vector<std::string> glob_newest_first(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return ::strverscmp(a.c_str(), b.c_str()) > 0; });
  return out;
}

std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t e = std::min(s.find(sep, pos), s.size());
    if (e > pos) out.push_back(s.substr(pos, e - pos));
    pos = e + 1;
  }
  return out;
}

namespace {

// Whether `name` is the typeinfo of std::locale::facet or of a standard
// facet (the types std::use_facet compares by address).
bool is_facet_typeinfo(const char* name) {
  if (std::strncmp(name, "_ZTI", 4) != 0) return false;
  static const char* const kFacets[] = {"locale5facet", "5ctype", "7collate", "8numpunct", "7num_get", "7num_put",
                                        "10moneypunct", "9money_get", "9money_put", "8messages", "7codecvt",
                                        "8time_get", "8time_put", "10__timepunct", "21__ctype_abstract_base"};
  for (const char* f : kFacets)
    if (std::strstr(name, f)) return true;
  return false;
}

// The first locale-facet type-information object of the C++ runtime the main
// program copy-relocates, read from its dynamic section; "" when none.
int first_copied_typeinfo(struct dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::string*>(data);
  // The main program is the first object dl_iterate_phdr reports.
  const ElfW(Addr) base = info->dlpi_addr;
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn)*>(base + info->dlpi_phdr[i].p_vaddr);
  if (dyn == nullptr) return 1;
  ElfW(Addr) rela = 0, symtab = 0, strtab = 0;
  size_t relasz = 0, relaent = sizeof(ElfW(Rela));
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_RELA) rela = d->d_un.d_ptr;
    if (d->d_tag == DT_RELASZ) relasz = d->d_un.d_val;
    if (d->d_tag == DT_RELAENT) relaent = d->d_un.d_val;
    if (d->d_tag == DT_SYMTAB) symtab = d->d_un.d_ptr;
    if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
  }
  if (rela == 0 || symtab == 0 || strtab == 0 || relaent == 0) return 1;
  // glibc relocates these addresses in place; other loaders may not.
  auto at = [&](ElfW(Addr) a) { return a < base ? base + a : a; };
#if defined(__x86_64__)
  constexpr unsigned kCopy = R_X86_64_COPY;
#elif defined(__aarch64__)
  constexpr unsigned kCopy = R_AARCH64_COPY;
#else
  return 1;
#endif
  const auto* syms = reinterpret_cast<const ElfW(Sym)*>(at(symtab));
  const char* names = reinterpret_cast<const char*>(at(strtab));
  for (size_t off = 0; off + sizeof(ElfW(Rela)) <= relasz; off += relaent) {
    const auto* r = reinterpret_cast<const ElfW(Rela)*>(at(rela) + off);
    if (ELF64_R_TYPE(r->r_info) != kCopy) continue;
    const char* n = names + syms[ELF64_R_SYM(r->r_info)].st_name;
    if (is_facet_typeinfo(n)) {
      *out = n;
      break;
    }
  }
  return 1;  // the main program only
}

}  // namespace

std::string program_copies_cxx_typeinfo() {
  static const std::string name = [] {
    std::string n;
    ::dl_iterate_phdr(first_copied_typeinfo, &n);
    return n;
  }();
  return name;
}

Result<std::shared_ptr<DynamicLibrary>> DynamicLibrary::open_file(const std::string& path, bool own_symbols_first) {
  int flags = RTLD_NOW | RTLD_LOCAL;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // Not when the program holds its own copies of the locale facets' type
  // information: the library would then look facets up by the originals
  // while the C++ runtime registered them under the program's copies
  // (OpenVINO 2026.4.1 crashed so). Without RTLD_DEEPBIND it binds to the
  // same copies. (Other copied typeinfo, e.g. std::runtime_error's, is fine
  // with RTLD_DEEPBIND, and OpenVINO 2025.4.1 aborted in free() without it.)
  if (own_symbols_first && program_copies_cxx_typeinfo().empty()) flags |= RTLD_DEEPBIND;
#else
  (void)own_symbols_first;
#endif
  ::dlerror();
  void* h = ::dlopen(path.c_str(), flags);
  if (h == nullptr) {
    const char* e = ::dlerror();
    return Status(StatusCode::kDeviceUnavailable, e ? e : path + ": dlopen failed");
  }
  std::string resolved = path;
  struct link_map* lm = nullptr;
  if (::dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != nullptr && lm->l_name != nullptr && lm->l_name[0] != '\0')
    resolved = lm->l_name;
  return std::shared_ptr<DynamicLibrary>(new DynamicLibrary(h, std::move(resolved)));
}

Result<std::shared_ptr<DynamicLibrary>> DynamicLibrary::open(const LibrarySearch& search,
                                                             std::vector<std::string>* tried) {
  Searcher s(search);
  bool ok = false;
  if (!search.env_var.empty()) {
    const char* v = env::get(search.env_var.c_str());
    if (v == nullptr || v[0] == '\0') {
      s.tried.push_back("$" + search.env_var + ": not set");
    } else {
      std::string value = v;
      size_t before = s.tried.size();
      ok = is_folder(value) ? s.try_folder(value) : s.try_path(value);
      for (size_t i = before; i < s.tried.size(); ++i) s.tried[i] = "$" + search.env_var + " -> " + s.tried[i];
    }
  }
  for (size_t i = 0; !ok && i < search.names.size(); ++i) ok = s.try_path(search.names[i]);
  for (size_t i = 0; !ok && i < search.folders.size(); ++i) {
    const std::string& pattern = search.folders[i];
    bool matched = false;
    for (const auto& folder : glob_newest_first(pattern)) {
      if (!is_folder(folder)) continue;
      matched = true;
      if ((ok = s.try_folder(folder))) break;
    }
    if (!matched) s.tried.push_back(pattern + ": no such folder");
  }
  if (tried != nullptr) *tried = s.tried;
  if (ok) return s.loaded;

  std::string msg = search_failure_summary(search.what, s.tried);
  if (!search.fix.empty()) msg += ". Fix: " + search.fix;
  return Status(StatusCode::kDeviceUnavailable, msg);
}

DynamicLibrary::~DynamicLibrary() {
  if (unload_on_destroy_ && handle_ != nullptr) ::dlclose(handle_);
}

void* DynamicLibrary::symbol(const char* name) const { return ::dlsym(handle_, name); }

Status DynamicLibrary::missing_symbols(const std::vector<std::string>& names) const {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return Status(StatusCode::kDeviceUnavailable, (names.size() == 1 ? "symbol " : "symbols ") + list +
                                                    " missing from " + path_ +
                                                    " (an incompatible or incomplete library)");
}

LazyLibrary::LazyLibrary(LibrarySearch search, OnLoad on_load)
    : search_(std::move(search)), on_load_(std::move(on_load)) {}

Availability LazyLibrary::get(bool refresh) {
  std::lock_guard<std::mutex> lk(mu_);
  if (attempted_ && (availability_.available || !refresh)) return availability_;
  attempted_ = true;
  ++attempts_;
  Availability a;
  a.checked_at = std::chrono::system_clock::now();
  auto lib = DynamicLibrary::open(search_, &a.tried);
  Status st = lib.status();
  if (lib.ok()) {
    a.library_path = lib.value()->path();
    Result<std::string> version = on_load_ ? on_load_(*lib.value()) : Result<std::string>(std::string());
    st = version.status();
    if (version.ok()) a.version = std::move(version).value();
  }
  if (st.ok()) {
    a.available = true;
    library_ = std::move(lib).value();
  } else {
    // Not found: the short line without the fix (a.fix holds it); a library
    // that loaded but failed on_load_: that failure.
    a.reason = lib.ok() ? st.message() : search_failure_summary(search_.what, a.tried);
    a.fix = search_.fix;
  }
  availability_ = std::move(a);
  return availability_;
}

std::shared_ptr<const DynamicLibrary> LazyLibrary::library() const {
  std::lock_guard<std::mutex> lk(mu_);
  return library_;
}

int LazyLibrary::load_attempts() const {
  std::lock_guard<std::mutex> lk(mu_);
  return attempts_;
}

}  // namespace dlrt::backend
