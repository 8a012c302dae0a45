// dlrt_conv_direct: Conv on the direct path (backends/cpu/kernels/conv_direct.h; the
// AVX-512 or AVX2 tile, as cpu_isa() and so the weights' packing pick; run
// with DLRT_CPU_ISA=avx2 for the AVX2 one on an AVX-512 machine) and on the
// im2col/GEMM path, alternately, on every non-depthwise conv shape of
// resnet18 and mobilenet_v2 (224x224 input, batch 1; weights pre-packed as a
// model's constant is; bias and the fused Relu where the models have them).
//
//   dlrt_conv_direct [--peak GFLOPS] [--reps R] [--threads N] [--filter SUBSTRING]
//
// R rounds (default 15) each time a batch of calls on one path, then on the
// other. Prints per shape the median GFLOP/s of each path, the ratio
// direct/gemm (> 1: direct faster) and, with --peak (dlrt_fma_peak's figure
// for the same thread count), each as % of that peak; then the totals
// (summed median times) per model: all GEMM, all direct, and what the
// default policy (conv_direct_worth) picks. Winograd F(2x2, 3x3), which AVX2
// CPUs run for 3x3 stride-1 convs by default, is off here.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/ops/conv_impl.h"

namespace {

using namespace dlrt;
using namespace dlrt::cpu;

struct ConvShape {
  const char* model;
  const char* name;
  int64_t C, M, H, k, s, pad;
  int count;  // times the model runs this shape
};

const ConvShape kShapes[] = {
    {"resnet18", "conv1 7x7/2", 3, 64, 224, 7, 2, 3, 1},
    {"resnet18", "layer1 3x3", 64, 64, 56, 3, 1, 1, 4},
    {"resnet18", "layer2.0 3x3/2", 64, 128, 56, 3, 2, 1, 1},
    {"resnet18", "layer2.0 down 1x1/2", 64, 128, 56, 1, 2, 0, 1},
    {"resnet18", "layer2 3x3", 128, 128, 28, 3, 1, 1, 3},
    {"resnet18", "layer3.0 3x3/2", 128, 256, 28, 3, 2, 1, 1},
    {"resnet18", "layer3.0 down 1x1/2", 128, 256, 28, 1, 2, 0, 1},
    {"resnet18", "layer3 3x3", 256, 256, 14, 3, 1, 1, 3},
    {"resnet18", "layer4.0 3x3/2", 256, 512, 14, 3, 2, 1, 1},
    {"resnet18", "layer4.0 down 1x1/2", 256, 512, 14, 1, 2, 0, 1},
    {"resnet18", "layer4 3x3", 512, 512, 7, 3, 1, 1, 3},
    {"mobilenet_v2", "stem 3x3/2", 3, 32, 224, 3, 2, 1, 1},
    {"mobilenet_v2", "pw 32->16 @112", 32, 16, 112, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 16->96 @112", 16, 96, 112, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 96->24 @56", 96, 24, 56, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 24->144 @56", 24, 144, 56, 1, 1, 0, 2},
    {"mobilenet_v2", "pw 144->24 @56", 144, 24, 56, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 144->32 @28", 144, 32, 28, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 32->192 @28", 32, 192, 28, 1, 1, 0, 3},
    {"mobilenet_v2", "pw 192->32 @28", 192, 32, 28, 1, 1, 0, 2},
    {"mobilenet_v2", "pw 192->64 @14", 192, 64, 14, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 64->384 @14", 64, 384, 14, 1, 1, 0, 4},
    {"mobilenet_v2", "pw 384->64 @14", 384, 64, 14, 1, 1, 0, 3},
    {"mobilenet_v2", "pw 384->96 @14", 384, 96, 14, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 96->576 @14", 96, 576, 14, 1, 1, 0, 3},
    {"mobilenet_v2", "pw 576->96 @14", 576, 96, 14, 1, 1, 0, 2},
    {"mobilenet_v2", "pw 576->160 @7", 576, 160, 7, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 160->960 @7", 160, 960, 7, 1, 1, 0, 3},
    {"mobilenet_v2", "pw 960->160 @7", 960, 160, 7, 1, 1, 0, 2},
    {"mobilenet_v2", "pw 960->320 @7", 960, 320, 7, 1, 1, 0, 1},
    {"mobilenet_v2", "pw 320->1280 @7", 320, 1280, 7, 1, 1, 0, 1},
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ir::Attribute ints(std::vector<int64_t> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

// One conv layer ready to run: node, tensors and packed weights.
struct Layer {
  ir::Node node;
  Tensor x, w, b;
  std::shared_ptr<const ConvPrepacked> pre;
  double flops = 0;
};

Layer make_layer(const ConvShape& s, std::mt19937& rng) {
  Layer l;
  l.node.name = s.name;
  l.node.op_type = "Conv";
  l.node.opset = 17;
  l.node.attributes = {{"strides", ints({s.s, s.s})}, {"pads", ints({s.pad, s.pad, s.pad, s.pad})}};
  l.node.inputs = {0, 1, 2};
  l.node.outputs = {100};
  std::uniform_real_distribution<float> dist(-1, 1);
  auto filled = [&](std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& e : v) e = dist(rng);
    return Tensor::from_vector<float>(shape, v);
  };
  l.x = filled({1, s.C, s.H, s.H});
  l.w = filled({s.M, s.C, s.k, s.k});
  l.b = filled({s.M});
  auto pre = prepack_conv_weights(l.node, &l.w);
  if (!pre.ok() || !*pre) {
    std::fprintf(stderr, "packing %s failed\n", s.name);
    std::exit(1);
  }
  l.pre = *pre;
  const int64_t out = (s.H + 2 * s.pad - s.k) / s.s + 1;
  l.flops = 2.0 * static_cast<double>(s.M) * out * out * s.C * s.k * s.k;
  return l;
}

// Hands the same output tensor to every call (as the executor's arena does),
// so the timing holds no page faults of a fresh output.
class ReuseOutput final : public OutputAllocator {
 public:
  Result<Tensor> allocate(size_t, DType dtype, Shape shape) override {
    if (!t_.valid() || t_.dtype() != dtype || t_.shape() != shape) {
      DLRT_ASSIGN_OR_RETURN(t_, Tensor::allocate(dtype, shape));
    }
    std::memset(t_.raw_data(), 0, static_cast<size_t>(t_.size()) * sizeof(float));
    return t_;
  }
  // Conv writes every element: the same tensor, not zeroed again.
  Result<Tensor> allocate_uninitialized(size_t i, DType dtype, Shape shape) override {
    if (t_.valid() && t_.dtype() == dtype && t_.shape() == shape) return t_;
    return allocate(i, dtype, std::move(shape));
  }

 private:
  Tensor t_;
};

// Seconds per call of a batch of `calls` on the path `direct` selects.
double time_batch(const Layer& l, bool direct, int calls, ThreadPool& pool) {
  ScopedConvDirect sw(direct);
  ScopedWinograd no_winograd(false);  // the GEMM path itself (Winograd has its own A/B: DLRT_CONV_WINOGRAD)
  ConvFusion fuse;
  fuse.act.kind = ActKind::kRelu;
  RunValue xv = RunValue::of(l.x), wv = RunValue::of(l.w), bv = RunValue::of(l.b);
  std::vector<const RunValue*> in = {&xv, &wv, &bv};
  std::vector<RunValue> out(1);
  static ReuseOutput reuse;
  const uint64_t runs0 = conv_direct_runs();
  const double t0 = now_s();
  for (int i = 0; i < calls; ++i) {
    KernelContext ctx(l.node, in, out, pool, nullptr, &reuse);
    Status st = conv_run(ctx, l.pre.get(), fuse);
    if (!st.ok()) {
      std::fprintf(stderr, "%s: %s\n", l.node.name.c_str(), st.to_string().c_str());
      std::exit(1);
    }
  }
  const double dt = (now_s() - t0) / calls;
  if ((conv_direct_runs() != runs0) != direct) {
    std::fprintf(stderr, "%s: the %s path did not run as asked\n", l.node.name.c_str(), direct ? "direct" : "gemm");
    std::exit(1);
  }
  return dt;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  double peak = 0;
  int reps = 15, threads = 1;
  const char* filter = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--peak") && i + 1 < argc) peak = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--peak GFLOPS] [--reps R] [--threads N] [--filter SUBSTRING]\n", argv[0]);
      return 2;
    }
  }
  if (cpu_isa() < CpuIsa::kAvx2) {
    std::fprintf(stderr, "the direct path needs AVX2 (cpu_isa() is %s)\n", cpu_isa_name(cpu_isa()));
    return 1;
  }
  ThreadPool pool(threads);
  std::mt19937 rng(1);
  std::printf("%s, threads %d, %d rounds, median GFLOP/s%s\n", cpu_isa_name(cpu_isa()), threads, reps,
              peak > 0 ? " (% of --peak)" : "");
  std::printf("%-13s %-22s %16s %16s %7s\n", "model", "shape", "gemm", "direct", "ratio");
  double total_gemm[2] = {0, 0}, total_direct[2] = {0, 0}, total_default[2] = {0, 0};
  for (const ConvShape& s : kShapes) {
    const std::string label = std::string(s.model) + " " + s.name;
    if (filter && label.find(filter) == std::string::npos) continue;
    Layer l = make_layer(s, rng);
    // A batch of about 20 ms per path.
    time_batch(l, true, 1, pool);
    time_batch(l, false, 1, pool);
    const int calls = std::max(1, static_cast<int>(0.02 / std::max(1e-7, time_batch(l, false, 1, pool))));
    std::vector<double> tg, td;
    for (int r = 0; r < reps; ++r) {
      tg.push_back(time_batch(l, false, calls, pool));
      td.push_back(time_batch(l, true, calls, pool));
    }
    const double mg = median(tg), md = median(td);
    const int mi = std::strcmp(s.model, "resnet18") == 0 ? 0 : 1;
    total_gemm[mi] += mg * s.count;
    total_direct[mi] += md * s.count;
    // What the default policy (conv_direct_worth) picks for this shape.
    ConvDirectGeometry dg;
    dg.channels = s.C, dg.in_h = dg.in_w = s.H, dg.kh = dg.kw = s.k, dg.sh = dg.sw = s.s;
    dg.pad_top = dg.pad_left = s.pad;
    dg.out_h = dg.out_w = (s.H + 2 * s.pad - s.k) / s.s + 1;
    ConvDirectPlan plan;
    const bool picks_direct = conv_direct_plan(dg, &plan, cpu_isa() == CpuIsa::kAvx2,
                                               conv_direct_tap_columns(dg, cpu_isa())) &&
                              conv_direct_worth(plan, cpu_isa(), threads, s.M);
    total_default[mi] += (picks_direct ? md : mg) * s.count;
    auto cell = [&](double t) {
      char buf[32];
      const double gf = l.flops / t * 1e-9;
      if (peak > 0) std::snprintf(buf, sizeof buf, "%7.1f (%3.0f%%)", gf, 100.0 * gf / peak);
      else std::snprintf(buf, sizeof buf, "%7.1f", gf);
      return std::string(buf);
    };
    std::printf("%-13s %-22s %16s %16s %7.2f\n", s.model, s.name, cell(mg).c_str(), cell(md).c_str(), mg / md);
  }
  for (int mi = 0; mi < 2; ++mi) {
    if (total_gemm[mi] == 0) continue;
    std::printf(
        "%s non-depthwise convs (x layer count): gemm %.3f ms, direct %.3f ms (ratio %.2f), default policy %.3f ms "
        "(ratio %.2f)\n",
        mi == 0 ? "resnet18" : "mobilenet_v2", total_gemm[mi] * 1e3, total_direct[mi] * 1e3,
        total_gemm[mi] / total_direct[mi], total_default[mi] * 1e3, total_gemm[mi] / total_default[mi]);
  }
  return 0;
}
