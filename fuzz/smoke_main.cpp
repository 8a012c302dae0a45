// dlrt_fuzz_smoke: the harnesses of fuzz/ without libFuzzer, in the Release
// build, for `make test`'s fuzz smoke run (scripts/run_fuzz.sh BUILD smoke).
// `make fuzz` is the real fuzzing (clang, libFuzzer, ASan, UBSan).
//
//   dlrt_fuzz_smoke HARNESS [-runs=N] [-seed=S] [-timeout=SECONDS]
//                   [-memory_mb=MB] [-max_len=BYTES] [-artifact_prefix=DIR/] PATH...
//
// Runs HARNESS on every file of PATH... (a folder: its files, sorted), then on
// N inputs made from them by random mutations (bit flips, interesting bytes and
// integers, inserted, erased, repeated and spliced ranges) of a generator seeded
// with S: the same arguments run the same inputs. A crash (any fatal signal: a
// segfault, an abort, an uncaught exception, an input that runs longer than
// SECONDS) prints what happened, writes the input to
// <artifact_prefix>crash-<run> and exits 1. Memory is bounded by RLIMIT_AS
// (an allocation past it fails as it would on a full machine).
// Each harness source is compiled with its libFuzzer entry points renamed to
// dlrt_fuzz_<harness> and dlrt_fuzz_init_<harness> (cmake/fuzz.cmake); one
// left out of the build (fuzz_ops without clang's FuzzedDataProvider.h) is
// refused with the reason. The selftest harness (fuzz/smoke_selftest.cpp) fails
// on purpose, for the driver's own test (tests/fuzz/smoke_test.sh).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#define DLRT_FUZZ_HARNESSES(X) \
  X(model) X(npy) X(tokenizer) X(config) X(request) X(folder) X(ops) X(http) X(image) X(selftest)
#define DLRT_DECLARE(h)                                                   \
  extern "C" __attribute__((weak)) int dlrt_fuzz_##h(const uint8_t*, size_t); \
  extern "C" __attribute__((weak)) int dlrt_fuzz_init_##h(int*, char***);
DLRT_FUZZ_HARNESSES(DLRT_DECLARE)

namespace {

using TestOne = int (*)(const uint8_t*, size_t);
using Init = int (*)(int*, char***);
struct Harness {
  const char* name;
  TestOne test_one;
  Init init;
};
#define DLRT_ENTRY(h) Harness{#h, dlrt_fuzz_##h, dlrt_fuzz_init_##h},
const Harness kHarnesses[] = {DLRT_FUZZ_HARNESSES(DLRT_ENTRY)};

// What the signal handler reports: the input being run.
const uint8_t* g_data = nullptr;
size_t g_size = 0;
char g_what[512] = "";
char g_artifact[4096] = "";

void write_str(const char* s) { (void)!write(2, s, strlen(s)); }

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT: an abort, a failed check or an uncaught exception";
    default: return "a fatal signal";
  }
}

void on_fatal(int sig) {
  write_str(sig == SIGALRM ? "\ndlrt_fuzz_smoke: TIMEOUT on " : "\ndlrt_fuzz_smoke: CRASH (");
  if (sig != SIGALRM) {
    write_str(signal_name(sig));
    write_str(") on ");
  }
  write_str(g_what);
  write_str("\n");
  if (g_artifact[0] != '\0' && g_data != nullptr) {
    const int fd = open(g_artifact, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      (void)!write(fd, g_data, g_size);
      close(fd);
      write_str("dlrt_fuzz_smoke: input written to ");
      write_str(g_artifact);
      write_str("\n");
    }
  }
  _exit(1);
}

void install_handlers() {
  static std::vector<char> alt_stack(1 << 16);  // a stack overflow's SIGSEGV needs a stack of its own
  stack_t ss{};
  ss.ss_sp = alt_stack.data();
  ss.ss_size = alt_stack.size();
  sigaltstack(&ss, nullptr);
  struct sigaction sa{};
  sa.sa_handler = on_fatal;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) sigaction(sig, &sa, nullptr);
}

