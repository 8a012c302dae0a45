// batch_dependent_op: a minimal protobuf walk over ModelProto -> GraphProto ->
// NodeProto (op_type, domain) and AttributeProto subgraphs (see batch_dependence.h).
#include "embed/models/batch_dependence.h"

#include <cstdint>
#include <fstream>
#include <set>

namespace dlrt::embed {
namespace {

// ONNX ops whose output for one row depends on the whole input tensor: a
// per-tensor scale (and zero point) computed at run time from all of it.
// MatMulIntegerToFloat and QAttention take that scale as an input; in the
// dynamic-quantized graphs they appear in (onnxruntime.quantization's
// quantize_dynamic) it comes from a DynamicQuantizeLinear on the batch.
bool batch_dependent(const std::string& op_type) {
  static const std::set<std::string> kOps = {"DynamicQuantizeLinear", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM",
                                             "MatMulIntegerToFloat", "QAttention"};
  return kOps.count(op_type) != 0;
}

// Protobuf wire format over a byte range [pos, end) of the file.
class Reader {
 public:
  explicit Reader(std::ifstream& in) : in_(in) {}

  bool varint(uint64_t end, uint64_t& pos, uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= end) return false;
      in_.seekg(static_cast<std::streamoff>(pos));
      const int c = in_.get();
      if (c == EOF) return false;
      ++pos;
      v |= static_cast<uint64_t>(c & 0x7F) << shift;
      if ((c & 0x80) == 0) return true;
    }
    return false;
  }

  bool string(uint64_t pos, uint64_t len, std::string& s) {
    if (len > 4096) return false;  // op types and domains are short
    s.resize(len);
    in_.seekg(static_cast<std::streamoff>(pos));
    in_.read(s.data(), static_cast<std::streamsize>(len));
    return static_cast<uint64_t>(in_.gcount()) == len;
  }

  // Calls on_field(field, pos, len) for each length-delimited field of the
  // message in [pos, end) and skips the others; false on a malformed message
  // or when on_field says stop (then *stopped).
  template <typename F>
  bool fields(uint64_t pos, uint64_t end, F&& on_field) {
    while (pos < end) {
      uint64_t key = 0, v = 0;
      if (!varint(end, pos, key)) return false;
      const uint64_t field = key >> 3;
      switch (key & 7) {
        case 0:
          if (!varint(end, pos, v)) return false;
          break;
        case 1: pos += 8; break;
        case 5: pos += 4; break;
        case 2: {
          if (!varint(end, pos, v) || v > end - pos) return false;
          if (!on_field(field, pos, v)) return false;
          pos += v;
          break;
        }
        default: return false;  // groups (3, 4) are not used by ONNX
      }
    }
    return pos == end;
  }

 private:
  std::ifstream& in_;
};

struct Scan {
  Reader& r;
  std::string found;

  // GraphProto: node = 1.
  bool graph(uint64_t pos, uint64_t len, int depth) {
    return r.fields(pos, pos + len, [&](uint64_t f, uint64_t p, uint64_t n) { return f != 1 || node(p, n, depth); });
  }
  // NodeProto: op_type = 4, domain = 7, attribute = 5.
  bool node(uint64_t pos, uint64_t len, int depth) {
    std::string op, domain;
    const bool ok = r.fields(pos, pos + len, [&](uint64_t f, uint64_t p, uint64_t n) {
      if (f == 4) return r.string(p, n, op);
      if (f == 7) return r.string(p, n, domain);
      if (f == 5) return attribute(p, n, depth);
      return true;
    });
    if (!ok) return false;
    if (batch_dependent(op)) {
      found = domain.empty() || domain == "ai.onnx" ? op : domain + "." + op;
      return false;  // stop: found
    }
    return true;
  }
  // AttributeProto: g = 6, graphs = 11.
  bool attribute(uint64_t pos, uint64_t len, int depth) {
    if (depth > 16) return true;
    return r.fields(pos, pos + len, [&](uint64_t f, uint64_t p, uint64_t n) {
      return (f != 6 && f != 11) || graph(p, n, depth + 1);
    });
  }
};

}  // namespace

Result<std::string> batch_dependent_op(const std::filesystem::path& model_path) {
  std::ifstream in(model_path, std::ios::binary);
  if (!in) return IoError("cannot read " + model_path.string());
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(in.tellg());
  Reader r(in);
  Scan scan{r, {}};
  // ModelProto: graph = 7.
  const bool ok = r.fields(0, size, [&](uint64_t f, uint64_t p, uint64_t n) { return f != 7 || scan.graph(p, n, 0); });
  if (!scan.found.empty()) return scan.found;
  if (!ok) return InvalidModel(model_path.string() + ": not an ONNX model (cannot read its graph's nodes)");
  return std::string();
}

}  // namespace dlrt::embed
