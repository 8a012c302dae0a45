// What cpu_precision "auto" measured and chose (dlrt/precision_choice.h) as
// JSON: the "cpu_precision" field of dlrt serve's GET /info and of
// `dlrt inspect --json`.
#pragma once

#include <nlohmann/json.hpp>

#include "dlrt/precision_choice.h"

namespace dlrt::embed {

// {"chosen", "automatic", and for "auto": "reason", "canary", "canary_sets",
// "rounds", "bound": {"min_cosine", "max_rel_error", "speed_margin"},
// "trials": [{"precision", "ran", "median_ms", "min_cosine", "max_rel_error",
// "within_bound", "faster", "verdict"}]}.
nlohmann::json precision_choice_json(const PrecisionChoice& choice);

}  // namespace dlrt::embed
