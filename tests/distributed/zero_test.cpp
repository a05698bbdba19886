// zero_test.cpp — ZeRO-1 (distributed/zero.hpp) under mpirun (not Catch2: every rank runs main).
//
//   mpirun -n 2 zero_test      k steps of ZeRO-1 == k steps of plain DDP, bitwise (float64
//                              and float32, AdamW as train_lm uses it); the ranks bitwise
//                              equal after every step; each rank holds the state of the
//                              parameters it owns and no other (< 0.6 of the whole, the
//                              ranks' sum == the whole); full_state() on rank 0 == the
//                              unsharded optimizer's state_dict(); a loaded full state resumes
//                              exactly; the partition of partition_by_size
//
// Why bitwise and not only 1e-12: every parameter gets the same arithmetic on the same
// averaged gradient with the same moments, on its owner instead of on every rank, and the
// broadcast copies bytes. Prints "PASS ..." / "FAIL ..." lines on rank 0 and exits 0 only
// when every check passed on every rank. docs/distributed.md shows the region marked
// '// snippet:' word for word (the test docs.distributed_snippets_zero checks it).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <tapegrad/distributed/ddp.hpp>
#include <tapegrad/distributed/zero.hpp>
#include <tapegrad/io/checkpoint.hpp>
#include <tapegrad/tapegrad.hpp>

#include "tiny_job.hpp"

using namespace tapegrad;
using namespace tiny_job;

namespace {

constexpr std::int64_t kGlobalBatch = 8, kSteps = 6;

std::vector<char> bytes_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const char*>(c.raw_data());
  return std::vector<char>(p, p + c.numel() * static_cast<std::int64_t>(size_of(c.dtype())));
}

std::int64_t optimizer_bytes(const optim::OptimizerState& state) {
  std::int64_t total = 0;
  for (const auto& [_, ps] : state.params)
    for (const auto& [__, t] : ps.buffers) total += t.numel() * static_cast<std::int64_t>(size_of(t.dtype()));
  return total;
}

// "" when a and b are equal (names, groups, hyper-parameters, steps, buffers bit for bit);
// else the first difference.
std::string state_difference(const optim::OptimizerState& a, const optim::OptimizerState& b) {
  if (a.optimizer != b.optimizer) return "optimizer " + a.optimizer + " vs " + b.optimizer;
  if (a.groups.size() != b.groups.size()) return "the number of groups";
  for (std::size_t g = 0; g < a.groups.size(); ++g)
    if (a.groups[g].params != b.groups[g].params || a.groups[g].hyper_parameters != b.groups[g].hyper_parameters)
      return "group " + std::to_string(g);
  if (a.params.size() != b.params.size())
    return std::to_string(a.params.size()) + " vs " + std::to_string(b.params.size()) + " parameter states";
  for (std::size_t i = 0; i < a.params.size(); ++i) {
    const auto& [name, sa] = a.params[i];
    const auto& [other, sb] = b.params[i];
    if (name != other || sa.step != sb.step || sa.buffers.size() != sb.buffers.size())
      return "entry " + std::to_string(i) + " (" + name + " / " + other + ")";
    for (std::size_t k = 0; k < sa.buffers.size(); ++k)
      if (sa.buffers[k].first != sb.buffers[k].first || bytes_of(sa.buffers[k].second) != bytes_of(sb.buffers[k].second))
        return name + "." + sa.buffers[k].first;
  }
  return "";
}

struct Checks {
  int failed = 0;
  // ok must be this rank's verdict: the check passes when it passed on every rank.
  void expect(bool ok, const distributed::ProcessGroup& group, const std::string& what) {
    ok = !group.any(!ok);
    if (!ok) ++failed;
    if (group.is_main()) std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  }
};

data::Batch batch_of(const data::Dataset& dataset, const data::DistributedSampler& sampler, std::int64_t step) {
  return sampler.batch(dataset, step / sampler.batches_per_epoch(), step % sampler.batches_per_epoch());
}

