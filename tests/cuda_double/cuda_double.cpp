// A fake NVIDIA stack for tests on machines without a GPU: built three times
// (tests/cmake/cuda_double.cmake) as libcuda.so.1 (DLRT_FAKE_PART_DRIVER),
// libnvrtc.so.13 (DLRT_FAKE_PART_NVRTC) and libcublas.so.13
// (DLRT_FAKE_PART_CUBLAS) in build/tests/cuda_double/, each exporting exactly
// the functions of src/backends/cuda/cuda_api.h's tables with their types.
//
// Device memory is host memory, so copies really copy; kernels and GEMMs do
// nothing (a "successful" run's numbers are meaningless: tests only check
// that fallbacks give the CPU's results). Controlled by the environment, read
// at each call:
//   DLRT_FAKE_CUDA_DEVICES=N          devices (default 1; 0: cuDeviceGetCount says 0)
//   DLRT_FAKE_CUDA_NAME=...           device name (default "NVIDIA Fake GPU"; device i > 0 gets " #i")
//   DLRT_FAKE_CUDA_CC=8.6             compute capability (default 9.0)
//   DLRT_FAKE_CUDA_MEMORY_MB=N        memory per device (default 16384); allocations past it fail
//   DLRT_FAKE_CUDA_PCI=a,b            PCI bus ids as the driver spells them (default 0000:4N:00.0, upper case)
//   DLRT_FAKE_CUDA_DRIVER_VERSION=N   cuDriverGetVersion (default 13000)
//   DLRT_FAKE_NVRTC_VERSION=M.m       nvrtcVersion (default 13.0)
//   DLRT_FAKE_CUDA_FAIL=a,b,...       faults: init (cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH),
//                                     context (cuDevicePrimaryCtxRetain: CUDA_ERROR_INVALID_CONTEXT),
//                                     module (cuModuleLoadData*: CUDA_ERROR_INVALID_IMAGE),
//                                     nvrtc (nvrtcCompileProgram: NVRTC_ERROR_COMPILATION),
//                                     oom (cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY),
//                                     launch (cuLaunchKernel / cuGraphLaunch: CUDA_ERROR_LAUNCH_FAILED),
//                                     sync (cuStreamSynchronize: CUDA_ERROR_LAUNCH_FAILED, as an
//                                     asynchronous kernel fault reports itself),
//                                     cublas (cublasCreate: CUBLAS_STATUS_NOT_INITIALIZED)
//   DLRT_FAKE_CUDA_FAIL_AFTER=N       launch/sync faults only after N successful launches
//   DLRT_FAKE_CUDA_STATS=FILE         at exit, append "key=value" counters (per library)
//   DLRT_FAKE_CUDA_SYNC_US=N          cuStreamSynchronize takes N microseconds (a run that keeps
//                                     the "GPU" busy, for tests of concurrent callers)
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cuda/cuda_api.h"

using namespace dlrt::cuda;

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

std::string env(const char* name, const char* def = "") {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): tests set the environment before loading
  return v ? std::string(v) : std::string(def);
}
[[maybe_unused]] long env_long(const char* name, long def) {
  std::string v = env(name);
  return v.empty() ? def : std::atol(v.c_str());
}
[[maybe_unused]] bool fault(const char* what) {
  std::string list = "," + env("DLRT_FAKE_CUDA_FAIL") + ",";
  return list.find("," + std::string(what) + ",") != std::string::npos;
}

std::mutex mu;
std::map<std::string, long> stats;
void count(const char* key, long n = 1) {
  std::lock_guard<std::mutex> lk(mu);
  stats[key] += n;
}

struct StatsWriter {
  const char* part;
  ~StatsWriter() {
    std::string path = env("DLRT_FAKE_CUDA_STATS");
    if (path.empty()) return;
    if (FILE* f = std::fopen(path.c_str(), "a")) {
      std::lock_guard<std::mutex> lk(mu);
      std::fprintf(f, "%s.loaded=1\n", part);
      for (const auto& [k, v] : stats) std::fprintf(f, "%s=%ld\n", k.c_str(), v);
      std::fclose(f);
    }
  }
};

}  // namespace

