// process_group.cpp — the MPI calls behind ProcessGroup.
//
// MPI counts are int: buffers longer than INT_MAX elements go in several calls. Every
// collective is started in its non-blocking form and finished by finish() (at the end of the
// file), the one place that waits: forever, or until the deadline of set_timeout().
#include "process_group.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../autograd/errors.hpp"

namespace tapegrad::distributed {

namespace {

bool group_exists = false;

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::float32: return MPI_FLOAT;
    case DType::float64: return MPI_DOUBLE;
    default: throw DTypeError(std::string("ProcessGroup.allreduce_sum: float32 or float64, got ") + dtype_name(dtype));
  }
}

}  // namespace

// The MPI requests of one started collective (several when its buffer is over INT_MAX
// elements), and what it is ("collective #12 (allreduce_sum of 800 float32)") for messages.
struct PendingRequests {
  std::vector<MPI_Request> requests;
  std::string what;
};

// What set_timeout() needs: a communicator of its own for the "where are you?" messages (so
// they never match a collective's), the count of collectives started, and what this rank
// waits for now. The functions that use it are at the end of the file.
struct FaultState {
  MPI_Comm comm = MPI_COMM_NULL;
  std::uint64_t started = 0;  // collectives this rank has started: #1, #2, ...
  std::string waiting_for;    // the label of the collective finish() waits for; empty between
  struct Answer {             // an answer on its way; MPI reads the text until it is sent
    std::string text;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::list<Answer> answers;
};

namespace {
std::string next_label(FaultState& faults, const std::string& what);
void finish(FaultState& faults, std::vector<MPI_Request>& requests, const std::string& what, double timeout, int rank,
            int world);
void answer_questions(FaultState& faults);
}  // namespace

ProcessGroup::ProcessGroup() {
  if (group_exists) throw std::logic_error("ProcessGroup: this process already has one");
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Open MPI's non-blocking allreduce (libnbc) picks by default an algorithm that took 2.4×
    // as long as the blocking MPI_Allreduce on this project's gradient buckets (88 MB between
    // 2 ranks over shared memory: 143 against 60 ms); its ring algorithm takes 61 ms. The
    // overlapped DDP depends on it, so ask for the ring unless the user chose (Open MPI reads
    // OMPI_MCA_* variables at MPI_Init; other MPIs ignore it).
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  group_exists = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
  // The ranks that can share memory are the ones on this machine.
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
  faults_ = std::make_unique<FaultState>();
  MPI_Comm_dup(MPI_COMM_WORLD, &faults_->comm);
}

ProcessGroup::~ProcessGroup() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    MPI_Comm_free(&faults_->comm);
    MPI_Finalize();
  }
  group_exists = false;
}

void ProcessGroup::barrier() const {
  std::vector<MPI_Request> request(1);
  MPI_Ibarrier(MPI_COMM_WORLD, request.data());
  finish(*faults_, request, next_label(*faults_, "barrier"), timeout_s_, rank_, world_size_);
}

void ProcessGroup::allreduce_sum(void* data, std::int64_t count, DType dtype) const {
  PendingCollective pending = start_allreduce_sum(data, count, dtype);
  wait(pending);
}

PendingCollective ProcessGroup::start_allreduce_sum(void* data, std::int64_t count, DType dtype) const {
  const MPI_Datatype type = mpi_type(dtype);
  auto* bytes = static_cast<char*>(data);
  PendingCollective pending;
  pending.impl_ = std::make_shared<PendingRequests>();
  pending.impl_->what =
      next_label(*faults_, "allreduce_sum of " + std::to_string(count) + " " + dtype_name(dtype));
  for (std::int64_t done = 0; done < count;) {
    const int n = static_cast<int>(std::min<std::int64_t>(count - done, INT_MAX));
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, bytes + done * static_cast<std::int64_t>(size_of(dtype)), n, type, MPI_SUM,
                   MPI_COMM_WORLD, &request);
    pending.impl_->requests.push_back(request);
    done += n;
  }
  return pending;
}

bool ProcessGroup::test(PendingCollective& pending) const {
  if (timeout_s_ > 0) answer_questions(*faults_);  // this rank is alive, between collectives
  if (!pending.impl_) return true;
  int finished = 0;
  auto& requests = pending.impl_->requests;
  MPI_Testall(static_cast<int>(requests.size()), requests.data(), &finished, MPI_STATUSES_IGNORE);
  if (finished) pending.impl_.reset();
  return finished != 0;
}

void ProcessGroup::wait(PendingCollective& pending) const {
  if (!pending.impl_) return;
  finish(*faults_, pending.impl_->requests, pending.impl_->what, timeout_s_, rank_, world_size_);
  pending.impl_.reset();
}

