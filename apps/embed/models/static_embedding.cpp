// StaticEmbedding and SparseStaticEmbedding (static_embedding.h).
#include "embed/models/static_embedding.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include <nlohmann/json.hpp>

#include "dlrt/dtype.h"
#include "embed/models/dense.h"
#include "embed/tokenizer/file_util.h"
#include "embed/tokenizer/json_util.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The module's tokenizer without its post-processor: the ids of
// add_special_tokens=False. model_max_length of tokenizer_config.json cuts
// texts only where the module's tokenizer is transformers' (`use_config`).
Result<std::unique_ptr<Tokenizer>> module_tokenizer(const fs::path& dir, bool use_config) {
  const fs::path path = dir / "tokenizer.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound(dir.string() + ": no tokenizer.json for the static embedding module");
  DLRT_ASSIGN_OR_RETURN(std::string text, read_folder_file(path.string()));
  DLRT_RETURN_IF_ERROR(jsonu::check_json_depth(text, path.string()));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidModel(path.string() + ": not a JSON object");
  j["post_processor"] = nullptr;
  auto tok = Tokenizer::from_json_string(j.dump());
  if (!tok.ok()) return tok.status().with_context(path.string());
  auto out = std::make_unique<Tokenizer>(std::move(tok).value());
  if (use_config && out->configured_max_length() == 0) {
    DLRT_ASSIGN_OR_RETURN(json config, jsonu::read_optional_json(dir / "tokenizer_config.json"));
    // model_max_length is 1e30 when the model sets none: no cut, as transformers.
    const json* m = config.is_object() ? jsonu::member(config, "model_max_length") : nullptr;
    if (m && m->is_number() && m->get<double>() >= 1 && m->get<double>() < 1e7)
      out->set_configured_max_length(static_cast<size_t>(m->get<double>()));
  }
  return out;
}

// The JSON header of a mapped .safetensors file and where its data starts.
Result<json> safetensors_header(const char* bytes, size_t size, const std::string& what, size_t& data_start) {
  if (size < 8) return InvalidModel(what + ": too short for a .safetensors file");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(bytes[i]);
  if (n > size - 8) return InvalidModel(what + ": header size " + std::to_string(n) + " is past the end of the file");
  const std::string_view text(bytes + 8, static_cast<size_t>(n));
  DLRT_RETURN_IF_ERROR(jsonu::check_json_depth(text, what));
  json header = json::parse(text.begin(), text.end(), nullptr, false);
  if (header.is_discarded() || !header.is_object()) return InvalidModel(what + ": the header is not a JSON object");
  data_start = 8 + static_cast<size_t>(n);
  return header;
}

}  // namespace

StaticEmbedding::~StaticEmbedding() {
  if (map_) ::munmap(map_, map_bytes_);
}