std::vector<uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The inputs of PATH: the file, or a folder's regular files (not recursive), sorted.
bool collect(const std::string& path, std::vector<std::filesystem::path>& out) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(path, ec))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
    return !ec;
  }
  if (std::filesystem::is_regular_file(path, ec)) {
    out.emplace_back(path);
    return true;
  }
  return false;
}

class Mutator {
 public:
  Mutator(uint64_t seed, size_t max_len) : rng_(seed), max_len_(max_len) {}

  size_t below(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  // One to four mutations of `in`, with `other` for a splice.
  std::vector<uint8_t> mutate(std::vector<uint8_t> in, const std::vector<uint8_t>& other) {
    const size_t count = 1 + below(4);
    for (size_t i = 0; i < count; ++i) once(in, other);
    if (in.size() > max_len_) in.resize(max_len_);
    return in;
  }

 private:
  void once(std::vector<uint8_t>& b, const std::vector<uint8_t>& other) {
    static constexpr uint8_t kBytes[] = {0, 1, 0x7f, 0x80, 0xff, '0', '9', '-', '"', '{', '}', '[', ']', ',', ':', '\\', '\r', '\n'};
    static constexpr uint64_t kInts[] = {0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff,
                                         0x7fffffffffffffff, 0x8000000000000000, 0xffffffffffffffff};
    switch (below(b.empty() ? 2 : 8)) {
      case 0: {  // insert 1-8 random or interesting bytes
        const size_t at = below(b.size() + 1), n = 1 + below(8);
        std::vector<uint8_t> bytes(n);
        for (auto& x : bytes) x = below(2) ? static_cast<uint8_t>(below(256)) : kBytes[below(std::size(kBytes))];
        b.insert(b.begin() + static_cast<ptrdiff_t>(at), bytes.begin(), bytes.end());
        break;
      }
      case 1: {  // splice: a range of the other input, inserted
        if (other.empty()) break;
        const size_t from = below(other.size()), n = 1 + below(std::min<size_t>(other.size() - from, 64));
        const size_t at = below(b.size() + 1);
        b.insert(b.begin() + static_cast<ptrdiff_t>(at), other.begin() + static_cast<ptrdiff_t>(from),
                 other.begin() + static_cast<ptrdiff_t>(from + n));
        break;
      }
      case 2:  // flip a bit
        b[below(b.size())] ^= static_cast<uint8_t>(1u << below(8));
        break;
      case 3:  // an interesting byte
        b[below(b.size())] = kBytes[below(std::size(kBytes))];
        break;
      case 4: {  // an interesting 1-8 byte little-endian integer
        const uint64_t v = kInts[below(std::size(kInts))];
        const size_t width = size_t{1} << below(4), at = below(b.size());
        for (size_t k = 0; k < width && at + k < b.size(); ++k) b[at + k] = static_cast<uint8_t>(v >> (8 * k));
        break;
      }
      case 5: {  // erase a range
        const size_t at = below(b.size()), n = 1 + below(std::min<size_t>(b.size() - at, 16));
        b.erase(b.begin() + static_cast<ptrdiff_t>(at), b.begin() + static_cast<ptrdiff_t>(at + n));
        break;
      }
      case 6: {  // repeat a range
        const size_t at = below(b.size()), n = 1 + below(std::min<size_t>(b.size() - at, 32));
        const std::vector<uint8_t> range(b.begin() + static_cast<ptrdiff_t>(at), b.begin() + static_cast<ptrdiff_t>(at + n));
        b.insert(b.begin() + static_cast<ptrdiff_t>(at), range.begin(), range.end());
        break;
      }
      default:  // cut the tail
        b.resize(below(b.size()));
        break;
    }
  }

  std::mt19937_64 rng_;
  size_t max_len_;
};

bool option(std::string_view arg, std::string_view name, std::string& value) {
  if (arg.size() <= name.size() + 2 || arg.substr(0, 1) != "-" || arg.substr(1, name.size()) != name ||
      arg[name.size() + 1] != '=')
    return false;
  value = std::string(arg.substr(name.size() + 2));
  return true;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "dlrt_fuzz_smoke: %s\nusage: dlrt_fuzz_smoke HARNESS [-runs=N] [-seed=S] [-timeout=SECONDS] "
               "[-memory_mb=MB] [-max_len=BYTES] [-artifact_prefix=DIR/] PATH...\nharnesses:",
               why);
  for (const Harness& h : kHarnesses) std::fprintf(stderr, " %s", h.name);
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage("no harness named");
  const Harness* harness = nullptr;
  for (const Harness& h : kHarnesses)
    if (std::string_view(argv[1]) == h.name) harness = &h;
  if (harness == nullptr) return usage((std::string("unknown harness ") + argv[1]).c_str());
  if (harness->test_one == nullptr) {
    std::fprintf(stderr, "dlrt_fuzz_smoke: the %s harness is not in this build (cmake/fuzz.cmake says why)\n", argv[1]);
    return 2;
  }

