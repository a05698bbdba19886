// process_group.cpp — the MPI calls behind ProcessGroup.
//
// MPI counts are int: buffers longer than INT_MAX elements go in several calls.
#include "process_group.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <stdexcept>
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

// The MPI requests of one started collective (several when its buffer is over INT_MAX elements).
struct PendingRequests {
  std::vector<MPI_Request> requests;
};

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
}

ProcessGroup::~ProcessGroup() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
  group_exists = false;
}

void ProcessGroup::barrier() const { MPI_Barrier(MPI_COMM_WORLD); }

void ProcessGroup::allreduce_sum(void* data, std::int64_t count, DType dtype) const {
  const MPI_Datatype type = mpi_type(dtype);
  auto* bytes = static_cast<char*>(data);
  for (std::int64_t done = 0; done < count;) {
    const int n = static_cast<int>(std::min<std::int64_t>(count - done, INT_MAX));
    MPI_Allreduce(MPI_IN_PLACE, bytes + done * static_cast<std::int64_t>(size_of(dtype)), n, type, MPI_SUM,
                  MPI_COMM_WORLD);
    done += n;
  }
}

PendingCollective ProcessGroup::start_allreduce_sum(void* data, std::int64_t count, DType dtype) const {
  const MPI_Datatype type = mpi_type(dtype);
  auto* bytes = static_cast<char*>(data);
  PendingCollective pending;
  pending.impl_ = std::make_shared<PendingRequests>();
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
  if (!pending.impl_) return true;
  int finished = 0;
  auto& requests = pending.impl_->requests;
  MPI_Testall(static_cast<int>(requests.size()), requests.data(), &finished, MPI_STATUSES_IGNORE);
  if (finished) pending.impl_.reset();
  return finished != 0;
}

void ProcessGroup::wait(PendingCollective& pending) const {
  if (!pending.impl_) return;
  auto& requests = pending.impl_->requests;
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  pending.impl_.reset();
}

double ProcessGroup::mean(double value) const {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return value / world_size_;
}

bool ProcessGroup::any(bool value) const {
  int flag = value ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return flag != 0;
}

std::uint64_t ProcessGroup::min(std::uint64_t value) const {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  return value;
}

std::uint64_t ProcessGroup::max(std::uint64_t value) const {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

void ProcessGroup::broadcast(void* data, std::int64_t bytes, int root) const {
  auto* p = static_cast<char*>(data);
  for (std::int64_t done = 0; done < bytes;) {
    const int n = static_cast<int>(std::min<std::int64_t>(bytes - done, INT_MAX));
    MPI_Bcast(p + done, n, MPI_BYTE, root, MPI_COMM_WORLD);
    done += n;
  }
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
