// Traditional-ML ops (domain ai.onnx.ml), as scikit-learn converters write
// them: Binarizer, ArrayFeatureExtractor, LabelEncoder (keys/values lists or
// tensors, opsets 1-4), Scaler, Normalizer, LinearRegressor, LinearClassifier. Numeric inputs
// compute in double (the linear models: in float32 through sgemm, as ONNX
// Runtime) and output float32 where the spec says so; the kernels
// with attribute lists read them once, when the kernel is made.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/ops/ml_util.h"
#include "backends/cpu/scratch.h"
#include "core/tensor_values.h"

namespace dlrt::cpu {
namespace {

bool is_ml_numeric(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kInt64 || t == DType::kInt32;
}

Result<const Tensor*> numeric_input(KernelContext& ctx, size_t i) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, i));
  if (!is_ml_numeric(x->dtype()))
    return ctx.invalid(std::string("input must be float, double, int64 or int32, got ") + dtype_name(x->dtype()));
  return x;
}

// Binarizer: 1 where x > threshold, else 0, in x's type.
Status binarizer(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, numeric_input(ctx, 0));
  const double th = ctx.node().attr_float("threshold", 0.0f);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
  return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < x->size(); ++i)
      y->data<T>()[i] = static_cast<double>(x->data<T>()[i]) > th ? T(1) : T(0);
    return Status::Ok();
  });
}

// ArrayFeatureExtractor: X[..., Y] along the last axis (Y flattened).
Status array_feature_extractor(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* idx, required_input(ctx, 1));
  if (x->rank() == 0) return ctx.invalid("X must have rank >= 1");
  if (idx->dtype() != DType::kInt64) return ctx.invalid("Y must be int64");
  const int64_t last = x->shape().back();
  const int64_t k = idx->size();
  for (int64_t i = 0; i < k; ++i)
    if (idx->data<int64_t>()[i] < 0 || idx->data<int64_t>()[i] >= last)
      return ctx.invalid("index " + std::to_string(idx->data<int64_t>()[i]) + " is outside [0, " + std::to_string(last) + ")");
  Shape os = x->shape();
  os.back() = k;
  if (x->rank() == 1) os = Shape{1, k};  // (ONNX Runtime's shape for a 1-D X)
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), os));
  const int64_t rows = last > 0 ? x->size() / last : 0;
  return dispatch_all(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < k; ++j) y->data<T>()[r * k + j] = x->data<T>()[r * last + idx->data<int64_t>()[j]];
    return Status::Ok();
  });
}

