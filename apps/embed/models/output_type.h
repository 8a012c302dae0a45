// Output types of embedding vectors: float32, or sentence-transformers'
// quantize_embeddings (sentence_transformers/util/quantization.py, 6.x) for
// int8, uint8, binary and ubinary. The one implementation the server's routes,
// `dlrt embed` and the Python Embedder share (docs/embed-output-types.md),
// and a request's finishing of float32 vectors (finish_vector).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlrt::embed {

enum class OutputType { kFloat32, kInt8, kUint8, kBinary, kUbinary };

// "float32" (also "float"), "int8", "uint8", "binary", "ubinary"; nullopt for anything else.
std::optional<OutputType> output_type_from_name(std::string_view name);
const char* output_type_name(OutputType type);  // "float32", "int8", ...
// "float32, int8, uint8, binary, ubinary": for messages.
const char* output_type_names();

// True for int8 and uint8, which need per-dimension ranges.
inline bool needs_ranges(OutputType t) { return t == OutputType::kInt8 || t == OutputType::kUint8; }
// True for int8 and binary, whose bytes are signed.
inline bool is_signed(OutputType t) { return t == OutputType::kInt8 || t == OutputType::kBinary; }

// Bytes of one quantized vector of `dim` values: dim for int8/uint8,
// ceil(dim / 8) for binary/ubinary (each row padded with zero bits, numpy's
// packbits(axis=-1)), 4 * dim for float32.
size_t quantized_bytes(OutputType type, size_t dim);

// sentence-transformers' `ranges`: per dimension the minimum and the maximum,
// as float32 (the library casts them to float32 before use).
struct QuantizationRanges {
  std::vector<float> min, max;
  size_t dim() const { return min.size(); }
};

// The per-dimension minimum and maximum of `rows` row-major rows of `dim`
// values (at least one row): calibration embeddings -> ranges, as the library
// computes them (np.min / np.max: a NaN in a dimension makes its range NaN).
QuantizationRanges ranges_of(const float* data, size_t rows, size_t dim);

// One vector's bytes, `quantized_bytes(type, dim)` of them, appended to *out.
// int8/uint8: bucket = floor((x - min) / step) in float32 with step =
// (max - min) / 255 (1 where that is 0), clipped to 0..255; uint8 is the
// bucket, int8 the bucket - 128 (as its two's-complement byte). A NaN bucket
// (a NaN value or range) is 0, where numpy's cast leaves it undefined.
// binary/ubinary: bit (x > 0), most significant bit first; ubinary is the
// byte, binary the byte - 128. float32: the value's little-endian bytes.
// `ranges` must be given, of `dim`, for int8/uint8.
void quantize_into(const float* v, size_t dim, OutputType type, const QuantizationRanges* ranges,
                   std::vector<uint8_t>* out);

// The byte of a quantized vector as the number it stands for (-128..255).
inline int quantized_value(OutputType type, uint8_t byte) {
  return is_signed(type) ? static_cast<int>(static_cast<int8_t>(byte)) : static_cast<int>(byte);
}

// Where int8/uint8 take their ranges from, in sentence-transformers' order:
// `ranges` when set, else those of the calibration rows when there are any,
// else those of the embeddings themselves, which needs at least two of them
// (the library refuses to calibrate on one).
struct QuantizationSource {
  std::optional<QuantizationRanges> ranges;
  const float* calibration = nullptr;  // row-major, calibration_rows x dim
  size_t calibration_rows = 0;
};

// Quantizes `rows` row-major vectors of `dim` values as quantize_embeddings
// (embeddings, precision, ranges, calibration_embeddings) does, into *out
// (rows x quantized_bytes(type, dim) bytes). An error message otherwise
// (ranges of another dimension, one row and nothing to calibrate on); nothing
// is written then.
std::string quantize_rows(const float* data, size_t rows, size_t dim, OutputType type, const QuantizationSource& source,
                          std::vector<uint8_t>* out);
// The same for vectors of one size each (a server's or the CLI's results).
std::string quantize_rows(const std::vector<std::vector<float>>& rows, OutputType type,
                          const QuantizationSource& source, std::vector<uint8_t>* out);

// Finishes one pooled (unnormalised) float32 vector for a request: the first
// `dimensions` values when given (Matryoshka), then L2-normalised
// (normalize_l2) when `normalize`.
void finish_vector(std::vector<float>& v, std::optional<size_t> dimensions, bool normalize);

}  // namespace dlrt::embed
