// workers.cpp — the plan's shares, the worker processes, and their records on disk.
#include "workers.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <cereal/archives/binary.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

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

// ---------------------------------------------------------------- records on disk

template <class Archive>
void serialize(Archive& a, Snapshot& s) {
  a(s.loss, s.grad_norm, s.rms, s.cosine, s.emb_output_grad, s.tok_emb_grad, s.total_grad);
}
template <class Archive>
void serialize(Archive& a, Setup& s) {
  a(s.init, s.tied_head, s.warmup);
}
template <class Archive>
void serialize(Archive& a, TrainResult& r) {
  a(r.loss, r.lr, r.status, r.initial_loss, r.final_loss, r.plateau, r.val_loss, r.grad_norm, r.norm_grad_norm, r.seconds,
    r.step_seconds, r.interrupted);
}
template <class Archive>
void serialize(Archive& a, TranslateRecord& r) {
  a(r.placement, r.layers, r.seed, r.diverged, r.val_loss, r.exact_match, r.token_accuracy, r.seconds, r.task);
}

namespace {

// A variant travels by its name (the records hold a pointer into the variant table).
template <class Archive>
void save_variant(Archive& a, const Variant* v) {
  a(v->name);
}
template <class Archive>
const Variant* load_variant(Archive& a) {
  std::string name;
  a(name);
  return &variant_from_name(name);
}

}  // namespace

void save_results(const std::string& path, const Results& r) {
  std::ofstream out(path, std::ios::binary);
  {
    cereal::BinaryOutputArchive a(out);
    a(static_cast<std::uint64_t>(r.profile.size()));
    for (ProfileRecord p : r.profile) {
      a(p.init), save_variant(a, p.variant), a(p.depth, p.seed, p.at_init, p.task);
    }
    a(static_cast<std::uint64_t>(r.trained.size()));
    for (TrainedRecord t : r.trained) {
      a(t.stage), save_variant(a, t.variant);
      a(t.depth, t.steps, t.lr, t.setup, t.seed, t.train, t.outcome, t.measured_after, t.after, t.skip_losses, t.measure_seconds,
        t.task);
    }
    a(r.translate);
  }
  if (!out.flush()) throw tapegrad::ValueError("depth_study: could not write the worker's records to " + path);
}

Results load_results(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw tapegrad::ValueError("depth_study: no records from a worker at " + path);
  Results r;
  cereal::BinaryInputArchive a(in);
  std::uint64_t n = 0;
  a(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    ProfileRecord p;
    a(p.init);
    p.variant = load_variant(a);
    a(p.depth, p.seed, p.at_init, p.task);
    r.profile.push_back(std::move(p));
  }
  a(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    TrainedRecord t;
    a(t.stage);
    t.variant = load_variant(a);
    a(t.depth, t.steps, t.lr, t.setup, t.seed, t.train, t.outcome, t.measured_after, t.after, t.skip_losses, t.measure_seconds,
        t.task);
    r.trained.push_back(std::move(t));
  }
  a(r.translate);
  return r;
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

Results run_workers(const Settings& s, const std::vector<std::vector<std::size_t>>& shares, const std::vector<double>& costs) {
  const std::filesystem::path dir = std::filesystem::path(s.out) / "workers";
  std::filesystem::create_directories(dir);
  std::vector<pid_t> pids;
  std::vector<std::string> files;
  for (std::size_t w = 0; w < shares.size(); ++w) {
    double work = 0;
    for (std::size_t i : shares[w]) work += costs[i];
    files.push_back((dir / ("worker_" + std::to_string(w) + ".bin")).string());
    std::filesystem::remove(files.back());
    std::vector<std::string> args = s.argv;
    args.insert(args.end(), {"--jobs", std::to_string(s.jobs), "--worker", std::to_string(w), "--worker-file", files.back(),
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
  if (interrupted) throw study::Interrupted("interrupted: nothing written (files of earlier runs in " + s.out + " are untouched)");
  if (!failed.empty()) throw tapegrad::ValueError("depth_study: " + failed + " (its messages are above)");
  Results all;
  for (const std::string& f : files) merge_into(all, load_results(f));
  std::filesystem::remove_all(dir);
  return all;
}

}  // namespace depth_study
