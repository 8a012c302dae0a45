#include "embed/serve/model_registry.h"

namespace dlrt::embed {

ModelRegistry::ModelRegistry(std::vector<ServedModelConfig> models) {
  if (models.empty()) models.push_back({});
  for (auto& m : models) {
    ModelRef r;
    r.name = m.name;
    r.config = std::move(m);
    models_.push_back(std::move(r));
  }
}

size_t ModelRegistry::size() const {
  std::lock_guard<std::mutex> lk(mu_);
  return models_.size();
}

std::vector<ModelRef> ModelRegistry::all() const {
  std::lock_guard<std::mutex> lk(mu_);
  return models_;
}

std::vector<std::string> ModelRegistry::names() const {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<std::string> out;
  for (const auto& m : models_) out.push_back(m.name);
  return out;
}

std::optional<ModelRef> ModelRegistry::find(const std::string& name) const {
  std::lock_guard<std::mutex> lk(mu_);
  if (name.empty() || models_.size() == 1) return models_.front();
  for (const auto& m : models_)
    if (m.name == name) return m;
  return std::nullopt;
}

ModelRef ModelRegistry::default_model() const {
  std::lock_guard<std::mutex> lk(mu_);
  return models_.front();
}

std::optional<size_t> ModelRegistry::index_of(const std::string& name) const {
  std::lock_guard<std::mutex> lk(mu_);
  for (size_t i = 0; i < models_.size(); ++i)
    if (models_[i].name == name) return i;
  return std::nullopt;
}

void ModelRegistry::set_model(size_t index, std::shared_ptr<const EmbedModel> model, std::shared_ptr<Batcher> batcher,
                              const std::string& display_name) {
  std::lock_guard<std::mutex> lk(mu_);
  if (index >= models_.size()) return;
  ModelRef& r = models_[index];
  if (r.config.name.empty()) r.name = display_name;
  r.model = std::move(model);
  r.batcher = std::move(batcher);
  r.load_error.clear();
}

void ModelRegistry::set_load_error(size_t index, const std::string& reason) {
  std::lock_guard<std::mutex> lk(mu_);
  if (index < models_.size()) models_[index].load_error = reason;
}

void ModelRegistry::set_device_error(size_t index, const std::string& error) {
  std::lock_guard<std::mutex> lk(mu_);
  if (index < models_.size()) models_[index].device_error = error;
}

std::vector<std::shared_ptr<Batcher>> ModelRegistry::release() {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<std::shared_ptr<Batcher>> out;
  for (auto& m : models_) {
    if (m.batcher) out.push_back(std::move(m.batcher));
    m.batcher.reset();
    m.model.reset();
  }
  return out;
}

}  // namespace dlrt::embed
