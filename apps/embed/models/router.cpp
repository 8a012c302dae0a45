// sentence-transformers' Router (router.h): router_config.json read into routes.
#include "embed/models/router.h"

#include <nlohmann/json.hpp>

#include "embed/tokenizer/json_util.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// One element of a route_mappings key as Python's repr writes it: None, a
// quoted string, or a tuple of them (a modality of several inputs, kept as
// "(...)": a text never has it). `at` moves past it; false when it is none of these.
bool parse_element(const std::string& s, size_t& at, std::string& out) {
  while (at < s.size() && s[at] == ' ') ++at;
  if (s.compare(at, 4, "None") == 0) {
    at += 4;
    out.clear();
    return true;
  }
  if (at < s.size() && (s[at] == '\'' || s[at] == '"')) {
    const char quote = s[at];
    const size_t end = s.find(quote, at + 1);
    if (end == std::string::npos) return false;
    out = s.substr(at + 1, end - at - 1);
    at = end + 1;
    return true;
  }
  if (at < s.size() && s[at] == '(') {
    const size_t end = s.find(')', at);
    if (end == std::string::npos) return false;
    out = s.substr(at, end - at + 1);
    at = end + 1;
    return true;
  }
  return false;
}

// "('query', None)" -> (task "query", modality "").
bool parse_key(const std::string& key, std::string& task, std::string& modality) {
  size_t at = key.find('(');
  if (at == std::string::npos) return false;
  ++at;
  if (!parse_element(key, at, task)) return false;
  while (at < key.size() && key[at] == ' ') ++at;
  if (at >= key.size() || key[at] != ',') return false;
  ++at;
  if (!parse_element(key, at, modality)) return false;
  while (at < key.size() && key[at] == ' ') ++at;
  return at < key.size() && key[at] == ')';
}

std::optional<size_t> route_named(const RouterSpec& spec, const std::string& name) {
  for (size_t i = 0; i < spec.routes.size(); ++i)
    if (spec.routes[i].name == name) return i;
  return std::nullopt;
}

Status read_parameters(const json& params, RouterSpec& spec) {
  const std::string where = spec.config.string();
  if (!params.is_null() && !params.is_object()) return InvalidModel(where + ": \"parameters\" must be an object");
  const json p = params.is_object() ? params : json::object();
  if (auto d = p.find("default_route"); d != p.end() && !d->is_null()) {
    if (!d->is_string()) return InvalidModel(where + ": \"default_route\" must be a route name or null");
    spec.default_route = route_named(spec, d->get<std::string>());
    if (!spec.default_route)
      return InvalidModel(where + ": default_route \"" + d->get<std::string>() + "\" is not one of its routes");
  } else if (jsonu::get_bool(p, "allow_empty_key", true)) {
    spec.default_route = 0;  // the library's: the first route
  }
  auto m = p.find("route_mappings");
  if (m == p.end() || m->is_null()) return Status::Ok();
  if (!m->is_object()) return InvalidModel(where + ": \"route_mappings\" must map \"(task, modality)\" to routes");
  for (const auto& [key, value] : m->items()) {
    RouterSpec::Mapping mapping;
    if (!parse_key(key, mapping.task, mapping.modality))
      return InvalidModel(where + ": route_mappings key \"" + key + "\" is not a (task, modality) pair");
    std::optional<size_t> route = value.is_string() ? route_named(spec, value.get<std::string>()) : std::nullopt;
    if (!route) return InvalidModel(where + ": route_mappings \"" + key + "\" names no route of the Router");
    mapping.route = *route;
    spec.mappings.push_back(std::move(mapping));
  }
  return Status::Ok();
}

}  // namespace

Result<size_t> RouterSpec::resolve(std::optional<bool> is_query) const {
  const std::string task = !is_query ? "" : *is_query ? "query" : "document";
  // The library's order: (task, modality), (task, None), (None, modality), (None, None).
  const std::pair<std::string, std::string> order[] = {{task, "text"}, {task, ""}, {"", "text"}, {"", ""}};
  for (const auto& [t, modality] : order)
    for (const Mapping& m : mappings)
      if (m.task == t && m.modality == modality) return m.route;
  if (!task.empty())
    if (std::optional<size_t> r = route_named(*this, task)) return *r;
  if (std::optional<size_t> r = route_named(*this, "text")) return *r;
  std::string names;
  for (const Route& r : routes) names += (names.empty() ? "" : ", ") + r.name;
  if (!task.empty())
    return InvalidArgument("the model's Router has no route for task \"" + task + "\"; its routes: " + names);
  if (default_route) return *default_route;
  return InvalidArgument(
      "the model's Router has no default route: ask for its query or document route "
      "(is_query, encode_query / encode_document, dlrt embed --query / --document); its routes: " +
      names);
}

Result<std::optional<RouterSpec>> read_router(const fs::path& dir) {
  DLRT_ASSIGN_OR_RETURN(std::vector<Module> top, read_modules(dir));
  if (top.empty() || top[0].type != ModuleType::kRouter) return std::optional<RouterSpec>();
  RouterSpec spec;
  const fs::path router_dir = top[0].dir;
  spec.config = router_dir / "router_config.json";
  const std::string where = spec.config.string();
  DLRT_ASSIGN_OR_RETURN(json config, jsonu::read_optional_json(spec.config));
  if (config.is_null()) {  // the library's older name for it
    DLRT_ASSIGN_OR_RETURN(config, jsonu::read_optional_json(router_dir / "config.json"));
    if (config.is_object()) spec.config = router_dir / "config.json";
  }
  if (!config.is_object()) return InvalidModel(where + ": missing or not a JSON object (a Router's routes)");
  const json& types = config.contains("types") ? config["types"] : json();
  const json& structure = config.contains("structure") ? config["structure"] : json();
  if (!types.is_object() || !structure.is_object() || structure.empty())
    return InvalidModel(where + ": expected \"types\" (module -> type) and \"structure\" (route -> modules)");
  for (const auto& [name, ids] : structure.items()) {
    RouterSpec::Route route{name, {}};
    if (!ids.is_array() || ids.empty()) return InvalidModel(where + ": route \"" + name + "\" lists no modules");
    for (const json& id : ids) {
      if (!id.is_string() || !types.contains(id.get<std::string>()) || !types[id.get<std::string>()].is_string())
        return InvalidModel(where + ": route \"" + name + "\" names a module that \"types\" does not type");
      const std::string rel = id.get<std::string>();
      DLRT_ASSIGN_OR_RETURN(Module m, read_module(router_dir, types[rel].get<std::string>(), rel,
                                                  where + ": route \"" + name + "\" module \"" + rel + "\""));
      if (m.type == ModuleType::kRouter) return Unsupported(where + ": a Router inside a Router is not supported");
      route.modules.push_back(std::move(m));
    }
    route.modules.insert(route.modules.end(), top.begin() + 1, top.end());
    DLRT_RETURN_IF_ERROR(check_module_order(where + " (route \"" + name + "\")", route.modules));
    spec.routes.push_back(std::move(route));
  }
  DLRT_RETURN_IF_ERROR(read_parameters(config.contains("parameters") ? config["parameters"] : json(), spec));
  return std::optional<RouterSpec>(std::move(spec));
}

}  // namespace dlrt::embed
