// zero.hpp — ZeRO stage 1: the optimizer state sharded over the ranks of a data-parallel job
// (Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
// Models", https://arxiv.org/abs/1910.02054, stage P_os).
//
// Plain data parallelism keeps the whole optimizer state on every rank: AdamW's two moments
// are 2Ψ values for Ψ parameters, the same on each of the N ranks. ZeRO-1 gives every
// parameter one owner rank. Only the owner keeps its moments and updates it; then every
// owner sends its updated parameters to the other ranks:
//
//   all ranks:  g ← (1/N) Σ_r g_r                 (DistributedDataParallel, unchanged: clipping
//                                                  and the health check see the global gradient)
//   owner(p):   p ← AdamW(p, g_p, moments of p)   (the moments exist on owner(p) only)
//   all ranks:  p ← p as owner(p) has it          (broadcast from each owner, packed)
//
// Optimizer memory per rank: about 2Ψ/N instead of 2Ψ. Each parameter gets exactly the
// update it gets without sharding (the same arithmetic on the same gradient and moments), so
// the parameters are bitwise those of plain DDP and stay bitwise equal on every rank.
//
//   optim::AdamW adamw(optim::weight_decay_groups(*model, ...));  // over all the parameters
//   distributed::DistributedDataParallel ddp(*model, group);
//   distributed::ZeroRedundancyOptimizer zero(adamw, group);      // this rank's shard of it
//   for (...) { adamw.zero_grad(); loss.backward(); ddp.average_gradients(); clip; zero.step(); }
//
// Communication: the allreduce of the gradients (2Ψ per rank, as DDP) plus the broadcast of
// the parameters (Ψ): 1.5× DDP's. The paper's P_os reduce-scatters the gradients instead (Ψ),
// for DDP's volume; keeping the allreduce keeps the full gradient on every rank for clipping,
// the health check and the gradient norm that train_lm logs.
//
// Checkpoints: full_state() gathers the shards on rank 0 as one optim::OptimizerState, the
// state a single-process optimizer would hold, so a checkpoint saved from it has the usual
// format: it resumes at any number of ranks, with or without ZeRO. Every rank loads the full
// state and keeps its own part (load_full_state, or the constructor, which shards what the
// optimizer already holds).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../autograd/options.hpp"
#include "../optim/optimizer.hpp"
#include "process_group.hpp"

namespace tapegrad::distributed {

// Owner ranks for tensors of these sizes: greedy, largest first (ties in the given order),
// each to the rank holding the fewest bytes so far (the lowest such rank), as PyTorch's
// ZeroRedundancyOptimizer partitions. Longest-processing-time-first: the largest shard is
// at most 4/3 of the best possible (Graham 1969), and within one tensor of the mean.
std::vector<int> partition_by_size(const std::vector<std::int64_t>& bytes, int world_size);

struct ZeroOptions {
  // Parameters of one owner are packed into broadcasts of about this size; a larger tensor is
  // broadcast from its own memory, without a copy.
  TAPEGRAD_ARG(double, bucket_mb) = 25.0;
};

class ZeroRedundancyOptimizer {
 public:
  // optimizer: a whole optimizer over all the parameters, built the same way on every rank.
  // Partitions its parameters (whole tensors, by partition_by_size over their bytes in group
  // order) and keeps only this rank's part of any state it already holds (a resumed run loads
  // the full state first). Collective: checks that the ranks hold the same parameter names,
  // shapes and groups. The optimizer must outlive this object.
  ZeroRedundancyOptimizer(optim::Optimizer& optimizer, const ProcessGroup& group, const ZeroOptions& options = {});

  // Replaces optimizer.step() after the gradients are averaged: updates the parameters this
  // rank owns (the others are skipped, so their state is never allocated here), then every
  // owner broadcasts its parameters. The gradients are left as they were. Collective.
  void step();

  optim::Optimizer& optimizer() const { return *optimizer_; }
  // The rank that updates the parameter called name (ValueError for an unknown name).
  int owner(const std::string& name) const;
  // Bytes of the optimizer state (moments) on this rank, and their sum over the ranks
  // (collective): the first is about total / N.
  std::int64_t state_bytes() const;
  std::int64_t total_state_bytes() const;
  // Parameter bytes each rank owns (index: rank).
  const std::vector<std::int64_t>& bytes_per_rank() const { return bytes_per_rank_; }

  // The complete state on rank 0, as the unsharded optimizer's state_dict() would be (its groups,
  // their hyper-parameters, the stepped parameters in group order, each with its buffers).
  // The other ranks send their shards and get back their own state() only. Collective.
  optim::OptimizerState full_state() const;
  // Every rank calls it with the full state (from a checkpoint): keeps the entries of the
  // parameters it owns and loads them with optimizer.load_state_dict(), which checks them.
  void load_full_state(const optim::OptimizerState& state);

 private:
  // One broadcast: the parameters order_[first, last), all owned by rank root.
  struct Message {
    int root = 0;
    std::size_t first = 0, last = 0;
    std::int64_t bytes = 0;
  };
  void share();
  void send_shard(const optim::OptimizerState& mine) const;
  void receive_shard(int source, std::vector<std::pair<std::string, optim::ParamState>>& into) const;
  std::size_t index_of(const std::string& name, const char* who) const;

  optim::Optimizer* optimizer_;
  const ProcessGroup* group_;
  nn::NamedTensors params_;  // every group's parameters, in group order
  std::vector<int> owners_;  // parallel to params_
  std::vector<std::size_t> order_;  // indices into params_ by owner, then in group order
  std::vector<std::int64_t> bytes_per_rank_;
  std::vector<Message> messages_;
  std::vector<char> staging_;  // a packed message
};

}  // namespace tapegrad::distributed
