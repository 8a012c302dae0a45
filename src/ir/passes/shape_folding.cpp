// Shape inference with symbolic dims, and folding of shape subgraphs
// (Shape -> Gather/Slice/Concat/Unsqueeze/Cast ...) whose values are known.
#include <algorithm>
#include <numeric>

#include "core/checked_math.h"
#include "ir/passes/rewriter.h"
#include "ir/passes/symbolic_dims.h"

namespace dlrt::ir::passes {

namespace {

// Ranks above this are not believed from a shape tensor's declared length
// (ONNX sets no limit; real models stay far below).
constexpr int64_t kMaxInferredRank = 64;

using namespace symbolic;

struct Info {
  DType dtype = DType::kUndefined;
  std::optional<Dims> shape;
  std::optional<Dims> sval;  // value of a small integer tensor (rank 0 or 1)
  bool sval_scalar = false;  // the value is rank 0
};

class ShapeInference {
 public:
  ShapeInference(Rewriter& rw, const std::map<std::string, Shape>& pins) : rw_(rw), g_(rw.graph()) {
    info_.resize(g_.values.size());
    for (size_t v = 0; v < g_.values.size(); ++v) {
      const Value& val = g_.values[v];
      Info& in = info_[v];
      in.dtype = val.type.dtype;
      if (val.type.kind == ValueKind::kTensor) in.shape = val.type.shape;
      if (const Tensor* t = rw_.constant(static_cast<ValueId>(v))) set_constant(in, *t);
    }
    for (ValueId v : g_.inputs) {
      auto it = pins.find(g_.values[v].name);
      if (it == pins.end()) continue;
      Dims d;
      for (int64_t x : it->second) d.push_back(static_dim(x));
      info_[v].shape = d;
    }
  }

  static void set_constant(Info& in, const Tensor& t) {
    in.dtype = t.dtype();
    Dims d;
    for (int64_t x : t.shape()) d.push_back(static_dim(x));
    in.shape = d;
    if ((t.dtype() == DType::kInt64 || t.dtype() == DType::kInt32) && t.rank() <= 1 && t.size() <= 64) {
      Dims s;
      // (Read as integers: through a double, values past 2^53 lost bits and past 2^63 overflowed.)
      for (int64_t i = 0; i < t.size(); ++i)
        s.push_back(literal(t.dtype() == DType::kInt64 ? t.data<int64_t>()[i] : int64_t{t.data<int32_t>()[i]}));
      in.sval = s;
      in.sval_scalar = t.rank() == 0;
    }
  }

  void run() {
    for (int i = 0; i < rw_.size(); ++i)
      if (!rw_.dead(i)) infer(rw_.node(i));
  }

  const Info& info(ValueId v) const { return info_[v]; }

 private:
  const Info* in(const Node& n, size_t k) const {
    if (k >= n.inputs.size() || n.inputs[k] < 0) return nullptr;
    return &info_[n.inputs[k]];
  }
  std::optional<Dims> shape_of(const Node& n, size_t k) const {
    const Info* i = in(n, k);
    return i ? i->shape : std::nullopt;
  }
  DType dtype_of_in(const Node& n, size_t k) const {
    const Info* i = in(n, k);
    return i ? i->dtype : DType::kUndefined;
  }
  // Constant int list held by input k (an attribute before `opset_input`).
  std::optional<std::vector<int64_t>> ints_of(const Node& n, size_t k) const {
    if (k >= n.inputs.size() || n.inputs[k] < 0) return std::nullopt;
    const Info& i = info_[n.inputs[k]];
    if (!i.sval || !fully_static(*i.sval)) return std::nullopt;
    std::vector<int64_t> r;
    for (const Dim& d : *i.sval) r.push_back(d.size);
    return r;
  }
  std::optional<std::vector<int64_t>> axes_of(const Node& n, int input_since, size_t k) const {
    if (n.opset >= input_since) {
      if (k < n.inputs.size() && n.inputs[k] >= 0) return ints_of(n, k);
      return std::vector<int64_t>{};
    }
    return n.attr_ints("axes");
  }

