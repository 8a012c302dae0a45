#include "core/npy.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <optional>
#include <vector>

#include "core/file_io.h"
#include "core/memory_limit.h"

namespace dlrt {

static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct Descr {
  DType dtype = DType::kUndefined;
  size_t itemsize = 0;
};

// The widest text element read or written (numpy's '<U' width), in characters.
constexpr size_t kMaxTextChars = 1 << 20;

// Appends code point c as UTF-8; false for a surrogate or a value past U+10FFFF.
bool append_utf8(std::string& out, uint32_t c) {
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return false;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return true;
}

// The code points of UTF-8 text; nullopt when it is not valid UTF-8.
std::optional<std::vector<uint32_t>> utf8_code_points(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return std::nullopt;
    uint32_t c = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    for (size_t k = 1; k < len; ++k) {
      const auto t = static_cast<unsigned char>(s[i + k]);
      if ((t >> 6) != 2) return std::nullopt;
      c = (c << 6) | (t & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < least[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return std::nullopt;
    out.push_back(c);
    i += len;
  }
  return out;
}

// The three keys of a .npy header, parsed from its Python dict literal.
struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<Shape> shape;
};

// A tiny parser for the subset of Python literals .npy headers use:
// {'key': 'str' | True | False | (int, ...), ...}
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  Status parse(Header& h) {
    skip_ws();
    if (!eat('{')) return err("expected '{' at the start of the header");
    while (true) {
      skip_ws();
      if (eat('}')) break;
      std::string key;
      DLRT_RETURN_IF_ERROR(parse_string(key));
      skip_ws();
      if (!eat(':')) return err("expected ':' after key '" + key + "'");
      skip_ws();
      if (key == "descr") {
        std::string v;
        if (peek() != '\'' && peek() != '"')
          return err("'descr' is not a simple dtype string (structured and object dtypes are not supported)");
        DLRT_RETURN_IF_ERROR(parse_string(v));
        h.descr = v;
      } else if (key == "fortran_order") {
        if (eat_word("True")) h.fortran_order = true;
        else if (eat_word("False")) h.fortran_order = false;
        else return err("'fortran_order' must be True or False");
      } else if (key == "shape") {
        Shape shape;
        DLRT_RETURN_IF_ERROR(parse_tuple(shape));
        h.shape = std::move(shape);
      } else {
        return err("unexpected key '" + key + "' in the header");
      }
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat('}')) break;
      return err("expected ',' or '}' in the header");
    }
    skip_ws();
    if (pos_ != s_.size()) return err("unexpected text after the header dict");
    return Status::Ok();
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool eat_word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  Status err(const std::string& m) const { return InvalidArgument("malformed .npy header: " + m); }

  Status parse_string(std::string& out) {
    char q = peek();
    if (q != '\'' && q != '"') return err("expected a quoted string");
    ++pos_;
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') return err("escapes in header strings are not supported");
      ++pos_;
    }
    if (pos_ >= s_.size()) return err("unterminated string");
    out.assign(s_.substr(start, pos_ - start));
    ++pos_;
    return Status::Ok();
  }

  Status parse_tuple(Shape& shape) {
    char close;
    if (eat('(')) close = ')';
    else if (eat('[')) close = ']';
    else return err("'shape' must be a tuple of integers");
    while (true) {
      skip_ws();
      if (eat(close)) return Status::Ok();
      if (peek() < '0' || peek() > '9') return err("'shape' must contain non-negative integers");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        int d = peek() - '0';
        if (v > (std::numeric_limits<int64_t>::max() - d) / 10) return err("a dimension in 'shape' does not fit in 64 bits");
        v = v * 10 + d;
        ++pos_;
      }
      eat('L');  // Python 2 long suffix
      shape.push_back(v);
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat(close)) return Status::Ok();
      return err("expected ',' or ')' in 'shape'");
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

Result<Descr> parse_descr(const std::string& d) {
  if (d.empty()) return InvalidArgument("empty dtype descriptor");
  size_t i = 0;
  char order = '=';
  if (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=') {
    order = d[0];
    i = 1;
  }
  std::string rest = d.substr(i);
  Descr out;
  if (rest == "?" || rest == "b1") out = {DType::kBool, 1};
  else if (rest == "f2") out = {DType::kFloat16, 2};
  else if (rest == "f4") out = {DType::kFloat32, 4};
  else if (rest == "f8") out = {DType::kFloat64, 8};
  else if (rest == "i1") out = {DType::kInt8, 1};
  else if (rest == "i2") out = {DType::kInt16, 2};
  else if (rest == "i4") out = {DType::kInt32, 4};
  else if (rest == "i8") out = {DType::kInt64, 8};
  else if (rest == "u1") out = {DType::kUInt8, 1};
  else if (rest == "u2") out = {DType::kUInt16, 2};
  else if (rest == "u4") out = {DType::kUInt32, 4};
  else if (rest == "u8") out = {DType::kUInt64, 8};
  else if (rest.size() > 1 && rest[0] == 'U' && rest.find_first_not_of("0123456789", 1) == std::string::npos) {
    // Fixed-width text of N UTF-32 code units per element (numpy's str arrays).
    const unsigned long chars = rest.size() > 9 ? kMaxTextChars + 1 : std::stoul(rest.substr(1));
    if (chars == 0 || chars > kMaxTextChars)
      return InvalidArgument("unsupported .npy text width '" + d + "' (1 to " + std::to_string(kMaxTextChars) +
                             " characters)");
    out = {DType::kString, 4 * chars};
  } else
    return Status(StatusCode::kInvalidArgument,
                  "unsupported .npy dtype '" + d +
                      "' (supported: float16/32/64, int8..64, uint8..64, bool, str); convert the array with numpy's astype()");
  if (order == '>' && out.itemsize > 1)
    return InvalidArgument("big-endian .npy data ('" + d + "') is not supported; save it little-endian (arr.astype(arr.dtype.newbyteorder('<')))");
  return out;
}

uint32_t read_le(std::string_view b, size_t off, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(b[off + i])) << (8 * i);
  return v;
}