Result<StaticEmbedding::Loaded> StaticEmbedding::load(const fs::path& dir, Mode mode) {
  DLRT_ASSIGN_OR_RETURN(const fs::path path, module_safetensors_path(dir, "static embedding"));
  const std::string what = path.string();
  const char* tensor_name = mode == Mode::kMeanOfRows ? "embedding.weight" : "weight";
  std::shared_ptr<StaticEmbedding> m(new StaticEmbedding());
  m->mode_ = mode;
  const int fd = ::open(what.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open " + what + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    ::close(fd);
    return IoError("cannot read " + what + ": not a non-empty regular file");
  }
  m->map_bytes_ = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, m->map_bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return IoError("cannot map " + what + ": " + std::strerror(errno));
  m->map_ = map;
  const char* bytes = static_cast<const char*>(map);
  size_t data_start = 0;
  DLRT_ASSIGN_OR_RETURN(json header, safetensors_header(bytes, m->map_bytes_, what, data_start));
  const json* info = jsonu::member(header, tensor_name);
  if (!info || !info->is_object())
    return InvalidModel(what + ": no \"" + std::string(tensor_name) + "\" tensor (the module's weights)");
  const std::string where = what + ": tensor \"" + tensor_name + "\"";
  const std::string dtype = jsonu::get_string(*info, "dtype", "");
  const size_t elem = dtype == "F32" ? 4 : (dtype == "F16" || dtype == "BF16") ? 2 : 0;
  if (elem == 0) return InvalidModel(where + " has dtype \"" + dtype + "\" (F32, F16 or BF16 expected)");
  const json* shape = jsonu::member(*info, "shape");
  const json* offsets = jsonu::member(*info, "data_offsets");
  const size_t rank = mode == Mode::kMeanOfRows ? 2 : 1;
  if (!shape || !shape->is_array() || shape->size() != rank || !offsets || !offsets->is_array() || offsets->size() != 2)
    return InvalidModel(where + (rank == 2 ? " is not [vocabulary, dimension]" : " is not [vocabulary]"));
  for (const json& d : *shape)
    if (!d.is_number_unsigned() || d.get<uint64_t>() == 0 || d.get<uint64_t>() > (uint64_t{1} << 31))
      return InvalidModel(where + " has a bad dimension");
  m->rows_ = (*shape)[0].get<size_t>();
  m->dim_ = rank == 2 ? (*shape)[1].get<size_t>() : 1;
  if (!(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
    return InvalidModel(where + " has bad data_offsets");
  const uint64_t begin = (*offsets)[0].get<uint64_t>(), end = (*offsets)[1].get<uint64_t>();
  const uint64_t count = static_cast<uint64_t>(m->rows_) * m->dim_;
  if (count > (uint64_t{1} << 34) / elem || begin > end || end > m->map_bytes_ - data_start || end - begin != count * elem)
    return InvalidModel(where + ": data_offsets do not fit its shape and the file");
  const char* src = bytes + data_start + begin;
  if (elem == 4 && reinterpret_cast<uintptr_t>(src) % alignof(float) == 0) {
    m->table_ = reinterpret_cast<const float*>(src);
  } else {
    m->copy_.resize(static_cast<size_t>(count));
    for (size_t i = 0; i < m->copy_.size(); ++i) {
      if (elem == 4) {
        std::memcpy(&m->copy_[i], src + 4 * i, 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, src + 2 * i, 2);
        m->copy_[i] = dtype == "F16" ? Float16::to_float(bits) : BFloat16::to_float(bits);
      }
    }
    m->table_ = m->copy_.data();
    ::munmap(m->map_, m->map_bytes_);
    m->map_ = nullptr;
  }
  Loaded out;
  DLRT_ASSIGN_OR_RETURN(out.tokenizer, module_tokenizer(dir, mode == Mode::kTokenWeights));
  if (out.tokenizer->vocab_size() > m->rows_)
    return InvalidModel(where + " has " + std::to_string(m->rows_) + " rows but the tokenizer has " +
                        std::to_string(out.tokenizer->vocab_size()) + " tokens");
  out.module = std::move(m);
  return out;
}

Status StaticEmbedding::embed(const std::vector<int64_t>& ids, float* out) const {
  const size_t n = dimension();
  std::fill(out, out + n, 0.0f);
  for (int64_t id : ids)
    if (id < 0 || static_cast<uint64_t>(id) >= rows_)
      return InvalidArgument("token id " + std::to_string(id) + " is outside the static embedding table (" +
                             std::to_string(rows_) + " rows)");
  if (mode_ == Mode::kTokenWeights) {
    for (int64_t id : ids) out[id] = table_[id];
    return Status::Ok();
  }
  if (ids.empty()) return Status::Ok();
  std::vector<double> acc(dim_, 0.0);
  for (int64_t id : ids) {
    const float* row = table_ + static_cast<size_t>(id) * dim_;
    for (size_t k = 0; k < dim_; ++k) acc[k] += row[k];
  }
  const double count = static_cast<double>(ids.size());
  for (size_t k = 0; k < dim_; ++k) out[k] = static_cast<float>(acc[k] / count);
  return Status::Ok();
}

}  // namespace dlrt::embed