  void set(const Node& n, size_t k, DType dt, std::optional<Dims> shape) {
    if (k >= n.outputs.size() || n.outputs[k] < 0) return;
    Info& o = info_[n.outputs[k]];
    if (dt != DType::kUndefined) o.dtype = dt;
    if (shape) o.shape = std::move(shape);
  }
  void set_sval(const Node& n, Dims v, bool scalar) {
    if (n.outputs.empty() || n.outputs[0] < 0) return;
    Info& o = info_[n.outputs[0]];
    o.sval = std::move(v);
    o.sval_scalar = scalar;
    o.shape = scalar ? Dims{} : Dims{static_dim(static_cast<int64_t>(o.sval->size()))};
  }

  void infer(const Node& n) {
    if (n.domain == "com.microsoft") return infer_ms(n);
    if (!n.domain.empty() && n.domain != "ai.onnx") return;
    const std::string& op = n.op_type;
    static const std::set<std::string> same = {
        "Relu", "Sigmoid", "Tanh", "Erf", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Clip", "LeakyRelu",
        "HardSigmoid", "HardSwish", "Gelu", "Softmax", "LogSoftmax", "Identity", "Dropout", "LayerNormalization",
        "BatchNormalization", "InstanceNormalization", "Elu", "Selu", "Softplus", "Softsign", "Floor", "Ceil", "Round",
        "Sin", "Cos", "Mish", "PRelu", "CumSum", "Sign"};
    static const std::set<std::string> binary = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod",
                                                 "And", "Or", "Xor", "Equal", "Less", "Greater",
                                                 "LessOrEqual", "GreaterOrEqual", "BitShift"};
    if (same.count(op)) {
      set(n, 0, dtype_of_in(n, 0), shape_of(n, 0));
      if (op == "Identity" || op == "Dropout") {
        const Info* i = in(n, 0);
        if (i && i->sval) set_sval(n, *i->sval, i->sval_scalar);
      }
      return;
    }
    if (op == "Not" || op == "IsNaN" || op == "IsInf") return set(n, 0, DType::kBool, shape_of(n, 0));
    if (op == "QuantizeLinear") {
      // The zero point's type, else output_dtype (opset 21), else uint8.
      DType dt = dtype_of_in(n, 2);
      if (dt == DType::kUndefined && (n.inputs.size() < 3 || n.inputs[2] < 0)) {
        const int64_t to = n.opset >= 21 ? n.attr_int("output_dtype", 0) : 0;
        dt = to != 0 && dtype_is_valid(static_cast<int>(to)) ? static_cast<DType>(to) : DType::kUInt8;
      }
      return set(n, 0, dt, shape_of(n, 0));
    }
    if (op == "DequantizeLinear") return set(n, 0, dtype_of_in(n, 1), shape_of(n, 0));
    if (op == "Cast") {
      DType to = static_cast<DType>(n.attr_int("to", 0));
      set(n, 0, dtype_is_valid(static_cast<int>(to)) ? to : DType::kUndefined, shape_of(n, 0));
      const Info* i = in(n, 0);
      if (i && i->sval && (to == DType::kInt64 || to == DType::kInt32)) set_sval(n, *i->sval, i->sval_scalar);
      return;
    }
    if (binary.count(op)) {
      bool cmp = op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual";
      set(n, 0, cmp ? DType::kBool : dtype_of_in(n, 0), broadcast(shape_of(n, 0), shape_of(n, 1)));
      return;
    }
    if (op == "Where") return set(n, 0, dtype_of_in(n, 1), broadcast(broadcast(shape_of(n, 0), shape_of(n, 1)), shape_of(n, 2)));
    if (op == "MatMul") return set(n, 0, dtype_of_in(n, 0), matmul_shape(n));
    if (op == "Gemm") {
      auto a = shape_of(n, 0), b = shape_of(n, 1);
      std::optional<Dims> out;
      if (a && b && a->size() == 2 && b->size() == 2)
        out = Dims{(*a)[n.attr_int("transA", 0) ? 1 : 0], (*b)[n.attr_int("transB", 0) ? 0 : 1]};
      return set(n, 0, dtype_of_in(n, 0), out);
    }
    if (op == "Conv" || op == "MaxPool" || op == "AveragePool") return infer_window(n);
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
      auto a = shape_of(n, 0);
      if (a && a->size() >= 2)
        for (size_t i = 2; i < a->size(); ++i) (*a)[i] = static_dim(1);
      return set(n, 0, dtype_of_in(n, 0), a);
    }
    if (op == "Flatten") {
      auto a = shape_of(n, 0);
      std::optional<Dims> out;
      if (a) {
        int64_t r = static_cast<int64_t>(a->size()), axis = n.attr_int("axis", 1);
        if (axis < 0) axis += r;
        if (axis >= 0 && axis <= r) {
          auto prod = [&](int64_t b, int64_t e) {
            int64_t p = 1;
            for (int64_t i = b; i < e; ++i) {
              if (!(*a)[i].is_static()) return unknown_dim();
              p *= (*a)[i].size;
            }
            return static_dim(p);
          };
          Dim d0 = axis == 1 ? (*a)[0] : prod(0, axis);
          out = Dims{d0, prod(axis, r)};
        }
      }
      return set(n, 0, dtype_of_in(n, 0), out);
    }
    if (op == "Transpose") {
      auto a = shape_of(n, 0);
      std::optional<Dims> out;
      if (a) {
        auto perm = n.attr_ints("perm");
        if (perm.empty())
          for (size_t i = a->size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
        if (perm.size() == a->size()) {
          out = Dims{};
          for (int64_t p : perm) {
            if (p < 0 || p >= static_cast<int64_t>(a->size())) return;
            out->push_back((*a)[p]);
          }
        }
      }
      return set(n, 0, dtype_of_in(n, 0), out);
    }
    if (op == "Reshape") return infer_reshape(n);
    if (op == "Shape") {
      auto a = shape_of(n, 0);
      set(n, 0, DType::kInt64, std::nullopt);
      if (!a) return;
      int64_t r = static_cast<int64_t>(a->size());
      int64_t start = n.opset >= 15 ? n.attr_int("start", 0) : 0;
      int64_t end = n.opset >= 15 ? n.attr_int("end", r) : r;
      if (start < 0) start += r;
      if (end < 0) end += r;
      start = std::clamp<int64_t>(start, 0, r);
      end = std::clamp<int64_t>(end, 0, r);
      Dims v;
      for (int64_t i = start; i < end; ++i) v.push_back((*a)[i]);
      return set_sval(n, v, false);
    }
    if (op == "Size") {
      auto a = shape_of(n, 0);
      set(n, 0, DType::kInt64, Dims{});
      if (a && fully_static(*a)) {
        int64_t p = 1;
        for (const Dim& d : *a) p *= d.size;
        set_sval(n, Dims{static_dim(p)}, true);
      }
      return;
    }
    if (op == "Gather") return infer_gather(n);
    if (op == "Unsqueeze" || op == "Squeeze") return infer_squeeze(n, op == "Unsqueeze");
    if (op == "Concat") return infer_concat(n);
    if (op == "Slice") return infer_slice(n);
    if (op == "ConstantOfShape") {
      DType dt = DType::kFloat32;
      if (auto* a = n.attr("value"); a && a->t.valid()) dt = a->t.dtype();
      const Info* i = in(n, 0);
      std::optional<Dims> out;
      if (i && i->sval) out = as_shape(*i->sval);
      else if (i) out = rank_from_shape_input(*i);
      return set(n, 0, dt, out);
    }
    if (op == "Expand") {
      const Info* i = in(n, 1);
      std::optional<Dims> target;
      if (i && i->sval) target = as_shape(*i->sval);
      return set(n, 0, dtype_of_in(n, 0), broadcast(shape_of(n, 0), target));
    }
  }

