// Test plugins for the C plugin ABI (include/dlrt/plugin.h), built several times from this one
// file (see tests/CMakeLists.txt), one behaviour each:
//   good      runs Add, Mul (numpy broadcasting), Relu and MatMul on float32 itself; device "0"
//             (gpu) and virtual device "V" (compiles, never inits)
//   nosym     like good but does not export dlrt_plugin_execute
//   initfail  init always fails
//   execfail  execute fails from call N on, per handle (N = $DLRT_TEST_FAIL_AFTER, default 3)
//   slow      compile sleeps $DLRT_TEST_COMPILE_MS (default 2000) ms first
// Every plugin reports itself unavailable while $DLRT_TEST_PLUGIN_UNAVAILABLE=1. Env switches
// are read at call time. The blob is "GOODBLOB1" + the ONNX bytes (parsed again by init).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <onnx/onnx_pb.h>

#include "dlrt/plugin.h"

#ifndef DLRT_TEST_PLUGIN_NAME
#error "DLRT_TEST_PLUGIN_NAME must be defined"
#endif
#define DLRT_TEST_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr char kMagic[] = "GOODBLOB1";
constexpr size_t kMagicSize = sizeof kMagic - 1;
constexpr int32_t kFloat = 1;

int fail(char* err, size_t size, int code, const std::string& msg) {
  if (err != nullptr && size > 0) std::snprintf(err, size, "%s", msg.c_str());
  return code;
}

long env_long(const char* name, long def) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : def;
}

bool is_supported_op(const std::string& op) { return op == "Add" || op == "Mul" || op == "Relu" || op == "MatMul"; }

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

