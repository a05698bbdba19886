// ranks.hpp — a study spread over the ranks of an mpirun job, on one machine or a cluster:
//
//   mpirun -np 4 depth_study --full       # 4 ranks, each with its own worker processes
//
// Rank 0 plans: every rank says which runs its records folder (records.hpp) already holds,
// the runs held nowhere are split into one share per rank (workers.hpp's partition), each
// rank runs its share (in --jobs worker processes of its own), and then sends rank 0 the
// records rank 0 lacks. Rank 0 alone writes the report. A rank's records stay in its own
// --out/records too, so a job stopped half-way and started again redoes only what no rank
// had finished, with or without a file system the ranks share.
//
// Without mpirun, or in a build without MPI (tapegrad::distributed), this is a world of one
// and every call is a copy; a build without MPI started by mpirun as one of several refuses
// to run, rather than run the whole study N times into one folder.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace depth_study {

// The ranks of this job on this machine, from mpirun's environment (1 without mpirun): they
// share its cores, so each starts cores / this many worker processes.
unsigned ranks_on_this_machine();

class Ranks {
 public:
  // Joins the mpirun job, if this process was started as one of several.
  Ranks();
  // A world of one that never joins a job: what a worker process of a rank uses.
  static const Ranks& one();
  ~Ranks();
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  int rank() const { return rank_; }
  int world() const { return world_; }
  int local_size() const { return local_size_; }  // ranks on this machine (they share its cores)
  bool lead() const { return rank_ == 0; }

  // Waits until every rank has called it.
  void barrier() const;
  // For each run, the lowest rank whose records hold it, from each rank's held[]; world()
  // where no rank holds it. The same on every rank.
  std::vector<int> holders(const std::vector<bool>& held) const;
  // Every rank but 0 sends its (key, bytes) pairs; rank 0 receives them all, rank by rank, and
  // passes each to keep(). Rank 0's own `mine` is ignored.
  void gather(const std::vector<std::pair<std::string, std::string>>& mine,
              const std::function<void(const std::string& key, const std::string& bytes)>& keep) const;
  // Ends every rank of the job (after an error on one: the others would wait forever).
  [[noreturn]] void abort() const;

 private:
  struct Solo {};
  explicit Ranks(Solo) {}
  int rank_ = 0, world_ = 1, local_size_ = 1;
  std::shared_ptr<void> group_;  // the distributed::ProcessGroup, when there is one
};

}  // namespace depth_study
