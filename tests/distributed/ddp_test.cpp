// ddp_test.cpp — data-parallel training under mpirun (not Catch2: every rank runs main).
//
//   mpirun -n 2 ddp_test equivalence   k steps on 2 ranks == k steps of 1 process on the
//                                      global batch (1e-6 relative), the ranks bitwise equal
//                                      after every step, rank 0's weights broadcast at start,
//                                      gradients present on some ranks only
//   [mpirun -n 2] ddp_test overlap     the allreduce overlapped with backward gives the bits
//                                      of the allreduce after backward (float32, 12 buckets)
//   [mpirun -n 2] ddp_test accumulation  N micro-batches under no_sync() == one batch of N
//                                      times the rows, float64, to 1e-12 relative
//   mpirun -n 2 ddp_test fail          rank 1 throws at step 2: the job must end non-zero
//                                      with "rank 1" and the message, never hang
//   mpirun -n 2 ddp_test mismatch      the start-up checks: equal values pass; rank 1 with a
//                                      build id of its own ends the job naming both values
//   mpirun -n N ddp_test hang          with a 3 s timeout, the last rank stops answering in
//                                      step 2: the others end the job naming it
//   ddp_test compare A.tgc B.tgc [T]   two training checkpoints at the same step hold the
//                                      same parameters to T relative (default 1e-6)
//
// Equal to 1e-6: in float64 the 2-rank and 1-process runs agree to about 1e-12 (rounding
// only). In float32, rounding differs by about 1e-7 per step, and Adam divides each gradient
// by its running RMS: where a gradient is nearly zero (the attention key bias, whose exact
// gradient is zero), rounding noise becomes a step of up to lr. Those runs get a looser bound.
//
// Prints "PASS ..." / "FAIL ..." lines on rank 0 and exits 0 only when every check passed on
// every rank. docs/distributed.md shows the regions marked '// snippet:' word for word
// (the test docs.distributed_snippets checks it).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tapegrad/distributed/consistency.hpp>
#include <tapegrad/distributed/ddp.hpp>
#include <tapegrad/io/checkpoint.hpp>
#include <tapegrad/tapegrad.hpp>

#include "tiny_job.hpp"

using namespace tapegrad;
using namespace tiny_job;

namespace {

constexpr std::int64_t kGlobalBatch = 8, kSteps = 6;

// ||a - b||_inf / ||b||_inf: the relative difference of two tensors of one shape.
double relative_difference(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return INFINITY;
  const auto va = a.to_vector(), vb = b.to_vector();
  double diff = 0, scale = 0;
  for (std::size_t k = 0; k < va.size(); ++k) {
    diff = std::max(diff, std::abs(va[k] - vb[k]));
    scale = std::max(scale, std::abs(vb[k]));
  }
  return scale > 0 ? diff / scale : diff;
}

// The largest relative difference over the parameters (or their gradients) of two models.
double max_relative_difference(const nn::Module& a, const nn::Module& b, bool gradients = false) {
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  double worst = 0;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    const Tensor& ta = pa[i].second;
    const Tensor& tb = pb[i].second;
    worst = std::max(worst, gradients ? relative_difference(ta.grad(), tb.grad()) : relative_difference(ta, tb));
  }
  return worst;
}

// The same step and, tensor by tensor, the same model section to `tolerance` relative.
bool compare_checkpoints(const std::string& path_a, const std::string& path_b, double tolerance) {
  const io::Checkpoint a = io::load_checkpoint(path_a), b = io::load_checkpoint(path_b);
  const io::StateDict *ma = a.find_section("model"), *mb = b.find_section("model");
  if (!ma || !mb || ma->size() != mb->size() || a.get_int("step") != b.get_int("step")) {
    std::printf("FAIL the checkpoints differ in step or in their model's tensors\n");
    return false;
  }
  double worst = 0;
  std::string worst_name;
  for (const auto& [name, t] : *ma) {
    const Tensor* other = mb->find(name);
    const double rel = other ? relative_difference(t, *other) : INFINITY;
    if (rel >= worst) worst = rel, worst_name = name;
  }
  const bool ok = worst <= tolerance;
  std::printf("%s step %lld, %zu tensors: largest relative difference %.3g (%s) <= %.0e\n", ok ? "PASS" : "FAIL",
              static_cast<long long>(a.get_int("step")), ma->size(), worst, worst_name.c_str(), tolerance);
  return ok;
}

