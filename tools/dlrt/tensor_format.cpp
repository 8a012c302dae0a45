#include "tensor_format.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "core/tensor_values.h"

namespace dlrt::cli {

TensorStats tensor_stats(const Tensor& t) {
  TensorStats s;
  if (!t.valid() || t.dtype() == DType::kString) return s;
  s.numeric = true;
  double sum = 0;
  int64_t finite = 0;
  bool first = true;
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = element_as_double(t, i);
    if (std::isnan(v)) {
      ++s.nan_count;
      continue;
    }
    if (std::isinf(v)) ++s.inf_count;
    else {
      sum += v;
      ++finite;
    }
    if (first || v < s.min) s.min = v;
    if (first || v > s.max) s.max = v;
    first = false;
  }
  s.mean = finite ? sum / static_cast<double>(finite) : 0.0;
  return s;
}

namespace {
std::string format_value(const Tensor& t, int64_t i) {
  char buf[64];
  if (t.dtype() == DType::kString) return "\"" + t.data<std::string>()[i] + "\"";
  if (t.dtype() == DType::kBool) return element_as_double(t, i) != 0 ? "true" : "false";
  if (t.dtype() == DType::kInt64) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(t.data<int64_t>()[i]));
  } else if (t.dtype() == DType::kUInt64) {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(t.data<uint64_t>()[i]));
  } else if (dtype_is_int(t.dtype())) {
    std::snprintf(buf, sizeof buf, "%.0f", element_as_double(t, i));
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", element_as_double(t, i));
  }
  return buf;
}

nlohmann::json json_value(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kString) return t.data<std::string>()[i];
  if (t.dtype() == DType::kBool) return element_as_double(t, i) != 0;
  if (t.dtype() == DType::kInt64) return t.data<int64_t>()[i];
  if (t.dtype() == DType::kUInt64) return t.data<uint64_t>()[i];
  double v = element_as_double(t, i);
  if (std::isnan(v) || std::isinf(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  if (dtype_is_int(t.dtype())) return static_cast<int64_t>(v);
  return v;
}
}  // namespace

std::string value_preview(const Tensor& t, int n) {
  std::string s = "[";
  int64_t shown = std::min<int64_t>(t.size(), n);
  for (int64_t i = 0; i < shown; ++i) {
    if (i) s += ", ";
    s += format_value(t, i);
  }
  if (t.size() > shown) s += ", ...";
  return s + "]";
}

nlohmann::json tensor_summary_json(const std::string& name, const Tensor& t, int n) {
  nlohmann::json j;
  j["name"] = name;
  j["dtype"] = dtype_name(t.dtype());
  j["shape"] = t.shape();
  nlohmann::json values = nlohmann::json::array();
  for (int64_t i = 0; i < std::min<int64_t>(t.size(), n); ++i) values.push_back(json_value(t, i));
  j["values"] = values;
  TensorStats st = tensor_stats(t);
  if (st.numeric && t.size() > st.nan_count) {
    j["min"] = st.min;
    j["max"] = st.max;
    j["mean"] = st.mean;
  }
  if (st.numeric) j["nan_count"] = st.nan_count;
  return j;
}

Result<Tensor> random_tensor(DType dtype, const Shape& shape, std::mt19937_64& rng) {
  if (dtype == DType::kString) return Unsupported("cannot generate random string inputs; pass --input NAME=FILE.npy");
  DLRT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dtype, shape));
  std::uniform_real_distribution<float> fd(-1.0f, 1.0f);
  std::uniform_int_distribution<int> id(0, 1);
  for (int64_t i = 0; i < t.size(); ++i) {
    switch (dtype) {
      case DType::kFloat32: t.data<float>()[i] = fd(rng); break;
      case DType::kFloat64: t.data<double>()[i] = fd(rng); break;
      case DType::kFloat16: t.data<Float16>()[i] = Float16(fd(rng)); break;
      case DType::kBFloat16: t.data<BFloat16>()[i] = BFloat16(fd(rng)); break;
      case DType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(id(rng)); break;
      case DType::kInt16: t.data<int16_t>()[i] = static_cast<int16_t>(id(rng)); break;
      case DType::kInt32: t.data<int32_t>()[i] = id(rng); break;
      case DType::kInt64: t.data<int64_t>()[i] = id(rng); break;
      case DType::kUInt8: t.data<uint8_t>()[i] = static_cast<uint8_t>(id(rng)); break;
      case DType::kUInt16: t.data<uint16_t>()[i] = static_cast<uint16_t>(id(rng)); break;
      case DType::kUInt32: t.data<uint32_t>()[i] = static_cast<uint32_t>(id(rng)); break;
      case DType::kUInt64: t.data<uint64_t>()[i] = static_cast<uint64_t>(id(rng)); break;
      case DType::kBool: static_cast<uint8_t*>(t.raw_data())[i] = static_cast<uint8_t>(id(rng)); break;
      default: return Unsupported(std::string("cannot generate random inputs of dtype ") + dtype_name(dtype));
    }
  }
  return t;
}

Result<Shape> parse_shape(const std::string& text) {
  Shape shape;
  if (text.empty() || text == "scalar") return shape;
  size_t start = 0;
  while (true) {
    size_t x = text.find('x', start);
    std::string part = text.substr(start, x == std::string::npos ? std::string::npos : x - start);
    if (part.empty() || part.size() > 15 || part.find_first_not_of("0123456789") != std::string::npos)
      return InvalidArgument("bad shape '" + text + "': expected dims separated by 'x', e.g. 1x128");
    shape.push_back(std::stoll(part));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  DLRT_RETURN_IF_ERROR(checked_element_count(shape).status());
  return shape;
}

std::string sanitize_file_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out.find_first_not_of('.') == std::string::npos) out = "_" + out;
  return out;
}

std::string format_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", ms);
  return buf;
}

}  // namespace dlrt::cli
