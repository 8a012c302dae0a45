// dlrt_kernel_isa: the non-GEMM float32 CPU kernels on their AVX2 and AVX-512
// paths (issue 5), on one thread, with shapes from the zoo models: depthwise
// FusedConv (mobilenet_v2), Attention (minilm_l6, tiny_vit),
// LayerNormalization, Softmax, and the epilogue's activations (Gelu, Sigmoid, Clip).
//
//   dlrt_kernel_isa [--reps R] [--filter SUBSTRING]
//
// Each case runs its kernel under ScopedCpuIsa(avx2) and ScopedCpuIsa(avx512)
// alternately (R rounds, each timing a batch of calls), then prints the median
// time per call for each ISA and the ratio avx2/avx512 (> 1: AVX-512 faster).
// On a CPU without AVX-512 both columns run the AVX2 path (said in the header).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/isa.h"

namespace {

using namespace dlrt;
using namespace dlrt::cpu;

ir::Attribute a_int(int64_t v) { ir::Attribute a; a.kind = ir::Attribute::Kind::kInt; a.i = v; return a; }
ir::Attribute a_float(float v) { ir::Attribute a; a.kind = ir::Attribute::Kind::kFloat; a.f = v; return a; }
ir::Attribute a_str(std::string v) { ir::Attribute a; a.kind = ir::Attribute::Kind::kString; a.s = std::move(v); return a; }
ir::Attribute a_ints(std::vector<int64_t> v) { ir::Attribute a; a.kind = ir::Attribute::Kind::kInts; a.ints = std::move(v); return a; }
ir::Attribute a_floats(std::vector<float> v) { ir::Attribute a; a.kind = ir::Attribute::Kind::kFloats; a.floats = std::move(v); return a; }

Tensor rnd(Shape s, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(g);
  return Tensor::from_vector<float>(std::move(s), v);
}

// One op call, ready to repeat.
struct OpCall {
  ir::Node node;
  std::unique_ptr<OpKernel> kernel;
  std::vector<RunValue> in;
  std::vector<const RunValue*> in_ptrs;
};

std::unique_ptr<OpCall> make_call(const std::string& op, const std::string& domain, int opset, std::vector<Tensor> inputs,
                                  ir::Attributes attrs) {
  auto c = std::make_unique<OpCall>();
  c->node.name = "bench_" + op;
  c->node.op_type = op;
  c->node.domain = domain;
  c->node.opset = opset;
  c->node.attributes = std::move(attrs);
  for (size_t i = 0; i < inputs.size(); ++i) c->node.inputs.push_back(static_cast<ir::ValueId>(i));
  c->node.outputs.push_back(static_cast<ir::ValueId>(100));
  const KernelDef* def = builtin_kernels().find(op, domain, opset);
  if (!def) {
    std::fprintf(stderr, "no kernel for %s\n", op.c_str());
    std::exit(1);
  }
  auto k = def->factory(c->node);
  if (!k.ok()) {
    std::fprintf(stderr, "%s: %s\n", op.c_str(), k.status().to_string().c_str());
    std::exit(1);
  }
  c->kernel = std::move(*k);
  for (auto& t : inputs) c->in.push_back(RunValue::of(t));
  for (auto& v : c->in) c->in_ptrs.push_back(&v);
  return c;
}

struct Case {
  std::string name;
  std::function<void()> run;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
    else {
      std::fprintf(stderr, "usage: dlrt_kernel_isa [--reps R] [--filter SUBSTRING]\n");
      return 2;
    }
  }
  ThreadPool pool(1);
  std::vector<Case> cases;
  std::vector<std::unique_ptr<OpCall>> calls;
  auto add_op = [&](std::string name, std::unique_ptr<OpCall> c) {
    OpCall* p = c.get();
    calls.push_back(std::move(c));
    cases.push_back({std::move(name), [p, &pool] {
                       std::vector<RunValue> outs(1);
                       KernelContext ctx(p->node, p->in_ptrs, outs, pool, nullptr);
                       Status s = p->kernel->compute(ctx);
                       if (!s.ok()) {
                         std::fprintf(stderr, "%s\n", s.to_string().c_str());
                         std::exit(1);
                       }
                     }});
  };
  // mobilenet_v2's depthwise 3x3 convs (pad 1) with bias and Relu6.
  struct Dw { int64_t c, hw, s; };
  for (Dw d : {Dw{32, 112, 1}, Dw{96, 112, 2}, Dw{144, 56, 1}, Dw{144, 56, 2}, Dw{192, 28, 1}, Dw{192, 28, 2},
               Dw{384, 14, 1}, Dw{576, 14, 2}, Dw{960, 7, 1}}) {
    ir::Attributes at = {{"group", a_int(d.c)}, {"kernel_shape", a_ints({3, 3})},
                                               {"pads", a_ints({1, 1, 1, 1})}, {"strides", a_ints({d.s, d.s})},
                                               {"activation", a_str("Clip")}, {"activation_params", a_floats({0, 6})}};
    add_op("dwconv c" + std::to_string(d.c) + " " + std::to_string(d.hw) + "x" + std::to_string(d.hw) + " s" +
               std::to_string(d.s),
           make_call("FusedConv", "com.dlrt", 1, {rnd({1, d.c, d.hw, d.hw}, 1), rnd({d.c, 1, 3, 3}, 2), rnd({d.c}, 3)}, at));
  }
  // mobilenet_v2's first conv (3x3 stride 2 over 3 channels): the GEMM reads its im2col rows through a stride-2 gather.
  add_op("conv 3->32 224x224 s2 (im2col)",
         make_call("FusedConv", "com.dlrt", 1, {rnd({1, 3, 224, 224}, 20), rnd({32, 3, 3, 3}, 21), rnd({32}, 22)},
                   {{"kernel_shape", a_ints({3, 3})}, {"pads", a_ints({1, 1, 1, 1})}, {"strides", a_ints({2, 2})},
                    {"activation", a_str("Clip")}, {"activation_params", a_floats({0, 6})}}));
  // Attention: minilm_l6 (12 heads x 32, 128 tokens, key mask: the exporter's finfo.min on 28 padded
  // keys) and tiny_vit-like (3 heads x 64, 197 tokens).
  Tensor key_mask = rnd({1, 1, 1, 128}, 7, -1.0f, 0.0f);
  for (int64_t j = 100; j < 128; ++j) key_mask.data<float>()[j] = -3.4028235e38f;
  add_op("attention minilm 12x128x32", make_call("Attention", "com.dlrt", 1,
                                                 {rnd({1, 128, 12, 32}, 4), rnd({1, 128, 12, 32}, 5), rnd({1, 128, 12, 32}, 6), key_mask},
                                                 {{"scale", a_float(0.17677669f)}, {"q_layout", a_str("bshd")},
                                                  {"k_layout", a_str("bshd")}, {"v_layout", a_str("bshd")},
                                                  {"output_layout", a_str("bshd")}}));
  add_op("attention vit 3x197x64", make_call("Attention", "com.dlrt", 1,
                                             {rnd({1, 197, 3, 64}, 8), rnd({1, 197, 3, 64}, 9), rnd({1, 197, 3, 64}, 10)},
                                             {{"scale", a_float(0.125f)}, {"q_layout", a_str("bshd")},
                                              {"k_layout", a_str("bshd")}, {"v_layout", a_str("bshd")},
                                              {"output_layout", a_str("bshd")}}));
  add_op("layernorm 128x384", make_call("LayerNormalization", "", 17, {rnd({1, 128, 384}, 11), rnd({384}, 12), rnd({384}, 13)},
                                        {{"axis", a_int(-1)}, {"epsilon", a_float(1e-12f)}}));
  add_op("layernorm 197x192", make_call("LayerNormalization", "", 17, {rnd({1, 197, 192}, 14), rnd({192}, 15), rnd({192}, 16)},
                                        {{"axis", a_int(-1)}, {"epsilon", a_float(1e-6f)}}));
  add_op("softmax 1536x128 (rows)", make_call("Softmax", "", 13, {rnd({12, 128, 128}, 17, -8.0f, 8.0f)}, {{"axis", a_int(-1)}}));
  // minilm's intermediate projection with its Gelu in the GEMM's tile epilogue (the GEMM itself is not ISA-switched here).
  add_op("fusedmatmul 128x384x1536 gelu", make_call("FusedMatMul", "com.dlrt", 1,
                                                    {rnd({1, 128, 384}, 18), rnd({384, 1536}, 19, -0.1f, 0.1f), rnd({1536}, 23)},
                                                    {{"activation", a_str("Gelu")}}));
  // The GEMM epilogue's activation on a minilm intermediate output (128 x 1536).
  auto buf = std::make_shared<std::vector<float>>(128 * 1536);
  for (const char* act : {"Gelu", "Sigmoid", "Clip"}) {
    auto a = make_activation(act, {0.0f, 6.0f});
    cases.push_back({std::string("activation ") + act + " 128x1536", [buf, a = *a] {
                       std::mt19937 g(1);
                       for (size_t i = 0; i < buf->size(); i += 97) (*buf)[i] = static_cast<float>(g() % 1000) / 250.0f - 2.0f;
                       apply_activation(a, buf->data(), static_cast<int64_t>(buf->size()));
                     }});
  }

