// The capability each model route needs, from the route table (see route_kinds.h).
#include "embed/serve/route_kinds.h"

#include <deque>

#include "embed/serve/routes.h"

namespace dlrt::embed {
const std::vector<RouteNeeds>& route_needs() {
  static std::deque<std::string> variants;  // the rows' variant texts ("encoding_format": "sparse")
  static const std::vector<RouteNeeds> rows = [] {
    std::vector<RouteNeeds> out;
    for (const Route& r : routes()) {
      if (r.needs.empty()) continue;
      out.push_back({r.path, "", r.needs});
      if (*r.variant_field) out.push_back({r.path, variants.emplace_back(r.variant()).c_str(), r.variant_needs});
    }
    return out;
  }();
  return rows;
}

const RouteNeeds* find_route_needs(std::string_view path, bool sparse) {
  const RouteNeeds* plain = nullptr;
  for (const RouteNeeds& r : route_needs()) {
    if (path != r.path) continue;
    if (sparse && *r.variant) return &r;
    if (!*r.variant) plain = &r;
  }
  return plain;
}

}  // namespace dlrt::embed
