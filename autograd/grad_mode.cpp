// grad_mode.cpp — the per-thread "record ops?" flag.
#include "grad_mode.hpp"

namespace tapegrad {

namespace {
thread_local bool grad_enabled = true;
}

bool is_grad_enabled() { return grad_enabled; }
void set_grad_enabled(bool enabled) { grad_enabled = enabled; }

}  // namespace tapegrad
