// dlrt_conv_winograd: 3x3 stride-1 pad-1 convs (bias and a fused Relu, weights
// pre-packed as a model's constant is) on one path, at the ISA cpu_isa() allows
// (DLRT_CPU_ISA=avx2 for the AVX2 kernels on an AVX-512 machine):
//
//   dlrt_conv_winograd [--path default|gemm|f2|f4|blocked] [--calls N] [--threads T] [--filter SUBSTRING]
//
// default: the choice per ISA and shape (ops/conv.cpp); gemm: Winograd off (the
// direct or im2col/GEMM path); f2 / f4: F(2x2, 3x3) / F(4x4, 3x3) forced;
// blocked: the 16-channel blocked F(4x4, 3x3) kernel called directly. Each
// shape runs once (transforming the filters), then N calls (default 5) inside
// measured_calls, which callgrind can count alone:
//   valgrind --tool=callgrind --toggle-collect='*measured_calls*' dlrt_conv_winograd --filter ...
// Prints per shape the path that ran and the mean wall time per call.
#include "backends/cpu/kernels/conv_winograd.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/ops/conv_impl.h"

namespace {

using namespace dlrt;
using namespace dlrt::cpu;

struct ConvShape {
  const char* name;
  int64_t C, M, H, W;
};

// resnet18's stride-1 3x3 convs and few-channel convs on large planes (a
// spectrogram or segmentation network's).
const ConvShape kShapes[] = {
    {"resnet18 layer1 64@56", 64, 64, 56, 56},
    {"resnet18 layer2 128@28", 128, 128, 28, 28},
    {"resnet18 layer3 256@14", 256, 256, 14, 14},
    {"16@128x128", 16, 16, 128, 128},
    {"32@96x96", 32, 32, 96, 96},
    {"32@256x64", 32, 32, 256, 64},
    {"48@64x64", 48, 48, 64, 64},
    {"64@32x32", 64, 64, 32, 32},
    {"96->24@136x184", 96, 24, 136, 184},
    {"128@14x14", 128, 128, 14, 14},
    {"256@28x28", 256, 256, 28, 28},
    {"8@128x128", 8, 8, 128, 128},
};

ir::Attribute ints(std::vector<int64_t> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

struct Layer {
  ir::Node node;
  Tensor x, w, b;
  std::shared_ptr<const ConvPrepacked> pre;
  int64_t C = 0, M = 0, H = 0, W = 0;
};

Layer make_layer(const ConvShape& s, std::mt19937& rng) {
  Layer l;
  l.node.name = s.name;
  l.node.op_type = "Conv";
  l.node.opset = 17;
  l.node.attributes = {{"strides", ints({1, 1})}, {"pads", ints({1, 1, 1, 1})}};
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
  l.x = filled({1, s.C, s.H, s.W});
  l.w = filled({s.M, s.C, 3, 3});
  l.b = filled({s.M});
  auto pre = prepack_conv_weights(l.node, &l.w);
  if (!pre.ok() || !*pre) {
    std::fprintf(stderr, "packing %s failed\n", s.name);
    std::exit(1);
  }
  l.pre = *pre;
  l.C = s.C, l.M = s.M, l.H = s.H, l.W = s.W;
  return l;
}

__attribute__((noinline)) void conv_calls(const Layer& l, int calls, ThreadPool& pool) {
  ConvFusion fuse;
  fuse.act.kind = ActKind::kRelu;
  RunValue xv = RunValue::of(l.x), wv = RunValue::of(l.w), bv = RunValue::of(l.b);
  std::vector<const RunValue*> in = {&xv, &wv, &bv};
  for (int i = 0; i < calls; ++i) {
    std::vector<RunValue> out(1);
    KernelContext ctx(l.node, in, out, pool, nullptr, nullptr);
    const Status st = conv_run(ctx, l.pre.get(), fuse);
    if (!st.ok()) {
      std::fprintf(stderr, "%s: %s\n", l.node.name.c_str(), st.to_string().c_str());
      std::exit(1);
    }
  }
}

// The blocked kernel on the layer's data in the 16-channel layout (pad lanes
// zero), its filters transformed on the first call.
__attribute__((noinline)) void blocked_calls(const Layer& l, int calls, ThreadPool& pool) {
  static std::shared_ptr<const WinogradFilters> f;
  static std::vector<float> x, y;
  static std::string last;
  const int64_t cb = (l.C + 15) / 16, mb = (l.M + 15) / 16, plane = l.H * l.W;
  if (last != l.node.name) {
    f = winograd4_filters(l.w.data<float>(), l.M, l.C, true);
    x.assign(static_cast<size_t>(cb * plane * 16), 0.0f);
    for (int64_t c = 0; c < l.C; ++c)
      for (int64_t p = 0; p < plane; ++p)
        x[static_cast<size_t>(((c / 16) * plane + p) * 16 + c % 16)] = l.x.data<float>()[c * plane + p];
    y.assign(static_cast<size_t>(mb * plane * 16), 0.0f);
    last = l.node.name;
  }
  WinogradGeometry g;
  g.in_h = g.out_h = l.H, g.in_w = g.out_w = l.W, g.pad_top = g.pad_left = 1;
  Activation relu;
  relu.kind = ActKind::kRelu;
  for (int i = 0; i < calls; ++i)
    conv_winograd4_blocked(*f, g, x.data(), y.data(), l.b.data<float>(), nullptr, relu, pool);
}

bool g_blocked = false;

void calls_on_path(const Layer& l, int calls, ThreadPool& pool) {
  if (g_blocked)
    blocked_calls(l, calls, pool);
  else
    conv_calls(l, calls, pool);
}

// The measured calls: a frame of their own for callgrind's --toggle-collect.
__attribute__((noinline)) void measured_calls(const Layer& l, int calls, ThreadPool& pool) {
  calls_on_path(l, calls, pool);
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = "default";
  const char* filter = nullptr;
  int calls = 5, threads = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--path") && i + 1 < argc)
      path = argv[++i];
    else if (!std::strcmp(argv[i], "--calls") && i + 1 < argc)
      calls = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc)
      filter = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--path default|gemm|f2|f4|blocked] [--calls N] [--threads T] [--filter S]\n",
                   argv[0]);
      return 2;
    }
  }
  const bool gemm = !std::strcmp(path, "gemm");
  g_blocked = !std::strcmp(path, "blocked");
  const int tile = !std::strcmp(path, "f2") ? 2 : !std::strcmp(path, "f4") ? 4 : 0;
  if (!gemm && !g_blocked && tile == 0 && std::strcmp(path, "default") != 0) {
    std::fprintf(stderr, "unknown --path %s\n", path);
    return 2;
  }
  ScopedWinograd on(!gemm);
  ScopedWinogradTile forced(tile);
  ThreadPool pool(threads);
  std::mt19937 rng(1);
  std::printf("%s, threads %d, path %s, %d calls\n", cpu_isa_name(cpu_isa()), threads, path, calls);
  for (const ConvShape& s : kShapes) {
    if (filter && std::string(s.name).find(filter) == std::string::npos) continue;
    const Layer l = make_layer(s, rng);
    calls_on_path(l, 1, pool);
    const uint64_t w2 = conv_winograd_runs() - conv_winograd4_runs(), w4 = conv_winograd4_runs();
    const auto t0 = std::chrono::steady_clock::now();
    measured_calls(l, calls, pool);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const bool ran4 = conv_winograd4_runs() > w4, ran2 = conv_winograd_runs() - conv_winograd4_runs() > w2;
    std::printf("%-24s %-8s %9.3f ms\n", s.name, ran4 ? "F(4x4)" : ran2 ? "F(2x2)" : "gemm", ms / calls);
  }
  return 0;
}
