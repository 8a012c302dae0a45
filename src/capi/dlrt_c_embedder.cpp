// The C API's embedder (dlrt_embedder_*): a sentence-transformers folder as
// text -> vectors, opened by the models' registry as a dense model.
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "embed/models/dense.h"
#include "embed/models/prepare_inputs.h"
#include "embed/models/registry.h"
#include "capi/capi_util.h"

using namespace dlrt::capi;  // NOLINT: this file implements the C API with its helpers

namespace {

// The offset of the first byte of `s` that is not part of well-formed UTF-8
// (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF), or
// npos. The tokenizer would read such bytes as U+FFFD; the header (and the
// HTTP server's 400) make them an error instead.
size_t invalid_utf8_at(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (b >= 0xC2 && b <= 0xDF) len = 2;
    else if (b >= 0xE0 && b <= 0xEF) len = 3, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    else if (b >= 0xF0 && b <= 0xF4) len = 4, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    else return i;
    if (s.size() - i < len) return i;
    const auto second = static_cast<unsigned char>(s[i + 1]);
    if (second < lo || second > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace

struct dlrt_embedder {
  std::shared_ptr<const dlrt::embed::EmbedModel> embedder;
  const dlrt::embed::DenseOut* dense;  // embedder's
};

extern "C" {

// -------------------------------------------------------------- embedder

dlrt_status* dlrt_embedder_create(const char* model_dir, const dlrt_embedder_options* options, dlrt_embedder** out) {
  constexpr const char* fn = "dlrt_embedder_create";
  return guarded(fn, [&]() -> dlrt_status* {
    if (!out) return invalid(fn, "out is NULL");
    *out = nullptr;
    if (!model_dir) return invalid(fn, "model_dir is NULL");
    dlrt::embed::EmbedderOptions o;
    if (options) {
      if (!DLRT_FITS(options, device))
        return invalid(fn, "options->struct_size is too small (set it to sizeof(dlrt_embedder_options))");
      if (options->device) o.device = options->device;
      if (DLRT_FITS(options, strict)) o.strict = options->strict != 0;
      if (DLRT_FITS(options, threads)) {
        if (options->threads < 0 || options->threads > dlrt::kMaxThreads)
          return invalid(fn, "options->threads is " + std::to_string(options->threads) + "; use 0 (one per core) to " +
                                 std::to_string(dlrt::kMaxThreads));
        o.threads = options->threads;
      }
      if (DLRT_FITS(options, max_length)) o.max_length = options->max_length;
    }
    auto e = dlrt::embed::open_model(model_dir, o, {dlrt::embed::Capability::kDense}, fn);
    if (!e.ok()) return from_status(e.status());
    const dlrt::embed::DenseOut* dense = (*e)->as<dlrt::embed::DenseOut>();
    *out = new dlrt_embedder{std::move(*e), dense};
    return nullptr;
  });
}

void dlrt_embedder_free(dlrt_embedder** embedder) { free_handle(embedder); }

size_t dlrt_embedder_dimension(const dlrt_embedder* embedder) { return embedder ? embedder->embedder->dimension() : 0; }

size_t dlrt_embedder_max_length(const dlrt_embedder* embedder) {
  return embedder ? embedder->embedder->max_length() : 0;
}

int dlrt_embedder_normalizes(const dlrt_embedder* embedder) {
  return embedder && embedder->embedder->normalizes() ? 1 : 0;
}

dlrt_status* dlrt_embedder_embed(const dlrt_embedder* embedder, const char* const* texts, const size_t* lengths,
                                 size_t count, float* vectors, size_t capacity, dlrt_run_report** report) {
  constexpr const char* fn = "dlrt_embedder_embed";
  return guarded(fn, [&]() -> dlrt_status* {
    if (report) *report = nullptr;
    if (!embedder) return invalid(fn, "embedder is NULL");
    if (count == 0) return nullptr;
    if (!texts) return invalid(fn, "texts is NULL");
    const size_t dim = embedder->embedder->dimension();
    if (!vectors) return invalid(fn, "vectors is NULL");
    if (dim == 0) return make_status(DLRT_INTERNAL, std::string(fn) + ": the embedder has no dimension");
    if (capacity / dim < count)
      return invalid(fn, "vectors holds " + std::to_string(capacity) + " floats but " + std::to_string(count) +
                             " texts need " + std::to_string(count) + " x " + std::to_string(dim));
    std::vector<std::string> batch(count);
    for (size_t i = 0; i < count; ++i) {
      if (!texts[i]) return invalid(fn, "texts[" + std::to_string(i) + "] is NULL");
      batch[i] = lengths ? std::string(texts[i], lengths[i]) : std::string(texts[i]);
      if (const size_t at = invalid_utf8_at(batch[i]); at != std::string_view::npos)
        return invalid(fn, "texts[" + std::to_string(i) + "] is not valid UTF-8 (byte " + std::to_string(at) + ")");
    }
    // One padded run, as dlrt serve's inputs (prompt none, cut at the model's length).
    std::vector<dlrt::embed::Encoding> inputs;
    if (auto e = dlrt::embed::prepare_inputs(*embedder->embedder, batch, {}, inputs)) return from_status(e->status);
    auto got = embedder->dense->embed_encoded(inputs, {});
    if (!got.ok()) return from_status(got.status());
    if (got->vectors.size() != count) return make_status(DLRT_INTERNAL, std::string(fn) + ": wrong number of vectors");
    std::unique_ptr<dlrt_run_report> rep;
    if (report) rep = std::make_unique<dlrt_run_report>(dlrt_run_report{std::move(got->report)});
    for (size_t i = 0; i < count; ++i) {
      std::vector<float>& v = got->vectors[i];
      if (v.size() != dim) return make_status(DLRT_INTERNAL, std::string(fn) + ": wrong vector length");
      if (embedder->embedder->normalizes()) dlrt::embed::normalize_l2(v);
      std::memcpy(vectors + i * dim, v.data(), dim * sizeof(float));
    }
    if (report) *report = rep.release();
    return nullptr;
  });
}

}  // extern "C"
