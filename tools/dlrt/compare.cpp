#include "compare.h"

#include <cmath>
#include <cstdio>

#include "tensor_format.h"

namespace dlrt::cli {

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64: return {1e-3, 1e-5};
    case DType::kFloat16: return {4e-3, 1e-3};
    case DType::kBFloat16: return {2e-2, 1e-2};
    default: return {0, 0};
  }
}

std::optional<std::string> compare_tensors(const Tensor& expected, const Tensor& actual, Tolerance tol) {
  if (!actual.valid()) return std::string("no value produced");
  if (expected.dtype() != actual.dtype())
    return std::string("dtype ") + dtype_name(actual.dtype()) + ", expected " + dtype_name(expected.dtype());
  if (expected.shape() != actual.shape())
    return "shape " + shape_to_string(actual.shape()) + ", expected " + shape_to_string(expected.shape());
  const int64_t n = expected.size();
  if (expected.dtype() == DType::kString) {
    for (int64_t i = 0; i < n; ++i)
      if (expected.data<std::string>()[i] != actual.data<std::string>()[i])
        return "element " + std::to_string(i) + " is \"" + actual.data<std::string>()[i] + "\", expected \"" +
               expected.data<std::string>()[i] + "\"";
    return std::nullopt;
  }
  if (!dtype_is_float(expected.dtype())) {
    // Exact: compare the bytes (bools are normalised to 0/1 by every reader).
    size_t esz = dtype_size(expected.dtype());
    const auto* a = static_cast<const unsigned char*>(actual.raw_data());
    const auto* e = static_cast<const unsigned char*>(expected.raw_data());
    for (int64_t i = 0; i < n; ++i) {
      bool same = true;
      for (size_t b = 0; b < esz; ++b) same &= a[i * esz + b] == e[i * esz + b];
      if (!same) {
        int64_t mismatches = 0;
        for (int64_t k = 0; k < n; ++k) mismatches += element_as_double(actual, k) != element_as_double(expected, k);
        char buf[160];
        std::snprintf(buf, sizeof buf, "%lld of %lld elements differ; first at %lld: %.17g, expected %.17g",
                      static_cast<long long>(mismatches), static_cast<long long>(n), static_cast<long long>(i),
                      element_as_double(actual, i), element_as_double(expected, i));
        return std::string(buf);
      }
    }
    return std::nullopt;
  }
  int64_t mismatches = 0, first = -1;
  double max_abs = 0;
  for (int64_t i = 0; i < n; ++i) {
    double e = element_as_double(expected, i), a = element_as_double(actual, i);
    bool ok;
    if (std::isnan(e) || std::isnan(a)) ok = std::isnan(e) && std::isnan(a);
    else if (std::isinf(e) || std::isinf(a)) ok = e == a;
    else {
      double d = std::fabs(a - e);
      max_abs = std::max(max_abs, d);
      ok = d <= tol.atol + tol.rtol * std::fabs(e);
    }
    if (!ok) {
      ++mismatches;
      if (first < 0) first = i;
    }
  }
  if (!mismatches) return std::nullopt;
  char buf[240];
  std::snprintf(buf, sizeof buf, "%lld of %lld elements differ (rtol %g, atol %g); first at %lld: %.9g, expected %.9g; max abs error %.6g",
                static_cast<long long>(mismatches), static_cast<long long>(n), tol.rtol, tol.atol, static_cast<long long>(first),
                element_as_double(actual, first), element_as_double(expected, first), max_abs);
  return std::string(buf);
}

namespace {
const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::kNone: return "nothing";
    case Value::Kind::kTensor: return "a tensor";
    case Value::Kind::kSequence: return "a sequence";
    case Value::Kind::kMap: return "a map";
    case Value::Kind::kMapSequence: return "a sequence of maps";
  }
  return "?";
}
}  // namespace

std::optional<std::string> compare_values(const Value& expected, const Value& actual) {
  if (expected.kind != actual.kind)
    return std::string("got ") + kind_name(actual.kind) + ", expected " + kind_name(expected.kind);
  switch (expected.kind) {
    case Value::Kind::kTensor:
      return compare_tensors(expected.tensor, actual.tensor, tolerance_for(expected.tensor.dtype()));
    case Value::Kind::kSequence:
      if (expected.sequence.size() != actual.sequence.size())
        return "sequence of " + std::to_string(actual.sequence.size()) + " tensors, expected " +
               std::to_string(expected.sequence.size());
      for (size_t i = 0; i < expected.sequence.size(); ++i) {
        const Tensor& e = expected.sequence[i];
        if (auto r = compare_tensors(e, actual.sequence[i], tolerance_for(e.dtype())))
          return "sequence element " + std::to_string(i) + ": " + *r;
      }
      return std::nullopt;
    case Value::Kind::kMap:
    case Value::Kind::kMapSequence:
      if (auto r = compare_tensors(expected.keys, actual.keys, tolerance_for(expected.keys.dtype())))
        return "map keys: " + *r;
      if (auto r = compare_tensors(expected.values, actual.values, tolerance_for(expected.values.dtype())))
        return "map values: " + *r;
      return std::nullopt;
    case Value::Kind::kNone: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace dlrt::cli