// ============================================================================
#if defined(DLRT_FAKE_PART_DRIVER)
namespace {

StatsWriter writer{"driver"};
bool initialized = false;

int device_count() { return static_cast<int>(env_long("DLRT_FAKE_CUDA_DEVICES", 1)); }
bool valid_device(CUdevice d) { return initialized && d >= 0 && d < device_count(); }

struct FakeContext {
  int device = 0;
  int refs = 0;
};
FakeContext contexts[16];
thread_local CUcontext current = nullptr;

struct FakeStream {
  bool capturing = false;
  bool capture_poisoned = false;
  long captured = 0;
};
struct FakeGraph {
  long launches = 0;
  bool poisoned = false;
};
struct FakeFunction {
  std::string name;
};
// A module owns the functions looked up in it (as in CUDA: a CUfunction is
// valid until its module is unloaded).
struct FakeModule {
  std::vector<std::unique_ptr<FakeFunction>> functions;
};

std::map<CUdeviceptr, size_t> allocations;
size_t allocated = 0;
long successful_launches = 0;

uint64_t memory_bytes() { return static_cast<uint64_t>(env_long("DLRT_FAKE_CUDA_MEMORY_MB", 16384)) << 20; }

bool launch_fault(const char* what) {
  if (!fault(what)) return false;
  std::lock_guard<std::mutex> lk(mu);
  return successful_launches >= env_long("DLRT_FAKE_CUDA_FAIL_AFTER", 0);
}

const char* error_name(CUresult r) {
  switch (r) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
    case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
    case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_LAUNCH_FAILED: return "CUDA_ERROR_LAUNCH_FAILED";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    default: return nullptr;
  }
}
const char* error_text(CUresult r) {
  switch (r) {
    case CUDA_SUCCESS: return "no error";
    case CUDA_ERROR_INVALID_VALUE: return "invalid argument";
    case CUDA_ERROR_OUT_OF_MEMORY: return "out of memory";
    case CUDA_ERROR_NOT_INITIALIZED: return "initialization error";
    case CUDA_ERROR_NO_DEVICE: return "no CUDA-capable device is detected";
    case CUDA_ERROR_INVALID_DEVICE: return "invalid device ordinal";
    case CUDA_ERROR_INVALID_IMAGE: return "device kernel image is invalid";
    case CUDA_ERROR_INVALID_CONTEXT: return "invalid device context";
    case CUDA_ERROR_INVALID_HANDLE: return "invalid resource handle";
    case CUDA_ERROR_NOT_FOUND: return "named symbol not found";
    case CUDA_ERROR_LAUNCH_FAILED: return "unspecified launch failure";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "system has unsupported display driver / cuda driver combination";
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: return "operation failed due to a previous error during capture";
    default: return nullptr;
  }
}

}  // namespace

