#include "embed/models/precision_json.h"

#include <cmath>

namespace dlrt::embed {

nlohmann::json precision_choice_json(const PrecisionChoice& c) {
  nlohmann::json j = {{"chosen", c.chosen}, {"automatic", c.automatic}};
  if (!c.automatic) return j;
  j["reason"] = c.reason;
  j["canary"] = c.canary;
  j["canary_sets"] = c.canary_sets;
  j["rounds"] = c.rounds;
  j["bound"] = {{"min_cosine", c.bound.min_cosine},
                {"max_rel_error", c.bound.max_rel_error},
                {"speed_margin", c.bound.speed_margin}};
  nlohmann::json trials = nlohmann::json::array();
  for (const PrecisionTrial& t : c.trials) {
    nlohmann::json e = {{"precision", t.precision}, {"ran", t.ran}, {"verdict", t.verdict}};
    if (t.ran) {
      e["median_ms"] = t.median_ms;
      e["min_cosine"] = t.min_cosine;
      // An error too large to write as a number (a zero row made non-zero) is null.
      e["max_rel_error"] = std::isfinite(t.max_rel_error) && t.max_rel_error < 1e300 ? nlohmann::json(t.max_rel_error)
                                                                                       : nlohmann::json(nullptr);
      if (t.precision != "f32") e["within_bound"] = t.within_bound, e["faster"] = t.faster;
    }
    trials.push_back(std::move(e));
  }
  j["trials"] = std::move(trials);
  return j;
}

}  // namespace dlrt::embed
