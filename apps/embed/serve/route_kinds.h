// What each model route needs of the model a request names (a capability,
// models/kind.h), one row per route and variant, read from the route table's
// capability column (routes.h), by which the routes refuse a model with one
// 400 naming its kind: the route x kind test is generated from it.
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

}  // namespace dlrt::embed
