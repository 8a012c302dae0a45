#include "run_inputs.h"

#include <cstdio>
#include <set>

#include "core/npy.h"
#include "dlrt/model_info.h"
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

namespace {

// The name of dim `i` of `info` when it is dynamic and named (ONNX dim_param), else "".
// "?" is not a name: exporters (paddle2onnx) write it for every unknown dim, each its
// own size, and Session's input check treats it so too.
std::string dim_name(const TensorInfo& info, size_t i) {
  if (i >= info.shape.size() || info.shape[i] >= 0 || i >= info.dim_names.size() || info.dim_names[i] == "?") return {};
  return info.dim_names[i];
}

// Named dims and where their sizes came from: --shape NAME=N, or the shape
// of an input given with --shape or --input that has the dim.
struct NamedDims {
  std::map<std::string, int64_t> size;
  std::map<std::string, std::string> source;

  // Records the dims of `shape`, the value of input `info`; an error message
  // when a named dim already has another size.
  std::string bind(const TensorInfo& info, const Shape& shape, const std::string& from) {
    for (size_t i = 0; i < shape.size(); ++i) {
      const std::string n = dim_name(info, i);
      if (n.empty()) continue;
      auto it = size.find(n);
      if (it == size.end()) {
        size[n] = shape[i];
        source[n] = from;
      } else if (it->second != shape[i]) {
        return "dim '" + n + "' is " + std::to_string(it->second) + " (" + source[n] + ") but " + from + " makes it " +
               std::to_string(shape[i]);
      }
    }
    return "";
  }
};

}  // namespace

int prepare_inputs(const Session& session, const InputFlags& flags, std::mt19937_64& rng, const std::string& command,
                   std::vector<PreparedInput>& out) {
  // Every name given must be an input of the model, or for --shape a named dim of one.
  std::string names, dim_list;
  std::set<std::string> dim_names;
  for (const auto& in : session.inputs()) {
    names += (names.empty() ? "" : ", ") + in.name;
    for (size_t i = 0; i < in.shape.size(); ++i)
      if (const std::string n = dim_name(in, i); !n.empty() && dim_names.insert(n).second)
        dim_list += (dim_list.empty() ? "" : ", ") + n;
  }
  auto has_input = [&](const std::string& name) {
    for (const auto& in : session.inputs())
      if (in.name == name) return true;
    return false;
  };
  for (const auto& [name, file] : flags.files)
    if (!has_input(name))
      return usage_error(command, "--input " + name + ": the model has no input '" + name + "' (inputs: " + names + ")");
  NamedDims dims;
  for (const auto& [name, shape] : flags.shapes) {
    if (has_input(name)) {
      if (flags.files.count(name)) return usage_error(command, "--shape " + name + ": the input is also given with --input");
      continue;
    }
    if (!dim_names.count(name))
      return usage_error(command, "--shape " + name + ": the model has no input or named dim '" + name + "' (inputs: " +
                                      names + "; named dims: " + (dim_list.empty() ? "none" : dim_list) + ")");
    if (shape.size() != 1)
      return usage_error(command, "--shape " + name + ": '" + name + "' is a named dim: give one size, e.g. --shape " +
                                      name + "=128");
    dims.size[name] = shape[0];
    dims.source[name] = "--shape " + name;
  }

  // First the inputs given (.npy files, --shape NAME=DIMS), which fix the
  // named dims they have; then random values for the others, their dynamic
  // dims from those named dims, else 1.
  const auto& infos = session.inputs();
  std::vector<PreparedInput> prepared(infos.size());
  std::vector<bool> ready(infos.size(), false);
  for (size_t k = 0; k < infos.size(); ++k) {
    const TensorInfo& info = infos[k];
    PreparedInput& plan = prepared[k];
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
      if (std::string e = dims.bind(info, t->shape(), "--input " + info.name); !e.empty()) return usage_error(command, e);
      plan.source = it->second;
      plan.tensor = std::move(t).value();
      ready[k] = true;
    } else if (auto sit = flags.shapes.find(info.name); sit != flags.shapes.end()) {
      const Shape& shape = sit->second;
      if (!info.shape.empty()) {
        if (shape.size() != info.shape.size())
          return usage_error(command, "--shape " + info.name + ": the input has rank " + std::to_string(info.shape.size()) +
                                          " " + declared_shape(info) + ", got " + shape_to_string(shape));
        for (size_t i = 0; i < shape.size(); ++i)
          if (info.shape[i] >= 0 && info.shape[i] != shape[i])
            return usage_error(command, "--shape " + info.name + ": dim " + std::to_string(i) + " is fixed to " +
                                            std::to_string(info.shape[i]) + " by the model " + declared_shape(info));
      }
      if (std::string e = dims.bind(info, shape, "--shape " + info.name); !e.empty()) return usage_error(command, e);
      auto t = random_tensor(info.dtype, shape, rng);
      if (!t.ok()) return command_error(command, "input '" + info.name + "': " + t.status().message(), kExitRuntimeError);
      plan.source = "random";
      plan.tensor = std::move(t).value();
      ready[k] = true;
    }
  }
  for (size_t k = 0; k < infos.size(); ++k) {
    if (ready[k]) continue;
    const TensorInfo& info = infos[k];
    Shape shape;
    for (size_t i = 0; i < info.shape.size(); ++i) {
      auto it = dims.size.find(dim_name(info, i));
      shape.push_back(info.shape[i] >= 0 ? info.shape[i] : it != dims.size.end() ? it->second : 1);
    }
    auto t = random_tensor(info.dtype, shape, rng);
    if (!t.ok()) return command_error(command, "input '" + info.name + "': " + t.status().message(), kExitRuntimeError);
    prepared[k].source = "random";
    prepared[k].tensor = std::move(t).value();
  }
  for (auto& p : prepared) out.push_back(std::move(p));
  return kExitOk;
}

std::vector<std::map<std::string, Tensor>> canary_from_input_files(const std::string& path, const InputFlags& flags) {
  if (flags.files.empty()) return {};
  auto info = read_model_info(path);
  if (!info.ok()) return {};
  std::map<std::string, Tensor> set;
  for (const ModelValueInfo& in : info->inputs) {
    auto it = flags.files.find(in.name);
    if (it == flags.files.end()) return {};
    auto t = read_npy_file(it->second);
    if (!t.ok()) return {};  // the run reports it
    set[in.name] = std::move(t).value();
  }
  return {std::move(set)};
}

int64_t batch_size_of(const Session& session, const std::vector<PreparedInput>& inputs) {
  const auto& infos = session.inputs();
  for (size_t k = 0; k < infos.size() && k < inputs.size(); ++k)
    if (!infos[k].shape.empty() && infos[k].shape[0] < 0 && inputs[k].tensor.rank() >= 1) return inputs[k].tensor.shape()[0];
  for (const auto& p : inputs)
    if (p.tensor.rank() >= 1) return p.tensor.shape()[0];
  return 1;
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
    if (!p.vector_isa.empty()) j.back()["vector_isa"] = p.vector_isa;
  }
  return j;
}

std::string device_label(const PartitionReport& p) {
  return p.vector_isa.empty() ? p.device : p.device + ", " + p.vector_isa + " vectors";
}

}  // namespace dlrt::cli
