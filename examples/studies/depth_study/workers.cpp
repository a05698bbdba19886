// workers.cpp — the shares of a plan, and the worker processes that run them.
#include "workers.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <tapegrad/io/file.hpp>

#include "common/study.hpp"

extern char** environ;

namespace depth_study {

std::vector<std::vector<std::size_t>> partition(const std::vector<double>& costs, std::int64_t jobs) {
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(1, jobs));
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<std::vector<std::size_t>> shares(n);
  std::vector<double> load(n, 0.0);
  for (std::size_t i : order) {
    const std::size_t least = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    shares[least].push_back(i);
    load[least] += costs[i];
  }
  for (auto& share : shares) std::sort(share.begin(), share.end());
  return shares;
}

void merge_into(Results& into, Results&& from) {
  auto append = [](auto& to, auto& more) {
    for (auto& x : more) to.push_back(std::move(x));
    std::stable_sort(to.begin(), to.end(), [](const auto& a, const auto& b) { return a.task < b.task; });
  };
  append(into.profile, from.profile);
  append(into.trained, from.trained);
  append(into.translate, from.translate);
}

// ---------------------------------------------------------------- the processes

std::vector<std::size_t> read_share(const std::string& path, std::size_t tasks) {
  std::ifstream in(path);
  if (!in) throw tapegrad::ValueError("depth_study: no share of the plan at " + path);
  std::vector<std::size_t> share;
  for (std::size_t i = 0; in >> i;) {
    if (i >= tasks) throw tapegrad::ValueError("depth_study: " + path + " names task " + std::to_string(i) + " of " + std::to_string(tasks));
    share.push_back(i);
  }
  return share;
}

void run_workers(const Settings& s, const std::vector<std::vector<std::size_t>>& shares, const std::vector<Task>& tasks,
                 int rank) {
  // One folder per rank: the ranks of one machine share --out.
  const std::filesystem::path dir = std::filesystem::path(s.out) / ("workers_rank" + std::to_string(rank));
  std::filesystem::create_directories(dir);
  std::vector<pid_t> pids;
  for (std::size_t w = 0; w < shares.size(); ++w) {
    double work = 0;
    std::string list;
    for (std::size_t i : shares[w]) work += tasks[i].cost, list += std::to_string(i) + "\n";
    const std::string file = (dir / ("share_" + std::to_string(w) + ".txt")).string();
    tapegrad::io::write_file_atomic(file, list);
    std::vector<std::string> args = s.argv;
    args.insert(args.end(), {"--jobs", std::to_string(s.jobs), "--worker", std::to_string(w), "--worker-file", file,
                             "--threads", "1"});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) != 0)
      throw tapegrad::ValueError("depth_study: could not start worker " + std::to_string(w));
    std::printf("worker %zu (pid %d): %zu tasks, %.0f block-steps\n", w, static_cast<int>(pid), shares[w].size(), work);
    pids.push_back(pid);
  }
  std::fflush(stdout);
  std::string failed;
  bool interrupted = false;
  for (std::size_t w = 0; w < pids.size(); ++w) {
    int status = 0;
    while (waitpid(pids[w], &status, 0) < 0 && errno == EINTR) {
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code == 130 || (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT)) interrupted = true;
    else if (code != 0 && failed.empty()) failed = "worker " + std::to_string(w) + " exited with status " + std::to_string(code);
  }
  if (interrupted)
    throw study::Interrupted((s.stop_after_minutes > 0 ? "stopped (--stop-after " + study::fmt(s.stop_after_minutes, 6) + ", or Ctrl-C); "
                                                       : std::string()) +
                             interrupted_message(s));
  if (!failed.empty()) throw tapegrad::ValueError("depth_study: " + failed + " (its messages are above)");
  std::filesystem::remove_all(dir);
}

}  // namespace depth_study
