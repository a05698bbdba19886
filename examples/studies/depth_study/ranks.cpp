// ranks.cpp — the mpirun side of the depth study (ranks.hpp), with and without MPI.
#include "ranks.hpp"

#include <cstdint>
#include <cstdlib>

#include <tapegrad/tapegrad.hpp>
#if TAPEGRAD_HAS_DISTRIBUTED
#include <tapegrad/distributed/process_group.hpp>
#endif

namespace depth_study {

#if TAPEGRAD_HAS_DISTRIBUTED
using tapegrad::distributed::ProcessGroup;
namespace {
const ProcessGroup& group_of(const std::shared_ptr<void>& g) { return *static_cast<const ProcessGroup*>(g.get()); }
}  // namespace

Ranks::Ranks() {
  if (!tapegrad::distributed::launched_as_one_of_many()) return;
  auto group = std::make_shared<ProcessGroup>();
  rank_ = group->rank(), world_ = group->world_size(), local_size_ = group->local_size();
  group_ = std::move(group);
}

void Ranks::barrier() const {
  if (group_) group_of(group_).barrier();
}

std::vector<int> Ranks::holders(const std::vector<bool>& held) const {
  std::vector<int> owner(held.size(), world_);
  if (!group_) {
    for (std::size_t i = 0; i < held.size(); ++i)
      if (held[i]) owner[i] = 0;
    return owner;
  }
  // One row per rank, each rank filling its own: the sum over ranks is every rank's row.
  std::vector<double> rows(held.size() * static_cast<std::size_t>(world_), 0.0);
  for (std::size_t i = 0; i < held.size(); ++i) rows[static_cast<std::size_t>(rank_) * held.size() + i] = held[i] ? 1 : 0;
  group_of(group_).allreduce_sum(rows.data(), static_cast<std::int64_t>(rows.size()), tapegrad::DType::float64);
  for (std::size_t i = 0; i < held.size(); ++i)
    for (int r = world_ - 1; r >= 0; --r)
      if (rows[static_cast<std::size_t>(r) * held.size() + i] > 0.5) owner[i] = r;
  return owner;
}

void Ranks::gather(const std::vector<std::pair<std::string, std::string>>& mine,
                   const std::function<void(const std::string&, const std::string&)>& keep) const {
  if (!group_) return;
  const ProcessGroup& g = group_of(group_);
  // Each message: a count, then per pair the two sizes and the two strings.
  auto send_string = [&](const std::string& s) {
    const std::int64_t n = static_cast<std::int64_t>(s.size());
    g.send(&n, sizeof n, 0);
    if (n > 0) g.send(s.data(), n, 0);
  };
  auto recv_string = [&](int from) {
    std::int64_t n = 0;
    g.recv(&n, sizeof n, from);
    std::string s(static_cast<std::size_t>(n), '\0');
    if (n > 0) g.recv(s.data(), n, from);
    return s;
  };
  if (rank_ != 0) {
    const std::int64_t count = static_cast<std::int64_t>(mine.size());
    g.send(&count, sizeof count, 0);
    for (const auto& [key, bytes] : mine) send_string(key), send_string(bytes);
    return;
  }
  for (int from = 1; from < world_; ++from) {
    std::int64_t count = 0;
    g.recv(&count, sizeof count, from);
    for (std::int64_t i = 0; i < count; ++i) {
      const std::string key = recv_string(from);
      keep(key, recv_string(from));
    }
  }
}

void Ranks::abort() const {
  if (group_) group_of(group_).abort(1);
  std::exit(1);
}

#else  // a build without MPI: a world of one

Ranks::Ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* value = std::getenv(name); value && std::atoi(value) > 1)
      throw tapegrad::ValueError(std::string("depth_study: started by mpirun as one of ") + value +
                                 " processes, but this build has no MPI (configure with -DTAPEGRAD_WITH_MPI=ON)");
}

void Ranks::barrier() const {}

std::vector<int> Ranks::holders(const std::vector<bool>& held) const {
  std::vector<int> owner(held.size(), 1);
  for (std::size_t i = 0; i < held.size(); ++i)
    if (held[i]) owner[i] = 0;
  return owner;
}

void Ranks::gather(const std::vector<std::pair<std::string, std::string>>&,
                   const std::function<void(const std::string&, const std::string&)>&) const {}

[[noreturn]] void Ranks::abort() const { std::exit(1); }

#endif

Ranks::~Ranks() = default;

const Ranks& Ranks::one() {
  static const Ranks solo{Solo{}};
  return solo;
}

unsigned ranks_on_this_machine() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char* value = std::getenv(name); value && std::atoi(value) > 0) return static_cast<unsigned>(std::atoi(value));
  return 1;
}

}  // namespace depth_study
