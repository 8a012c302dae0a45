// Fusions of 8-bit integer ops into com.dlrt ops the CPU backend runs.
#include <string>

#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {
namespace {

// A float32 value of static shape [], [1] or [n] (n = the product's columns).
bool is_column_scale(const Graph& g, ValueId v, int64_t n) {
  const TypeInfo& t = g.values[v].type;
  if (t.dtype != DType::kFloat32 || !t.shape) return false;
  if (t.shape->empty()) return true;
  if (t.shape->size() != 1 || !(*t.shape)[0].is_static()) return false;
  return (*t.shape)[0].size == 1 || (*t.shape)[0].size == n;
}

}  // namespace

int fuse_integer_matmul_to_float(Graph& g, PassContext& ctx) {
  if (!ctx.can_run("MatMulIntegerToFloat", "com.dlrt", 1)) return 0;
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i) || !is_op(rw.node(i), "MatMulInteger")) continue;
    const Node& mm = rw.node(i);
    if (mm.outputs.size() != 1 || mm.inputs.size() < 2) continue;
    // The number of columns, from a constant B of rank >= 2.
    const Tensor* b = rw.constant(mm.inputs[1]);
    if (!b || b->rank() < 2) continue;
    const int64_t n = b->dim(b->rank() - 1);
    // MatMulInteger -> Cast(to float) -> Mul(scale) [-> Add(bias)].
    const int cast = sole_consumer(rw, mm.outputs[0], "Cast");
    if (cast < 0 || rw.node(cast).attr_int("to", 0) != static_cast<int64_t>(DType::kFloat32)) continue;
    const ValueId cast_out = rw.node(cast).outputs[0];
    const int mul = sole_consumer(rw, cast_out, "Mul");
    if (mul < 0) continue;
    const ValueId scale = other_input(rw.node(mul), cast_out);
    if (scale == kNoValue || scale == cast_out || !is_column_scale(g, scale, n)) continue;
    Node fused;
    fused.name = mm.name + "_to_float";
    fused.op_type = "MatMulIntegerToFloat";
    fused.domain = "com.dlrt";
    fused.opset = 1;
    fused.inputs = mm.inputs;
    fused.inputs.resize(4, kNoValue);
    fused.inputs.push_back(scale);
    ValueId out = rw.node(mul).outputs[0];
    int last = mul;
    if (const int add = sole_consumer(rw, out, "Add"); add >= 0) {
      const ValueId bias = other_input(rw.node(add), out);
      const Tensor* bt = rw.constant(bias);  // (null for kNoValue, and for out itself: not a constant)
      if (bt && bt->dtype() == DType::kFloat32 && bt->rank() == 1 && bt->size() == n) {
        fused.inputs.push_back(bias);
        out = rw.node(add).outputs[0];
        last = add;
      }
    }
    fused.outputs = {out};
    log_fired("integer-matmul-float", "fused " + mm.describe() + " into " + fused.describe());
    for (int k : {i, cast, mul})
      if (k != last) rw.remove(k);
    rw.replace(last, std::move(fused));
    ++fired;
  }
  rw.commit();
  ctx.count("integer-matmul-float", fired);
  return fired;
}

namespace {

// The DynamicQuantizeLinear producing all of `y`, `scale` and `zp` (its three
// outputs), or -1.
int dynamic_quantizer_of(const Rewriter& rw, ValueId y, ValueId scale, ValueId zp) {
  const int d = rw.producer_op(y, "DynamicQuantizeLinear");
  if (d < 0) return -1;
  const Node& n = rw.node(d);
  if (n.outputs.size() < 3 || n.outputs[0] != y || n.outputs[1] != scale || n.outputs[2] != zp) return -1;
  return n.inputs.empty() || !is_float32(rw.graph(), n.inputs[0]) ? -1 : d;
}

}  // namespace

int fuse_dynamic_quantize_matmul(Graph& g, PassContext& ctx) {
  if (!ctx.can_run("DynamicQuantizeMatMul", "com.microsoft", 1)) return 0;
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i)) continue;
    const Node& mm = rw.node(i);
    const bool dlrt_form = mm.domain == "com.dlrt" && mm.op_type == "MatMulIntegerToFloat";
    const bool ms_form = mm.domain == "com.microsoft" && mm.op_type == "MatMulIntegerToFloat";
    if ((!dlrt_form && !ms_form) || mm.outputs.size() != 1) continue;
    auto in = [&](size_t k) { return k < mm.inputs.size() ? mm.inputs[k] : kNoValue; };
    const Tensor* w = rw.constant(in(1));
    if (!w || w->rank() != 2 || !is_8bit(w->dtype())) continue;
    const int64_t n = w->dim(1);
    // B's scale: com.microsoft's input 3; com.dlrt's product scale = Mul(a_scale, b_scale).
    ValueId a_scale = kNoValue, b_scale = kNoValue, a_zp = kNoValue, b_zp = kNoValue, bias = kNoValue;
    if (ms_form) {
      a_scale = in(2), b_scale = in(3), a_zp = in(4), b_zp = in(5), bias = in(6);
    } else {
      a_zp = in(2), b_zp = in(3), bias = in(5);
      const int mul = rw.producer_op(in(4), "Mul");
      if (mul < 0 || rw.node(mul).inputs.size() != 2) continue;
      for (ValueId v : rw.node(mul).inputs)
        if (rw.constant(v)) b_scale = v;
        else a_scale = v;
    }
    const Tensor* bs = rw.constant(b_scale);
    if (!bs || bs->dtype() != DType::kFloat32 || bs->rank() > 1 || (bs->size() != 1 && bs->size() != n)) continue;
    const int d = dynamic_quantizer_of(rw, in(0), a_scale, a_zp);
    if (d < 0) continue;
    Node fused;
    fused.name = mm.name + "_dynamic";
    fused.op_type = "DynamicQuantizeMatMul";
    fused.domain = "com.microsoft";
    fused.opset = 1;
    fused.inputs = {rw.node(d).inputs[0], in(1), b_scale, b_zp, bias};
    while (!fused.inputs.empty() && fused.inputs.back() == kNoValue) fused.inputs.pop_back();
    fused.outputs = mm.outputs;
    log_fired("dynamic-quantize-matmul", "fused " + rw.node(d).describe() + " into " + fused.describe());
    rw.replace(i, std::move(fused));
    ++fired;
  }
  rw.commit();
  ctx.count("dynamic-quantize-matmul", fired);
  return fired;
}

}  // namespace dlrt::ir::passes