// One data-parallel step with ZeRO-1: the gradients averaged over the ranks as without it
// (clipping sees the whole gradient), then each rank updates the parameters it owns and
// broadcasts them. Returns the global mean loss.
// snippet: train_shard_zero
double train_shard_zero(nn::TransformerLM& model, distributed::ZeroRedundancyOptimizer& zero,
                        distributed::DistributedDataParallel& ddp, const distributed::ProcessGroup& group,
                        const data::Batch& batch) {
  const Tensor logits = model.forward(batch.inputs);
  const Tensor loss = cross_entropy(logits.reshape({-1, logits.size(-1)}), batch.targets.reshape({-1}));
  zero.optimizer().zero_grad();
  loss.backward();
  ddp.average_gradients();
  optim::clip_grad_norm_(model.parameters(), 1.0);
  zero.step();  // in place of optimizer.step(): this rank's shard, then every rank's parameters
  return group.mean(loss.item());
}
// end snippet

// The same step without ZeRO: every rank updates every parameter.
double train_shard_plain(nn::TransformerLM& model, optim::Optimizer& optimizer, distributed::DistributedDataParallel& ddp,
                         const distributed::ProcessGroup& group, const data::Batch& batch) {
  const Tensor logits = model.forward(batch.inputs);
  const Tensor loss = cross_entropy(logits.reshape({-1, logits.size(-1)}), batch.targets.reshape({-1}));
  optimizer.zero_grad();
  loss.backward();
  ddp.average_gradients();
  optim::clip_grad_norm_(model.parameters(), 1.0);
  optimizer.step();
  return group.mean(loss.item());
}

// Whether this rank holds a state exactly for the parameters it owns.
bool holds_own_states_only(const distributed::ZeroRedundancyOptimizer& zero, const distributed::ProcessGroup& group) {
  for (std::size_t g = 0; g < zero.optimizer().num_groups(); ++g)
    for (const auto& [name, _] : zero.optimizer().group_params(g))
      if ((zero.optimizer().param_state(name).step > 0) != (zero.owner(name) == group.rank())) return false;
  return true;
}

void test_partition(const distributed::ProcessGroup& group, Checks& checks) {
  // Largest first to the lightest rank: 4 -> 0, 3 -> 1, 3 -> 1, 2 -> 0, 2 -> 0 (a tie: the lowest rank).
  const bool two = distributed::partition_by_size({2, 3, 4, 3, 2}, 2) == std::vector<int>{0, 1, 0, 1, 0};
  const bool one = distributed::partition_by_size({5, 1, 7}, 1) == std::vector<int>{0, 0, 0};
  checks.expect(two && one, group, "partition_by_size: greedy, largest first, to the lightest (lowest) rank");
}

