// data_parallel.hpp — train_lm's data-parallel side (--ddp, under mpirun): this process is rank
// `rank` of `world`, trains on its rows of each global batch, and averages its gradients with
// the others'. Without --ddp it is rank 0 of 1 and every call costs nothing. It builds with
// and without MPI: the MPI parts are compiled only when tapegrad::distributed is linked.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <tapegrad/tapegrad.hpp>
#if TAPEGRAD_HAS_DISTRIBUTED
#include <tapegrad/distributed/consistency.hpp>
#include <tapegrad/distributed/ddp.hpp>
#include <tapegrad/distributed/zero.hpp>
#endif

#include "faults.hpp"

namespace lm {

class DataParallel {
 public:
  int rank = 0, world = 1;

  // Rank 0 alone logs, evaluates, samples and writes files.
  bool lead() const { return rank == 0; }
  bool on() const { return on_; }

  // With ddp: joins the job mpirun started, bounds each collective's wait by comm_timeout
  // seconds (0: forever) and checks that every rank runs the same build. Without: refuses to
  // be one of several copies.
  void start(bool ddp, [[maybe_unused]] double comm_timeout = 0) {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (!ddp) {
      if (tapegrad::distributed::launched_as_one_of_many())
        throw std::invalid_argument("started by mpirun as one of several processes without --ddp: each would "
                                    "train alone and write the same files; add --ddp");
      return;
    }
    group_ = std::make_unique<tapegrad::distributed::ProcessGroup>();
    rank = group_->rank();
    world = group_->world_size();
    on_ = true;
    group_->set_timeout(comm_timeout);
    // Before anything else: ranks of different builds may not even agree on what to send.
    namespace dist = tapegrad::distributed;
    dist::require_same(*group_, "tapegrad build", tapegrad::build_id());
    dist::require_same(*group_, "MPI library", dist::ProcessGroup::library_version());
    char timeout[32];
    std::snprintf(timeout, sizeof timeout, "%g", comm_timeout);
    dist::require_same(*group_, "--comm-timeout", timeout);  // a rank without one could not answer
#else
    if (ddp)
      throw std::invalid_argument("--ddp: this train_lm was built without MPI (install libopenmpi-dev and "
                                  "openmpi-bin, then configure with -DTAPEGRAD_WITH_MPI=ON)");
#endif
  }

  // Processes of this job on this machine: they share its cores.
  int local_processes() const {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (on_) return group_->local_size();
#endif
    return 1;
  }

  // After the model is built (and loaded, when resuming): checks that the ranks loaded the
  // same checkpoint, then copies rank 0's parameters and buffers to all of them.
  void attach([[maybe_unused]] tapegrad::nn::Module& model, [[maybe_unused]] bool resumed,
              [[maybe_unused]] std::int64_t step, [[maybe_unused]] double bucket_mb) {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (!on_) return;
    namespace dist = tapegrad::distributed;
    if (resumed && (!dist::in_sync(model, *group_) || group_->min(static_cast<std::uint64_t>(step)) != group_->max(static_cast<std::uint64_t>(step))))
      throw std::runtime_error("the ranks resumed from different checkpoints: --checkpoint must name the same "
                               "file on every host (a shared file system, or a copy on each)");
    ddp_ = std::make_unique<dist::DistributedDataParallel>(model, *group_, dist::DDPOptions().bucket_mb(bucket_mb));
#endif
  }

  // Before each micro-batch's backward: all but the last of a step accumulate locally, the
  // last one reduces their sum (its allreduces overlap its backward).
  void before_backward([[maybe_unused]] bool last) {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (!ddp_) return;
    no_sync_ = last ? tapegrad::distributed::DistributedDataParallel::NoSync() : ddp_->no_sync();
#endif
  }

  // Before attach(): every rank must build the same model (a layer more is a broadcast more,
  // and the job would hang instead of failing). Collective.
  void require_same_model([[maybe_unused]] const tapegrad::nn::TransformerLMConfig& config) const {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (on_) tapegrad::distributed::require_same_entries(*group_, "model configuration", tapegrad::io::config_fields(config));
#endif
  }

  // Tests (faults.hpp): "kill" or "hang" inside the next average_gradients().
  void arm_fault(std::string mode) { fault_ = std::move(mode); }