FAKE_API CUresult cuInit(unsigned flags) {
  count("inits");
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (fault("init")) return CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
  initialized = true;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDriverGetVersion(int* v) {
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  *v = static_cast<int>(env_long("DLRT_FAKE_CUDA_DRIVER_VERSION", 13000));
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceGetCount(int* n) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  *n = device_count();
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!d || ordinal < 0 || ordinal >= device_count()) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
  if (!valid_device(d)) return CUDA_ERROR_INVALID_DEVICE;
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::string n = env("DLRT_FAKE_CUDA_NAME", "NVIDIA Fake GPU");
  if (d > 0) n += " #" + std::to_string(d);
  std::snprintf(name, static_cast<size_t>(len), "%s", n.c_str());
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice d) {
  if (!valid_device(d)) return CUDA_ERROR_INVALID_DEVICE;
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  std::string cc = env("DLRT_FAKE_CUDA_CC", "9.0");
  int major = std::atoi(cc.c_str()), minor = cc.find('.') != std::string::npos ? std::atoi(cc.c_str() + cc.find('.') + 1) : 0;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = minor; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 233472; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = 0x41 + d; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *v = 0; break;
    default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice d) {
  if (!valid_device(d)) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = memory_bytes();
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceGetPCIBusId(char* id, int len, CUdevice d) {
  if (!valid_device(d)) return CUDA_ERROR_INVALID_DEVICE;
  if (!id || len < 13) return CUDA_ERROR_INVALID_VALUE;
  std::string list = env("DLRT_FAKE_CUDA_PCI"), mine;
  for (int i = 0, pos = 0; i <= d && pos <= static_cast<int>(list.size()); ++i) {
    size_t comma = list.find(',', pos);
    mine = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? static_cast<int>(list.size()) + 1 : static_cast<int>(comma) + 1;
    if (i < d) mine.clear();
  }
  if (mine.empty()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0000:%02X:00.0", 0x41 + d);
    mine = buf;
  }
  std::snprintf(id, static_cast<size_t>(len), "%s", mine.c_str());
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceGetUuid_v2(CUuuid* u, CUdevice d) {
  if (!valid_device(d)) return CUDA_ERROR_INVALID_DEVICE;
  for (int i = 0; i < 16; ++i) u->bytes[i] = static_cast<char>(0x10 * d + i + 1);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  if (!valid_device(d) || d >= 16) return CUDA_ERROR_INVALID_DEVICE;
  if (fault("context")) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard<std::mutex> lk(mu);
  contexts[d].device = d;
  ++contexts[d].refs;
  ++stats["contexts_retained"];
  *c = reinterpret_cast<CUcontext>(&contexts[d]);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  if (!valid_device(d) || d >= 16) return CUDA_ERROR_INVALID_DEVICE;
  std::lock_guard<std::mutex> lk(mu);
  if (contexts[d].refs <= 0) return CUDA_ERROR_INVALID_CONTEXT;
  --contexts[d].refs;
  ++stats["contexts_released"];
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuCtxSetCurrent(CUcontext c) {
  current = c;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuCtxGetCurrent(CUcontext* c) {
  *c = current;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuCtxSynchronize() { return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }

FAKE_API CUresult cuStreamCreate(CUstream* s, unsigned) {
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  *s = reinterpret_cast<CUstream>(new FakeStream);
  count("streams_created");
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamDestroy_v2(CUstream s) {
  delete reinterpret_cast<FakeStream*>(s);
  count("streams_destroyed");
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamSynchronize(CUstream s) {
  if (s && reinterpret_cast<FakeStream*>(s)->capturing) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  if (launch_fault("sync")) return CUDA_ERROR_LAUNCH_FAILED;
  static const long sync_us = env_long("DLRT_FAKE_CUDA_SYNC_US", 0);
  if (sync_us > 0) ::usleep(static_cast<useconds_t>(sync_us));
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  if (fault("oom")) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> lk(mu);
  if (bytes == 0 || allocated + bytes > memory_bytes()) return bytes == 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
  void* m = std::calloc(1, bytes);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = reinterpret_cast<CUdeviceptr>(m);
  allocations[*p] = bytes;
  allocated += bytes;
  ++stats["allocs"];
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemFree_v2(CUdeviceptr p) {
  std::lock_guard<std::mutex> lk(mu);
  auto it = allocations.find(p);
  if (it == allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  allocated -= it->second;
  allocations.erase(it);
  std::free(reinterpret_cast<void*>(p));
  ++stats["frees"];
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard<std::mutex> lk(mu);
  *total = memory_bytes();
  *free_bytes = *total - allocated;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream) {
  if (n && (!dst || !src)) return CUDA_ERROR_INVALID_VALUE;
  if (n) std::memcpy(reinterpret_cast<void*>(dst), src, n);
  count("copies_h2d");
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream) {
  if (n && (!dst || !src)) return CUDA_ERROR_INVALID_VALUE;
  if (n) std::memcpy(dst, reinterpret_cast<const void*>(src), n);
  count("copies_d2h");
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
  if (n && (!dst || !src)) return CUDA_ERROR_INVALID_VALUE;
  if (n) std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream) {
  if (n && !dst) return CUDA_ERROR_INVALID_VALUE;
  if (n) std::memset(reinterpret_cast<void*>(dst), v, n);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemAllocHost_v2(void** p, size_t n) {
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  *p = std::malloc(n ? n : 1);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
FAKE_API CUresult cuMemFreeHost(void* p) {
  std::free(p);
  return CUDA_SUCCESS;
}

// Accepts only what the fake NVRTC makes.
static CUresult load_module(CUmodule* m, const void* image) {
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (!m || !image) return CUDA_ERROR_INVALID_VALUE;
  if (fault("module")) return CUDA_ERROR_INVALID_IMAGE;
  const char* s = static_cast<const char*>(image);
  if (std::strncmp(s, "DLRT-FAKE-CUBIN", 15) != 0 && std::strncmp(s, "// DLRT-FAKE-PTX", 16) != 0)
    return CUDA_ERROR_INVALID_IMAGE;
  *m = reinterpret_cast<CUmodule>(new FakeModule);
  count("module_loads");
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuModuleLoadData(CUmodule* m, const void* image) { return load_module(m, image); }
FAKE_API CUresult cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned, CUjit_option*, void**) {
  return load_module(m, image);
}
FAKE_API CUresult cuModuleUnload(CUmodule m) {
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  delete reinterpret_cast<FakeModule*>(m);
  count("module_unloads");
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  if (!m || !f || !name || !*name) return CUDA_ERROR_INVALID_VALUE;
  auto* module = reinterpret_cast<FakeModule*>(m);
  std::lock_guard<std::mutex> lk(mu);
  module->functions.push_back(std::make_unique<FakeFunction>(FakeFunction{name}));
  *f = reinterpret_cast<CUfunction>(module->functions.back().get());
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute, int) {
  return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
FAKE_API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shared, CUstream s, void** params, void** extra) {
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  if (!f || gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 ||
      static_cast<unsigned long long>(bx) * by * bz > 1024 || shared > 232448 || (params && extra))
    return CUDA_ERROR_INVALID_VALUE;
  auto* st = reinterpret_cast<FakeStream*>(s);
  if (st && st->capturing) {  // recorded, run (and failing) when the graph launches
    ++st->captured;
    return CUDA_SUCCESS;
  }
  if (launch_fault("launch")) return CUDA_ERROR_LAUNCH_FAILED;
  std::lock_guard<std::mutex> lk(mu);
  ++successful_launches;
  ++stats["launches"];
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuGetErrorName(CUresult r, const char** s) {
  *s = error_name(r);
  return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
FAKE_API CUresult cuGetErrorString(CUresult r, const char** s) {
  *s = error_text(r);
  return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
FAKE_API CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode) {
  auto* st = reinterpret_cast<FakeStream*>(s);
  if (!st || st->capturing) return CUDA_ERROR_INVALID_VALUE;  // the legacy stream cannot be captured
  st->capturing = true;
  st->captured = 0;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuStreamEndCapture(CUstream s, CUgraph* g) {
  auto* st = reinterpret_cast<FakeStream*>(s);
  if (!st || !st->capturing) return CUDA_ERROR_INVALID_VALUE;
  st->capturing = false;
  *g = reinterpret_cast<CUgraph>(new FakeGraph{st->captured, false});
  count("graphs_captured");
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuGraphInstantiateWithFlags(CUgraphExec* e, CUgraph g, unsigned long long) {
  if (!g || !e) return CUDA_ERROR_INVALID_VALUE;
  *e = reinterpret_cast<CUgraphExec>(new FakeGraph(*reinterpret_cast<FakeGraph*>(g)));
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuGraphLaunch(CUgraphExec e, CUstream) {
  if (!e) return CUDA_ERROR_INVALID_VALUE;
  if (launch_fault("launch")) return CUDA_ERROR_LAUNCH_FAILED;
  std::lock_guard<std::mutex> lk(mu);
  ++stats["graph_launches"];
  long n = reinterpret_cast<FakeGraph*>(e)->launches;
  successful_launches += n;
  stats["launches"] += n;
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuGraphExecDestroy(CUgraphExec e) {
  delete reinterpret_cast<FakeGraph*>(e);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuGraphDestroy(CUgraph g) {
  delete reinterpret_cast<FakeGraph*>(g);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuEventCreate(CUevent* e, unsigned) {
  *e = reinterpret_cast<CUevent>(new int(0));
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuEventDestroy_v2(CUevent e) {
  delete reinterpret_cast<int*>(e);
  return CUDA_SUCCESS;
}
FAKE_API CUresult cuEventRecord(CUevent e, CUstream) { return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
FAKE_API CUresult cuEventSynchronize(CUevent e) { return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
FAKE_API CUresult cuEventElapsedTime(float* ms, CUevent a, CUevent b) {
  if (!a || !b) return CUDA_ERROR_INVALID_HANDLE;
  *ms = 0.01f;
  return CUDA_SUCCESS;
}

// Every function of the table exists here with exactly its type.
#define FAKE_CHECK(name, ret, args) \
  static_assert(std::is_same_v<decltype(&::name), ret(*) args>, "cuda_double: " #name " differs from cuda_api.h");
DLRT_CUDA_DRIVER_SYMBOLS(FAKE_CHECK)
#undef FAKE_CHECK

// ============================================================================
#elif defined(DLRT_FAKE_PART_NVRTC)
namespace {

StatsWriter writer{"nvrtc"};

struct FakeProgram {
  std::string source, output, log;
  bool compiled = false;
};

}  // namespace

FAKE_API const char* nvrtcGetErrorString(nvrtcResult r) {
  switch (r) {
    case NVRTC_SUCCESS: return "NVRTC_SUCCESS";
    case NVRTC_ERROR_OUT_OF_MEMORY: return "NVRTC_ERROR_OUT_OF_MEMORY";
    case NVRTC_ERROR_INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
    case NVRTC_ERROR_INVALID_PROGRAM: return "NVRTC_ERROR_INVALID_PROGRAM";
    case NVRTC_ERROR_INVALID_OPTION: return "NVRTC_ERROR_INVALID_OPTION";
    case NVRTC_ERROR_COMPILATION: return "NVRTC_ERROR_COMPILATION";
    default: return "NVRTC_ERROR unknown";
  }
}
FAKE_API nvrtcResult nvrtcVersion(int* major, int* minor) {
  if (!major || !minor) return NVRTC_ERROR_INVALID_INPUT;
  std::string v = env("DLRT_FAKE_NVRTC_VERSION", "13.0");
  *major = std::atoi(v.c_str());
  *minor = v.find('.') != std::string::npos ? std::atoi(v.c_str() + v.find('.') + 1) : 0;
  return NVRTC_SUCCESS;
}
FAKE_API nvrtcResult nvrtcCreateProgram(nvrtcProgram* p, const char* src, const char*, int num_headers,
                                        const char* const*, const char* const*) {
  if (!p || !src || num_headers < 0) return NVRTC_ERROR_INVALID_INPUT;
  auto* fp = new FakeProgram;
  fp->source = src;
  *p = reinterpret_cast<nvrtcProgram>(fp);
  count("programs");
  return NVRTC_SUCCESS;
}
FAKE_API nvrtcResult nvrtcCompileProgram(nvrtcProgram p, int n, const char* const* opts) {
  auto* fp = reinterpret_cast<FakeProgram*>(p);
  if (!fp || n < 0 || (n > 0 && !opts)) return NVRTC_ERROR_INVALID_INPUT;
  count("compiles");
  if (fault("nvrtc")) {
    fp->log = "dlrt_kernels.cu(1): error: DLRT_FAKE_CUDA_FAIL=nvrtc asked this compile to fail";
    return NVRTC_ERROR_COMPILATION;
  }
  bool cubin = false;
  for (int i = 0; i < n; ++i) {
    std::string o = opts[i] ? opts[i] : "";
    if (o.rfind("-arch=sm_", 0) == 0 || o.rfind("--gpu-architecture=sm_", 0) == 0) cubin = true;
  }
  fp->output = std::string(cubin ? "DLRT-FAKE-CUBIN" : "// DLRT-FAKE-PTX") + " " + std::to_string(fp->source.size());
  fp->output.push_back('\0');
  fp->log = "";
  fp->compiled = true;
  return NVRTC_SUCCESS;
}
FAKE_API nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram p, size_t* n) {
  auto* fp = reinterpret_cast<FakeProgram*>(p);
  if (!fp || !n) return NVRTC_ERROR_INVALID_INPUT;
  *n = fp->log.size() + 1;
  return NVRTC_SUCCESS;
}
FAKE_API nvrtcResult nvrtcGetProgramLog(nvrtcProgram p, char* out) {
  auto* fp = reinterpret_cast<FakeProgram*>(p);
  if (!fp || !out) return NVRTC_ERROR_INVALID_INPUT;
  std::memcpy(out, fp->log.c_str(), fp->log.size() + 1);
  return NVRTC_SUCCESS;
}
static nvrtcResult output_size(nvrtcProgram p, size_t* n, bool want_cubin) {
  auto* fp = reinterpret_cast<FakeProgram*>(p);
  if (!fp || !n) return NVRTC_ERROR_INVALID_INPUT;
  if (!fp->compiled) return NVRTC_ERROR_INVALID_PROGRAM;
  bool is_cubin = fp->output.rfind("DLRT-FAKE-CUBIN", 0) == 0;
  *n = is_cubin == want_cubin ? fp->output.size() : 0;
  return is_cubin == want_cubin ? NVRTC_SUCCESS : NVRTC_ERROR_INVALID_PROGRAM;
}
static nvrtcResult output(nvrtcProgram p, char* out, bool want_cubin) {
  size_t n = 0;
  nvrtcResult r = output_size(p, &n, want_cubin);
  if (r != NVRTC_SUCCESS) return r;
  if (!out) return NVRTC_ERROR_INVALID_INPUT;
  std::memcpy(out, reinterpret_cast<FakeProgram*>(p)->output.data(), n);
  return NVRTC_SUCCESS;
}
FAKE_API nvrtcResult nvrtcGetPTXSize(nvrtcProgram p, size_t* n) { return output_size(p, n, false); }
FAKE_API nvrtcResult nvrtcGetPTX(nvrtcProgram p, char* out) { return output(p, out, false); }
FAKE_API nvrtcResult nvrtcGetCUBINSize(nvrtcProgram p, size_t* n) { return output_size(p, n, true); }
FAKE_API nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char* out) { return output(p, out, true); }
FAKE_API nvrtcResult nvrtcDestroyProgram(nvrtcProgram* p) {
  if (!p || !*p) return NVRTC_ERROR_INVALID_PROGRAM;
  delete reinterpret_cast<FakeProgram*>(*p);
  *p = nullptr;
  return NVRTC_SUCCESS;
}

#define FAKE_CHECK(name, ret, args) \
  static_assert(std::is_same_v<decltype(&::name), ret(*) args>, "cuda_double: " #name " differs from cuda_api.h");
DLRT_NVRTC_SYMBOLS(FAKE_CHECK)
#undef FAKE_CHECK

// ============================================================================
#elif defined(DLRT_FAKE_PART_CUBLAS)
namespace {

StatsWriter writer{"cublas"};

struct FakeHandle {
  CUstream stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

}  // namespace

FAKE_API cublasStatus_t cublasCreate_v2(cublasHandle_t* h) {
  if (!h) return CUBLAS_STATUS_INVALID_VALUE;
  if (fault("cublas")) return CUBLAS_STATUS_NOT_INITIALIZED;
  *h = reinterpret_cast<cublasHandle_t>(new FakeHandle);
  count("cublas_handles");
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_API cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete reinterpret_cast<FakeHandle*>(h);
  count("cublas_handles_destroyed");
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_API cublasStatus_t cublasSetStream_v2(cublasHandle_t h, CUstream s) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  reinterpret_cast<FakeHandle*>(h)->stream = s;
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_API cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  reinterpret_cast<FakeHandle*>(h)->math = m;
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_API cublasStatus_t cublasGetVersion_v2(cublasHandle_t h, int* v) {
  if (!h || !v) return CUBLAS_STATUS_INVALID_VALUE;
  *v = 130000;
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_API cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void*, size_t) {
  return h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}
FAKE_API cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t, cublasOperation_t, int m, int n, int k,
                                       const float*, const float*, int, const float*, int, const float*, float*, int) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0) return CUBLAS_STATUS_INVALID_VALUE;
  count("gemms");
  return CUBLAS_STATUS_SUCCESS;
}
FAKE_API cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t, cublasOperation_t, int m,
                                                  int n, int k, const float*, const float*, int, long long,
                                                  const float*, int, long long, const float*, float*, int, long long,
                                                  int batch) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0 || batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
  count("gemms");
  return CUBLAS_STATUS_SUCCESS;
}

#define FAKE_CHECK(name, ret, args) \
  static_assert(std::is_same_v<decltype(&::name), ret(*) args>, "cuda_double: " #name " differs from cuda_api.h");
DLRT_CUBLAS_SYMBOLS(FAKE_CHECK)
#undef FAKE_CHECK

#else
#error "build with one of DLRT_FAKE_PART_DRIVER, DLRT_FAKE_PART_NVRTC, DLRT_FAKE_PART_CUBLAS"
#endif