// LabelEncoder: a key -> value map from keys_* / values_* (lists, or 1-D
// tensors at opset 4), with default_* for keys not in it. Float keys: NaN
// matches NaN; a repeated key: the last one wins.
class LabelEncoderKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    auto k = std::make_unique<LabelEncoderKernel>();
    DLRT_RETURN_IF_ERROR(read_side(n, "keys", k->key_type_, k->key_num_, k->key_str_));
    DLRT_RETURN_IF_ERROR(read_side(n, "values", k->value_type_, k->value_num_, k->value_str_));
    const size_t nk = k->key_type_ == DType::kString ? k->key_str_.size() : k->key_num_.size();
    const size_t nv = k->value_type_ == DType::kString ? k->value_str_.size() : k->value_num_.size();
    if (nk != nv) return InvalidModel(n.describe() + ": keys and values differ in length");
    // Defaults: default_tensor, else default_<type>, else the spec's (-1, -0.0, "_Unused").
    if (const auto* a = n.attr("default_tensor"); a && a->kind == ir::Attribute::Kind::kTensor && a->t.size() > 0) {
      if (a->t.dtype() == DType::kString) k->default_str_ = a->t.data<std::string>()[0];
      else k->default_num_ = element_as_double(a->t, 0);
    } else if (k->value_type_ == DType::kString) {
      k->default_str_ = n.attr_string("default_string", "_Unused");
    } else if (k->value_type_ == DType::kFloat32 || k->value_type_ == DType::kFloat64) {
      k->default_num_ = n.attr_float("default_float", -0.0f);
    } else {
      k->default_num_ = static_cast<double>(n.attr_int("default_int64", -1));
    }
    for (size_t i = 0; i < nk; ++i) {
      if (k->key_type_ == DType::kString) k->str_index_[k->key_str_[i]] = i;
      else if (std::isnan(k->key_num_[i])) k->nan_index_ = static_cast<int64_t>(i);
      else k->num_index_[k->key_num_[i]] = i;
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    const bool str_in = x->dtype() == DType::kString;
    if (str_in != (key_type_ == DType::kString) || (!str_in && !dtype_is_float(x->dtype()) && !dtype_is_int(x->dtype())))
      return ctx.invalid(std::string("input of type ") + dtype_name(x->dtype()) + " does not match the keys' type " +
                         dtype_name(key_type_));
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, value_type_, x->shape()));
    for (int64_t i = 0; i < x->size(); ++i) {
      int64_t at = -1;
      if (str_in) {
        auto it = str_index_.find(x->data<std::string>()[i]);
        if (it != str_index_.end()) at = static_cast<int64_t>(it->second);
      } else {
        const double v = element_as_double(*x, i);
        if (std::isnan(v)) {
          at = nan_index_;
        } else {
          auto it = num_index_.find(v);
          if (it != num_index_.end()) at = static_cast<int64_t>(it->second);
        }
      }
      if (value_type_ == DType::kString) {
        y->data<std::string>()[i] = at >= 0 ? value_str_[at] : default_str_;
        continue;
      }
      const double v = at >= 0 ? value_num_[at] : default_num_;
      DLRT_RETURN_IF_ERROR(dispatch_numeric(value_type_, [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        y->data<T>()[i] = static_cast<T>(v);
        return Status::Ok();
      }));
    }
    return Status::Ok();
  }

 private:
  // keys_* / values_*: strings, int64s, floats, or a tensor.
  static Status read_side(const ir::Node& n, const std::string& side, DType& type, std::vector<double>& num,
                          std::vector<std::string>& str) {
    int found = 0;
    if (const auto* a = n.attr(side + "_strings")) type = DType::kString, str = a->strings, ++found;
    if (const auto* a = n.attr(side + "_int64s")) {
      type = DType::kInt64, ++found;
      for (int64_t v : a->ints) num.push_back(static_cast<double>(v));
    }
    if (const auto* a = n.attr(side + "_floats")) {
      type = DType::kFloat32, ++found;
      for (float v : a->floats) num.push_back(v);
    }
    if (const auto* a = n.attr(side + "_tensor"); a && a->kind == ir::Attribute::Kind::kTensor) {
      type = a->t.dtype(), ++found;
      for (int64_t i = 0; i < a->t.size(); ++i) {
        if (type == DType::kString) str.push_back(a->t.data<std::string>()[i]);
        else num.push_back(element_as_double(a->t, i));
      }
    }
    if (found != 1) return InvalidModel(n.describe() + ": exactly one " + side + "_* attribute must be set");
    if (type != DType::kString && type != DType::kInt64 && type != DType::kFloat32 && type != DType::kInt32 &&
        type != DType::kInt16 && type != DType::kFloat64)
      return Unsupported(n.describe() + ": " + side + " of type " + dtype_name(type) + " are not supported");
    return Status::Ok();
  }

  DType key_type_ = DType::kUndefined, value_type_ = DType::kUndefined;
  std::vector<double> key_num_, value_num_;
  std::vector<std::string> key_str_, value_str_;
  std::map<std::string, size_t> str_index_;
  std::map<double, size_t> num_index_;
  int64_t nan_index_ = -1;
  double default_num_ = -1;
  std::string default_str_ = "_Unused";
};

