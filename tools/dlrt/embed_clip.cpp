// dlrt embed on a clip folder (see embed_clip.h).
#include "embed_clip.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "core/npy.h"
#include "embed/image/image.h"
#include "embed/models/model.h"
#include "embed/models/output_type.h"
#include "embed/models/registry.h"
#include "vector_output.h"

namespace dlrt::cli {

namespace {

int run_error(const Status& s) {
  std::fprintf(stderr, "dlrt embed: error: %s\n", s.to_string().c_str());
  return exit_code_for_run_status(s);
}

// `batch` inputs at a time through the model's text or vision tower; tokens per input into *tokens.
Result<std::vector<std::vector<float>>> embed_all(const embed::EmbedModel& model, const ClipEmbedJob& job,
                                                  std::vector<size_t>* tokens) {
  std::vector<std::vector<float>> vectors;
  for (size_t start = 0; start < job.inputs.size(); start += job.batch) {
    const size_t end = std::min(job.inputs.size(), start + job.batch);
    embed::EmbedResult r;
    if (job.images) {
      std::vector<embed::image::Image> images;
      for (size_t i = start; i < end; ++i) {
        auto image = embed::image::load_file(job.inputs[i]);
        if (!image.ok()) return image.status();  // names the file
        images.push_back(std::move(image).value());
        tokens->push_back(0);
      }
      DLRT_ASSIGN_OR_RETURN(r, model.as<embed::ImageOut>()->embed_images(images, {}));
    } else {
      std::vector<embed::Encoding> batch;
      for (size_t i = start; i < end; ++i) {
        DLRT_ASSIGN_OR_RETURN(embed::Encoding e, model.tokenize(job.inputs[i], nullptr));
        tokens->push_back(e.ids.size());
        batch.push_back(std::move(e));
      }
      DLRT_ASSIGN_OR_RETURN(r, model.as<embed::DenseOut>()->embed_encoded(batch, {}));
    }
    for (auto& v : r.vectors) {
      embed::finish_vector(v, std::nullopt, model.normalizes());
      vectors.push_back(std::move(v));
    }
  }
  return vectors;
}

}  // namespace

int embed_clip(const ClipEmbedJob& job) {
  auto opened = embed::open_model(job.model, job.options);
  if (!opened.ok()) {
    std::fprintf(stderr, "dlrt embed: error: %s\n", opened.status().to_string().c_str());
    return exit_code_for_folder_status(opened.status());
  }
  const embed::EmbedModel& model = **opened;
  if (job.images && !model.as<embed::ImageOut>())
    return usage_error("embed", embed::kind_refusal(model.kind(), {embed::Capability::kImage}, "the model " + job.model,
                                                    "--image"));
  std::vector<size_t> tokens;
  auto vectors = embed_all(model, job, &tokens);
  if (!vectors.ok()) return run_error(vectors.status());
  const size_t dim = model.dimension();
  if (!job.npy.empty()) {
    std::vector<float> flat;
    for (const auto& v : *vectors) flat.insert(flat.end(), v.begin(), v.end());
    const Tensor t = Tensor::from_vector<float>({static_cast<int64_t>(vectors->size()), static_cast<int64_t>(dim)}, flat);
    if (Status s = write_npy_file(job.npy, t); !s.ok()) return run_error(s);
    return kExitOk;
  }
  if (job.json) {
    nlohmann::ordered_json j;
    j["model"] = model.model_name();
    j["kind"] = embed::model_kind_name(model.kind());
    j["input"] = job.images ? "image" : "text";
    j["dimension"] = dim;
    j["normalized"] = model.normalizes();
    print_vectors_json(std::move(j), "embedding", *vectors, job.images ? nullptr : &tokens);
  } else {
    print_vector_lines(*vectors);
  }
  return kExitOk;
}

}  // namespace dlrt::cli