  const bool has512 = detected_cpu_isa() >= CpuIsa::kAvx512;
  std::printf("dlrt_kernel_isa: 1 thread, %d alternating rounds, median ms per call%s\n", reps,
              has512 ? "" : " (this CPU has no AVX-512: both columns run AVX2)");
  std::printf("%-32s %10s %10s %8s\n", "case", "avx2", "avx512", "ratio");
  for (const auto& c : cases) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    // Calls per round: about 20 ms worth.
    c.run();
    auto t0 = std::chrono::steady_clock::now();
    c.run();
    const double one = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const int batch = std::max(1, static_cast<int>(20.0 / std::max(one, 1e-3)));
    std::vector<double> ms[2];
    for (int r = 0; r < reps; ++r)
      for (int i = 0; i < 2; ++i) {
        ScopedCpuIsa isa(i == 0 ? CpuIsa::kAvx2 : CpuIsa::kAvx512);
        c.run();
        auto s = std::chrono::steady_clock::now();
        for (int b = 0; b < batch; ++b) c.run();
        ms[i].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count() / batch);
      }
    const double a = median(ms[0]), b = median(ms[1]);
    std::printf("%-32s %10.4f %10.4f %8.2f\n", c.name.c_str(), a, b, a / b);
  }
  return 0;
}