// Scaler: (x - offset) * scale per feature (or one value for all), float32
// out; the attributes are read once.
class ScalerKernel final : public OpKernel {
 public:
  explicit ScalerKernel(const ir::Node& n) : offset_(n.attr_floats("offset")), scale_(n.attr_floats("scale")) {}

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, numeric_input(ctx, 0));
    const int64_t f = x->rank() ? x->shape().back() : 1;
    auto fits = [&](const std::vector<float>& v) { return v.size() <= 1 || static_cast<int64_t>(v.size()) == f; };
    if (!fits(offset_) || !fits(scale_)) return ctx.invalid("offset and scale must have 1 or " + std::to_string(f) + " values");
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, x->shape()));
    auto at = [](const std::vector<float>& v, int64_t j, float d) { return v.empty() ? d : v[v.size() == 1 ? 0 : j]; };
    for (int64_t i = 0; i < x->size(); ++i) {
      const int64_t j = f > 0 ? i % f : 0;
      y->data<float>()[i] = static_cast<float>((element_as_double(*x, i) - at(offset_, j, 0.0f)) * at(scale_, j, 1.0f));
    }
    return Status::Ok();
  }

 private:
  std::vector<float> offset_, scale_;
};

// Normalizer: each row ([N, C] or [C]) divided by its max, L1 norm or L2 norm
// (rows whose divisor is 0 unchanged); float32 out.
Status normalizer(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, numeric_input(ctx, 0));
  if (x->rank() != 1 && x->rank() != 2) return ctx.invalid("X must be [N, C] or [C]");
  const std::string& norm = ctx.node().attr_string("norm", "MAX");
  if (norm != "MAX" && norm != "L1" && norm != "L2") return ctx.invalid("norm must be MAX, L1 or L2, got " + norm);
  const int64_t c = x->shape().back(), rows = c > 0 ? x->size() / c : 0;
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, x->shape()));
  for (int64_t r = 0; r < rows; ++r) {
    double d = 0;
    if (norm == "MAX") {
      d = -INFINITY;
      for (int64_t j = 0; j < c; ++j) d = std::max(d, element_as_double(*x, r * c + j));
    } else if (norm == "L1") {
      for (int64_t j = 0; j < c; ++j) d += std::fabs(element_as_double(*x, r * c + j));
    } else {
      for (int64_t j = 0; j < c; ++j) d += element_as_double(*x, r * c + j) * element_as_double(*x, r * c + j);
      d = std::sqrt(d);
    }
    for (int64_t j = 0; j < c; ++j) {
      const double v = element_as_double(*x, r * c + j);
      y->data<float>()[r * c + j] = static_cast<float>(d != 0 ? v / d : v);
    }
  }
  return Status::Ok();
}

// out[r, k] (row stride ld) = X[r] · coef[k] + icpt[k] for the rows of f
// features and the n coefficient rows (no intercepts: 0): X read as float32,
// as ONNX Runtime does, and multiplied by sgemm.
void linear_scores(KernelContext& ctx, const Tensor& x, int64_t rows, int64_t f, const std::vector<float>& coef,
                   const std::vector<float>& icpt, int64_t n, float* out, int64_t ld) {
  const float* xf = nullptr;
  if (x.dtype() == DType::kFloat32) {
    xf = x.data<float>();
  } else {
    thread_local AlignedScratch scratch;
    float* c = scratch.get<float>(static_cast<size_t>(x.size()), AlignedScratch::Growth::kByHalf);
    for (int64_t i = 0; i < x.size(); ++i) c[i] = static_cast<float>(element_as_double(x, i));
    xf = c;
  }
  sgemm(false, true, rows, n, f, 1.0f, xf, f, coef.data(), f, 0.0f, out, ld, &ctx.pool());
  if (!icpt.empty())
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < n; ++k) out[r * ld + k] += icpt[k];
}

