#include "backend/registry.h"

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

}  // namespace dlrt::backend