struct Checks {
  int failed = 0;
  void expect(bool ok, const distributed::ProcessGroup& group, const std::string& what) {
    if (!ok) ++failed;
    if (group.is_main()) std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  }
};

// One data-parallel step: this rank's rows of global batch `step`, its mean loss, the
// gradients averaged over the ranks, one optimizer step. Returns the global mean loss.
// snippet: train_shard
double train_shard(nn::TransformerLM& model, optim::Optimizer& optimizer, distributed::DistributedDataParallel& ddp,
                   const distributed::ProcessGroup& group, const data::Dataset& dataset,
                   const data::DistributedSampler& sampler, std::int64_t step) {
  const std::int64_t epoch = step / sampler.batches_per_epoch();
  const data::Batch batch = sampler.batch(dataset, epoch, step % sampler.batches_per_epoch());
  const Tensor logits = model.forward(batch.inputs);
  const Tensor loss = cross_entropy(logits.reshape({-1, logits.size(-1)}), batch.targets.reshape({-1}));
  optimizer.zero_grad();
  loss.backward();
  ddp.average_gradients();  // now every rank holds the gradient of the whole global batch
  optim::clip_grad_norm_(model.parameters(), 1.0);
  optimizer.step();
  return group.mean(loss.item());
}
// end snippet

// One step of the reference: a single process on the whole global batch.
Tensor reference_backward(nn::TransformerLM& model, const data::Dataset& dataset, std::int64_t step) {
  const data::DistributedSampler whole(dataset.size(), kGlobalBatch, 0, 1, /*seed=*/9);
  const data::Batch batch = whole.batch(dataset, step / whole.batches_per_epoch(), step % whole.batches_per_epoch());
  const Tensor logits = model.forward(batch.inputs);
  const Tensor loss = cross_entropy(logits.reshape({-1, kVocab}), batch.targets.reshape({-1}));
  model.zero_grad();
  loss.backward();
  return loss;
}

// Rank 0's weights reach every rank; the averaged gradient is the global batch's gradient.
void test_broadcast_and_gradients(const distributed::ProcessGroup& group, Checks& checks) {
  const int rank = group.rank(), world = group.world_size();
  const auto dataset = random_sequences();
  // Each rank starts from its own random weights; the constructor must replace them by rank 0's.
  auto model = tiny_lm(100 + static_cast<std::uint64_t>(rank));
  if (world > 1) checks.expect(!distributed::in_sync(*model, group), group, "ranks start with different weights");
  distributed::DistributedDataParallel ddp(*model, group, distributed::DDPOptions().bucket_mb(0.004));
  checks.expect(same_bytes_as_rank0(*model, group), group, "rank 0's parameters and buffers broadcast at start");
  checks.expect(ddp.num_buckets() > 1, group, std::to_string(ddp.num_buckets()) + " gradient buckets of 4 KB");

  const data::DistributedSampler sampler(dataset->size(), kGlobalBatch, rank, world, /*seed=*/9);
  const data::Batch batch = sampler.batch(*dataset, 0, 0);
  const Tensor logits = model->forward(batch.inputs);
  cross_entropy(logits.reshape({-1, kVocab}), batch.targets.reshape({-1})).backward();
  ddp.average_gradients();
  double rel = 0;
  if (group.is_main()) {
    auto reference = tiny_lm(100);
    reference_backward(*reference, *dataset, 0);
    rel = max_relative_difference(*model, *reference, /*gradients=*/true);
  }
  group.broadcast(&rel, sizeof rel);
  char what[160];
  std::snprintf(what, sizeof what, "averaged gradient == gradient of the global batch: relative difference %.2g <= 1e-6", rel);
  checks.expect(rel <= 1e-6, group, what);
}