int64_t count(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// Multidirectional (numpy) broadcasting for Add and Mul.
bool broadcast_binary(const Tensor& a, const Tensor& b, bool mul, Tensor& out, std::string& why) {
  size_t r = std::max(a.shape.size(), b.shape.size());
  std::vector<int64_t> as(r, 1), bs(r, 1);
  std::copy(a.shape.begin(), a.shape.end(), as.begin() + (r - a.shape.size()));
  std::copy(b.shape.begin(), b.shape.end(), bs.begin() + (r - b.shape.size()));
  out.shape.assign(r, 1);
  std::vector<int64_t> sa(r, 0), sb(r, 0);
  int64_t ka = 1, kb = 1;
  for (size_t i = r; i-- > 0;) {
    if (as[i] != bs[i] && as[i] != 1 && bs[i] != 1) return (why = "shapes do not broadcast"), false;
    out.shape[i] = as[i] == 1 ? bs[i] : as[i];
    sa[i] = as[i] == 1 ? 0 : ka;
    sb[i] = bs[i] == 1 ? 0 : kb;
    ka *= as[i];
    kb *= bs[i];
  }
  out.data.assign(count(out.shape), 0.f);
  std::vector<int64_t> idx(r, 0);
  int64_t oa = 0, ob = 0;
  for (size_t n = 0; n < out.data.size(); ++n) {
    out.data[n] = mul ? a.data[oa] * b.data[ob] : a.data[oa] + b.data[ob];
    for (size_t d = r; d-- > 0;) {  // odometer step
      oa += sa[d];
      ob += sb[d];
      if (++idx[d] < out.shape[d]) break;
      oa -= sa[d] * idx[d];
      ob -= sb[d] * idx[d];
      idx[d] = 0;
    }
  }
  return true;
}

// numpy matmul: 1-D operands promoted, batch dims broadcast.
bool matmul(const Tensor& a0, const Tensor& b0, Tensor& out, std::string& why) {
  if (a0.shape.empty() || b0.shape.empty()) return (why = "MatMul of a scalar"), false;
  Tensor a = a0, b = b0;
  bool a1 = a.shape.size() == 1, b1 = b.shape.size() == 1;
  if (a1) a.shape.insert(a.shape.begin(), 1);
  if (b1) b.shape.push_back(1);
  int64_t M = a.shape[a.shape.size() - 2], K = a.shape.back(), N = b.shape.back();
  if (b.shape[b.shape.size() - 2] != K) return (why = "MatMul inner dimensions differ"), false;
  std::vector<int64_t> ab(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  // Broadcast batch index maps via the elementwise helper on index tensors.
  Tensor ia{ab, {}}, ib{bb, {}};
  for (int64_t i = 0; i < count(ab); ++i) ia.data.push_back(static_cast<float>(i));
  for (int64_t i = 0; i < count(bb); ++i) ib.data.push_back(static_cast<float>(i));
  Tensor zero_b{bb, std::vector<float>(count(bb), 0.f)}, zero_a{ab, std::vector<float>(count(ab), 0.f)};
  Tensor mapa, mapb;
  if (!broadcast_binary(ia, zero_b, false, mapa, why) || !broadcast_binary(zero_a, ib, false, mapb, why)) return false;
  out.shape = mapa.shape;
  out.shape.push_back(M);
  out.shape.push_back(N);
  out.data.assign(count(out.shape), 0.f);
  for (size_t batch = 0; batch < mapa.data.size(); ++batch) {
    const float* pa = a.data.data() + static_cast<int64_t>(mapa.data[batch]) * M * K;
    const float* pb = b.data.data() + static_cast<int64_t>(mapb.data[batch]) * K * N;
    float* po = out.data.data() + batch * M * N;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) {
        float v = pa[i * K + k];
        for (int64_t j = 0; j < N; ++j) po[i * N + j] += v * pb[k * N + j];
      }
  }
  if (a1) out.shape.erase(out.shape.end() - 2);
  if (b1) out.shape.pop_back();
  return true;
}

struct Program {
  std::vector<std::string> inputs, outputs;
  std::map<std::string, Tensor> constants;
  std::vector<onnx::NodeProto> nodes;
  std::atomic<long> calls{0};
};

int parse(const void* onnx, size_t size, Program& p, char* err, size_t err_size) {
  onnx::ModelProto m;
  if (!m.ParseFromArray(onnx, static_cast<int>(size))) return fail(err, err_size, DLRT_PLUGIN_ERR_INVALID_ARGUMENT, "not an ONNX model");
  const auto& g = m.graph();
  for (const auto& init : g.initializer()) {
    if (init.data_type() != kFloat) return fail(err, err_size, DLRT_PLUGIN_ERR_UNSUPPORTED, "initializer " + init.name() + " is not float32");
    Tensor t{{init.dims().begin(), init.dims().end()}, {}};
    t.data.resize(count(t.shape));
    if (init.has_raw_data() && init.raw_data().size() == t.data.size() * 4) std::memcpy(t.data.data(), init.raw_data().data(), init.raw_data().size());
    else if (init.float_data_size() == static_cast<int>(t.data.size())) std::copy(init.float_data().begin(), init.float_data().end(), t.data.begin());
    else return fail(err, err_size, DLRT_PLUGIN_ERR_UNSUPPORTED, "initializer " + init.name() + ": data missing or external");
    p.constants[init.name()] = std::move(t);
  }
  for (const auto& in : g.input())
    if (!p.constants.count(in.name())) p.inputs.push_back(in.name());
  for (const auto& out : g.output()) p.outputs.push_back(out.name());
  for (const auto& n : g.node()) {
    if (!is_supported_op(n.op_type()) || (!n.domain().empty() && n.domain() != "ai.onnx"))
      return fail(err, err_size, DLRT_PLUGIN_ERR_UNSUPPORTED, "op " + n.op_type() + " is not supported");
    p.nodes.push_back(n);
  }
  return DLRT_PLUGIN_OK;
}

[[maybe_unused]] int run(const Program& p, const dlrt_plugin_tensor* inputs, size_t num_inputs,
        const dlrt_plugin_output_allocator* alloc, size_t num_outputs, char* err, size_t err_size) {
  if (num_inputs != p.inputs.size() || num_outputs != p.outputs.size())
    return fail(err, err_size, DLRT_PLUGIN_ERR_INVALID_ARGUMENT, "wrong number of inputs or outputs");
  std::map<std::string, Tensor> env = p.constants;
  for (size_t i = 0; i < num_inputs; ++i) {
    const auto& t = inputs[i];
    if (t.dtype != kFloat) return fail(err, err_size, DLRT_PLUGIN_ERR_UNSUPPORTED, "only float32 inputs");
    Tensor x{{t.dims, t.dims + t.rank}, {}};
    x.data.resize(count(x.shape));
    if (t.nbytes != x.data.size() * 4) return fail(err, err_size, DLRT_PLUGIN_ERR_INVALID_ARGUMENT, "input size mismatch");
    if (!x.data.empty()) std::memcpy(x.data.data(), t.data, t.nbytes);
    env[p.inputs[i]] = std::move(x);
  }
  for (const auto& n : p.nodes) {
    std::vector<const Tensor*> in;
    for (const auto& name : n.input()) {
      auto it = env.find(name);
      if (it == env.end()) return fail(err, err_size, DLRT_PLUGIN_ERR_INVALID_ARGUMENT, "missing value " + name);
      in.push_back(&it->second);
    }
    Tensor out;
    std::string why;
    bool ok = false;
    if (n.op_type() == "Relu" && in.size() == 1) {
      out = *in[0];
      for (auto& v : out.data) v = v > 0.f ? v : 0.f;
      ok = true;
    } else if ((n.op_type() == "Add" || n.op_type() == "Mul") && in.size() == 2) {
      ok = broadcast_binary(*in[0], *in[1], n.op_type() == "Mul", out, why);
    } else if (n.op_type() == "MatMul" && in.size() == 2) {
      ok = matmul(*in[0], *in[1], out, why);
    } else {
      why = "bad arity";
    }
    if (!ok) return fail(err, err_size, DLRT_PLUGIN_ERR_INVALID_ARGUMENT, n.op_type() + ": " + why);
    env[n.output(0)] = std::move(out);
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    const Tensor& t = env[p.outputs[i]];
    void* dst = alloc->allocate(alloc->context, static_cast<int32_t>(i), kFloat, static_cast<int32_t>(t.shape.size()), t.shape.data());
    if (dst == nullptr) return fail(err, err_size, DLRT_PLUGIN_ERR_OUT_OF_MEMORY, "output allocation failed");
    if (!t.data.empty()) std::memcpy(dst, t.data.data(), t.data.size() * 4);
  }
  return DLRT_PLUGIN_OK;
}

bool known_device(const char* d) { return d && (std::strcmp(d, "0") == 0 || std::strcmp(d, "V") == 0); }

}  // namespace

