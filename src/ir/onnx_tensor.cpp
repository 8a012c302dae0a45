#include "ir/onnx_tensor.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

namespace dlrt::ir {

namespace fs = std::filesystem;

namespace {

template <typename Dst, typename Src>
void copy_field(Tensor& t, const Src& field) {
  Dst* d = t.data<Dst>();
  for (int i = 0; i < field.size(); ++i) d[i] = static_cast<Dst>(field.Get(i));
}

// float16/bfloat16 are stored as their 16-bit patterns in int32_data.
template <typename H>
void copy_bits16(Tensor& t, const google::protobuf::RepeatedField<int32_t>& field) {
  H* d = t.data<H>();
  for (int i = 0; i < field.size(); ++i) d[i] = H::from_bits(static_cast<uint16_t>(field.Get(i)));
}

// int4/uint4/float4e2m1 come packed two per byte, int2/uint2 four per byte,
// the lower index in the lower bits (raw_data bytes, or one byte per
// int32_data entry); dlrt holds them one per byte, int4 and int2
// sign-extended.
void unpack_subbyte(const uint8_t* packed, int bits, bool is_signed, Tensor& t) {
  auto* d = static_cast<uint8_t*>(t.raw_data());
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  const uint8_t sign = static_cast<uint8_t>(1u << (bits - 1));
  for (int64_t i = 0; i < t.size(); ++i) {
    const uint8_t v = (packed[i / per_byte] >> ((i % per_byte) * bits)) & mask;
    d[i] = is_signed && (v & sign) ? static_cast<uint8_t>(v | ~mask) : v;
  }
}

int64_t typed_field_count(const onnx::TensorProto& p, DType dt) {
  switch (dt) {
    case DType::kFloat32: return p.float_data_size();
    case DType::kFloat64: return p.double_data_size();
    case DType::kInt64: return p.int64_data_size();
    case DType::kUInt32: case DType::kUInt64: return p.uint64_data_size();
    case DType::kString: return p.string_data_size();
    default: return p.int32_data_size();
  }
}

}  // namespace

namespace {

// Below this, raw data is copied (a short string's bytes live inside the
// string object, without the heap buffer's 16-byte alignment).
constexpr size_t kAdoptMinBytes = 4096;

// The checks convert() relies on: a supported dtype, a sane element count,
// inline data of exactly the size the dims call for.
Status check_proto(const onnx::TensorProto& p, const std::string& what) {
  if (!dtype_is_valid(p.data_type()))
    return Unsupported(what + " has data type " + std::to_string(p.data_type()) +
                       ", which dlrt does not support (supported: float32/16/64, bfloat16, float8, float4e2m1, int2-64, uint2-64, bool, string)");
  DType dt = static_cast<DType>(p.data_type());
  Shape shape(p.dims().begin(), p.dims().end());
  auto count = checked_element_count(shape);
  if (!count.ok()) return InvalidModel(what + ": " + count.status().message());
  if (p.data_location() == onnx::TensorProto::EXTERNAL)
    return Internal(what + " still refers to external data after loading");
  if (dt != DType::kString && static_cast<uint64_t>(*count) > (uint64_t{1} << 40))
    return InvalidModel(what + " declares " + std::to_string(*count) + " elements, more than any model file can hold");
  if (const int bits = dtype_packed_bits(dt)) {
    // Packed: 8 / bits elements per byte, in raw_data or one byte per int32_data entry.
    const int64_t per_byte = 8 / bits;
    const int64_t bytes = (*count + per_byte - 1) / per_byte;
    const size_t have = p.has_raw_data() ? p.raw_data().size() : static_cast<size_t>(p.int32_data_size());
    if (static_cast<int64_t>(have) != bytes)
      return InvalidModel(what + " has " + std::to_string(have) + " bytes of packed " + dtype_name(dt) +
                          " data but its shape " + shape_to_string(shape) + " needs " + std::to_string(bytes));
    return Status::Ok();
  }
  if (p.has_raw_data()) {
    if (dt == DType::kString) return InvalidModel(what + ": string tensors cannot use raw_data");
    uint64_t need = static_cast<uint64_t>(*count) * dtype_size(dt);
    if (p.raw_data().size() != need)
      return InvalidModel(what + " has " + std::to_string(p.raw_data().size()) + " bytes of data but its shape " +
                          shape_to_string(shape) + " of " + dtype_name(dt) + " needs " + std::to_string(need));
    return Status::Ok();
  }
  int64_t have = typed_field_count(p, dt);
  if (have != *count)
    return InvalidModel(what + " has " + std::to_string(have) + " values but its shape " + shape_to_string(shape) +
                        " needs " + std::to_string(*count));
  return Status::Ok();
}

Result<Tensor> convert(const onnx::TensorProto& p, const std::string& what, onnx::TensorProto* take) {
  DLRT_RETURN_IF_ERROR(check_proto(p, what));
  DType dt = static_cast<DType>(p.data_type());
  Shape shape(p.dims().begin(), p.dims().end());
  const int64_t count = *checked_element_count(shape);

  if (const int bits = dtype_packed_bits(dt)) {
    // Packed: 8 / bits elements per byte, in raw_data or one byte per int32_data entry.
    std::string packed;
    if (p.has_raw_data()) {
      packed = p.raw_data();
    } else {
      packed.resize(static_cast<size_t>(p.int32_data_size()));
      for (int i = 0; i < p.int32_data_size(); ++i) packed[static_cast<size_t>(i)] = static_cast<char>(p.int32_data(i));
    }
    DLRT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate_uninitialized(dt, std::move(shape)));
    unpack_subbyte(reinterpret_cast<const uint8_t*>(packed.data()), bits, dt == DType::kInt4 || dt == DType::kInt2, t);
    return t;
  }
  if (p.has_raw_data()) {
    const std::string& raw = p.raw_data();
    const uint64_t need = static_cast<uint64_t>(count) * dtype_size(dt);
    // ONNX raw data is little-endian, as is x86/arm64: the bytes are the values.
    if (take && need >= kAdoptMinBytes) {
      auto owner = std::make_shared<std::string>(std::move(*take->mutable_raw_data()));
      void* data = owner->data();
      return Tensor::adopt(dt, std::move(shape), std::move(owner), data);
    }
    DLRT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dt, std::move(shape)));
    if (need) std::memcpy(t.raw_data(), raw.data(), need);
    return t;
  }
  DLRT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dt, std::move(shape)));
  switch (dt) {
    case DType::kFloat32: copy_field<float>(t, p.float_data()); break;
    case DType::kFloat64: copy_field<double>(t, p.double_data()); break;
    case DType::kInt64: copy_field<int64_t>(t, p.int64_data()); break;
    case DType::kUInt32: copy_field<uint32_t>(t, p.uint64_data()); break;
    case DType::kUInt64: copy_field<uint64_t>(t, p.uint64_data()); break;
    case DType::kInt32: copy_field<int32_t>(t, p.int32_data()); break;
    case DType::kInt16: copy_field<int16_t>(t, p.int32_data()); break;
    case DType::kInt8: copy_field<int8_t>(t, p.int32_data()); break;
    case DType::kUInt16: copy_field<uint16_t>(t, p.int32_data()); break;
    case DType::kUInt8: copy_field<uint8_t>(t, p.int32_data()); break;
    case DType::kBool: {
      bool* d = t.data<bool>();
      for (int i = 0; i < p.int32_data_size(); ++i) d[i] = p.int32_data(i) != 0;
      break;
    }
    case DType::kFloat16: copy_bits16<Float16>(t, p.int32_data()); break;
    case DType::kBFloat16: copy_bits16<BFloat16>(t, p.int32_data()); break;
    case DType::kString: {
      std::string* d = t.data<std::string>();
      for (int i = 0; i < p.string_data_size(); ++i) d[i] = p.string_data(i);
      break;
    }
    // float8: one bit pattern per int32_data entry.
    case DType::kFloat8E4M3FN: case DType::kFloat8E4M3FNUZ: case DType::kFloat8E5M2: case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
      copy_field<uint8_t>(t, p.int32_data());
      break;
    case DType::kInt4: case DType::kUInt4: case DType::kInt2: case DType::kUInt2: case DType::kFloat4E2M1:  // handled above
    case DType::kUndefined: return Internal("undefined dtype");
  }
  return t;
}

}  // namespace