// k steps on the ranks against k steps of one process on the global batches.
void test_training(const distributed::ProcessGroup& group, Checks& checks, const std::string& kind, DType dtype,
                   double tolerance) {
  const int rank = group.rank(), world = group.world_size();
  const auto dataset = random_sequences();
  const std::string name = kind + " " + dtype_name(dtype);
  auto model = tiny_lm(100, dtype);
  distributed::DistributedDataParallel ddp(*model, group, distributed::DDPOptions().bucket_mb(0.004));
  const auto optimizer = make_optimizer(*model, kind);
  const data::DistributedSampler sampler(dataset->size(), kGlobalBatch, rank, world, /*seed=*/9);
  bool always_identical = true;
  std::vector<double> losses;
  for (std::int64_t step = 0; step < kSteps; ++step) {
    losses.push_back(train_shard(*model, *optimizer, ddp, group, *dataset, sampler, step));
    always_identical = same_bytes_as_rank0(*model, group) && always_identical;
  }
  checks.expect(always_identical, group, name + ": parameters bitwise identical on every rank after each of " + std::to_string(kSteps) + " steps");
  checks.expect(distributed::in_sync(*model, group), group, name + ": in_sync() agrees");
  checks.expect(losses.back() < losses.front(), group, name + ": the loss falls");

  double rel = 0;
  if (group.is_main()) {
    auto reference = tiny_lm(100, dtype);
    const auto ref_optimizer = make_optimizer(*reference, kind);
    for (std::int64_t step = 0; step < kSteps; ++step) {
      reference_backward(*reference, *dataset, step);
      optim::clip_grad_norm_(reference->parameters(), 1.0);
      ref_optimizer->step();
    }
    rel = max_relative_difference(*model, *reference);
  }
  group.broadcast(&rel, sizeof rel);
  char what[200];
  std::snprintf(what, sizeof what, "%s: %d ranks == 1 process on the global batch after %lld steps: relative difference %.2g <= %.0e",
                name.c_str(), world, static_cast<long long>(kSteps), rel, tolerance);
  checks.expect(rel <= tolerance, group, what);
}

// p (float64) gets a gradient on odd ranks only, q on none.
class PartlyUsed : public nn::Module {
 public:
  PartlyUsed() : nn::Module("PartlyUsed") {
    p = register_parameter("p", zeros({3}, DType::float64));
    q = register_parameter("q", zeros({2}));
  }
  Tensor p, q;
};

void test_partial_gradients(const distributed::ProcessGroup& group, Checks& checks) {
  auto module = std::make_shared<PartlyUsed>();
  distributed::DistributedDataParallel ddp(*module, group);
  if (group.rank() % 2 == 1) (module->p * tensor({1, 2, 3}, {3}, DType::float64)).sum().backward();
  ddp.average_gradients();
  const double odd = group.world_size() / 2;  // ranks 1, 3, ...
  const double w = group.world_size();
  bool ok = !module->q.grad().defined();
  if (odd > 0) ok = ok && module->p.grad().defined() && module->p.grad().to_vector() == std::vector<double>{odd / w, 2 * odd / w, 3 * odd / w};
  checks.expect(!group.any(!ok), group, "a gradient on some ranks only counts as zero on the others; none anywhere stays none");
}

// This rank's rows of global batch `step`, all of them or micro-batch k of n.
data::Batch rows_of(const data::Dataset& dataset, const data::DistributedSampler& sampler, std::int64_t step,
                    std::int64_t k = 0, std::int64_t n = 1) {
  const data::Batch batch = sampler.batch(dataset, step / sampler.batches_per_epoch(), step % sampler.batches_per_epoch());
  if (n == 1) return batch;
  const std::int64_t rows = batch.inputs.size(0) / n;
  data::Batch micro;
  micro.inputs = narrow(batch.inputs, 0, k * rows, rows);
  micro.targets = narrow(batch.targets, 0, k * rows, rows);
  return micro;
}

