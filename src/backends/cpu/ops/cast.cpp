// Cast and CastLike between every numeric dtype, bool and string; BitCast.
//
// Numbers become strings the way numpy prints them (ONNX's test data comes
// from numpy): the shortest digits that read back to the same value, fixed
// notation for exponents in [-4, 16) with at least one fractional digit
// ("1.0"), scientific otherwise ("1e-05"), "nan", "inf", "-inf"; bools print
// as "True"/"False". Strings parse as numbers with an optional sign, and
// "NaN"/"INF"/"inf"/"-Infinity" in any case; a string that is not a number
// is an InvalidArgument.
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/ops/broadcast.h"
#include "backends/cpu/ops/convert.h"
#include "core/narrow_types.h"

namespace dlrt::cpu {
namespace {

// Shortest scientific digits of v ("d.ddde±XX") that identify it within T.
template <typename T>
std::string shortest_scientific(T v) {
  char buf[64];
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    return std::string(buf, r.ptr);
  } else {
    const float f = static_cast<float>(v);
    for (int p = 0; p < 9; ++p) {
      auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific, p);
      float back = 0;
      std::from_chars(buf, r.ptr, back, std::chars_format::scientific);
      if (T(back).bits == v.bits) return std::string(buf, r.ptr);
    }
    auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
    return std::string(buf, r.ptr);
  }
}

template <typename T>
std::string float_to_string(T v) {
  const double d = static_cast<double>(static_cast<compute_t<T>>(v));
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::string sci = shortest_scientific(v);
  size_t epos = sci.find('e');
  int exp10 = std::atoi(sci.c_str() + epos + 1);
  if (exp10 < -4 || exp10 >= 16) return sci;
  std::string sign = sci[0] == '-' ? "-" : "";
  std::string digits;
  for (size_t i = sign.size(); i < epos; ++i)
    if (sci[i] != '.') digits += sci[i];
  std::string out = sign;
  if (exp10 < 0) {
    out += "0." + std::string(static_cast<size_t>(-exp10 - 1), '0') + digits;
  } else {
    size_t int_len = static_cast<size_t>(exp10) + 1;
    if (digits.size() <= int_len) {
      out += digits + std::string(int_len - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, int_len) + "." + digits.substr(int_len);
    }
  }
  return out;
}

template <typename T>
std::string to_string_value(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) return v;
  else if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
  else if constexpr (is_float_v<T>) return float_to_string(v);
  else return std::to_string(v);
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// Parses s into T; false when s is not a number of that kind.
template <typename T>
bool parse_value(std::string_view s, T& out) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if constexpr (std::is_same_v<T, bool>) {
    if (iequals(s, "true") || iequals(s, "false")) {
      out = iequals(s, "true");
      return true;
    }
  }
  bool neg = false;
  std::string_view body = s;
  if (!body.empty() && (body.front() == '+' || body.front() == '-')) {
    neg = body.front() == '-';
    body.remove_prefix(1);
  }
  if (body.empty()) return false;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // Exact integer parse first (int64 and uint64 keep all their digits).
    T v{};
    auto r = std::from_chars(s.data() + (s.front() == '+' ? 1 : 0), s.data() + s.size(), v);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size()) {
      out = v;
      return true;
    }
  }
  double d = 0;
  if (iequals(body, "nan")) {
    d = std::nan("");
  } else if (iequals(body, "inf") || iequals(body, "infinity")) {
    d = HUGE_VAL;
  } else {
    auto r = std::from_chars(body.data(), body.data() + body.size(), d);
    if (r.ec == std::errc::result_out_of_range) {
      // Overflow reads as infinity, underflow as zero (strtod's behaviour).
      d = std::strtod(std::string(body).c_str(), nullptr);
    } else if (r.ec != std::errc() || r.ptr != body.data() + body.size()) {
      return false;
    }
  }
  out = convert_value<T>(neg ? -d : d);
  return true;
}

template <typename From, typename To>
Status convert_all(KernelContext& ctx, const Tensor& in, Tensor& out) {
  const From* src = in.data<From>();
  To* dst = out.data<To>();
  const int64_t n = in.size();
  if constexpr (std::is_same_v<To, std::string>) {
    parallel_map(&ctx.pool(), src, dst, n, [](const From& v) { return to_string_value(v); });
  } else if constexpr (std::is_same_v<From, std::string>) {
    for (int64_t i = 0; i < n; ++i) {
      if (!parse_value(src[i], dst[i]))
        return ctx.invalid("cannot cast string \"" + src[i] + "\" to " + dtype_name(dtype_of<To>));
    }
  } else {
    parallel_map(&ctx.pool(), src, dst, n, [](From v) { return convert_value<To>(v); });
  }
  return Status::Ok();
}

