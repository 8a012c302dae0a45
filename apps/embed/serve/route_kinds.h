// What each model route needs of the model a request names (a capability,
// models/kind.h), read from the route table's capability column (routes.h):
// the routes refuse a model by it, with one 400 naming the model's kind, and
// the route x kind test is generated from it.
//
// Thread-safety: immutable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "embed/models/kind.h"

namespace dlrt::embed {

struct RouteNeeds {
  const char* path;     // a POST route of routes() (routes.h)
  const char* variant;  // "" or the request field that selects this row ("encoding_format": "sparse")
  std::vector<Capability> any_of;
};

// Every POST route a model serves, one row per path and variant.
const std::vector<RouteNeeds>& route_needs();

// The row of `path` (`sparse`: its "encoding_format": "sparse" variant, where there is one).
const RouteNeeds* find_route_needs(std::string_view path, bool sparse = false);

// "" when a model of `kind` serves `path`; else the message of the 400
// (kind_refusal, with `who` naming the model).
std::string route_kind_error(std::string_view path, ModelKind kind, const std::string& who, bool sparse = false);

}  // namespace dlrt::embed