Tensor mean_loss(nn::TransformerLM& model, const data::Batch& batch) {
  const Tensor logits = model.forward(batch.inputs);
  return cross_entropy(logits.reshape({-1, kVocab}), batch.targets.reshape({-1}));
}

// snippet: accumulated_step
// One training::update of a data-parallel run with gradient accumulation: micro-batches
// 0..n-2 backward under no_sync() (local accumulation only), the last one reduces the sum.
training::UpdateResult accumulated_step(nn::TransformerLM& model, optim::Optimizer& optimizer,
                                        distributed::DistributedDataParallel& ddp, const data::Dataset& dataset,
                                        const data::DistributedSampler& sampler, std::int64_t step, std::int64_t n,
                                        bool take_step = true) {
  distributed::DistributedDataParallel::NoSync no_sync;
  training::UpdateHooks hooks;
  if (!take_step) hooks.step = [] {};
  hooks.before_backward = [&](bool last) { no_sync = last ? distributed::DistributedDataParallel::NoSync() : ddp.no_sync(); };
  hooks.after_backward = [&] { ddp.average_gradients(); };
  return training::update(
      optimizer, n, [&](std::int64_t k) { return mean_loss(model, rows_of(dataset, sampler, step, k, n)); },
      model.named_parameters(), 1.0, hooks);
}
// end snippet

// Overlapped and after-backward allreduce: the same buckets, the same collective, the same
// order, so the same bits, step after step (float32 AdamW, where any change of summation
// order would show). The overlapped run must really start buckets during backward.
void test_overlap_is_bitwise(const distributed::ProcessGroup& group, Checks& checks) {
  const int rank = group.rank(), world = group.world_size();
  const auto dataset = random_sequences();
  const data::DistributedSampler sampler(dataset->size(), kGlobalBatch, rank, world, /*seed=*/9);
  auto overlapped = tiny_lm(100, DType::float32), after = tiny_lm(100, DType::float32);
  distributed::DistributedDataParallel ddp_overlapped(*overlapped, group, distributed::DDPOptions().bucket_mb(0.004));
  distributed::DistributedDataParallel ddp_after(*after, group, distributed::DDPOptions().bucket_mb(0.004).overlap(false));
  const auto opt_overlapped = make_optimizer(*overlapped, "adamw"), opt_after = make_optimizer(*after, "adamw");
  bool identical = true;
  std::int64_t started = 0, started_without = 0;
  for (std::int64_t step = 0; step < kSteps; ++step) {
    accumulated_step(*overlapped, *opt_overlapped, ddp_overlapped, *dataset, sampler, step, 1);
    started += ddp_overlapped.last_buckets_started_in_backward();
    accumulated_step(*after, *opt_after, ddp_after, *dataset, sampler, step, 1);
    started_without += ddp_after.last_buckets_started_in_backward();
    identical = identical && state_bytes(*overlapped) == state_bytes(*after);
  }
  checks.expect(!group.any(!identical), group,
                "overlapped allreduce == allreduce after backward, bitwise, after each of " + std::to_string(kSteps) +
                    " float32 AdamW steps (" + std::to_string(ddp_after.num_buckets()) + " buckets)");
  checks.expect(!group.any(started != kSteps * ddp_overlapped.num_buckets()) && started_without == 0, group,
                "with overlap every bucket started inside backward (" + std::to_string(started) + " of " +
                    std::to_string(kSteps * ddp_overlapped.num_buckets()) + "); without, none");
  // A second backward in one step without no_sync() would reduce a gradient twice: refused.
  mean_loss(*overlapped, rows_of(*dataset, sampler, 0)).backward();
  std::string error;
  try {
    mean_loss(*overlapped, rows_of(*dataset, sampler, 1)).backward();
  } catch (const std::exception& e) {
    error = e.what();
  }
  ddp_overlapped.average_gradients();
  checks.expect(error.find("no_sync()") != std::string::npos, group,
                "a second backward() without no_sync() is refused: " + error.substr(0, 120) + "...");
}