namespace {
// One value reduced in place over the ranks, through finish().
template <typename T>
T reduce_one(T value, MPI_Datatype type, MPI_Op op, const char* name, FaultState& faults, double timeout, int rank,
             int world) {
  std::vector<MPI_Request> request(1);
  MPI_Iallreduce(MPI_IN_PLACE, &value, 1, type, op, MPI_COMM_WORLD, request.data());
  finish(faults, request, next_label(faults, name), timeout, rank, world);
  return value;
}
}  // namespace

double ProcessGroup::mean(double value) const {
  return reduce_one(value, MPI_DOUBLE, MPI_SUM, "mean", *faults_, timeout_s_, rank_, world_size_) / world_size_;
}

bool ProcessGroup::any(bool value) const {
  return reduce_one(value ? 1 : 0, MPI_INT, MPI_MAX, "any", *faults_, timeout_s_, rank_, world_size_) != 0;
}

std::uint64_t ProcessGroup::min(std::uint64_t value) const {
  return reduce_one(value, MPI_UINT64_T, MPI_MIN, "min", *faults_, timeout_s_, rank_, world_size_);
}

std::uint64_t ProcessGroup::max(std::uint64_t value) const {
  return reduce_one(value, MPI_UINT64_T, MPI_MAX, "max", *faults_, timeout_s_, rank_, world_size_);
}

void ProcessGroup::broadcast(void* data, std::int64_t bytes, int root) const {
  auto* p = static_cast<char*>(data);
  std::vector<MPI_Request> requests;
  for (std::int64_t done = 0; done < bytes;) {
    const int n = static_cast<int>(std::min<std::int64_t>(bytes - done, INT_MAX));
    requests.emplace_back();
    MPI_Ibcast(p + done, n, MPI_BYTE, root, MPI_COMM_WORLD, &requests.back());
    done += n;
  }
  const std::string what = "broadcast of " + std::to_string(bytes) + " bytes from rank " + std::to_string(root);
  finish(*faults_, requests, next_label(*faults_, what), timeout_s_, rank_, world_size_);
}

void ProcessGroup::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this tells the compiler so
}

std::string ProcessGroup::library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  return version.substr(0, version.find_first_of(",\n"));
}

bool launched_as_one_of_many() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* value = std::getenv(name); value && std::atoi(value) > 1) return true;
  return false;
}

// ---- Faults: waiting with a deadline, and finding the ranks that do not answer ----
//
// A rank whose collective has not finished after the timeout sends every other rank a
// question on the group's own communicator and listens for a while. A rank that is alive
// answers from inside its own wait (or its test() calls) with what it waits for; a rank that
// is stopped, stuck in a loop or dead does not. The ranks not heard from are the ones named.

void ProcessGroup::set_timeout(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds))
    throw ValueError("ProcessGroup.set_timeout: seconds must be >= 0 (0: wait forever), got " + std::to_string(seconds));
  timeout_s_ = seconds;
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kQuestionTag = 1, kAnswerTag = 2;

std::string next_label(FaultState& faults, const std::string& what) {
  return "collective #" + std::to_string(++faults.started) + " (" + what + ")";
}

// Between two polls: yield at first (a collective usually finishes within microseconds),
// then sleep longer and longer, up to 1 ms, so that a rank waiting for a slower one leaves
// the core to it (on a small machine the ranks share the cores).
void pause_after(int polls) {
  if (polls < 100)
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000, 10 * (polls - 99))));
}

// Answers every question waiting for this rank: "waiting for collective #k (...)", or, between
// collectives, the last one it started. Drops the answers already sent.
void answer_questions(FaultState& faults) {
  faults.answers.remove_if([](FaultState::Answer& a) {
    int sent = 0;
    MPI_Test(&a.request, &sent, MPI_STATUS_IGNORE);
    return sent != 0;
  });
  for (;;) {
    int waiting = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kQuestionTag, faults.comm, &waiting, &status);
    if (!waiting) return;
    MPI_Recv(nullptr, 0, MPI_BYTE, status.MPI_SOURCE, kQuestionTag, faults.comm, MPI_STATUS_IGNORE);
    FaultState::Answer& a = faults.answers.emplace_back();
    a.text = !faults.waiting_for.empty() ? "is waiting for " + faults.waiting_for
                                         : "is running, not waiting (the last collective it started is #" +
                                               std::to_string(faults.started) + ")";
    MPI_Isend(a.text.data(), static_cast<int>(a.text.size()), MPI_CHAR, status.MPI_SOURCE, kAnswerTag, faults.comm,
              &a.request);
  }
}

