// process_group.hpp — the processes of one data-parallel job, started by mpirun: who am I
// (rank), how many are we (world size), and the few collectives training needs.
//
//   distributed::ProcessGroup group;          // MPI_Init; MPI_Finalize when it goes
//   if (group.rank() == 0) std::printf("%d processes\n", group.world_size());
//   double loss = group.mean(local_loss);     // the same value on every rank
//
// Without mpirun the program is a world of one (rank 0 of 1) and every collective is a copy.
// Collectives are blocking and every rank must call them in the same order, with the same
// sizes: a rank that skips one leaves the others waiting. That is why an error on one rank
// must end the whole job (abort()), never just that rank. A rank that dies ends the job too
// (mpirun notices and names it); one that stops answering (stopped, stuck in a loop) leaves
// the others waiting forever unless set_timeout() bounds the wait. MPI stays out of this header
// (tapegrad::distributed links it privately), so including it needs no MPI compiler flags.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "../autograd/dtype.hpp"

namespace tapegrad::distributed {

// A collective started without waiting for it (MPI_Iallreduce): the buffer must stay alive
// and untouched until ProcessGroup::wait() or a test() that returned true. MPI itself stays
// behind the pointer, out of this header.
class PendingCollective {
 public:
  bool active() const { return impl_ != nullptr; }

 private:
  friend class ProcessGroup;
  std::shared_ptr<struct PendingRequests> impl_;
};

class ProcessGroup {
 public:
  // Initializes MPI (thread level "funneled": OpenMP threads run ops, only the thread that
  // made the group calls MPI). One group per process; throws std::logic_error for a second.
  ProcessGroup();
  // Finalizes MPI. Every rank must get here: a rank that leaves early hangs the others.
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  // The processes of this job on this machine (to divide its cores among them).
  int local_size() const { return local_size_; }
  bool is_main() const { return rank_ == 0; }

  // Waits until every rank has called it.
  void barrier() const;
  // In place, on every rank: data[i] <- sum over ranks of data[i]. float32 or float64.
  void allreduce_sum(void* data, std::int64_t count, DType dtype) const;
  // allreduce_sum without waiting: returns at once, the sum arrives in place by wait(). Every
  // rank must start the same collectives in the same order (MPI matches them by order).
  PendingCollective start_allreduce_sum(void* data, std::int64_t count, DType dtype) const;
  // Lets MPI progress the collective (Open MPI moves a non-blocking collective on only inside
  // MPI calls) and says whether it has finished. A finished one needs no wait().
  bool test(PendingCollective& pending) const;
  // Waits until the collective has finished; a no-op for one already finished.
  void wait(PendingCollective& pending) const;
  // The mean over ranks of one value, the same on every rank.
  double mean(double value) const;
  // True on every rank when it is true on any rank (to agree on stopping).
  bool any(bool value) const;
  // Min and max over ranks of one value (equal iff every rank holds the same value).
  std::uint64_t min(std::uint64_t value) const;
  std::uint64_t max(std::uint64_t value) const;
  // Copies `bytes` bytes at data from rank `root` to every other rank.
  void broadcast(void* data, std::int64_t bytes, int root = 0) const;

  // Ends every process of the job with exit code `code` (MPI_Abort), from any rank, without
  // waiting for the others: what to do after an error, instead of throwing on alone.
  [[noreturn]] void abort(int code = 1) const;

  // "Open MPI v4.1.4, ..." — the library that runs the job.
  static std::string library_version();

  // --- point to point (ZeRO-1 gathers the optimizer state's shards on one rank with them) ---
  // Sends `bytes` bytes at data to rank `dest`, and receives them there: a send is matched by
  // the recv that names its source and tag, in the order they were sent (MPI never reorders
  // messages between two ranks). Blocking: a large send may wait until the receiver is there.
  void send(const void* data, std::int64_t bytes, int dest, int tag = 0) const;
  void recv(void* data, std::int64_t bytes, int source, int tag = 0) const;

  // ---- Faults: a bound on how long a collective waits for the other ranks ----
  // After `seconds` in one collective (wait() included), this rank asks the others where
  // they are, prints what it waited for and which ranks did not answer, e.g.
  //   tapegrad: rank 0: collective #57 (allreduce_sum of 23200 float32) did not finish
  //   within 5 s: rank 1 did not answer (stopped, stuck or dead)
  // and ends the job (MPI_Abort): after a lost collective MPI cannot go on. 0 (the default)
  // waits forever. Every rank must use the same value: a rank without a timeout cannot
  // answer, so it would be named. It must exceed the longest time a rank works alone between
  // two collectives (rank 0's evaluation or checkpoint save), or a slow rank counts as lost.
  void set_timeout(double seconds);
  double timeout() const { return timeout_s_; }

 private:
  int rank_ = 0, world_size_ = 1, local_size_ = 1;
  double timeout_s_ = 0;
  // The collectives' numbers and the messages about faults (MPI behind the pointer).
  std::unique_ptr<struct FaultState> faults_;
};

// True when this process was started by mpirun/mpiexec (Open MPI, or MPICH and other PMI launchers)
// as one of several: a program can refuse to run N copies of a single-process job.
bool launched_as_one_of_many();

}  // namespace tapegrad::distributed