  // numpy matmul of inputs 0 and 1 (both of rank >= 2), when known.
  std::optional<Dims> matmul_shape(const Node& n) {
    auto a = shape_of(n, 0), b = shape_of(n, 1);
    std::optional<Dims> out;
    if (a && b && a->size() >= 2 && b->size() >= 2) {
      Dims ba(a->begin(), a->end() - 2), bb(b->begin(), b->end() - 2);
      auto batch = broadcast(ba, bb);
      if (batch) {
        out = *batch;
        out->push_back((*a)[a->size() - 2]);
        out->push_back(b->back());
      }
    }
    return out;
  }

  // The quantized com.microsoft ops ONNX Runtime's QOperator quantization
  // and its saved optimised models emit (backends/cpu/ops/quantize_contrib.cpp,
  // quantize.cpp).
  void infer_ms(const Node& n) {
    const std::string& op = n.op_type;
    if (op == "MatMulIntegerToFloat" || op == "DynamicQuantizeMatMul") return set(n, 0, DType::kFloat32, matmul_shape(n));
    if (op == "QLinearSigmoid" || op == "QLinearLeakyRelu") return set(n, 0, dtype_of_in(n, 0), shape_of(n, 0));
    if (op == "QLinearAdd" || op == "QLinearMul")
      return set(n, 0, dtype_of_in(n, 0), broadcast(shape_of(n, 0), shape_of(n, 3)));
    if (op == "QLinearGlobalAveragePool") {
      auto a = shape_of(n, 0);
      if (a && a->size() >= 3) {
        const size_t first = n.attr_int("channels_last", 0) ? 1 : 2;
        for (size_t i = first; i < first + a->size() - 2; ++i) (*a)[i] = static_dim(1);
      } else {
        a.reset();
      }
      return set(n, 0, dtype_of_in(n, 0), a);
    }
    if (op == "QLinearConcat") {
      // Inputs: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) triples.
      std::optional<Dims> out;
      for (size_t k = 2; k < n.inputs.size(); k += 3) {
        auto s = shape_of(n, k);
        if (!s) return set(n, 0, dtype_of_in(n, 1), std::nullopt);
        int64_t axis = n.attr_int("axis", 0);
        if (axis < 0) axis += static_cast<int64_t>(s->size());
        if (axis < 0 || axis >= static_cast<int64_t>(s->size()) || (out && out->size() != s->size()))
          return set(n, 0, dtype_of_in(n, 1), std::nullopt);
        const size_t a = static_cast<size_t>(axis);
        if (!out) {
          out = *s;
          continue;
        }
        Dim& d = (*out)[a];
        d = d.is_static() && (*s)[a].is_static() ? static_dim(d.size + (*s)[a].size) : unknown_dim();
      }
      return set(n, 0, dtype_of_in(n, 1), out);
    }
    if (op == "QLinearAveragePool") return set(n, 0, dtype_of_in(n, 0), std::nullopt);
    if (op == "QGemm") {
      // Quantized output (the zero point's type, else A's) when y_scale is given, else float32.
      const bool quantized = in(n, 7) != nullptr;
      const DType dt = !quantized ? DType::kFloat32 : (in(n, 8) ? dtype_of_in(n, 8) : dtype_of_in(n, 0));
      auto a = shape_of(n, 0), b = shape_of(n, 3);
      std::optional<Dims> out;
      if (a && b && a->size() == 2 && b->size() == 2)
        out = Dims{(*a)[n.attr_int("transA", 0) ? 1 : 0], (*b)[n.attr_int("transB", 0) ? 0 : 1]};
      return set(n, 0, dt, out);
    }
  }