  // Gradients of this rank's rows -> gradients of the global batch, on every rank.
  void average_gradients() {
    fault_in_allreduce(fault_, rank);
#if TAPEGRAD_HAS_DISTRIBUTED
    if (!ddp_) return;
    ddp_->average_gradients();
    allreduce_seconds_ += ddp_->last_allreduce_seconds();
    ++steps_;
#endif
  }
  double mean_allreduce_ms() const { return steps_ ? 1e3 * allreduce_seconds_ / static_cast<double>(steps_) : 0.0; }
  std::int64_t num_buckets() const {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (ddp_) return ddp_->num_buckets();
#endif
    return 0;
  }

  // --zero1 (distributed/zero.hpp): from here on each rank keeps the optimizer state of its own
  // parameters only (of a resumed state too) and the step goes through step_hook().
  void shard_optimizer([[maybe_unused]] tapegrad::optim::Optimizer& optimizer) {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (on_) zero_ = std::make_unique<tapegrad::distributed::ZeroRedundancyOptimizer>(optimizer, *group_);
#endif
  }
  // What replaces optimizer.step(): the sharded step with --zero1, else empty (the plain step).
  std::function<void()> step_hook() {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (zero_) return [this] { zero_->step(); };
#endif
    return {};
  }
  // With --zero1: the whole optimizer state, gathered on rank 0 (empty elsewhere), for the
  // checkpoint. Without: empty (the optimizer's own state is saved). Collective.
  std::optional<tapegrad::optim::OptimizerState> full_optimizer_state() const {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (zero_) {
      tapegrad::optim::OptimizerState full = zero_->full_state();
      if (lead()) return full;
    }
#endif
    return std::nullopt;
  }
  // With --zero1: "zero1: optimizer state X MB on rank 0 of Y MB in all ...". Collective.
  std::string zero1_report() const {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (zero_) {
      const auto mine = static_cast<std::uint64_t>(zero_->state_bytes());
      const double total = static_cast<double>(zero_->total_state_bytes()), mb = 1024.0 * 1024.0;
      const double least = static_cast<double>(group_->min(mine)), most = static_cast<double>(group_->max(mine));
      char line[200];
      std::snprintf(line, sizeof line,
                    "zero1: optimizer state %.3f MB on rank 0 of %.3f MB in all (%d ranks: %.3f to %.3f MB each)",
                    static_cast<double>(mine) / mb, total / mb, world, least / mb, most / mb);
      return line;
    }
#endif
    return "";
  }

  // The mean of a value over the ranks (the global batch's loss from the shards' losses).
  double mean(double value) const {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (on_) return group_->mean(value);
#endif
    return value;
  }
  // True everywhere when true on some rank: the ranks stop at the same step.
  bool any(bool value) const {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (on_) return group_->any(value);
#endif
    return value;
  }
  // Throws when the ranks' parameters differ (they must stay bit-identical). Collective.
  void require_in_sync([[maybe_unused]] const tapegrad::nn::Module& model) const {
#if TAPEGRAD_HAS_DISTRIBUTED
    if (on_ && !tapegrad::distributed::in_sync(model, *group_))
      throw std::runtime_error("the ranks' parameters are no longer identical");
#endif
  }

  // Reports an error and ends the program, and with --ddp the whole job: the other ranks may
  // be waiting for this one in an allreduce and would wait forever. Returns the exit code.
  int fail(const char* program, const char* what) const {
    if (!on_) {
      std::fprintf(stderr, "%s: error: %s\n", program, what);
      return 1;
    }
    std::fprintf(stderr, "%s: rank %d: error: %s\n", program, rank, what);
    std::fflush(stderr);
#if TAPEGRAD_HAS_DISTRIBUTED
    group_->abort(1);
#endif
    return 1;
  }

 private:
  bool on_ = false;
  std::string fault_;
  double allreduce_seconds_ = 0;
  std::int64_t steps_ = 0;
#if TAPEGRAD_HAS_DISTRIBUTED
  std::unique_ptr<tapegrad::distributed::ProcessGroup> group_;
  std::unique_ptr<tapegrad::distributed::DistributedDataParallel> ddp_;
  std::unique_ptr<tapegrad::distributed::ZeroRedundancyOptimizer> zero_;
  tapegrad::distributed::DistributedDataParallel::NoSync no_sync_;  // declared after ddp_: released first
#endif
};

}  // namespace lm
