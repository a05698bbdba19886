// workers.hpp — running a share of a study's plan in several processes of this same program.
//
// The depth study's runs are small: a step of a d_model 32 block is a few hundred small ops,
// and a second thread in the same process gains only 10–20%. Two processes of one thread each
// use two cores about twice as well. So, with --jobs N, the parent splits its share of the
// plan (plan.hpp) into N shares of about equal cost (longest task first, to the least loaded
// share), writes each share's task indices to a file, starts N copies of itself with
// `--worker i --worker-file F --threads 1` and the rest of its command line, and waits. Each
// worker builds the same plan and runs the tasks its file lists, recording each run as it
// ends (records.hpp); the parent then reads the records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "plan.hpp"

namespace depth_study {

// The task indices of each of `jobs` shares, each share's cost about total / jobs: the
// longest-processing-time rule (each task, the costliest first, goes to the least loaded
// share). Deterministic. Each share is in increasing index order.
std::vector<std::vector<std::size_t>> partition(const std::vector<double>& costs, std::int64_t jobs);

// Starts one worker per share (this executable, /proc/self/exe, with s.argv and the worker
// options) and waits for all; their share files go into --out/workers_rank<rank>/. Throws ValueError naming a worker that failed, with its exit
// status; study::Interrupted when they were stopped by Ctrl-C.
void run_workers(const Settings& s, const std::vector<std::vector<std::size_t>>& shares, const std::vector<Task>& tasks,
                 int rank);

// A worker's share, from the file its parent wrote. Throws ValueError on a file it cannot read.
std::vector<std::size_t> read_share(const std::string& path, std::size_t tasks);

// Adds the records of `from` to `into`, then puts every list in the plan's order (task index).
void merge_into(Results& into, Results&& from);

}  // namespace depth_study
