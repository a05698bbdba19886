// plan.hpp — running a study's plan: every run is a task with a key and a cost; the plan skips
// the runs already recorded (records.hpp), splits the rest over the mpirun ranks (ranks.hpp)
// and, on each rank, over --jobs worker processes (workers.hpp), records each run as it ends,
// and gives rank 0 every run's records in the plan's order.
//
//   parent:  run_plan(s, tasks, store, ranks, progress)  -> every record (rank 0), nothing (others)
//   worker:  run_share(s, tasks, share, store, progress) -> its runs, into the records folder
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ranks.hpp"
#include "records.hpp"
#include "stages.hpp"

namespace tapegrad::training {
class Progress;
}

namespace depth_study {

// One run of the plan: its key (records.hpp), its cost in block-steps (a step of an L-block
// model costs about L), and what runs it, adding its records to the Results it is given.
struct Task {
  std::string key;
  double cost = 0;
  std::function<void(tapegrad::training::Progress&, Results&)> run;
  // A trained run: the stages that asked for it (its record is given to each, in this order).
  std::vector<std::string> stages;
};

// The plan line: what each stage runs, the tasks, their block-steps and the processes.
void print_plan(const Settings& s, const std::vector<Task>& tasks, const Ranks& ranks);

// Which tasks this rank's records folder holds a record of that reads back (each file read and
// checked once: call it after every rank's --restart has emptied its folder, as ranks may
// share one), how many, and the cost of the others.
struct Recorded {
  std::vector<bool> held;
  std::size_t runs = 0;
  double cost_left = 0;
};
Recorded recorded(const std::vector<Task>& tasks, const RecordStore& store);

// Whether a run of `cost` block-steps may start `elapsed` seconds into a sitting limited to
// `limit` seconds (0: no limit): not once the limit is reached, nor when at the slowest rate
// seen so far (seconds per block-step; 0 before the first run ends) it would end after it.
bool fits_before(double elapsed, double limit, double cost, double slowest_rate);

// Runs the tasks of `share` one after the other, saving each run's records as it ends. Under
// --stop-after it starts only the runs that fit_before the limit, and then, when it left any,
// throws study::Interrupted (the same command resumes them).
void run_share(const Settings& s, const std::vector<Task>& tasks, const std::vector<std::size_t>& share,
               const RecordStore& store, tapegrad::training::Progress& progress);

// The whole plan, as the header says, given what `recorded` found. On rank 0 returns every task's records, in the plan's
// order (each record's `task` set to its index); on the other ranks an empty Results.
// `progress` is made by the caller once the work is known: make_progress(work of this rank).
Results run_plan(const Settings& s, const std::vector<Task>& tasks, const Recorded& recorded, const RecordStore& store,
                 const Ranks& ranks,
                 const std::function<tapegrad::training::Progress&(double work)>& make_progress);

}  // namespace depth_study
