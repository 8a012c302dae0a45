#include "run_inputs.h"

#include <cstdio>

#include "core/npy.h"
#include "tensor_format.h"

namespace dlrt::cli {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string declared_shape(const TensorInfo& info) {
  std::string s = "[";
  for (size_t i = 0; i < info.shape.size(); ++i) {
    if (i) s += ", ";
    if (info.shape[i] >= 0) s += std::to_string(info.shape[i]);
    else if (i < info.dim_names.size() && !info.dim_names[i].empty()) s += info.dim_names[i];
    else s += "?";
  }
  return s + "]";
}

int command_error(const std::string& command, const std::string& message, int code) {
  std::fprintf(stderr, "dlrt %s: error: %s\n", command.c_str(), message.c_str());
  return code;
}

int parse_input_flags(const Args& args, const std::string& command, InputFlags& out) {
  for (const auto& a : args.all("input")) {
    std::string name, file;
    Status s = split_assignment(a, "input", name, file);
    if (!s.ok()) return usage_error(command, s.message());
    if (out.files.count(name)) return usage_error(command, "input '" + name + "' given twice");
    out.files[name] = file;
  }
  for (const auto& a : args.all("shape")) {
    std::string name, dims;
    Status s = split_assignment(a, "shape", name, dims);
    if (!s.ok()) return usage_error(command, s.message());
    auto shape = parse_shape(dims);
    if (!shape.ok()) return usage_error(command, "--shape " + name + ": " + shape.status().message());
    out.shapes[name] = *shape;
  }
  return kExitOk;
}

int prepare_inputs(const Session& session, const InputFlags& flags, std::mt19937_64& rng, const std::string& command,
                   std::vector<PreparedInput>& out) {
  // Every name given must be an input of the model.
  std::string names;
  for (const auto& in : session.inputs()) names += (names.empty() ? "" : ", ") + in.name;
  auto has_input = [&](const std::string& name) {
    for (const auto& in : session.inputs())
      if (in.name == name) return true;
    return false;
  };
  for (const auto& [name, file] : flags.files)
    if (!has_input(name))
      return usage_error(command, "--input " + name + ": the model has no input '" + name + "' (inputs: " + names + ")");
  for (const auto& [name, shape] : flags.shapes) {
    if (!has_input(name))
      return usage_error(command, "--shape " + name + ": the model has no input '" + name + "' (inputs: " + names + ")");
    if (flags.files.count(name)) return usage_error(command, "--shape " + name + ": the input is also given with --input");
  }

  // From .npy files, else random.
  for (const auto& info : session.inputs()) {
    PreparedInput plan;
    plan.name = info.name;
    if (!info.is_tensor)
      return command_error(command,
                           "input '" + info.name + "' is a " + info.type + " value; dlrt " + command +
                               " feeds tensors only (Session::run_values and Python's Session.run take the others)",
                           kExitRuntimeError);
    if (auto it = flags.files.find(info.name); it != flags.files.end()) {
      auto t = read_npy_file(it->second);
      if (!t.ok()) return command_error(command, "input '" + info.name + "': " + t.status().message(), kExitRuntimeError);
      if (info.dtype != DType::kUndefined && t->dtype() != info.dtype)
        return command_error(command,
                             "input '" + info.name + "' expects " + dtype_name(info.dtype) + " " + declared_shape(info) +
                                 ", but " + it->second + " holds " + dtype_name(t->dtype()) + " " +
                                 shape_to_string(t->shape()) + " (convert it with numpy: arr.astype('" +
                                 dtype_name(info.dtype) + "'))",
                             kExitRuntimeError);
      if (!info.shape.empty() && t->rank() != info.shape.size())
        return command_error(command,
                             "input '" + info.name + "' expects rank " + std::to_string(info.shape.size()) + " " +
                                 declared_shape(info) + ", but " + it->second + " has shape " + shape_to_string(t->shape()),
                             kExitRuntimeError);
      plan.source = it->second;
      plan.tensor = std::move(t).value();
    } else {
      Shape shape;
      if (auto sit = flags.shapes.find(info.name); sit != flags.shapes.end()) {
        shape = sit->second;
        if (!info.shape.empty()) {
          if (shape.size() != info.shape.size())
            return usage_error(command, "--shape " + info.name + ": the input has rank " + std::to_string(info.shape.size()) +
                                            " " + declared_shape(info) + ", got " + shape_to_string(shape));
          for (size_t i = 0; i < shape.size(); ++i)
            if (info.shape[i] >= 0 && info.shape[i] != shape[i])
              return usage_error(command, "--shape " + info.name + ": dim " + std::to_string(i) + " is fixed to " +
                                              std::to_string(info.shape[i]) + " by the model " + declared_shape(info));
        }
      } else {
        for (int64_t d : info.shape) shape.push_back(d >= 0 ? d : 1);
      }
      auto t = random_tensor(info.dtype, shape, rng);
      if (!t.ok()) return command_error(command, "input '" + info.name + "': " + t.status().message(), kExitRuntimeError);
      plan.source = "random";
      plan.tensor = std::move(t).value();
    }
    out.push_back(std::move(plan));
  }
  return kExitOk;
}

std::map<std::string, Tensor> feeds_of(const std::vector<PreparedInput>& inputs) {
  std::map<std::string, Tensor> feeds;
  for (const auto& p : inputs) feeds[p.name] = p.tensor;
  return feeds;
}

nlohmann::json inputs_json(const std::vector<PreparedInput>& inputs) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& p : inputs)
    j.push_back({{"name", p.name}, {"dtype", dtype_name(p.tensor.dtype())}, {"shape", p.tensor.shape()}, {"source", p.source}});
  return j;
}

nlohmann::json report_json(const RunReport& report) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& p : report.partitions) {
    j.push_back({{"backend", p.backend}, {"device", p.device}, {"node_count", p.node_count}, {"degraded", p.degraded},
                 {"reason", p.reason}, {"time_ms", p.time_ms}});
    if (!p.precision.empty()) j.back()["precision"] = p.precision;
  }
  return j;
}

}  // namespace dlrt::cli
