// plan.cpp — what runs where, and every run's records back on rank 0 (plan.hpp).
#include "plan.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common/study.hpp"
#include "workers.hpp"

namespace depth_study {

using namespace tapegrad;

bool fits_before(double elapsed, double limit, double cost, double slowest_rate) {
  if (limit <= 0) return true;
  return elapsed < limit && elapsed + cost * slowest_rate <= limit;
}

void run_share(const Settings& s, const std::vector<Task>& tasks, const std::vector<std::size_t>& share,
               const RecordStore& store, training::Progress& progress) {
  // A session that ends at a set time kills what still runs, and a killed run is lost: under
  // --stop-after the share skips the runs that would not end in time (a later, cheaper one may
  // still fit) rather than start one that would be cut off.
  const auto start = std::chrono::steady_clock::now();
  const auto seconds_since = [](auto t) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count(); };
  const double limit = 60.0 * s.stop_after_minutes;
  double slowest_rate = 0;  // seconds per block-step
  std::size_t left = 0;
  for (std::size_t i : share) {
    if (!fits_before(seconds_since(start), limit, tasks[i].cost, slowest_rate)) {
      ++left;
      continue;
    }
    const auto run_start = std::chrono::steady_clock::now();
    Results one;
    tasks[i].run(progress, one);
    store.save(tasks[i].key, one);
    slowest_rate = std::max(slowest_rate, seconds_since(run_start) / std::max(tasks[i].cost, 1.0));
  }
  if (left > 0)
    throw study::Interrupted("stopped by --stop-after " + study::fmt(s.stop_after_minutes, 6) + ": this share recorded " +
                             std::to_string(share.size() - left) + " of its " + std::to_string(share.size()) +
                             " runs and leaves " + std::to_string(left) + " for the next sitting; " + interrupted_message(s));
}

namespace {

// The costs of the tasks at these indices.
std::vector<double> costs_of(const std::vector<Task>& tasks, const std::vector<std::size_t>& indices) {
  std::vector<double> costs;
  for (std::size_t i : indices) costs.push_back(tasks[i].cost);
  return costs;
}

// partition() of the tasks at `indices`, as indices into tasks.
std::vector<std::vector<std::size_t>> shares_of(const std::vector<Task>& tasks, const std::vector<std::size_t>& indices,
                                                std::int64_t n) {
  auto shares = partition(costs_of(tasks, indices), n);
  for (auto& share : shares)
    for (std::size_t& j : share) j = indices[j];
  return shares;
}

}  // namespace

void print_plan(const Settings& s, const std::vector<Task>& tasks, const Ranks& ranks) {
  double total_cost = 0;
  for (const Task& t : tasks) total_cost += t.cost;
  std::printf("plan: %zu seed(s); profile %zu x %zu depths at init; grid %zu placements x %zu depths x %zu lrs (+%zu x "
              "depths %s); lr sweep %zu x %zu; setups %zu x %zu; budget %zu x %zu fractions; translate %zu x %zu; %lld steps "
              "per LM run; %zu tasks, %.3g block-steps, in %lld process(es)%s\n",
              s.seeds.size(), s.profile_placements.size(), s.profile_depths.size(), s.placements.size(), s.depths.size(),
              s.lrs.size(), s.deep_placements.size(), study::comma_list(s.deep_depths).c_str(), s.lr_placements.size(),
              s.lr_sweep.size(), s.setup_placements.size(), s.setups.size(), s.budget_placements.size(),
              s.budget_fractions.size(), s.translate_placements.size(), s.translate_layers.size(),
              static_cast<long long>(s.train.steps), tasks.size(), total_cost, static_cast<long long>(s.jobs),
              ranks.world() > 1 ? (" per rank, " + std::to_string(ranks.world()) + " ranks").c_str() : "");
  std::fflush(stdout);
}

Recorded recorded(const std::vector<Task>& tasks, const RecordStore& store) {
  Recorded r;
  r.held.resize(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    r.held[i] = store.has(tasks[i].key);
    if (r.held[i]) ++r.runs;
    else r.cost_left += tasks[i].cost;
  }
  return r;
}

Results run_plan(const Settings& s, const std::vector<Task>& tasks, const Recorded& recorded, const RecordStore& store,
                 const Ranks& ranks, const std::function<training::Progress&(double work)>& make_progress) {
  // ---- what is left: the runs no rank holds a record of
  const std::vector<int> holder = ranks.holders(recorded.held);
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (holder[i] == ranks.world()) todo.push_back(i);
  if (ranks.lead() && todo.size() < tasks.size())
    std::printf("resuming: %zu of the %zu runs are already recorded (%s), %zu to run\n", tasks.size() - todo.size(),
                tasks.size(), store.dir().c_str(), todo.size());

  // ---- this rank's share, run here or in worker processes
  const std::vector<std::size_t> mine = shares_of(tasks, todo, ranks.world()).at(static_cast<std::size_t>(ranks.rank()));
  double work = 0;
  for (double c : costs_of(tasks, mine)) work += c;
  if (ranks.world() > 1)
    std::printf("rank %d of %d: %zu runs, %.0f block-steps\n", ranks.rank(), ranks.world(), mine.size(), work);
  std::fflush(stdout);
  const bool in_workers = s.jobs > 1 && mine.size() > 1;
  training::Progress& progress = make_progress(in_workers ? 0.0 : work);  // the workers show their own
  if (in_workers) run_workers(s, shares_of(tasks, mine, s.jobs), tasks, ranks.rank());
  else run_share(s, tasks, mine, store, progress);

  // ---- rank 0 gets what it lacks: this rank's share and the runs it held first
  if (!ranks.lead()) {
    std::vector<std::pair<std::string, std::string>> send;
    std::vector<bool> sent(tasks.size(), false);
    for (std::size_t i : mine) sent[i] = true;
    for (std::size_t i = 0; i < tasks.size(); ++i)
      if (sent[i] || holder[i] == ranks.rank())
        if (auto one = store.load(tasks[i].key)) send.emplace_back(tasks[i].key, to_bytes(*one));
    ranks.gather(send, {});
    return {};
  }
  ranks.gather({}, [&](const std::string& key, const std::string& bytes) { store.save(key, from_bytes(bytes)); });

  // ---- every run's records, in the plan's order
  Results all;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    std::optional<Results> one = store.load(tasks[i].key);
    if (!one) throw ValueError("depth_study: the run '" + tasks[i].key + "' left no record in " + store.dir());
    for (auto& r : one->profile) r.task = i;
    // A trained run is recorded once, for every stage that asked for it.
    std::vector<TrainedRecord> trained;
    for (TrainedRecord& r : one->trained)
      for (const std::string& stage : tasks[i].stages) {
        trained.push_back(r);
        trained.back().stage = stage, trained.back().task = i;
      }
    one->trained = std::move(trained);
    for (auto& r : one->translate) r.task = i;
    merge_into(all, std::move(*one));
  }
  return all;
}

}  // namespace depth_study