DLRT_TEST_EXPORT uint32_t dlrt_plugin_api_version(void) { return DLRT_PLUGIN_API_VERSION; }
DLRT_TEST_EXPORT const char* dlrt_plugin_name(void) { return DLRT_TEST_PLUGIN_NAME; }

DLRT_TEST_EXPORT int dlrt_plugin_is_available(char* version, size_t version_size, char* err, size_t err_size) {
  if (env_long("DLRT_TEST_PLUGIN_UNAVAILABLE", 0) == 1)
    return fail(err, err_size, DLRT_PLUGIN_ERR_DEVICE_UNAVAILABLE, "test runtime switched off: unset DLRT_TEST_PLUGIN_UNAVAILABLE");
  if (version && version_size) std::snprintf(version, version_size, "test-1.0");
  return DLRT_PLUGIN_OK;
}

DLRT_TEST_EXPORT int dlrt_plugin_devices(dlrt_plugin_device* devices, size_t capacity, size_t* count, char* err, size_t err_size) {
  if (count == nullptr) return fail(err, err_size, DLRT_PLUGIN_ERR_INVALID_ARGUMENT, "count is null");
  *count = 2;
  for (size_t i = 0; i < capacity && i < 2 && devices; ++i) {
    dlrt_plugin_device& d = devices[i];
    std::memset(&d, 0, sizeof d);
    d.api_version = DLRT_PLUGIN_API_VERSION;
    std::snprintf(d.name, sizeof d.name, "%s", i == 0 ? "0" : "V");
    d.type = DLRT_PLUGIN_DEVICE_GPU;
    d.is_virtual = i == 1;
    std::snprintf(d.vendor, sizeof d.vendor, "dlrt-test");
    d.memory_bytes = i == 0 ? (1ull << 30) : 0;
  }
  return DLRT_PLUGIN_OK;
}

DLRT_TEST_EXPORT int dlrt_plugin_supports(const char* device, const dlrt_plugin_op_query* q, char* err, size_t err_size) {
  if (!known_device(device)) return fail(err, err_size, DLRT_PLUGIN_ERR_INVALID_ARGUMENT, "no device " + std::string(device ? device : ""));
  if (q == nullptr || q->op_type == nullptr || !is_supported_op(q->op_type) ||
      (q->domain && q->domain[0] && std::strcmp(q->domain, "ai.onnx") != 0))
    return fail(err, err_size, DLRT_PLUGIN_ERR_UNSUPPORTED, std::string("op ") + (q && q->op_type ? q->op_type : "?") + " is not implemented");
  for (int32_t i = 0; i < q->num_inputs; ++i)
    if (q->input_dtypes[i] != kFloat && q->input_dtypes[i] != 0)
      return fail(err, err_size, DLRT_PLUGIN_ERR_UNSUPPORTED, "only float32 is supported");
  return DLRT_PLUGIN_OK;
}