// N micro-batches of b/N rows, accumulated under no_sync(), against one batch of b rows per
// rank, in float64: the averaged gradients of a step agree to 1e-12 relative (rounding only:
// the sums are taken in another order), and so do the parameters after kSteps SGD steps.
// AdamW amplifies rounding where a gradient is nearly zero (it divides by the gradient's RMS;
// the attention key bias has an exact gradient of zero), so its bound after kSteps is 1e-10.
void test_accumulation(const distributed::ProcessGroup& group, Checks& checks) {
  const int rank = group.rank(), world = group.world_size();
  const auto dataset = random_sequences();
  const data::DistributedSampler sampler(dataset->size(), kGlobalBatch, rank, world, /*seed=*/9);
  for (const std::int64_t n : {2, 4}) {
    for (const std::string kind : {"sgd", "adamw"}) {
      auto accumulated = tiny_lm(100), whole = tiny_lm(100);
      distributed::DistributedDataParallel ddp_accumulated(*accumulated, group, distributed::DDPOptions().bucket_mb(0.004));
      distributed::DistributedDataParallel ddp_whole(*whole, group, distributed::DDPOptions().bucket_mb(0.004));
      const auto opt_accumulated = make_optimizer(*accumulated, kind), opt_whole = make_optimizer(*whole, kind);
      accumulated_step(*accumulated, *opt_accumulated, ddp_accumulated, *dataset, sampler, 0, n, false);
      accumulated_step(*whole, *opt_whole, ddp_whole, *dataset, sampler, 0, 1, false);
      const double grad_rel = max_relative_difference(*accumulated, *whole, /*gradients=*/true);
      double loss_rel = 0;
      for (std::int64_t step = 0; step < kSteps; ++step) {
        const double a = accumulated_step(*accumulated, *opt_accumulated, ddp_accumulated, *dataset, sampler, step, n).loss;
        const double b = accumulated_step(*whole, *opt_whole, ddp_whole, *dataset, sampler, step, 1).loss;
        loss_rel = std::max(loss_rel, std::abs(a - b) / std::abs(b));
      }
      const double rel = max_relative_difference(*accumulated, *whole);
      const double bound = kind == "sgd" ? 1e-12 : 1e-10;
      const bool ok = grad_rel <= 1e-12 && loss_rel <= 1e-12 && rel <= bound;
      char what[300];
      std::snprintf(what, sizeof what,
                    "%d process(es), %s: %lld micro-batches of %lld rows == one batch of %lld rows per process: "
                    "gradients %.2g, losses %.2g <= 1e-12, parameters after %lld steps %.2g <= %.0e (relative)",
                    world, kind.c_str(), static_cast<long long>(n), static_cast<long long>(sampler.local_batch() / n),
                    static_cast<long long>(sampler.local_batch()), grad_rel, loss_rel, static_cast<long long>(kSteps),
                    rel, bound);
      checks.expect(!group.any(!ok), group, what);
      checks.expect(distributed::in_sync(*accumulated, group), group, "accumulated: the ranks stay bitwise equal");
    }
  }
}

// Rank 1 throws in the middle of training while rank 0 waits in an allreduce.
void train_until_rank1_fails(const distributed::ProcessGroup& group) {
  const auto dataset = random_sequences();
  auto model = tiny_lm(100);
  distributed::DistributedDataParallel ddp(*model, group);
  const auto optimizer = make_optimizer(*model, "adamw");
  const data::DistributedSampler sampler(dataset->size(), kGlobalBatch, group.rank(), group.world_size(), 9);
  for (std::int64_t step = 0; step < 1000; ++step) {
    if (group.rank() == 1 && step == 2) throw std::runtime_error("injected failure at step 2");
    train_shard(*model, *optimizer, ddp, group, *dataset, sampler, step);
  }
}