// Casts from or to the narrow types (float8, float4e2m1, int4/uint4,
// int2/uint2) go through double: core/narrow_types.h has their rounding,
// saturation (attribute saturate, float8 targets) and float8e8m0's round_mode.
Status cast_narrow(KernelContext& ctx, const Tensor& in, DType to) {
  if (in.dtype() == DType::kString || to == DType::kString)
    return ctx.unsupported(std::string("Cast between string and ") +
                           dtype_name(in.dtype() == DType::kString ? to : in.dtype()) + " is not supported by dlrt");
  const bool saturate = ctx.node().attr_int("saturate", 1) != 0;
  const std::string mode = ctx.node().attr_string("round_mode", "up");
  E8M0Rounding rounding = E8M0Rounding::kUp;
  if (mode == "down") rounding = E8M0Rounding::kDown;
  else if (mode == "nearest") rounding = E8M0Rounding::kNearest;
  else if (mode != "up") return ctx.invalid("round_mode must be \"up\", \"down\" or \"nearest\", got \"" + mode + "\"");
  DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, to, in.shape()));
  const int64_t n = in.size();
  std::vector<double> v(static_cast<size_t>(n));
  if (dtype_is_narrow(in.dtype())) {
    const auto* src = static_cast<const uint8_t*>(in.raw_data());
    for (int64_t i = 0; i < n; ++i) v[i] = narrow_to_double(in.dtype(), src[i]);
  } else {
    DLRT_RETURN_IF_ERROR(dispatch_all(in.dtype(), [&](auto tag) -> Status {
      using From = typename decltype(tag)::type;
      if constexpr (!std::is_same_v<From, std::string>) {
        const From* src = in.data<From>();
        for (int64_t i = 0; i < n; ++i) v[i] = convert_value<double>(src[i]);
      }
      return Status::Ok();
    }));
  }
  if (dtype_is_narrow(to)) {
    auto* dst = static_cast<uint8_t*>(out->raw_data());
    for (int64_t i = 0; i < n; ++i) dst[i] = narrow_from_double(to, v[i], saturate, rounding);
    return Status::Ok();
  }
  return dispatch_all(to, [&](auto tag) -> Status {
    using To = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<To, std::string>) {
      To* dst = out->data<To>();
      for (int64_t i = 0; i < n; ++i) dst[i] = convert_value<To>(v[i]);
    }
    return Status::Ok();
  });
}

Status cast_to(KernelContext& ctx, const Tensor& in, DType to) {
  if (dtype_is_narrow(in.dtype()) || dtype_is_narrow(to)) return cast_narrow(ctx, in, to);
  DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, to, in.shape()));
  Status s = dispatch_all(in.dtype(), [&](auto from_tag) -> Status {
    using From = typename decltype(from_tag)::type;
    return dispatch_all(to, [&](auto to_tag) -> Status {
      using To = typename decltype(to_tag)::type;
      return convert_all<From, To>(ctx, in, *out);
    });
  });
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

Status Cast(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (!ctx.node().has_attr("to")) return ctx.invalid("attribute 'to' is required");
  int64_t to = ctx.node().attr_int("to", 0);
  if (to < 0 || to > 1000 || !dtype_is_valid(static_cast<int>(to)))
    return ctx.unsupported("cannot cast to ONNX element type " + std::to_string(to) + " (not supported by dlrt)");
  return cast_to(ctx, *x, static_cast<DType>(to));
}

// BitCast (opset 26): the same bytes as another type of the same width.
Status BitCast(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (!ctx.node().has_attr("to")) return ctx.invalid("attribute 'to' is required");
  const int64_t to = ctx.node().attr_int("to", 0);
  if (to < 0 || to > 1000 || !dtype_is_valid(static_cast<int>(to)))
    return ctx.unsupported("cannot bitcast to ONNX element type " + std::to_string(to) + " (not supported by dlrt)");
  const DType out = static_cast<DType>(to);
  auto sub_byte = [](DType t) { return t == DType::kInt4 || t == DType::kUInt4; };
  if (x->dtype() == DType::kString || out == DType::kString)
    return ctx.invalid("BitCast does not take string tensors");
  if (sub_byte(x->dtype()) || sub_byte(out))
    return ctx.unsupported("BitCast of 4-bit types is not supported by dlrt");
  if (dtype_size(x->dtype()) != dtype_size(out))
    return ctx.invalid(std::string("BitCast from ") + dtype_name(x->dtype()) + " to " + dtype_name(out) +
                       ": the types must have the same width");
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, x->shape()));
  if (x->nbytes() > 0) std::memcpy(y->raw_data(), x->raw_data(), x->nbytes());
  return Status::Ok();
}

Status CastLike(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* like, required_input(ctx, 1));
  return cast_to(ctx, *x, like->dtype());
}

}  // namespace

Status register_cast_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("Cast", Cast));
  DLRT_RETURN_IF_ERROR(r.add_fn("CastLike", CastLike));
  DLRT_RETURN_IF_ERROR(r.add_fn("BitCast", BitCast, 26));
  return Status::Ok();
}

}  // namespace dlrt::cpu