  uint64_t runs = 0, seed = 1, timeout = 10, memory_mb = 4096, max_len = 262144;
  std::string artifact_prefix, value;
  std::vector<std::filesystem::path> inputs;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    char* end = nullptr;
    auto number = [&](uint64_t& out) {
      out = std::strtoull(value.c_str(), &end, 10);
      return end != value.c_str() && *end == '\0';
    };
    bool ok = true;
    if (option(arg, "runs", value)) ok = number(runs);
    else if (option(arg, "seed", value)) ok = number(seed);
    else if (option(arg, "timeout", value)) ok = number(timeout) && timeout > 0;
    else if (option(arg, "memory_mb", value)) ok = number(memory_mb) && memory_mb > 0;
    else if (option(arg, "max_len", value)) ok = number(max_len) && max_len > 0;
    else if (option(arg, "artifact_prefix", value)) artifact_prefix = value;
    else if (!arg.empty() && arg[0] == '-') return usage((std::string("unknown option ") + argv[i]).c_str());
    else if (!collect(argv[i], inputs)) return usage((std::string("no such file or folder: ") + argv[i]).c_str());
    if (!ok) return usage((std::string("bad value in ") + argv[i]).c_str());
  }

  const rlimit limit{memory_mb << 20, memory_mb << 20};
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::perror("dlrt_fuzz_smoke: setrlimit");
  install_handlers();
  if (harness->init != nullptr) harness->init(&argc, &argv);

  const auto t0 = std::chrono::steady_clock::now();
  auto run_one = [&](const std::vector<uint8_t>& bytes, const std::string& what, uint64_t n) {
    std::snprintf(g_what, sizeof g_what, "%s (%zu bytes)", what.c_str(), bytes.size());
    if (!artifact_prefix.empty())
      std::snprintf(g_artifact, sizeof g_artifact, "%scrash-%llu", artifact_prefix.c_str(),
                    static_cast<unsigned long long>(n));
    // A copy of its own, so that reading past the end is not hidden by the vector's capacity.
    std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size() + 1]);
    std::copy(bytes.begin(), bytes.end(), copy.get());
    g_data = copy.get();
    g_size = bytes.size();
    alarm(static_cast<unsigned>(timeout));
    harness->test_one(copy.get(), bytes.size());
    alarm(0);
    g_data = nullptr;
  };

  std::vector<std::vector<uint8_t>> corpus;
  uint64_t n = 0;
  for (const auto& p : inputs) {
    corpus.push_back(read_file(p));
    run_one(corpus.back(), p.string(), n++);
  }
  Mutator mutator(seed, max_len);
  if (runs > 0 && corpus.empty()) corpus.emplace_back();  // mutations of the empty input
  for (uint64_t r = 0; r < runs; ++r) {
    const auto& base = corpus[mutator.below(corpus.size())];
    const auto& other = corpus[mutator.below(corpus.size())];
    run_one(mutator.mutate(base, other), "mutated run " + std::to_string(r + 1) + " (seed " + std::to_string(seed) + ")",
            n++);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("dlrt_fuzz_smoke %s: %zu inputs replayed, %llu mutated runs (seed %llu), no crash; %.1f s\n", harness->name,
              inputs.size(), static_cast<unsigned long long>(runs), static_cast<unsigned long long>(seed), s);
  return 0;
}
