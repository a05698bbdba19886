// checkpoint_policy.cpp — the stop handlers set one flag; nothing else is safe in a signal handler.
#include "checkpoint_policy.hpp"

#include <atomic>
#include <csignal>

namespace tapegrad::training {

namespace {
std::atomic<bool> requested{false};
extern "C" void on_stop_signal(int signal) {
  requested = true;
  std::signal(signal, SIG_DFL);  // the next one ends the process
}
}  // namespace

void install_stop_handler(bool also_sigterm) {
  std::signal(SIGINT, on_stop_signal);
  if (also_sigterm) std::signal(SIGTERM, on_stop_signal);
}

bool stop_requested() { return requested; }

}  // namespace tapegrad::training
