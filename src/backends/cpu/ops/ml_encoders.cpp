// ai.onnx.ml feature encoders, with ONNX Runtime's semantics:
//  - OneHotEncoder: Y = X's shape + [categories] of 0/1 floats (X of rank <= 2;
//    numeric X truncated to int64 and looked up in cats_int64s, strings in
//    cats_strings); a value in no category gives a row of zeros, or an error
//    with zeros = 0.
//  - Imputer: values equal to replaced_value_* (NaN matching NaN) become
//    imputed_value_*[column] (one value per column of the last axis of a
//    [N, C] input, or one for all: ONNX Runtime takes the first value when the
//    count is not C); float/double use the floats, int64/int32 the int64s.
//  - CategoryMapper: string -> int64 through cats_strings[i] -> cats_int64s[i]
//    (default_int64 when absent), int64 -> string the other way
//    (default_string); a repeated key: the last pair wins.
//  - FeatureVectorizer: the inputs' rows, each cut or zero-padded to its
//    inputdimensions entry, side by side in one float [N, sum] row.
// The attributes are read and indexed once, when the kernel is made.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/ops/ml_util.h"
#include "core/tensor_values.h"

namespace dlrt::cpu {
namespace {

class OneHotEncoderKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    auto k = std::make_unique<OneHotEncoderKernel>();
    const auto ints = n.attr_ints("cats_int64s");
    const auto strs = n.attr_strings("cats_strings");
    if (ints.empty() == strs.empty())
      return InvalidModel(n.describe() + ": exactly one of cats_int64s and cats_strings must be non-empty");
    k->strings_ = !strs.empty();
    k->count_ = static_cast<int64_t>(k->strings_ ? strs.size() : ints.size());
    for (size_t i = 0; i < ints.size(); ++i) k->ints_[ints[i]] = static_cast<int64_t>(i);
    for (size_t i = 0; i < strs.size(); ++i) k->strs_[strs[i]] = static_cast<int64_t>(i);
    k->zeros_ = n.attr_int("zeros", 1) != 0;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    const bool str_in = x->dtype() == DType::kString;
    if (str_in != strings_ || (!str_in && x->dtype() != DType::kInt64 && x->dtype() != DType::kInt32 &&
                               x->dtype() != DType::kFloat32 && x->dtype() != DType::kFloat64))
      return ctx.invalid(std::string("X of type ") + dtype_name(x->dtype()) + " does not match the " +
                         (strings_ ? "string" : "int64") + " categories");
    if (x->rank() > 2) return ctx.invalid("X must have rank <= 2");
    Shape os = x->shape();
    os.push_back(count_);
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, os));
    float* yd = y->data<float>();
    for (int64_t i = 0; i < x->size(); ++i) {
      int64_t at = -1;
      if (str_in) {
        auto it = strs_.find(x->data<std::string>()[i]);
        if (it != strs_.end()) at = it->second;
      } else {
        const double v = element_as_double(*x, i);
        if (std::isfinite(v)) {
          auto it = ints_.find(x->dtype() == DType::kInt64 ? x->data<int64_t>()[i] : static_cast<int64_t>(v));
          if (it != ints_.end()) at = it->second;
        }
      }
      if (at >= 0) yd[i * count_ + at] = 1.0f;
      else if (!zeros_) return ctx.invalid("a value in no category, and zeros = 0");
    }
    return Status::Ok();
  }

 private:
  bool strings_ = false, zeros_ = true;
  int64_t count_ = 0;
  std::unordered_map<int64_t, int64_t> ints_;
  std::unordered_map<std::string, int64_t> strs_;
};

class ImputerKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    auto k = std::make_unique<ImputerKernel>();
    k->floats_ = n.attr_floats("imputed_value_floats");
    k->ints_ = n.attr_ints("imputed_value_int64s");
    if (k->floats_.empty() == k->ints_.empty())
      return InvalidModel(n.describe() + ": exactly one of imputed_value_floats and imputed_value_int64s must be non-empty");
    k->replaced_float_ = n.attr_float("replaced_value_float", 0.0f);
    k->replaced_int_ = n.attr_int("replaced_value_int64", 0);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() == 0) return ctx.invalid("X must have rank >= 1");
    const bool fl = x->dtype() == DType::kFloat32 || x->dtype() == DType::kFloat64;
    if (!fl && x->dtype() != DType::kInt64 && x->dtype() != DType::kInt32)
      return ctx.invalid(std::string("X must be float, double, int64 or int32, got ") + dtype_name(x->dtype()));
    if (fl ? floats_.empty() : ints_.empty())
      return ctx.invalid(std::string("no imputed values for X of type ") + dtype_name(x->dtype()) +
                         (fl ? " (imputed_value_floats is empty)" : " (imputed_value_int64s is empty)"));
    const int64_t stride = x->rank() == 1 ? x->shape()[0] : x->shape()[1];
    const size_t nvals = fl ? floats_.size() : ints_.size();
    const bool per_column = static_cast<int64_t>(nvals) == stride;
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* xd = x->data<T>();
      T* yd = y->data<T>();
      for (int64_t i = 0; i < x->size(); ++i) {
        const size_t c = per_column ? static_cast<size_t>(i % stride) : 0;
        bool hit;
        if constexpr (std::is_floating_point_v<T>) {
          hit = std::isnan(replaced_float_) ? std::isnan(xd[i]) : xd[i] == static_cast<T>(replaced_float_);
        } else {
          hit = static_cast<int64_t>(xd[i]) == replaced_int_;
        }
        if (!hit) yd[i] = xd[i];
        else if constexpr (std::is_floating_point_v<T>) yd[i] = static_cast<T>(floats_[c]);
        else yd[i] = static_cast<T>(ints_[c]);
      }
      return Status::Ok();
    });
  }

 private:
  std::vector<float> floats_;
  std::vector<int64_t> ints_;
  float replaced_float_ = 0;
  int64_t replaced_int_ = 0;
};

class CategoryMapperKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    auto k = std::make_unique<CategoryMapperKernel>();
    const auto ints = n.attr_ints("cats_int64s");
    const auto strs = n.attr_strings("cats_strings");
    if (ints.size() != strs.size())
      return InvalidModel(n.describe() + ": cats_int64s and cats_strings must have the same length");
    for (size_t i = 0; i < ints.size(); ++i) {
      k->to_int_[strs[i]] = ints[i];
      k->to_str_[ints[i]] = strs[i];
    }
    k->default_int_ = n.attr_int("default_int64", -1);
    k->default_str_ = n.attr_string("default_string", "_Unused");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->dtype() == DType::kString) {
      DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, x->shape()));
      for (int64_t i = 0; i < x->size(); ++i) {
        auto it = to_int_.find(x->data<std::string>()[i]);
        y->data<int64_t>()[i] = it == to_int_.end() ? default_int_ : it->second;
      }
      return Status::Ok();
    }
    if (x->dtype() != DType::kInt64) return ctx.invalid(std::string("X must be string or int64, got ") + dtype_name(x->dtype()));
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kString, x->shape()));
    for (int64_t i = 0; i < x->size(); ++i) {
      auto it = to_str_.find(x->data<int64_t>()[i]);
      y->data<std::string>()[i] = it == to_str_.end() ? default_str_ : it->second;
    }
    return Status::Ok();
  }

 private:
  std::unordered_map<std::string, int64_t> to_int_;
  std::unordered_map<int64_t, std::string> to_str_;
  int64_t default_int_ = -1;
  std::string default_str_;
};

class FeatureVectorizerKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    auto k = std::make_unique<FeatureVectorizerKernel>();
    k->dims_ = n.attr_ints("inputdimensions");
    for (int64_t d : k->dims_) {
      if (d < 0) return InvalidModel(n.describe() + ": a negative inputdimensions value");
      // The sum is the output's row width and each input's offset in it: it must not wrap.
      if (__builtin_add_overflow(k->total_, d, &k->total_))
        return InvalidModel(n.describe() + ": the inputdimensions values sum past 2^63");
    }
    if (k->dims_.size() != n.inputs.size())
      return InvalidModel(n.describe() + ": " + std::to_string(n.inputs.size()) + " inputs and " +
                          std::to_string(k->dims_.size()) + " inputdimensions values");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    int64_t rows = -1;
    for (size_t i = 0; i < dims_.size(); ++i) {
      DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, i));
      if (x->dtype() != DType::kFloat32 && x->dtype() != DType::kFloat64 && x->dtype() != DType::kInt64 &&
          x->dtype() != DType::kInt32)
        return ctx.invalid(std::string("input ") + std::to_string(i) + " must be float, double, int64 or int32, got " +
                           dtype_name(x->dtype()));
      if (x->rank() == 0) return ctx.invalid("input " + std::to_string(i) + " must have rank >= 1");
      const int64_t n = x->rank() == 1 ? 1 : x->shape()[0];
      if (rows >= 0 && n != rows)
        return ctx.invalid("input " + std::to_string(i) + " has " + std::to_string(n) + " rows, input 0 " + std::to_string(rows));
      rows = n;
    }
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, {rows, total_}));
    float* yd = y->data<float>();
    int64_t offset = 0;
    for (size_t i = 0; i < dims_.size(); ++i) {
      const Tensor& x = *ctx.input(i);
      const int64_t width = rows > 0 ? x.size() / rows : 0, take = std::min(width, dims_[i]);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < take; ++j) yd[r * total_ + offset + j] = static_cast<float>(element_as_double(x, r * width + j));
      offset += dims_[i];
    }
    return Status::Ok();
  }

 private:
  std::vector<int64_t> dims_;
  int64_t total_ = 0;
};

}  // namespace

Status register_ml_encoder_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add(ml_kernel_def<OneHotEncoderKernel>("OneHotEncoder")));
  DLRT_RETURN_IF_ERROR(r.add(ml_kernel_def<ImputerKernel>("Imputer")));
  DLRT_RETURN_IF_ERROR(r.add(ml_kernel_def<CategoryMapperKernel>("CategoryMapper")));
  return r.add(ml_kernel_def<FeatureVectorizerKernel>("FeatureVectorizer"));
}

}  // namespace dlrt::cpu
