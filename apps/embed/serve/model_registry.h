// The models one `dlrt serve` process serves, by name: each with its model
// (once loaded), its batcher, its load error and its latest device error.
// The first is the default, answering requests that name no model. The
// routes look a request's model up here; cmd_serve fills it as models load.
// Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "embed/serve/batcher.h"
#include "embed/serve/service_config.h"

namespace dlrt::embed {

class EmbedModel;

// A served model as a request sees it (a snapshot; the model and batcher stay
// alive while it is held).
struct ModelRef {
  std::string name;  // the name it is served by (a bare folder: model_name, else its own once loaded)
  ServedModelConfig config;
  std::shared_ptr<const EmbedModel> model;  // null while loading or after it failed
  std::shared_ptr<Batcher> batcher;
  std::string load_error;                   // why it could not be loaded ("" when it did or is loading)
  std::string device_error;                 // the latest batch failure on the device (strict mode)
};

class ModelRegistry {
 public:
  // The models to serve, the default first (served_models()); none loaded yet.
  explicit ModelRegistry(std::vector<ServedModelConfig> models);

  size_t size() const;
  // In order, the default first.
  std::vector<ModelRef> all() const;
  std::vector<std::string> names() const;
  // The model a request names: "" is the default; with one model served any
  // name is that model (as a server of one model always answered); with
  // several, an exact name or nullopt.
  std::optional<ModelRef> find(const std::string& name) const;
  ModelRef default_model() const;
  // Index of `name` in all() (exact), or nullopt.
  std::optional<size_t> index_of(const std::string& name) const;

  // Model `index` serves from now on, through `batcher`; `display_name`
  // names it when it was not named (a bare folder).
  void set_model(size_t index, std::shared_ptr<const EmbedModel> model, std::shared_ptr<Batcher> batcher,
                 const std::string& display_name);
  void set_load_error(size_t index, const std::string& reason);
  void set_device_error(size_t index, const std::string& error);
  // Takes every batcher out (to stop them) and forgets the models.
  std::vector<std::shared_ptr<Batcher>> release();

 private:
  mutable std::mutex mu_;
  std::vector<ModelRef> models_;
};

}  // namespace dlrt::embed
