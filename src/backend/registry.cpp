#include "backend/registry.h"

#include "core/logging.h"

namespace dlrt::backend {

std::string CompileOptions::to_string() const {
  std::string s;
  for (const auto& [k, v] : values) s += (s.empty() ? "" : ";") + k + "=" + v;
  return s;
}

Status BackendRegistry::add(std::shared_ptr<Backend> backend) {
  if (!backend) return InvalidArgument("cannot register a null backend");
  std::lock_guard<std::mutex> lk(mu_);
  for (const auto& b : backends_)
    if (b->name() == backend->name()) return InvalidArgument("a backend named '" + backend->name() + "' is already registered");
  backends_.push_back(std::move(backend));
  return Status::Ok();
}

std::shared_ptr<Backend> BackendRegistry::find(const std::string& name) const {
  std::lock_guard<std::mutex> lk(mu_);
  for (const auto& b : backends_)
    if (b->name() == name) return b;
  return nullptr;
}

std::vector<std::shared_ptr<Backend>> BackendRegistry::all() const {
  std::lock_guard<std::mutex> lk(mu_);
  return backends_;
}

namespace {

struct Global {
  BackendRegistry registry;
  Status status;
};

Global& global_registry() {
  static Global* g = [] {
    auto* r = new Global();
    r->status = register_builtin_backends(r->registry).with_context("registering backends");
    if (!r->status.ok()) DLRT_LOG(kError, r->status.to_string());
    return r;
  }();
  return *g;
}

}  // namespace

BackendRegistry& BackendRegistry::global() { return global_registry().registry; }

Status BackendRegistry::global_status() { return global_registry().status; }

}  // namespace dlrt::backend