  void infer_window(const Node& n) {
    auto x = shape_of(n, 0);
    bool conv = n.op_type == "Conv";
    std::optional<Dims> out;
    if (!x || x->size() < 3) return set(n, 0, dtype_of_in(n, 0), out);
    size_t sp = x->size() - 2;
    std::vector<int64_t> kernel = n.attr_ints("kernel_shape");
    Dim channels = (*x)[1];
    if (conv) {
      auto w = shape_of(n, 1);
      if (!w || w->size() != x->size()) return set(n, 0, dtype_of_in(n, 0), out);
      channels = (*w)[0];
      if (kernel.empty())
        for (size_t i = 2; i < w->size(); ++i) kernel.push_back((*w)[i].is_static() ? (*w)[i].size : -1);
    }
    if (kernel.size() != sp) return set(n, 0, dtype_of_in(n, 0), out);
    auto strides = n.attr_ints("strides", std::vector<int64_t>(sp, 1));
    auto dil = n.attr_ints("dilations", std::vector<int64_t>(sp, 1));
    auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
    std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
    bool ceil_mode = n.attr_int("ceil_mode", 0) != 0;
    if (strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp) return set(n, 0, dtype_of_in(n, 0), out);
    out = Dims{(*x)[0], channels};
    for (size_t i = 0; i < sp; ++i) {
      const Dim& d = (*x)[2 + i];
      if (!d.is_static() || kernel[i] < 0 || strides[i] <= 0) {
        out->push_back(unknown_dim());
        continue;
      }
      int64_t o;
      if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") o = ceil_div_exact(d.size, strides[i]);
      else {
        // Attribute sizes that overflow leave the dim unknown; the kernel refuses them.
        std::optional<int64_t> padded = checked_add(d.size, auto_pad == "VALID" ? 0 : pads[i]);
        if (padded && auto_pad != "VALID") padded = checked_add(*padded, pads[i + sp]);
        const std::optional<int64_t> dilated = checked_mul(dil[i], kernel[i] - 1);
        const std::optional<int64_t> span = padded && dilated ? checked_sub(*padded, *dilated) : std::nullopt;
        if (!span || *span == INT64_MIN) {
          out->push_back(unknown_dim());
          continue;
        }
        if (*span - 1 < 0) return set(n, 0, dtype_of_in(n, 0), std::nullopt);
        o = (ceil_mode ? ceil_div_exact(*span - 1, strides[i]) : (*span - 1) / strides[i]) + 1;
        const std::optional<int64_t> last_start = checked_mul(o - 1, strides[i]);
        if (ceil_mode && (!last_start || *last_start >= d.size + pads[i])) --o;
      }
      out->push_back(static_dim(o));
    }
    set(n, 0, dtype_of_in(n, 0), out);
  }