// LinearRegressor: Y[n, t] = post(X[n] · coefficients[t] + intercepts[t]).
// As ONNX Runtime: with one target only PROBIT applies (its batched update
// leaves a single column's score as it is for the other transforms).
class LinearRegressorKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    auto k = std::make_unique<LinearRegressorKernel>();
    k->targets_ = n.attr_int("targets", 1);
    k->coef_ = n.attr_floats("coefficients");
    k->icpt_ = n.attr_floats("intercepts");
    auto post = ml_parse_post(n.attr_string("post_transform", "NONE"));
    if (!post.ok()) return InvalidModel(n.describe() + ": " + post.status().message());
    k->post_ = *post;
    if (k->targets_ < 1) return InvalidModel(n.describe() + ": targets must be >= 1");
    // (So targets x features below cannot overflow: at most the coefficients' count.)
    if (!k->coef_.empty() && k->targets_ > static_cast<int64_t>(k->coef_.size()))
      return InvalidModel(n.describe() + ": targets (" + std::to_string(k->targets_) + ") is more than the " +
                          std::to_string(k->coef_.size()) + " coefficients");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, numeric_input(ctx, 0));
    const int64_t f = x->rank() ? x->shape().back() : 1, rows = f > 0 ? x->size() / f : 0;
    const bool fits = coef_.empty() ? f == 0 : static_cast<int64_t>(coef_.size()) == targets_ * f;
    if (!fits || (!icpt_.empty() && static_cast<int64_t>(icpt_.size()) != targets_))
      return ctx.invalid("coefficients must have targets x features (" + std::to_string(targets_) + " x " +
                         std::to_string(f) + ") values and intercepts one per target");
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, {rows, targets_}));
    linear_scores(ctx, *x, rows, f, coef_, icpt_, targets_, y->data<float>(), targets_);
    if (targets_ > 1 || post_ == MlPost::kProbit)
      for (int64_t r = 0; r < rows; ++r) ml_post_apply(post_, y->data<float>() + r * targets_, targets_);
    return Status::Ok();
  }

 private:
  int64_t targets_ = 1;
  std::vector<float> coef_, icpt_;
  MlPost post_ = MlPost::kNone;
};

// LinearClassifier: scores Z[n, c] = post(X[n] · coefficients[c] + intercepts[c])
// for each of the E score columns, label Y[n] = the class of the largest
// score (the first on ties). One score column s for two labels (binary
// converters), as ONNX Runtime: label = labels[1] where s > 0, else labels[0];
// Z = [logistic(-s), logistic(s)] with LOGISTIC, else [1 - s, s] (SOFTMAX
// and SOFTMAX_ZERO are not applied); PROBIT is refused (ONNX Runtime leaves
// the second column unwritten).
class LinearClassifierKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    auto k = std::make_unique<LinearClassifierKernel>();
    k->coef_ = n.attr_floats("coefficients");
    k->icpt_ = n.attr_floats("intercepts");
    k->labels_i_ = n.attr_ints("classlabels_ints");
    k->labels_s_ = n.attr_strings("classlabels_strings");
    k->strings_ = !k->labels_s_.empty();
    if (k->strings_ == !k->labels_i_.empty())
      return InvalidModel(n.describe() + ": exactly one of classlabels_ints and classlabels_strings must be set");
    k->classes_ = static_cast<int64_t>(k->strings_ ? k->labels_s_.size() : k->labels_i_.size());
    auto post = ml_parse_post(n.attr_string("post_transform", "NONE"));
    if (!post.ok()) return InvalidModel(n.describe() + ": " + post.status().message());
    k->post_ = *post;
    if (k->coef_.empty()) return InvalidModel(n.describe() + ": coefficients are missing");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, numeric_input(ctx, 0));
    const int64_t f = x->rank() ? x->shape().back() : 1, rows = f > 0 ? x->size() / f : 0;
    if (f <= 0 || coef_.size() % static_cast<size_t>(f) != 0)
      return ctx.invalid("coefficients do not split into rows of the features");
    const int64_t e = static_cast<int64_t>(coef_.size()) / f;
    const bool binary = e == 1 && classes_ == 2;
    if (e != classes_ && !binary)
      return ctx.unsupported(std::to_string(e) + " score column(s) for " + std::to_string(classes_) +
                             " class labels: one column per class, or one for two classes, is supported");
    if (binary && post_ == MlPost::kProbit)
      return ctx.unsupported("PROBIT on a single score column for two classes (ONNX Runtime leaves its second column unset)");
    if (!icpt_.empty() && static_cast<int64_t>(icpt_.size()) != e) return ctx.invalid("intercepts must have one value per score column");
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, strings_ ? DType::kString : DType::kInt64, {rows}));
    DLRT_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DType::kFloat32, {rows, classes_}));
    linear_scores(ctx, *x, rows, f, coef_, icpt_, e, z->data<float>(), classes_);
    for (int64_t r = 0; r < rows; ++r) {
      float* sc = z->data<float>() + r * classes_;
      int64_t best = 0;
      if (binary) {
        best = sc[0] > 0 ? 1 : 0;
        ml_write_two(MlSecond::kComplement, post_, sc[0], sc);
      } else {
        best = std::max_element(sc, sc + e) - sc;
        ml_post_apply(post_, sc, e);
      }
      if (strings_) y->data<std::string>()[r] = labels_s_[best];
      else y->data<int64_t>()[r] = labels_i_[best];
    }
    return Status::Ok();
  }

 private:
  std::vector<float> coef_, icpt_;
  std::vector<int64_t> labels_i_;
  std::vector<std::string> labels_s_;
  bool strings_ = false;
  int64_t classes_ = 0;
  MlPost post_ = MlPost::kNone;
};

}  // namespace