// The start-up checks: equal values pass, then rank 1 claims another build and every rank
// must throw the same error, naming rank 1 and both values.
void test_mismatch(const distributed::ProcessGroup& group) {
  distributed::require_same(group, "tapegrad build", build_id());
  distributed::require_same_entries(group, "model configuration", io::config_fields(tiny_lm(1)->config));
  if (group.is_main()) std::printf("PASS equal builds and configurations pass\n");
  const std::string mine = group.rank() == 1 ? build_id() + " (another one)" : build_id();
  distributed::require_same(group, "tapegrad build", mine);
}

// The last rank sleeps through step 2 (alive, silent) while the others wait for it in an
// allreduce, with a 3 s timeout: they must end the job, naming it.
void train_until_last_rank_hangs(distributed::ProcessGroup& group) {
  group.set_timeout(3);
  const auto dataset = random_sequences();
  auto model = tiny_lm(100);
  distributed::DistributedDataParallel ddp(*model, group);
  const auto optimizer = make_optimizer(*model, "adamw");
  const std::int64_t rows = 4 * group.world_size();  // any number of ranks
  const data::DistributedSampler sampler(dataset->size(), rows, group.rank(), group.world_size(), 9);
  for (std::int64_t step = 0; step < 1000; ++step) {
    if (group.rank() == group.world_size() - 1 && step == 2)
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    train_shard(*model, *optimizer, ddp, group, *dataset, sampler, step);
  }
}

}  // namespace

int main(int argc, char** argv) {
  set_num_threads(1);
  distributed::ProcessGroup group;
  const std::string mode = argc > 1 ? argv[1] : "equivalence";
  try {
    if (mode == "compare" && (argc == 4 || argc == 5))
      return compare_checkpoints(argv[2], argv[3], argc == 5 ? std::stod(argv[4]) : 1e-6) ? 0 : 1;
    if (mode == "fail") {
      train_until_rank1_fails(group);
      std::printf("no rank failed (run with 2 or more processes)\n");
      return 1;
    }
    if (mode == "mismatch") {
      test_mismatch(group);
      std::printf("FAIL the mismatch was not found (run with 2 or more processes)\n");
      return 1;
    }
    if (mode == "hang") {
      train_until_last_rank_hangs(group);
      std::printf("no rank hung (run with 2 or more processes)\n");
      return 1;
    }
    if (mode == "overlap" || mode == "accumulation") {
      Checks checks;
      if (mode == "overlap") test_overlap_is_bitwise(group, checks);
      else test_accumulation(group, checks);
      return group.any(checks.failed > 0) ? 1 : 0;
    }
    if (mode != "equivalence")
      throw std::invalid_argument("unknown mode '" + mode +
                                  "' (equivalence, overlap, accumulation, fail, mismatch, hang, or compare A B)");
    if (group.is_main())
      std::printf("%d processes, %s\n", group.world_size(), distributed::ProcessGroup::library_version().c_str());
    Checks checks;
    test_broadcast_and_gradients(group, checks);
    test_training(group, checks, "sgd", DType::float64, 1e-6);
    test_training(group, checks, "adamw", DType::float64, 1e-6);
    test_training(group, checks, "sgd", DType::float32, 1e-5);
    test_training(group, checks, "adamw", DType::float32, 1e-3);
    test_partial_gradients(group, checks);
    const bool failed = group.any(checks.failed > 0);
    if (group.is_main()) std::printf("%s\n", failed ? "FAILED" : "all checks passed");
    return failed ? 1 : 0;
  } catch (const std::exception& e) {
    // An error on one rank ends them all: the others may be waiting in a collective.
    std::fprintf(stderr, "ddp_test: rank %d: error: %s\n", group.rank(), e.what());
    group.abort(1);
  }
}
