// sentence-transformers' Router module (5.x sentence_transformers.models.Router,
// 6.x sentence_transformers.base.modules.router.Router): module 0 of a
// folder, a list of modules per route ("query", "document", ...), each route
// a folder's modules of its own (router_config.json's "structure", the
// modules in the sub-folders its "types" name), followed by the modules
// modules.json lists after the Router (e.g. a Normalize every route shares).
//
// The route of a text is the library's: encode_query asks for task "query",
// encode_document for "document", encode for none; router_config.json's
// "route_mappings" (6.x, keys (task, modality); texts are modality "text"),
// then a route named as the task, then a route named "text", then (without
// a task) "default_route". A task no route takes is refused, as the library
// refuses it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dlrt/status.h"
#include "embed/models/embedder.h"
#include "embed/models/model.h"
#include "embed/models/modules.h"

namespace dlrt::embed {

struct RouterSpec {
  struct Route {
    std::string name;
    std::vector<Module> modules;  // the route's, then those after the Router in modules.json
  };
  // A route_mappings entry: (task, modality) -> route; empty task / modality: None.
  struct Mapping {
    std::string task, modality;
    size_t route = 0;
  };
  std::filesystem::path config;  // router_config.json
  std::vector<Route> routes;
  std::vector<Mapping> mappings;
  std::optional<size_t> default_route;

  // The route of a text for encode_query (true), encode_document (false) or
  // encode (nullopt); kInvalidArgument when none takes it.
  Result<size_t> resolve(std::optional<bool> is_query) const;
};

// DIR's Router when modules.json's module 0 is one; nullopt otherwise.
// Errors: kInvalidModel (a broken router_config.json, a route naming no
// module, a sub-folder outside DIR), kUnsupported (a module type dlrt does
// not implement, named with its route), read_modules' errors.
Result<std::optional<RouterSpec>> read_router(const std::filesystem::path& dir);

// A Router folder's model: an Embedder per route, of one kind (dense or
// sparse) and one dimension; its texts tokenized for the route
// EmbedModel::tokenize_for picks run through that route's Embedder
// (router_model.cpp).
Result<std::shared_ptr<const EmbedModel>> open_router(const std::string& path, const RouterSpec& spec,
                                                      const EmbedderOptions& options);

}  // namespace dlrt::embed
