// On-disk cache of compiled blobs in one folder, by key: entries are written
// atomically (temp file + rename) and verified when read (magic, format
// version, full key, lengths, checksum); a corrupt, truncated or stale entry is
// deleted and reported missing, never trusted. The folder is kept under a size
// limit by evicting least recently used entries. Which folder and limit
// (DLRT_CACHE_DIR, the config file's cache_dir, DLRT_CACHE_MAX_MB, DLRT_CACHE=0)
// is the runtime's configuration (runtime/blob_cache.h); the runtime keys
// compiled partitions by subgraph content, backend, runtime version, device,
// driver and compile options.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "backend/backend.h"

namespace dlrt {

class BlobCache {
 public:
  // `dir` empty disables the cache.
  BlobCache(std::string dir, uint64_t max_bytes);


  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // The blob stored under `key`, if a valid one exists. `why_not` (optional)
  // says why there is none: missing, or what was wrong with the entry.
  std::optional<backend::Blob> load(const std::string& key, std::string* why_not = nullptr) const;
  // Stores atomically, then evicts least recently used entries over the limit.
  Status store(const std::string& key, const backend::Blob& blob) const;

  // File name of the entry for `key`.
  std::string entry_path(const std::string& key) const;

 private:
  void evict() const;
  std::string dir_;
  uint64_t max_bytes_;
};

// The blob cache as the runtime configures it (DLRT_CACHE_DIR, else the
// config file's cache_dir, else the default folder; DLRT_CACHE=0 turns it
// off), re-read on every call. Backends keep what they compile at load time
// here (program binaries, kernel modules) and the release checks' verdicts.
// The runtime installs its configuration as the source before it registers
// any backend (runtime/backends.h); with no source installed (a backend made
// outside the runtime) the cache is off.
BlobCache configured_blob_cache();
void set_blob_cache_source(BlobCache (*source)());

}  // namespace dlrt
