#include "backend/blob_cache.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/file_io.h"
#include "core/hash.h"
#include "core/logging.h"

namespace dlrt {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'D', 'L', 'R', 'T', 'B', 'L', 'O', 'B'};
constexpr uint32_t kEntryVersion = 1;

void put_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_u64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }

// Reads little-endian integers and strings from an entry, failing on overrun.
class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  bool u32(uint32_t& v) { return raw(&v, 4); }
  bool u64(uint64_t& v) { return raw(&v, 8); }
  bool str(std::string& out, uint64_t n) {
    if (n > s_.size() - pos_) return false;
    out.assign(s_, pos_, n);
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  bool raw(void* p, size_t n) {
    if (n > s_.size() - pos_) return false;
    std::memcpy(p, s_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

BlobCache::BlobCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}


std::string BlobCache::entry_path(const std::string& key) const {
  return dir_ + "/" + hex64(fnv1a(key.data(), key.size())) + ".blob";
}

std::optional<backend::Blob> BlobCache::load(const std::string& key, std::string* why_not) const {
  auto fail = [&](const std::string& why) -> std::optional<backend::Blob> {
    if (why_not) *why_not = why;
    return std::nullopt;
  };
  if (!enabled()) return fail("the cache is disabled");
  const std::string path = entry_path(key);
  auto read = read_whole_file(path);
  if (!read.ok()) return fail("no entry");
  const std::string data = std::move(read).value();
  auto reject = [&](const std::string& why) {
    std::error_code ec;
    fs::remove(path, ec);
    DLRT_LOG(kWarn, "blob cache entry " + path + " rejected (" + why + "); recompiling");
    return fail("entry rejected: " + why);
  };
  if (data.size() < sizeof kMagic + 8 || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0)
    return reject("not a dlrt cache entry or truncated");
  uint64_t stored_sum;
  std::memcpy(&stored_sum, data.data() + data.size() - 8, 8);
  if (fnv1a(data.data(), data.size() - 8) != stored_sum) return reject("checksum mismatch (corrupt or truncated)");
  std::string body = data.substr(sizeof kMagic, data.size() - sizeof kMagic - 8);
  Reader r(body);
  uint32_t version = 0, key_len = 0, fmt_len = 0;
  uint64_t blob_len = 0;
  std::string stored_key, format;
  if (!r.u32(version)) return reject("truncated header");
  if (version != kEntryVersion) return reject("entry version " + std::to_string(version) + " is stale");
  if (!r.u32(key_len) || !r.str(stored_key, key_len)) return reject("truncated key");
  if (stored_key != key) return reject("key mismatch (hash collision or stale entry)");
  if (!r.u32(fmt_len) || !r.str(format, fmt_len) || !r.u64(blob_len)) return reject("truncated header");
  if (blob_len != body.size() - r.pos()) return reject("blob length does not match the file");
  backend::Blob blob;
  blob.format = format;
  blob.data.assign(body.begin() + static_cast<std::ptrdiff_t>(r.pos()), body.end());
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // LRU: mark as used
  return blob;
}

Status BlobCache::store(const std::string& key, const backend::Blob& blob) const {
  if (!enabled()) return Status::Ok();
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return IoError("cannot create cache folder " + dir_ + ": " + ec.message());
  std::string data(kMagic, sizeof kMagic);
  put_u32(data, kEntryVersion);
  put_u32(data, static_cast<uint32_t>(key.size()));
  data += key;
  put_u32(data, static_cast<uint32_t>(blob.format.size()));
  data += blob.format;
  put_u64(data, blob.data.size());
  data.append(reinterpret_cast<const char*>(blob.data.data()), blob.data.size());
  put_u64(data, fnv1a(data.data(), data.size()));

  static std::atomic<uint64_t> counter{0};
  const std::string path = entry_path(key);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError("cannot write cache entry " + tmp);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out.flush()) {
      fs::remove(tmp, ec);
      return IoError("writing cache entry " + tmp + " failed (disk full?)");
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return IoError("cannot move cache entry into place: " + path);
  }
  evict();
  return Status::Ok();
}

void BlobCache::evict() const {
  std::error_code ec;
  struct Entry {
    fs::path path;
    uint64_t size;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (!e.is_regular_file(ec) || e.path().extension() != ".blob") continue;
    uint64_t size = e.file_size(ec);
    entries.push_back({e.path(), size, e.last_write_time(ec)});
    total += size;
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const auto& e : entries) {
    if (total <= max_bytes_) break;
    if (fs::remove(e.path, ec)) total -= e.size;
  }
}

namespace {
std::atomic<BlobCache (*)()> g_source{nullptr};
}  // namespace

void set_blob_cache_source(BlobCache (*source)()) { g_source.store(source); }

BlobCache configured_blob_cache() {
  BlobCache (*source)() = g_source.load();
  return source ? source() : BlobCache("", 0);
}

}  // namespace dlrt
