// anomaly.cpp — the anomaly-mode flag and the stack of module paths.
#include "anomaly.hpp"

#include <vector>

namespace tapegrad {

namespace {
thread_local bool anomaly_enabled = false;
thread_local std::vector<std::string> module_paths;
const std::string no_module;
}  // namespace

bool is_anomaly_enabled() { return anomaly_enabled; }
void set_anomaly_enabled(bool enabled) { anomaly_enabled = enabled; }

const std::string& current_module_path() { return module_paths.empty() ? no_module : module_paths.back(); }

ModuleScope::ModuleScope(const std::string& path) : active_(anomaly_enabled) {
  if (active_) module_paths.push_back(path);
}

ModuleScope::~ModuleScope() {
  if (active_) module_paths.pop_back();
}

}  // namespace tapegrad
