// Traditional-ML ops (domain ai.onnx.ml) that make or read maps: ZipMap
// (class scores -> one map per row, label -> score: what skl2onnx gives
// scikit-learn classifiers by default) and DictVectorizer
// (a map -> a dense row over a vocabulary). Shapes, types and errors as ONNX
// Runtime has them.
#include <map>
#include <string>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/ops/ml_util.h"

namespace dlrt::cpu {
namespace {

// ZipMap: X [N, C] (or [C], one row) float -> N maps from the C class labels
// (classlabels_int64s or classlabels_strings) to the row's values. The maps
// share the labels: a map sequence of keys [C] and values [N, C].
class ZipMapKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    const auto* ints = n.attr("classlabels_int64s");
    const auto* strs = n.attr("classlabels_strings");
    const bool has_ints = ints && !ints->ints.empty(), has_strs = strs && !strs->strings.empty();
    if (has_ints == has_strs)
      return InvalidModel(n.describe() + ": exactly one of classlabels_int64s and classlabels_strings must be given");
    auto k = std::make_unique<ZipMapKernel>();
    if (has_ints) k->labels_ = Tensor::from_vector<int64_t>({static_cast<int64_t>(ints->ints.size())}, ints->ints);
    else k->labels_ = Tensor::from_vector<std::string>({static_cast<int64_t>(strs->strings.size())}, strs->strings);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->dtype() != DType::kFloat32) return ctx.invalid(std::string("X must be float32, got ") + dtype_name(x->dtype()));
    if (x->rank() != 1 && x->rank() != 2)
      return ctx.invalid("X must be 1-D or 2-D, got shape " + shape_to_string(x->shape()));
    const int64_t cols = x->shape().back();
    if (cols != labels_.size())
      return ctx.invalid("X has " + std::to_string(cols) + " columns but there are " + std::to_string(labels_.size()) +
                         " class labels");
    // A copy: the output outlives X's buffer, which the executor may reuse.
    DLRT_ASSIGN_OR_RETURN(Tensor values, x->clone());
    if (x->rank() == 1) {
      DLRT_ASSIGN_OR_RETURN(values, values.reshaped(Shape{1, cols}));
    }
    // The labels copied too: the caller owns what a run returns, and may write into it.
    DLRT_ASSIGN_OR_RETURN(Tensor keys, labels_.clone());
    ctx.set_output_value(0, RunValue::of_map(std::move(keys), std::move(values), true));
    return Status::Ok();
  }

 private:
  Tensor labels_;
};

// DictVectorizer: a map (int64 or string keys) -> Y [1, V] in the map's value
// type, Y[0, i] = map[vocabulary[i]] (0 or "" where the key is absent; keys
// outside the vocabulary are ignored).
class DictVectorizerKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    const auto* ints = n.attr("int64_vocabulary");
    const auto* strs = n.attr("string_vocabulary");
    const bool has_ints = ints && !ints->ints.empty(), has_strs = strs && !strs->strings.empty();
    if (has_ints == has_strs)
      return InvalidModel(n.describe() + ": exactly one of int64_vocabulary and string_vocabulary must be given");
    auto k = std::make_unique<DictVectorizerKernel>();
    k->string_keys_ = has_strs;
    if (has_ints)
      for (size_t i = 0; i < ints->ints.size(); ++i) k->int_index_.emplace(ints->ints[i], static_cast<int64_t>(i));
    else
      for (size_t i = 0; i < strs->strings.size(); ++i) k->str_index_.emplace(strs->strings[i], static_cast<int64_t>(i));
    k->size_ = static_cast<int64_t>(has_ints ? ints->ints.size() : strs->strings.size());
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    const RunValue* v = ctx.input_value(0);
    if (!v || v->kind != RunValue::Kind::kMap) return ctx.invalid("X must be a map");
    const Tensor& keys = v->map_keys;
    const Tensor& vals = v->map_values;
    if ((keys.dtype() == DType::kString) != string_keys_)
      return ctx.invalid(std::string("the map's keys are ") + dtype_name(keys.dtype()) + " but the vocabulary's are " +
                         (string_keys_ ? "string" : "int64"));
    if (keys.rank() != 1 || vals.rank() != 1 || keys.size() != vals.size())
      return ctx.invalid("the map's keys and values must be 1-D of one length");
    if (keys.size() == 0) return ctx.invalid("the map is empty");
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, vals.dtype(), Shape{1, size_}));
    for (int64_t i = 0; i < keys.size(); ++i) {
      int64_t at = -1;
      if (string_keys_) {
        auto it = str_index_.find(keys.data<std::string>()[i]);
        if (it != str_index_.end()) at = it->second;
      } else {
        auto it = int_index_.find(keys.data<int64_t>()[i]);
        if (it != int_index_.end()) at = it->second;
      }
      if (at < 0) continue;
      if (vals.dtype() == DType::kString) {
        y->data<std::string>()[at] = vals.data<std::string>()[i];
        continue;
      }
      DLRT_RETURN_IF_ERROR(dispatch_numeric(vals.dtype(), [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        y->data<T>()[at] = vals.data<T>()[i];
        return Status::Ok();
      }));
    }
    return Status::Ok();
  }

 private:
  bool string_keys_ = false;
  int64_t size_ = 0;
  std::map<int64_t, int64_t> int_index_;
  std::map<std::string, int64_t, std::less<>> str_index_;
};

}  // namespace

Status register_ml_map_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add(ml_kernel_def<ZipMapKernel>("ZipMap")));
  return r.add(ml_kernel_def<DictVectorizerKernel>("DictVectorizer"));
}

}  // namespace dlrt::cpu