// k steps of ZeRO-1 beside k steps of plain DDP from the same weights; then the state
// gathered, and a resume from it.
void test_training(const distributed::ProcessGroup& group, Checks& checks, DType dtype) {
  const std::string name = std::string("adamw ") + dtype_name(dtype);
  const int rank = group.rank(), world = group.world_size();
  const auto dataset = random_sequences();
  const data::DistributedSampler sampler(dataset->size(), kGlobalBatch, rank, world, /*seed=*/9);
  auto plain_model = tiny_lm(100, dtype), zero_model = tiny_lm(100, dtype);
  const distributed::DDPOptions buckets = distributed::DDPOptions().bucket_mb(0.004);
  distributed::DistributedDataParallel plain_ddp(*plain_model, group, buckets), zero_ddp(*zero_model, group, buckets);
  const auto plain = make_optimizer(*plain_model, "adamw"), sharded = make_optimizer(*zero_model, "adamw");
  // Small messages: the parameters of one owner go in several packed broadcasts and alone.
  distributed::ZeroRedundancyOptimizer zero(*sharded, group, distributed::ZeroOptions().bucket_mb(0.004));

  bool identical = true, equal_to_plain = true, same_loss = true;
  for (std::int64_t step = 0; step < kSteps; ++step) {
    const data::Batch batch = batch_of(*dataset, sampler, step);
    const double plain_loss = train_shard_plain(*plain_model, *plain, plain_ddp, group, batch);
    const double zero_loss = train_shard_zero(*zero_model, zero, zero_ddp, group, batch);
    identical = same_bytes_as_rank0(*zero_model, group) && identical;
    equal_to_plain = state_bytes(*zero_model) == state_bytes(*plain_model) && equal_to_plain;
    same_loss = plain_loss == zero_loss && same_loss;
  }
  const std::string after = " after each of " + std::to_string(kSteps) + " steps";
  checks.expect(identical, group, name + ": parameters bitwise identical on every rank" + after);
  checks.expect(equal_to_plain && same_loss, group, name + ": ZeRO-1 == plain DDP, parameters and losses bitwise" + after);

  // Memory: this rank's moments are those of its own parameters, about 1/N of the whole.
  const std::int64_t whole = optimizer_bytes(plain->state_dict()), mine = zero.state_bytes();
  const std::int64_t sum = zero.total_state_bytes();
  checks.expect(holds_own_states_only(zero, group), group, name + ": each rank holds the state of its own parameters only");
  char what[200];
  std::snprintf(what, sizeof what, "%s: state bytes on rank 0 %lld of %lld unsharded (%.2f), ranks' sum %lld", name.c_str(),
                static_cast<long long>(mine), static_cast<long long>(whole),
                static_cast<double>(mine) / static_cast<double>(whole), static_cast<long long>(sum));
  checks.expect((world == 1 || static_cast<double>(mine) < 0.6 * static_cast<double>(whole)) && sum == whole, group, what);

  // The state gathered on rank 0 is the unsharded optimizer's, bit for bit.
  const optim::OptimizerState full = zero.full_state();
  const std::string difference = group.is_main() ? state_difference(full, plain->state_dict()) : "";
  checks.expect(difference.empty(), group,
                name + ": full_state() on rank 0 == the unsharded state_dict()" +
                    (difference.empty() ? "" : ": " + difference));

  // Resume from the full state (what every rank reads from a checkpoint): the constructor
  // keeps this rank's part of a loaded state, load_full_state does the same later.
  const optim::OptimizerState saved = plain->state_dict();
  auto resumed_model = tiny_lm(100, dtype);
  io::load_state_dict(*resumed_model, io::state_dict(*plain_model), /*strict=*/true);
  distributed::DistributedDataParallel resumed_ddp(*resumed_model, group, buckets);
  const auto resumed = make_optimizer(*resumed_model, "adamw");
  resumed->load_state_dict(saved);
  distributed::ZeroRedundancyOptimizer resumed_zero(*resumed, group);
  bool own_only = holds_own_states_only(resumed_zero, group);
  resumed_zero.load_full_state(saved);
  own_only = own_only && holds_own_states_only(resumed_zero, group) && resumed_zero.state_bytes() == mine;
  bool resumed_equal = true;
  for (std::int64_t step = kSteps; step < 2 * kSteps; ++step) {
    const data::Batch batch = batch_of(*dataset, sampler, step);
    train_shard_plain(*plain_model, *plain, plain_ddp, group, batch);
    train_shard_zero(*resumed_model, resumed_zero, resumed_ddp, group, batch);
    resumed_equal = state_bytes(*resumed_model) == state_bytes(*plain_model) && resumed_equal;
  }
  checks.expect(own_only, group, name + ": a loaded full state keeps only each rank's part");
  checks.expect(resumed_equal && same_bytes_as_rank0(*resumed_model, group), group,
                name + ": resumed from the full state, " + std::to_string(kSteps) + " more steps == plain DDP, bitwise");
}

}  // namespace

int main() {
  set_num_threads(1);
  distributed::ProcessGroup group;
  try {
    if (group.is_main())
      std::printf("%d processes, %s\n", group.world_size(), distributed::ProcessGroup::library_version().c_str());
    Checks checks;
    test_partition(group, checks);
    test_training(group, checks, DType::float64);
    test_training(group, checks, DType::float32);
    const bool failed = checks.failed > 0;
    if (group.is_main()) std::printf("%s\n", failed ? "FAILED" : "all checks passed");
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    // An error on one rank ends them all: the others may be waiting in a collective.
    std::fprintf(stderr, "zero_test: rank %d: error: %s\n", group.rank(), e.what());
    group.abort(1);
  }
}
