// Session.precision_choice() and Embedder.precision_choice(): what
// cpu_precision "auto" measured and chose (dlrt/precision_choice.h) as a
// plain dict, with the fields `dlrt inspect --json` prints under "cpu_precision".
#include <cmath>

#include "bindings.h"
#include "dlrt/precision_choice.h"

namespace dlrt::python {

nb::dict precision_choice_dict(const PrecisionChoice& c) {
  nb::dict d;
  d["chosen"] = c.chosen;
  d["automatic"] = c.automatic;
  if (!c.automatic) return d;
  d["reason"] = c.reason;
  d["canary"] = c.canary;
  d["canary_sets"] = c.canary_sets;
  d["rounds"] = c.rounds;
  nb::dict bound;
  bound["min_cosine"] = c.bound.min_cosine;
  bound["max_rel_error"] = c.bound.max_rel_error;
  bound["speed_margin"] = c.bound.speed_margin;
  d["bound"] = bound;
  nb::list trials;
  for (const PrecisionTrial& t : c.trials) {
    nb::dict e;
    e["precision"] = t.precision;
    e["ran"] = t.ran;
    e["verdict"] = t.verdict;
    if (t.ran) {
      e["median_ms"] = t.median_ms;
      e["min_cosine"] = t.min_cosine;
      e["max_rel_error"] = t.max_rel_error < 1e300 ? nb::cast(t.max_rel_error) : nb::cast(INFINITY);
      if (t.precision != "f32") e["within_bound"] = t.within_bound, e["faster"] = t.faster;
    }
    trials.append(e);
  }
  d["trials"] = trials;
  return d;
}

}  // namespace dlrt::python