Result<Tensor> parse_impl(std::string_view bytes) {
  if (bytes.size() < kMagicLen || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    return InvalidArgument("not a .npy file (bad magic; expected \\x93NUMPY)");
  if (bytes.size() < kMagicLen + 2) return InvalidArgument("truncated .npy file (no version)");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t len_size;
  if (major == 1) len_size = 2;
  else if (major == 2 || major == 3) len_size = 4;
  else return InvalidArgument("unsupported .npy format version " + std::to_string(major) + "." +
                              std::to_string(static_cast<unsigned char>(bytes[7])) + " (supported: 1.0, 2.0, 3.0)");
  size_t header_start = 8 + len_size;
  if (bytes.size() < header_start) return InvalidArgument("truncated .npy file (no header length)");
  size_t header_len = read_le(bytes, 8, len_size);
  if (header_len > bytes.size() - header_start)
    return InvalidArgument("truncated .npy file: header of " + std::to_string(header_len) + " bytes, only " +
                           std::to_string(bytes.size() - header_start) + " present");
  std::string_view header = bytes.substr(header_start, header_len);
  Header h;
  DLRT_RETURN_IF_ERROR(HeaderParser(header).parse(h));
  if (!h.descr) return InvalidArgument("malformed .npy header: no 'descr'");
  if (!h.fortran_order) return InvalidArgument("malformed .npy header: no 'fortran_order'");
  if (!h.shape) return InvalidArgument("malformed .npy header: no 'shape'");
  if (*h.fortran_order)
    return InvalidArgument("Fortran-order .npy arrays are not supported; save with np.ascontiguousarray(arr)");
  DLRT_ASSIGN_OR_RETURN(Descr descr, parse_descr(*h.descr));
  auto count = checked_element_count(*h.shape);
  if (!count.ok()) return InvalidArgument("bad .npy shape: " + count.status().message());
  uint64_t n = static_cast<uint64_t>(count.value());
  if (n > std::numeric_limits<uint64_t>::max() / descr.itemsize)
    return InvalidArgument("bad .npy shape " + shape_to_string(*h.shape) + ": byte size overflows 64 bits");
  uint64_t nbytes = n * descr.itemsize;
  size_t data_start = header_start + header_len;
  uint64_t have = bytes.size() - data_start;
  if (have != nbytes)
    return InvalidArgument(std::string(have < nbytes ? "truncated .npy data" : "trailing bytes after .npy data") +
                           ": shape " + shape_to_string(*h.shape) + " of " + *h.descr + " needs " +
                           std::to_string(nbytes) + " bytes, the file has " + std::to_string(have));
  DLRT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(descr.dtype, *h.shape));
  if (descr.dtype == DType::kString) {
    // Each element: itemsize / 4 little-endian code points, NUL-padded.
    const size_t chars = descr.itemsize / 4;
    std::string* out = t.data<std::string>();
    for (uint64_t e = 0; e < n; ++e) {
      size_t len = chars;
      const size_t at = data_start + e * descr.itemsize;
      while (len > 0 && read_le(bytes, at + 4 * (len - 1), 4) == 0) --len;
      for (size_t k = 0; k < len; ++k)
        if (!append_utf8(out[e], read_le(bytes, at + 4 * k, 4)))
          return InvalidArgument("text element " + std::to_string(e) + " holds an invalid code point");
    }
    return t;
  }
  if (nbytes) std::memcpy(t.raw_data(), bytes.data() + data_start, nbytes);
  if (descr.dtype == DType::kBool) {
    // Normalise to 0/1 so no invalid bool value is ever loaded.
    auto* p = static_cast<unsigned char*>(t.raw_data());
    for (uint64_t i = 0; i < n; ++i) p[i] = p[i] ? 1 : 0;
  }
  return t;
}

}  // namespace