Result<MlPost> ml_parse_post(const std::string& how) {
  if (how == "NONE") return MlPost::kNone;
  if (how == "LOGISTIC") return MlPost::kLogistic;
  if (how == "SOFTMAX") return MlPost::kSoftmax;
  if (how == "SOFTMAX_ZERO") return MlPost::kSoftmaxZero;
  if (how == "PROBIT") return MlPost::kProbit;
  return InvalidArgument("post_transform must be NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT, got " + how);
}

void ml_post_apply(MlPost post, float* s, int64_t n) {
  switch (post) {
    case MlPost::kNone: return;
    case MlPost::kLogistic:
      for (int64_t i = 0; i < n; ++i) s[i] = ml_logistic(s[i]);
      return;
    case MlPost::kProbit:
      for (int64_t i = 0; i < n; ++i) s[i] = ml_probit(s[i]);
      return;
    case MlPost::kSoftmax:
    case MlPost::kSoftmaxZero: {
      // SOFTMAX_ZERO: scores within 1e-7 of 0 stay out of the sum and end as ~0.
      const bool zero = post == MlPost::kSoftmaxZero;
      float m = -std::numeric_limits<float>::max();
      for (int64_t i = 0; i < n; ++i) m = std::max(m, s[i]);
      const float e_neg_m = std::exp(-m);
      float sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (zero && !(s[i] > 1e-7f || s[i] < -1e-7f)) {
          s[i] *= e_neg_m;
        } else {
          s[i] = std::exp(s[i] - m);
          sum += s[i];
        }
      }
      for (int64_t i = 0; i < n; ++i) s[i] /= sum;
      return;
    }
  }
}

Status ml_post_transform(const std::string& how, float* s, int64_t n) {
  DLRT_ASSIGN_OR_RETURN(MlPost post, ml_parse_post(how));
  ml_post_apply(post, s, n);
  return Status::Ok();
}

Status register_ml_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("Binarizer", binarizer, 1, 1000, kMl));
  DLRT_RETURN_IF_ERROR(r.add_fn("ArrayFeatureExtractor", array_feature_extractor, 1, 1000, kMl));
  DLRT_RETURN_IF_ERROR(r.add_fn("Normalizer", normalizer, 1, 1000, kMl));
  DLRT_RETURN_IF_ERROR(r.add(ml_kernel_def<LabelEncoderKernel>("LabelEncoder")));
  DLRT_RETURN_IF_ERROR(r.add(ml_kernel_def<LinearRegressorKernel>("LinearRegressor")));
  DLRT_RETURN_IF_ERROR(r.add(ml_kernel_def<LinearClassifierKernel>("LinearClassifier")));
  KernelDef scaler;
  scaler.op_type = "Scaler";
  scaler.domain = kMl;
  scaler.factory = [](const ir::Node& n) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(std::make_unique<ScalerKernel>(n));
  };
  DLRT_RETURN_IF_ERROR(r.add(std::move(scaler)));
  return Status::Ok();
}

}  // namespace dlrt::cpu