  // A target shape computed at run time whose own length is known gives the
  // output's rank, though none of its dims.
  static std::optional<Dims> rank_from_shape_input(const Info& shape_input) {
    if (!shape_input.shape || shape_input.shape->size() != 1 || !(*shape_input.shape)[0].is_static()) return std::nullopt;
    // A declared length past any real rank (a hostile model's [2^40]) leaves the rank unknown.
    if ((*shape_input.shape)[0].size < 0 || (*shape_input.shape)[0].size > kMaxInferredRank) return std::nullopt;
    return Dims(static_cast<size_t>((*shape_input.shape)[0].size), unknown_dim());
  }

  void infer_reshape(const Node& n) {
    auto x = shape_of(n, 0);
    const Info* s = in(n, 1);
    if (!s || !s->sval) return set(n, 0, dtype_of_in(n, 0), s ? rank_from_shape_input(*s) : std::nullopt);
    Dims t = *s->sval;
    bool allowzero = n.attr_int("allowzero", 0) != 0;
    int minus = -1;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].is_static() && t[i].size == 0 && !allowzero) {
        if (!x || i >= x->size()) return set(n, 0, dtype_of_in(n, 0), std::nullopt);
        t[i] = (*x)[i];
      } else if (is_literal(t[i])) {
        if (t[i].size != -1 || minus >= 0) return set(n, 0, dtype_of_in(n, 0), std::nullopt);
        minus = static_cast<int>(i);
      }
    }
    if (minus >= 0) {
      t[minus] = unknown_dim();
      if (x) {
        // Cancel symbols present on both sides; the rest must be static.
        int64_t in_prod = 1, out_prod = 1;
        std::vector<std::string> in_syms, out_syms;
        bool ok = true;
        for (const Dim& d : *x) {
          if (d.is_static()) in_prod *= d.size;
          else if (!d.symbol.empty()) in_syms.push_back(d.symbol);
          else ok = false;
        }
        for (size_t i = 0; i < t.size(); ++i) {
          if (static_cast<int>(i) == minus) continue;
          if (t[i].is_static()) out_prod *= t[i].size;
          else if (!t[i].symbol.empty()) {
            auto it = std::find(in_syms.begin(), in_syms.end(), t[i].symbol);
            if (it != in_syms.end()) in_syms.erase(it);
            else out_syms.push_back(t[i].symbol);
          } else ok = false;
        }
        if (ok && out_syms.empty() && out_prod > 0 && in_prod % out_prod == 0) {
          if (in_syms.empty()) t[minus] = static_dim(in_prod / out_prod);
          else if (in_syms.size() == 1 && in_prod == out_prod) t[minus] = Dim{-1, in_syms[0]};
        }
      }
    }
    set(n, 0, dtype_of_in(n, 0), t);
  }

  void infer_gather(const Node& n) {
    auto x = shape_of(n, 0), idx = shape_of(n, 1);
    std::optional<Dims> out;
    int64_t axis = n.attr_int("axis", 0);
    if (x && idx) {
      int64_t r = static_cast<int64_t>(x->size());
      if (axis < 0) axis += r;
      if (axis >= 0 && axis < r) {
        out = Dims(x->begin(), x->begin() + axis);
        out->insert(out->end(), idx->begin(), idx->end());
        out->insert(out->end(), x->begin() + axis + 1, x->end());
      }
    }
    set(n, 0, dtype_of_in(n, 0), out);
    const Info* d = in(n, 0);
    auto indices = ints_of(n, 1);
    const Info* ii = in(n, 1);
    if (d && d->sval && !d->sval_scalar && axis == 0 && indices && ii) {
      Dims v;
      int64_t len = static_cast<int64_t>(d->sval->size());
      for (int64_t k : *indices) {
        if (k < 0) k += len;
        if (k < 0 || k >= len) return;
        v.push_back((*d->sval)[k]);
      }
      set_sval(n, v, ii->sval_scalar);
    }
  }

  void infer_squeeze(const Node& n, bool unsqueeze) {
    auto axes = axes_of(n, 13, 1);
    auto x = shape_of(n, 0);
    std::optional<Dims> out;
    if (x && axes) {
      int64_t r = static_cast<int64_t>(x->size());
      if (unsqueeze) {
        int64_t orank = r + static_cast<int64_t>(axes->size());
        std::vector<bool> ins(orank, false);
        bool ok = true;
        for (int64_t a : *axes) {
          if (a < 0) a += orank;
          if (a < 0 || a >= orank || ins[a]) ok = false;
          else ins[a] = true;
        }
        if (ok) {
          out = Dims{};
          size_t k = 0;
          for (int64_t i = 0; i < orank; ++i) out->push_back(ins[i] ? static_dim(1) : (*x)[k++]);
        }
      } else if (!axes->empty()) {
        std::vector<bool> drop(r, false);
        bool ok = true;
        for (int64_t a : *axes) {
          if (a < 0) a += r;
          if (a < 0 || a >= r) ok = false;
          else drop[a] = true;
        }
        if (ok) {
          out = Dims{};
          for (int64_t i = 0; i < r; ++i)
            if (!drop[i]) out->push_back((*x)[i]);
        }
      } else if (fully_static(*x)) {
        out = Dims{};
        for (const Dim& d : *x)
          if (d.size != 1) out->push_back(d);
      }
    }
    set(n, 0, dtype_of_in(n, 0), out);
    const Info* d = in(n, 0);
    if (d && d->sval && out && out->size() <= 1) set_sval(n, *d->sval, out->empty());
  }

  void infer_concat(const Node& n) {
    int64_t axis = n.attr_int("axis", 0);
    std::optional<Dims> out;
    bool all_sval = !n.inputs.empty();
    Dims v;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Info* i = in(n, k);
      if (!i || !i->sval || i->sval_scalar) all_sval = false;
      else v.insert(v.end(), i->sval->begin(), i->sval->end());
      auto s = i ? i->shape : std::nullopt;
      if (!s) {
        out.reset();
        if (k == 0) break;
        continue;
      }
      int64_t r = static_cast<int64_t>(s->size());
      int64_t a = axis < 0 ? axis + r : axis;
      if (a < 0 || a >= r) {
        out.reset();
        break;
      }
      if (k == 0) {
        out = s;
        continue;
      }
      if (!out || out->size() != s->size()) {
        out.reset();
        break;
      }
      Dim& acc = (*out)[a];
      acc = acc.is_static() && (*s)[a].is_static() ? static_dim(acc.size + (*s)[a].size) : unknown_dim();
      for (int64_t j = 0; j < r; ++j)
        if (j != a && !same_dim((*out)[j], (*s)[j]) && !(*out)[j].is_static()) (*out)[j] = (*s)[j];
    }
    set(n, 0, dtype_of_in(n, 0), out);
    if (all_sval && axis == 0) set_sval(n, v, false);
  }

  // Constant-or-symbolic list held by input k.
  std::optional<Dims> svals_of(const Node& n, size_t k) const {
    if (k >= n.inputs.size() || n.inputs[k] < 0) return std::nullopt;
    return info_[n.inputs[k]].sval;
  }

  void infer_slice(const Node& n) {
    const Info* d = in(n, 0);
    if (!d) return;
    std::optional<Dims> starts, ends;
    std::optional<std::vector<int64_t>> axes, steps;
    if (n.opset < 10) {
      Dims s, e;
      for (int64_t x : n.attr_ints("starts")) s.push_back(literal(x));
      for (int64_t x : n.attr_ints("ends")) e.push_back(literal(x));
      starts = s, ends = e;
      axes = n.attr_ints("axes");
    } else {
      starts = svals_of(n, 1), ends = svals_of(n, 2);
      axes = n.inputs.size() > 3 && n.inputs[3] >= 0 ? ints_of(n, 3) : std::vector<int64_t>{};
      steps = n.inputs.size() > 4 && n.inputs[4] >= 0 ? ints_of(n, 4) : std::vector<int64_t>{};
    }
    if (!starts || !ends || !axes || !steps || starts->size() != ends->size()) {
      // Parameters known only at run time: a slice keeps its input's rank.
      std::optional<Dims> out;
      if (d->shape && !d->sval) out = Dims(d->shape->size(), unknown_dim());
      return set(n, 0, dtype_of_in(n, 0), out);
    }
    if (axes->empty())
      for (size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<int64_t>(i));
    if (steps->empty()) steps->assign(starts->size(), 1);
    if (axes->size() != starts->size() || steps->size() != starts->size()) return set(n, 0, dtype_of_in(n, 0), std::nullopt);
    // The 1-D shape-value case: slice the tracked value.
    if (d->sval && !d->sval_scalar && starts->size() == 1 && ((*axes)[0] == 0 || (*axes)[0] == -1) && (*steps)[0] == 1 &&
        known((*starts)[0]) && known((*ends)[0])) {
      int64_t len = static_cast<int64_t>(d->sval->size());
      int64_t s = (*starts)[0].size, e = (*ends)[0].size;
      if (s < 0) s += len;
      if (e < 0) e += len;
      s = std::clamp<int64_t>(s, 0, len);
      e = std::clamp<int64_t>(e, 0, len);
      Dims v;
      for (int64_t i = s; i < e; ++i) v.push_back((*d->sval)[i]);
      return set_sval(n, v, false);
    }
    if (!d->shape) return set(n, 0, dtype_of_in(n, 0), std::nullopt);
    Dims out = *d->shape;
    const int64_t r = static_cast<int64_t>(out.size());
    for (size_t k = 0; k < axes->size(); ++k) {
      int64_t a = (*axes)[k] < 0 ? (*axes)[k] + r : (*axes)[k];
      if (a < 0 || a >= r) return set(n, 0, dtype_of_in(n, 0), std::nullopt);
      const Dim dim = out[a];
      const Dim& sd = (*starts)[k];
      const Dim& ed = (*ends)[k];
      int64_t step = (*steps)[k];
      if (step == 0) return set(n, 0, dtype_of_in(n, 0), std::nullopt);
      if (dim.is_static() && known(sd) && known(ed)) {
        int64_t len = dim.size, s = sd.size, e = ed.size;
        if (step > 0) {
          s = s < 0 ? std::max<int64_t>(0, s + len) : std::min(s, len);
          e = e < 0 ? std::max<int64_t>(0, e + len) : std::min(e, len);
          out[a] = static_dim(e > s ? (e - s + step - 1) / step : 0);
        } else {
          s = s < 0 ? std::max<int64_t>(-1, s + len) : std::min(s, len - 1);
          e = e < 0 ? std::max<int64_t>(-1, e + len) : std::min(e, len - 1);
          out[a] = static_dim(s > e ? (s - e - step - 1) / -step : 0);
        }
      } else if (step == 1 && known(sd) && sd.size == 0 && !known(ed) && !ed.symbol.empty()) {
        out[a] = ed;  // x[:n] with a named n (a sequence length within the table)
      } else if (step == 1 && known(sd) && sd.size == 0 && known(ed) && ed.size >= (int64_t{1} << 31)) {
        out[a] = dim;  // x[0:]
      } else {
        out[a] = unknown_dim();
      }
    }
    set(n, 0, dtype_of_in(n, 0), out);
  }

  Rewriter& rw_;
  Graph& g_;
  std::vector<Info> info_;
};

}  // namespace