std::string npy_descr(DType t) {
  switch (t) {
    case DType::kBool: return "|b1";
    case DType::kFloat16: return "<f2";
    case DType::kFloat32: return "<f4";
    case DType::kFloat64: return "<f8";
    case DType::kInt8: return "|i1";
    case DType::kInt16: return "<i2";
    case DType::kInt32: return "<i4";
    case DType::kInt64: return "<i8";
    case DType::kUInt8: return "|u1";
    case DType::kUInt16: return "<u2";
    case DType::kUInt32: return "<u4";
    case DType::kUInt64: return "<u8";
    default: return "";
  }
}

Result<Tensor> parse_npy(std::string_view bytes, const std::string& what) {
  auto r = parse_impl(bytes);
  if (!r.ok()) return r.status().with_context(what);
  return r;
}

Result<Tensor> read_npy_file(const std::string& path) {
  auto bytes = read_whole_file(path);
  if (!bytes.ok()) return IoError(".npy file: " + bytes.status().message());
  return parse_npy(bytes.value(), path);
}

Result<std::string> serialize_npy(const Tensor& t) {
  if (!t.valid()) return InvalidArgument("cannot write an empty tensor as .npy");
  std::string descr = npy_descr(t.dtype());
  // Text: UTF-32 code points, as wide as the longest element.
  std::vector<std::vector<uint32_t>> text;
  size_t chars = 1;
  if (t.dtype() == DType::kString) {
    text.reserve(static_cast<size_t>(t.size()));
    for (int64_t i = 0; i < t.size(); ++i) {
      auto cps = utf8_code_points(t.data<std::string>()[i]);
      if (!cps) return InvalidArgument("string element " + std::to_string(i) + " is not valid UTF-8; .npy text holds code points");
      chars = std::max(chars, cps->size());
      text.push_back(std::move(*cps));
    }
    if (chars > kMaxTextChars)
      return Unsupported("a string of " + std::to_string(chars) + " characters is too long for .npy text here");
    descr = "<U" + std::to_string(chars);
  }
  if (descr.empty())
    return Unsupported(std::string("cannot write a ") + dtype_name(t.dtype()) + " tensor as .npy (no numpy dtype)");
  std::string shape = "(";
  for (size_t i = 0; i < t.rank(); ++i) {
    shape += std::to_string(t.dim(i));
    if (t.rank() == 1 || i + 1 < t.rank()) shape += t.rank() == 1 ? "," : ", ";
  }
  shape += ")";
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so the data starts on a 64-byte boundary; the header ends in '\n'.
  size_t prefix = 10;
  size_t total = prefix + dict.size() + 1;
  bool v2 = false;
  size_t padded = (total + 63) / 64 * 64;
  if (padded - prefix > 0xffff) {
    v2 = true;
    prefix = 12;
    total = prefix + dict.size() + 1;
    padded = (total + 63) / 64 * 64;
  }
  size_t header_len = padded - prefix;
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xff);
  out += dict;
  out.append(header_len - dict.size() - 1, ' ');
  out += '\n';
  if (t.dtype() == DType::kString) {
    for (const auto& cps : text)
      for (size_t k = 0; k < chars; ++k) {
        const uint32_t c = k < cps.size() ? cps[k] : 0;
        for (int b = 0; b < 4; ++b) out += static_cast<char>((c >> (8 * b)) & 0xff);
      }
    return out;
  }
  if (t.nbytes()) out.append(static_cast<const char*>(t.raw_data()), t.nbytes());
  return out;
}

namespace {
Status write_npy_file_unguarded(const std::string& path, const Tensor& t) {
  auto bytes = serialize_npy(t);
  if (!bytes.ok()) return bytes.status().with_context(path);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return IoError(path + ": cannot open for writing: " + std::strerror(errno));
  f.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  f.close();
  if (!f) return IoError(path + ": write failed");
  return Status::Ok();
}
}  // namespace

Status write_npy_file(const std::string& path, const Tensor& t) {
  try {
    return write_npy_file_unguarded(path, t);
  } catch (const std::bad_alloc&) {  // the file's bytes are built in memory first
    return Status(StatusCode::kOutOfMemory, path + ": out of memory serializing " + format_bytes(t.nbytes()) +
                                                " of tensor data");
  }
}

}  // namespace dlrt