Status check_tensor_proto(const onnx::TensorProto& p, const std::string& what) { return check_proto(p, what); }

Result<Tensor> tensor_from_proto(const onnx::TensorProto& p, const std::string& what) { return convert(p, what, nullptr); }

Result<Tensor> take_tensor_from_proto(onnx::TensorProto& p, const std::string& what) { return convert(p, what, &p); }

Status inline_external_data(onnx::TensorProto& p, const std::string& base_dir, const std::string& what) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoll(kv.value());
      else if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (...) {
      return InvalidModel(what + ": external data " + kv.key() + " '" + kv.value() + "' is not a number");
    }
  }
  if (location.empty()) return InvalidModel(what + " uses external data but names no location");
  if (base_dir.empty())
    return InvalidModel(what + " uses external data ('" + location +
                        "') but the model was loaded from memory without a base folder; load it from its file instead");
  if (offset < 0 || length < -1) return InvalidModel(what + ": negative external data offset or length");
  fs::path rel(location);
  if (rel.is_absolute())
    return InvalidModel(what + ": external data location '" + location + "' is absolute; it must be relative to the model's folder");
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(base_dir), ec);
  fs::path full = fs::weakly_canonical(fs::path(base_dir) / rel, ec);
  auto [bend, fit] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (ec || bend != base.end())
    return InvalidModel(what + ": external data location '" + location + "' escapes the model's folder " + base.string());
  if (!fs::is_regular_file(full, ec))
    return InvalidModel(what + ": external data file '" + full.string() + "' does not exist; copy it next to the model");
  uint64_t file_size = fs::file_size(full, ec);
  if (ec) return IoError(what + ": cannot stat external data file '" + full.string() + "': " + ec.message());
  if (static_cast<uint64_t>(offset) > file_size)
    return InvalidModel(what + ": external data offset " + std::to_string(offset) + " is past the end of '" +
                        full.string() + "' (" + std::to_string(file_size) + " bytes)");
  uint64_t len = length < 0 ? file_size - static_cast<uint64_t>(offset) : static_cast<uint64_t>(length);
  if (len > file_size - static_cast<uint64_t>(offset))
    return InvalidModel(what + ": external data range offset " + std::to_string(offset) + " + length " +
                        std::to_string(len) + " is past the end of '" + full.string() + "' (" + std::to_string(file_size) + " bytes)");
  std::ifstream in(full, std::ios::binary);
  if (!in) return IoError(what + ": cannot open external data file '" + full.string() + "'");
  std::string data(len, '\0');
  in.seekg(offset);
  if (len && !in.read(data.data(), static_cast<std::streamsize>(len)))
    return IoError(what + ": reading " + std::to_string(len) + " bytes from '" + full.string() + "' failed");
  p.clear_external_data();
  p.set_data_location(onnx::TensorProto::DEFAULT);
  p.set_raw_data(std::move(data));
  return Status::Ok();
}

}  // namespace dlrt::ir