int fold_shapes(Graph& g, PassContext& ctx, const std::map<std::string, Shape>& input_shapes) {
  Rewriter rw(g, ctx);
  ShapeInference si(rw, input_shapes);
  si.run();
  int folded = 0;
  std::map<std::string, ValueId> canonical;  // shape value with symbolic dims -> first value holding it
  for (int i = 0; i < rw.size(); ++i) {
    Node& n = rw.node(i);
    // Record what was learnt where the model left it open.
    for (ValueId o : n.outputs) {
      if (o < 0) continue;
      const Info& inf = si.info(o);
      Value& v = g.values[o];
      if (v.type.kind != ValueKind::kTensor) continue;
      if (v.type.dtype == DType::kUndefined) v.type.dtype = inf.dtype;
      if (!v.type.shape && inf.shape) v.type.shape = inf.shape;
    }
    if (n.outputs.size() != 1 || n.outputs[0] < 0 || rw.constant(n.outputs[0])) continue;
    const Info& inf = si.info(n.outputs[0]);
    if (!inf.sval) continue;
    if (!fully_static(*inf.sval)) {
      // Shape values made of static and named dims (batch, sequence) are equal
      // wherever they are computed: keep the first, read it everywhere.
      bool named = true;
      std::string key = std::to_string(static_cast<int>(inf.dtype)) + (inf.sval_scalar ? "s:" : "v:");
      for (const Dim& d : *inf.sval) {
        if (known(d)) key += std::to_string(d.size) + ",";
        else if (!d.symbol.empty()) key += "$" + d.symbol + ",";
        else named = false;
      }
      if (!named || inf.dtype == DType::kUndefined) continue;
      auto [it, fresh] = canonical.emplace(key, n.outputs[0]);
      if (!fresh && rw.replace_uses(n.outputs[0], it->second)) {
        log_fired("shape-folding", "reused an equal shape value for " + n.describe());
        ++folded;
      }
      continue;
    }
    DType dt = g.values[n.outputs[0]].type.dtype;
    if (dt == DType::kUndefined) dt = inf.dtype;
    if (dt != DType::kInt64 && dt != DType::kInt32) continue;
    Shape shape = inf.sval_scalar ? Shape{} : Shape{static_cast<int64_t>(inf.sval->size())};
    auto t = Tensor::allocate(dt, shape);
    if (!t.ok()) continue;
    Tensor tensor = std::move(t).value();
    for (size_t k = 0; k < inf.sval->size(); ++k) {
      if (dt == DType::kInt64) tensor.data<int64_t>()[k] = (*inf.sval)[k].size;
      else tensor.data<int32_t>()[k] = static_cast<int32_t>((*inf.sval)[k].size);
    }
    Value& v = g.values[n.outputs[0]];
    v.constant = std::move(tensor);
    v.type.dtype = dt;
    v.type.shape = std::vector<Dim>();
    for (int64_t d : shape) v.type.shape->push_back(static_dim(d));
    log_fired("shape-folding", "folded " + n.describe());
    rw.remove(i);
    ++folded;
  }
  rw.commit();
  ctx.count("shape-folding", folded);
  return folded;
}

}  // namespace dlrt::ir::passes