// "rank 1", "ranks 1, 3"
std::string ranks_text(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

// The deadline passed: asks the other ranks where they are, names those that do not answer
// within a grace period, and ends the job.
[[noreturn]] void end_job_after_timeout(FaultState& faults, const std::string& what, double timeout, int rank, int world) {
  std::vector<MPI_Request> questions;  // never waited for: a dead rank never receives its own
  for (int r = 0; r < world; ++r) {
    if (r == rank) continue;
    questions.emplace_back();
    MPI_Isend(nullptr, 0, MPI_BYTE, r, kQuestionTag, faults.comm, &questions.back());
  }
  std::vector<std::string> answers(static_cast<std::size_t>(world));
  std::vector<bool> heard(static_cast<std::size_t>(world), false);
  heard[static_cast<std::size_t>(rank)] = true;
  int unheard = world - 1;
  // Long enough for a rank that sleeps 1 ms between polls, short next to the timeout.
  const auto grace = std::chrono::duration<double>(std::clamp(timeout / 4, 1.0, 10.0));
  for (const auto end = Clock::now() + grace; unheard > 0 && Clock::now() < end;) {
    answer_questions(faults);  // another rank that timed out asks this one too
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kAnswerTag, faults.comm, &arrived, &status);
    if (!arrived) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    int length = 0;
    MPI_Get_count(&status, MPI_CHAR, &length);
    std::string text(static_cast<std::size_t>(length), '\0');
    MPI_Recv(text.data(), length, MPI_CHAR, status.MPI_SOURCE, kAnswerTag, faults.comm, MPI_STATUS_IGNORE);
    const auto source = static_cast<std::size_t>(status.MPI_SOURCE);
    if (!heard[source]) --unheard;
    heard[source] = true;
    answers[source] = text;
  }
  std::vector<int> silent;
  for (int r = 0; r < world; ++r)
    if (!heard[static_cast<std::size_t>(r)]) silent.push_back(r);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", timeout);
  std::string message = "rank " + std::to_string(rank) + ": " + what + " did not finish within " + seconds + " s";
  if (!silent.empty())
    message += ": " + ranks_text(silent) + " did not answer (stopped, stuck or dead)";
  else
    message += ": every rank answered, so the ranks disagree on the collectives or their messages are lost";
  for (int r = 0; r < world; ++r)
    if (r != rank && !answers[static_cast<std::size_t>(r)].empty())
      message += "; rank " + std::to_string(r) + " " + answers[static_cast<std::size_t>(r)];
  std::fprintf(stderr, "tapegrad: %s; ending the job (ProcessGroup timeout)\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

// The one place that waits for a collective: forever without a timeout, else until the
// deadline, answering the other ranks' questions meanwhile.
void finish(FaultState& faults, std::vector<MPI_Request>& requests, const std::string& what, double timeout, int rank,
            int world) {
  const int n = static_cast<int>(requests.size());
  if (timeout <= 0) {
    MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE);
    return;
  }
  faults.waiting_for = what;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout);
  for (int polls = 0;; ++polls) {
    int done = 0;
    MPI_Testall(n, requests.data(), &done, MPI_STATUSES_IGNORE);
    if (done) break;
    answer_questions(faults);
    if (Clock::now() >= deadline) end_job_after_timeout(faults, what, timeout, rank, world);
    pause_after(polls);
  }
  faults.waiting_for.clear();
}

}  // namespace

// --- point to point --------------------------------------------------------------------------

namespace {

void check_peer(const char* op, int peer, int world_size) {
  if (peer < 0 || peer >= world_size)
    throw ValueError(std::string("ProcessGroup.") + op + ": rank " + std::to_string(peer) + " is not in 0.." +
                     std::to_string(world_size - 1));
}

}  // namespace

void ProcessGroup::send(const void* data, std::int64_t bytes, int dest, int tag) const {
  check_peer("send", dest, world_size_);
  const auto* p = static_cast<const char*>(data);
  for (std::int64_t done = 0; done < bytes;) {  // the receiver splits the same way
    const int n = static_cast<int>(std::min<std::int64_t>(bytes - done, INT_MAX));
    MPI_Send(p + done, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    done += n;
  }
}

void ProcessGroup::recv(void* data, std::int64_t bytes, int source, int tag) const {
  check_peer("recv", source, world_size_);
  auto* p = static_cast<char*>(data);
  for (std::int64_t done = 0; done < bytes;) {
    const int n = static_cast<int>(std::min<std::int64_t>(bytes - done, INT_MAX));
    MPI_Recv(p + done, n, MPI_BYTE, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    done += n;
  }
}

}  // namespace tapegrad::distributed
