// Output types of embedding vectors (output_type.h).
#include "embed/models/output_type.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "embed/models/dense.h"

namespace dlrt::embed {

std::optional<OutputType> output_type_from_name(std::string_view name) {
  if (name == "float32" || name == "float") return OutputType::kFloat32;
  if (name == "int8") return OutputType::kInt8;
  if (name == "uint8") return OutputType::kUint8;
  if (name == "binary") return OutputType::kBinary;
  if (name == "ubinary") return OutputType::kUbinary;
  return std::nullopt;
}

const char* output_type_name(OutputType type) {
  switch (type) {
    case OutputType::kFloat32:
      return "float32";
    case OutputType::kInt8:
      return "int8";
    case OutputType::kUint8:
      return "uint8";
    case OutputType::kBinary:
      return "binary";
    case OutputType::kUbinary:
      return "ubinary";
  }
  return "float32";
}

const char* output_type_names() { return "float32, int8, uint8, binary, ubinary"; }

size_t quantized_bytes(OutputType type, size_t dim) {
  if (needs_ranges(type)) return dim;
  if (type == OutputType::kFloat32) return dim * sizeof(float);
  return (dim + 7) / 8;
}

QuantizationRanges ranges_of(const float* data, size_t rows, size_t dim) {
  QuantizationRanges r;
  r.min.assign(data, data + (rows ? dim : 0));
  r.max = r.min;
  for (size_t i = 1; i < rows; ++i) {
    const float* row = data + i * dim;
    for (size_t d = 0; d < dim; ++d) {
      // np.min / np.max: a NaN wins over every number.
      if (std::isnan(row[d]) || std::isnan(r.min[d])) {
        r.min[d] = r.max[d] = std::nanf("");
        continue;
      }
      r.min[d] = std::min(r.min[d], row[d]);
      r.max[d] = std::max(r.max[d], row[d]);
    }
  }
  return r;
}

void quantize_into(const float* v, size_t dim, OutputType type, const QuantizationRanges* ranges,
                   std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + quantized_bytes(type, dim), 0);
  uint8_t* o = out->data() + at;
  if (type == OutputType::kFloat32) {
    if (dim) std::memcpy(o, v, dim * sizeof(float));  // little-endian float32 (x86, arm)
    return;
  }
  if (needs_ranges(type)) {
    for (size_t d = 0; d < dim; ++d) {
      // Each step in float32, as numpy computes it on float32 arrays: (max - min) / 255,
      // then (x - min) / step, each rounded once; floor, clip. No fused or reciprocal forms.
      float step = (ranges->max[d] - ranges->min[d]) / 255.0f;
      if (step == 0.0f) step = 1.0f;
      const float bucket = std::floor((v[d] - ranges->min[d]) / step);
      const int q = std::isnan(bucket) ? 0 : static_cast<int>(std::clamp(bucket, 0.0f, 255.0f));
      o[d] = static_cast<uint8_t>(type == OutputType::kUint8 ? q : q - 128);  // int8: two's complement
    }
    return;
  }
  for (size_t d = 0; d < dim; ++d)
    if (v[d] > 0.0f) o[d / 8] = static_cast<uint8_t>(o[d / 8] | (0x80u >> (d % 8)));
  if (type == OutputType::kBinary)
    for (size_t b = 0; b < quantized_bytes(type, dim); ++b) o[b] = static_cast<uint8_t>(o[b] - 128);
}

std::string quantize_rows(const float* data, size_t rows, size_t dim, OutputType type, const QuantizationSource& source,
                          std::vector<uint8_t>* out) {
  std::optional<QuantizationRanges> ranges;
  if (needs_ranges(type) && rows) {
    if (source.ranges)
      ranges = source.ranges;
    else if (source.calibration_rows)
      ranges = ranges_of(source.calibration, source.calibration_rows, dim);
    else if (rows == 1)
      return std::string("cannot compute ") + output_type_name(type) +
             " ranges from a single embedding: give ranges or calibration embeddings (a representative set), "
             "or embed more inputs at once";
    else
      ranges = ranges_of(data, rows, dim);
    if (ranges->min.size() != dim || ranges->max.size() != dim)
      return "the ranges have " + std::to_string(std::max(ranges->min.size(), ranges->max.size())) +
             " values per row, the embeddings " + std::to_string(dim);
  }
  out->reserve(out->size() + rows * quantized_bytes(type, dim));
  for (size_t i = 0; i < rows; ++i) quantize_into(data + i * dim, dim, type, ranges ? &*ranges : nullptr, out);
  return {};
}

std::string quantize_rows(const std::vector<std::vector<float>>& rows, OutputType type,
                          const QuantizationSource& source, std::vector<uint8_t>* out) {
  const size_t dim = rows.empty() ? 0 : rows[0].size();
  std::vector<float> flat;
  flat.reserve(rows.size() * dim);
  for (const std::vector<float>& r : rows) {
    if (r.size() != dim) return "the embeddings differ in size";
    flat.insert(flat.end(), r.begin(), r.end());
  }
  return quantize_rows(flat.data(), rows.size(), dim, type, source, out);
}

void finish_vector(std::vector<float>& v, std::optional<size_t> dimensions, bool normalize) {
  if (dimensions && *dimensions < v.size()) v.resize(*dimensions);
  if (normalize) normalize_l2(v);
}

}  // namespace dlrt::embed
