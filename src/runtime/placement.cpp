#include "runtime/placement.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace dlrt {

namespace {

int type_rank(DeviceType t) {
  switch (t) {
    case DeviceType::kGpu: return 0;
    case DeviceType::kNpu: return 1;
    case DeviceType::kAccelerator: return 2;
    default: return 3;
  }
}

std::string unavailable_reason(const backend::Availability& a) {
  return a.reason.empty() ? "not available" : a.reason;
}

// "opencl:0 (a cpu device: Portable Computing Language)": a device a gpu or npu
// request passed over, and why.
std::string passed_over(const backend::BackendDevice& d, DeviceType want) {
  std::string why = d.type != want ? std::string("a ") + device_type_name(d.type) + " device" : "virtual: compile only";
  for (const char* key : {"platform", "device_name", "full_name"})
    if (auto it = d.metadata.find(key); it != d.metadata.end() && !it->second.empty()) {
      why += ": " + it->second;
      break;
    }
  return d.spec() + " (" + why + ")";
}

// parse_device_spec keeps an index in canonical digits.
bool is_device_index(const std::string& device) {
  return !device.empty() && std::all_of(device.begin(), device.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

std::string indexes_only(const DeviceChoice& c) {
  return "malformed device '" + c.text + "': backend '" + c.backend + "' names its devices by index (" + c.backend +
         ":0, " + c.backend + ":1, ...)";
}

}  // namespace

Resolution resolve_devices(const DeviceSpec& spec, backend::BackendRegistry& registry,
                           const std::vector<Device>& hardware, bool for_compile) {
  Resolution res;
  std::set<std::string> taken;
  auto add = [&](const std::shared_ptr<backend::Backend>& b, const backend::BackendDevice& d) {
    if (taken.insert(d.spec()).second) res.candidates.push_back({b, d});
  };
  // Devices of every available non-CPU backend, and notes for unavailable ones.
  struct Offer {
    std::shared_ptr<backend::Backend> backend;
    backend::Availability availability;
    std::vector<backend::BackendDevice> devices;
  };
  // Only the backends the spec can use are asked (loading a vendor runtime
  // costs time and memory): none for "cpu", the named ones for backend names,
  // all of them for auto, gpu and npu.
  // `auto` on a machine whose discovery found no GPU, NPU or other
  // accelerator asks no backend either: it could only offer CPU devices,
  // which auto never picks, so the CPU runs without loading any runtime.
  const bool have_accelerator_hardware = std::any_of(
      hardware.begin(), hardware.end(), [](const Device& d) { return d.type != DeviceType::kCpu; });
  bool want_all = false;
  std::set<std::string> wanted;
  for (const auto& c : spec.choices) {
    if (c.kind == DeviceChoice::Kind::kBackend) wanted.insert(c.backend);
    else if (c.kind == DeviceChoice::Kind::kAuto) want_all = want_all || have_accelerator_hardware || for_compile;
    else if (c.kind != DeviceChoice::Kind::kCpu) want_all = true;
  }
  std::vector<Offer> offers;
  for (const auto& b : registry.all()) {
    if (b->name() == "cpu" || (!want_all && !wanted.count(b->name()))) continue;
    // A remembered failure is retried at every session create, so fixing the
    // environment (installing the runtime, setting its variable) needs no restart.
    Offer o{b, b->is_available(), {}};
    if (!o.availability.available) o.availability = b->is_available(/*refresh=*/true);
    if (o.availability.available) o.devices = b->devices(hardware);
    offers.push_back(std::move(o));
  }
  auto usable = [&](const backend::BackendDevice& d) { return for_compile || !d.is_virtual; };

  for (const auto& c : spec.choices) {
    switch (c.kind) {
      case DeviceChoice::Kind::kCpu:
        if (!c.device.empty() && !is_device_index(c.device)) {
          res.malformed.push_back(indexes_only(c));
          break;
        }
        // dlrt's CPU backend has one device, cpu:0 (all cores); any other index names nothing.
        if (!c.device.empty() && c.device != "0") {
          res.unavailable.push_back({c.text, "the cpu backend has one device, cpu:0 (it uses every core)",
                                     "use --device cpu or cpu:0 (threads: --threads)"});
          break;
        }
        res.cpu_requested = true;
        break;
      case DeviceChoice::Kind::kAuto: {
        res.cpu_requested = true;
        std::vector<std::pair<int, Candidate>> all;
        // Accelerators only: a backend's CPU device (openvino:CPU, an OpenCL
        // CPU driver) is never chosen implicitly over dlrt's own CPU backend;
        // name it (--device openvino:CPU) to use it.
        for (const auto& o : offers)
          for (const auto& d : o.devices)
            if (!d.is_virtual && d.type != DeviceType::kCpu) all.push_back({type_rank(d.type), {o.backend, d}});
        std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [r, cand] : all) add(cand.backend, cand.device);
        break;
      }
      case DeviceChoice::Kind::kGpu:
      case DeviceChoice::Kind::kNpu: {
        DeviceType want = c.kind == DeviceChoice::Kind::kGpu ? DeviceType::kGpu : DeviceType::kNpu;
        bool found = false;
        std::string why, fixes, skipped;
        for (const auto& o : offers) {
          if (!o.availability.available) {
            why += (why.empty() ? "" : "; ") + o.backend->name() + ": " + unavailable_reason(o.availability);
            if (!o.availability.fix.empty()) fixes += (fixes.empty() ? "" : "; ") + o.backend->name() + ": " + o.availability.fix;
            continue;
          }
          for (const auto& d : o.devices) {
            if (d.type == want && usable(d)) {
              add(o.backend, d);
              found = true;
            } else {
              skipped += (skipped.empty() ? "" : ", ") + passed_over(d, want);
            }
          }
        }
        if (!found) {
          std::string type = device_type_name(want);
          bool hw = std::any_of(hardware.begin(), hardware.end(), [&](const Device& d) { return d.type == want; });
          Unavailable u{c.text, "", ""};
          if (!hw) u.reason = "no " + type + " was found on this machine";
          else u.reason = "a " + type + " is present but no available backend can drive it";
          if (!skipped.empty()) u.reason += "; passed over " + skipped;
          if (!why.empty()) u.reason += " (" + why + ")";
          // Name each unavailable backend's own fix (which library, which variable), so
          // a strict-mode failure says exactly what to install.
          if (offers.empty()) u.fix = "this build has no accelerator backend";
          else if (!fixes.empty()) u.fix = fixes + "; or use --device cpu";
          else u.fix = "install a runtime for it (see `dlrt devices`), or use --device cpu";
          res.unavailable.push_back(u);
        }
        break;
      }
      case DeviceChoice::Kind::kBackend: {
        auto it = std::find_if(offers.begin(), offers.end(), [&](const Offer& o) { return o.backend->name() == c.backend; });
        if (it == offers.end()) {
          res.unknown_backends.push_back(c.backend);
          break;
        }
        if (!c.device.empty() && it->backend->devices_are_indexes() && !is_device_index(c.device)) {
          res.malformed.push_back(indexes_only(c));
          break;
        }
        if (!it->availability.available) {
          res.unavailable.push_back({c.text, unavailable_reason(it->availability), it->availability.fix});
          break;
        }
        // A bare backend name takes its devices accelerators first (GPU, NPU, others, then
        // its CPU devices), whatever order the vendor runtime lists them in: `--device opencl`
        // on a machine with PoCL and a GPU driver means the GPU.
        std::vector<const backend::BackendDevice*> matching;
        for (const auto& d : it->devices)
          if ((c.device.empty() || lower_ascii(d.name) == lower_ascii(c.device)) && usable(d)) matching.push_back(&d);
        std::stable_sort(matching.begin(), matching.end(),
                         [](const auto* a, const auto* b) { return type_rank(a->type) < type_rank(b->type); });
        for (const auto* d : matching) add(it->backend, *d);
        const bool found = !matching.empty();
        if (!found) {
          std::string names;
          for (const auto& d : it->devices) names += (names.empty() ? "" : ", ") + d.name + (d.is_virtual ? " (virtual)" : "");
          std::string what = c.device.empty() ? "no usable device" : "no device '" + c.device + "'";
          bool virt = std::any_of(it->devices.begin(), it->devices.end(),
                                  [&](const auto& d) { return d.is_virtual && lower_ascii(d.name) == lower_ascii(c.device); });
          res.unavailable.push_back(
              {c.text,
               "backend '" + c.backend + "' has " + what + (virt ? " that can execute (it is virtual: compile only)" : "") +
                   "; its devices: " + (names.empty() ? "none" : names),
               virt ? "run on a machine that has the device, or use `dlrt compile` to compile ahead of time"
                    : "pick one of its devices, e.g. --device " + c.backend + (it->devices.empty() ? "" : ":" + it->devices[0].name)});
        }
        break;
      }
    }
  }
  return res;
}

PartitionPlan plan_partitions(const ir::Graph& graph, const std::vector<Candidate>& candidates) {
  PartitionPlan plan;
  const size_t n = graph.nodes.size();
  plan.node_candidate.assign(n, -1);
  plan.cpu_reasons.assign(n, "");
  std::vector<std::vector<backend::NodeSupport>> support;
  for (const auto& c : candidates) support.push_back(c.backend->supports(graph, c.device));
  for (size_t i = 0; i < n; ++i) {
    std::string why;
    for (size_t c = 0; c < candidates.size(); ++c) {
      const auto& s = support[c];
      if (i < s.size() && s[i].supported) {
        plan.node_candidate[i] = static_cast<int>(c);
        break;
      }
      why += (why.empty() ? "" : "; ") + candidates[c].device.spec() + ": " +
             (i < s.size() && !s[i].reason.empty() ? s[i].reason : "not supported");
    }
    if (plan.node_candidate[i] < 0) plan.cpu_reasons[i] = why;
  }
  for (size_t i = 0; i < n; ++i) {
    int c = plan.node_candidate[i];
    if (plan.partitions.empty() || plan.partitions.back().candidate != c) plan.partitions.push_back({c, {}});
    plan.partitions.back().nodes.push_back(static_cast<int>(i));
  }
  return plan;
}

std::shared_ptr<ir::Graph> extract_partition(const ir::Graph& graph, const std::vector<int>& nodes) {
  auto sub = std::make_shared<ir::Graph>();
  sub->opsets = graph.opsets;
  sub->name = "partition_" + (nodes.empty() ? std::string("empty") : graph.nodes[nodes.front()].name);
  std::set<int> inside(nodes.begin(), nodes.end());
  std::set<ir::ValueId> produced;
  for (int i : nodes)
    for (ir::ValueId o : graph.nodes[i].outputs)
      if (o != ir::kNoValue) produced.insert(o);

  std::vector<ir::ValueId> map(graph.values.size(), ir::kNoValue);
  auto local = [&](ir::ValueId v) {
    if (map[v] == ir::kNoValue) {
      map[v] = sub->add_value(graph.values[v].name, graph.values[v].type);
      if (graph.values[v].constant) sub->values[map[v]].constant = graph.values[v].constant;
    }
    return map[v];
  };
  // Inputs: values read inside (explicitly or by a subgraph) but made outside.
  for (int i : nodes) {
    std::vector<ir::ValueId> reads = graph.nodes[i].inputs;
    for (ir::ValueId c : graph.implicit_inputs(graph.nodes[i])) reads.push_back(c);
    for (ir::ValueId v : reads) {
      if (v == ir::kNoValue || produced.count(v) || map[v] != ir::kNoValue) continue;
      ir::ValueId l = local(v);
      if (!graph.values[v].constant) sub->inputs.push_back(l);
    }
  }
  for (int i : nodes) {
    ir::Node n = graph.nodes[i];
    for (auto& v : n.inputs)
      if (v != ir::kNoValue) v = local(v);
    for (auto& v : n.outputs)
      if (v != ir::kNoValue) v = local(v);
    sub->nodes.push_back(std::move(n));
  }
  // Outputs: produced here and read after, or returned by the graph.
  std::set<ir::ValueId> needed(graph.outputs.begin(), graph.outputs.end());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (inside.count(static_cast<int>(i))) continue;
    for (ir::ValueId v : graph.nodes[i].inputs)
      if (v != ir::kNoValue) needed.insert(v);
    for (ir::ValueId v : graph.implicit_inputs(graph.nodes[i])) needed.insert(v);
  }
  for (ir::ValueId v : produced)
    if (needed.count(v)) sub->outputs.push_back(map[v]);
  (void)sub->topological_sort();  // already in order; fills producer_node
  return sub;
}

std::string join_unavailable(const std::vector<Unavailable>& u, bool with_fix) {
  std::string s;
  for (const auto& x : u) {
    s += (s.empty() ? "" : "; ") + x.requested + ": " + x.reason;
    if (with_fix && !x.fix.empty()) s += " (fix: " + x.fix + ")";
  }
  return s;
}

}  // namespace dlrt
