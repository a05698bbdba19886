// workers.hpp — running a study's plan in several processes of this same program.
//
// The depth study's runs are small (d_model 32): a step costs about 1.8 ms per block whatever
// the batch, the time of many small ops, and a second thread in the same process gains only
// 10–20%. Two processes of one thread each use two cores about twice as well. So, with
// --jobs N, the parent splits the plan into N shares of about equal cost (longest task first,
// to the least loaded share), starts N copies of itself with `--worker i --worker-file F
// --threads 1` and the rest of its command line, and waits. Each worker builds the same plan,
// runs its share and saves its records to F; the parent reads them back in the plan's order.
//
//   parent:  run_workers(s, partition(costs, 2), costs)    -> the records of every task
//   worker:  run its share; save_results(s.worker_file, res)
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "stages.hpp"

namespace tapegrad::training {
class Progress;
}

namespace depth_study {

// One run of the plan and its cost in block-steps (a step of an L-block model costs about L).
struct Task {
  double cost = 0;
  std::function<void(tapegrad::training::Progress&)> run;
};

// The task indices of each of `jobs` shares, each share's cost about total / jobs: the
// longest-processing-time rule (each task, the costliest first, goes to the least loaded
// share). Deterministic: the parent and every worker compute the same shares. Each share is in
// increasing index order.
std::vector<std::vector<std::size_t>> partition(const std::vector<double>& costs, std::int64_t jobs);

// Starts one worker per share (this executable, /proc/self/exe, with s.argv and the worker
// options), waits for all, and returns their records. Throws ValueError naming a worker that
// failed, with its exit status; study::Interrupted when they were stopped by Ctrl-C.
Results run_workers(const Settings& s, const std::vector<std::vector<std::size_t>>& shares, const std::vector<double>& costs);

// Adds the records of `from` to `into`, then puts every list in the plan's order (task index).
void merge_into(Results& into, Results&& from);

// A worker's records, in a binary file (cereal) for its parent. Only ever read by the parent
// that started the worker, from a folder it made.
void save_results(const std::string& path, const Results& r);
Results load_results(const std::string& path);

}  // namespace depth_study