DLRT_TEST_EXPORT int dlrt_plugin_compile(const char* device, const void* onnx, size_t onnx_size, const char* options,
                                         void** blob, size_t* blob_size, char* err, size_t err_size) try {
#ifdef DLRT_TEST_PLUGIN_SLOW
  std::this_thread::sleep_for(std::chrono::milliseconds(env_long("DLRT_TEST_COMPILE_MS", 2000)));
#endif
  if (!known_device(device)) return fail(err, err_size, DLRT_PLUGIN_ERR_INVALID_ARGUMENT, "no device " + std::string(device ? device : ""));
  Program p;
  if (int rc = parse(onnx, onnx_size, p, err, err_size); rc != DLRT_PLUGIN_OK) return rc;
  auto* out = static_cast<char*>(std::malloc(kMagicSize + onnx_size));
  if (out == nullptr) return fail(err, err_size, DLRT_PLUGIN_ERR_OUT_OF_MEMORY, "out of memory");
  std::memcpy(out, kMagic, kMagicSize);
  if (onnx_size) std::memcpy(out + kMagicSize, onnx, onnx_size);
  *blob = out;
  *blob_size = kMagicSize + onnx_size;
  return DLRT_PLUGIN_OK;
} catch (...) {
  return fail(err, err_size, DLRT_PLUGIN_ERR_BACKEND, "compile: internal error");
}

DLRT_TEST_EXPORT void dlrt_plugin_free(void* ptr) { std::free(ptr); }

DLRT_TEST_EXPORT int dlrt_plugin_init(const char* device, const void* blob, size_t blob_size, const char* options,
                                      void** handle, char* err, size_t err_size) try {
  if (device && std::strcmp(device, "V") == 0)
    return fail(err, err_size, DLRT_PLUGIN_ERR_DEVICE_UNAVAILABLE, "device V is virtual: it compiles, never runs");
  if (!known_device(device)) return fail(err, err_size, DLRT_PLUGIN_ERR_INVALID_ARGUMENT, "no device " + std::string(device ? device : ""));
#ifdef DLRT_TEST_PLUGIN_INITFAIL
  return fail(err, err_size, DLRT_PLUGIN_ERR_BACKEND, "init fails on purpose (initfail test plugin)");
#endif
  if (blob_size < kMagicSize || std::memcmp(blob, kMagic, kMagicSize) != 0)
    return fail(err, err_size, DLRT_PLUGIN_ERR_BACKEND, "not a blob of this plugin");
  auto p = std::make_unique<Program>();
  if (int rc = parse(static_cast<const char*>(blob) + kMagicSize, blob_size - kMagicSize, *p, err, err_size); rc != DLRT_PLUGIN_OK)
    return rc == DLRT_PLUGIN_ERR_INVALID_ARGUMENT ? DLRT_PLUGIN_ERR_BACKEND : rc;
  *handle = p.release();
  return DLRT_PLUGIN_OK;
} catch (...) {
  return fail(err, err_size, DLRT_PLUGIN_ERR_BACKEND, "init: internal error");
}

DLRT_TEST_EXPORT int32_t dlrt_plugin_max_concurrent_runs(void* handle) { return 0; }

#ifndef DLRT_TEST_PLUGIN_NOSYM
DLRT_TEST_EXPORT int dlrt_plugin_execute(void* handle, const dlrt_plugin_tensor* inputs, size_t num_inputs,
                                         const dlrt_plugin_output_allocator* outputs, size_t num_outputs, char* err,
                                         size_t err_size) try {
  auto* p = static_cast<Program*>(handle);
  if (p == nullptr || outputs == nullptr) return fail(err, err_size, DLRT_PLUGIN_ERR_INVALID_ARGUMENT, "null handle or allocator");
  long call = ++p->calls;
#ifdef DLRT_TEST_PLUGIN_EXECFAIL
  long n = env_long("DLRT_TEST_FAIL_AFTER", 3);
  if (call >= n) return fail(err, err_size, DLRT_PLUGIN_ERR_BACKEND, "execute fails on purpose from call " + std::to_string(n) + " on (this is call " + std::to_string(call) + ")");
#endif
  (void)call;
  return run(*p, inputs, num_inputs, outputs, num_outputs, err, err_size);
} catch (...) {
  return fail(err, err_size, DLRT_PLUGIN_ERR_BACKEND, "execute: internal error");
}
#endif

DLRT_TEST_EXPORT void dlrt_plugin_destroy(void* handle) { delete static_cast<Program*>(handle); }
