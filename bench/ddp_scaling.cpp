// ddp_scaling.cpp — data-parallel training under mpirun: what communication costs per step,
// how much of it the overlap with backward hides, and the throughput. One global batch per
// step, split over the processes, for a transformer LM on random tokens.
//
//   mpirun -n 2 ddp_scaling --threads 1 --rounds 5 --steps 4
//
// Three ways of taking the same step are interleaved, round after round (each round runs
// --steps steps of each, in a rotated order), so that a slow spell of a shared machine hits
// all three alike:
//
//   none     the gradients are not communicated at all (every backward under no_sync()):
//            the step's compute alone, the reference;
//   after    the allreduce of every bucket after backward (DDPOptions::overlap(false));
//   overlap  each bucket's allreduce starts inside backward when its gradients are final.
//
// The communication a step pays is measured two ways. Directly (comm_ms): the time inside
// DDP's hooks during backward (copying buckets in, starting and progressing allreduces) plus
// the time in average_gradients(), after a barrier that takes the wait for the slower rank's
// backward out. By difference (step_minus_none_ms): step(mode) − step(none), which carries the
// compute's noise too. hidden = 1 − comm(overlap) / comm(after): the share of the allreduce
// time the overlap takes off the step. Each step is timed from a barrier to a barrier, so that
// the slowest rank sets the time, as it does in training. Figures are medians over all timed
// steps, with the range of the per-round medians.
//
// --zero1 adds a fourth mode, overlap + ZeRO-1 (each rank steps its shard of the optimizer
// state, then the parameters are shared: its comm_ms leaves that broadcast out, its step time
// has it), and prints each rank's optimizer-state memory for plain DDP and for ZeRO-1.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <tapegrad/distributed/ddp.hpp>
#include <tapegrad/distributed/zero.hpp>
#include <tapegrad/tapegrad.hpp>

#include "../examples/cli_checks.hpp"
#include "bench_stats.hpp"

using namespace tapegrad;
using bench::median;

namespace {

struct Timings {
  std::vector<double> all;                   // every timed step, seconds
  std::vector<double> round_medians;         // one per round
  std::vector<double> comm;                  // seconds of communication the step paid, per step
};

}  // namespace

int main(int argc, char** argv) {
  std::int64_t layers = 4, d_model = 128, heads = 4, seq_len = 64, batch = 16, vocab = 256;
  std::int64_t rounds = 5, steps = 4, warmup = 2, threads = 1;
  double bucket_mb = 25;
  bool zero1 = false;
  CLI::App app{"Data-parallel training: exposed communication with and without overlap (run it under mpirun)"};
  app.add_option("--layers", layers, "transformer blocks")->check(cli::positive);
  app.add_option("--d-model", d_model, "model width")->check(cli::positive);
  app.add_option("--heads", heads, "attention heads")->check(cli::positive);
  app.add_option("--seq-len", seq_len, "tokens per sequence")->check(cli::positive);
  app.add_option("--batch", batch, "global batch: sequences per step over all processes")->check(cli::positive);
  app.add_option("--vocab", vocab, "vocabulary size")->check(cli::positive);
  app.add_option("--rounds", rounds, "interleaved rounds")->check(cli::positive);
  app.add_option("--steps", steps, "timed steps of each mode per round")->check(cli::positive);
  app.add_option("--warmup", warmup, "untimed steps of each mode first")->check(cli::non_negative);
  app.add_option("--threads", threads, "threads per process")->check(cli::positive);
  app.add_option("--bucket-mb", bucket_mb, "megabytes of gradients per allreduce")->check(cli::positive);
  app.add_flag("--zero1", zero1, "also time overlap + ZeRO-1, and report the optimizer state per rank");
  CLI11_PARSE(app, argc, argv);

  distributed::ProcessGroup group;
  try {
    set_num_threads(static_cast<int>(threads));
    const int rank = group.rank(), world = group.world_size();
    data::shard_rows(batch, rank, world);  // throws unless the batch splits evenly

    manual_seed(1);
    nn::TransformerLMConfig config;
    config.vocab_size = vocab;
    config.max_seq_len = seq_len;
    config.n_layers = layers;
    config.block.d_model = d_model;
    config.block.n_heads = heads;
    nn::TransformerLM model(config);
    distributed::DistributedDataParallel ddp(model, group, distributed::DDPOptions().bucket_mb(bucket_mb));
    optim::AdamW optimizer(optim::weight_decay_groups(model, optim::AdamOptions(1e-3).weight_decay(0.1)));
    // ZeRO-1 steps its own AdamW (its moments are the ones sharded).
    optim::AdamW sharded(optim::weight_decay_groups(model, optim::AdamOptions(1e-3).weight_decay(0.1)));
    std::unique_ptr<distributed::ZeroRedundancyOptimizer> zero;
    if (zero1) zero = std::make_unique<distributed::ZeroRedundancyOptimizer>(sharded, group);

    Generator gen(7);  // the same draws on every rank: each keeps its rows of the global batch
    auto step = [&](const std::string& mode) {
      const Tensor tokens = randint(0, vocab, {batch, seq_len + 1}, gen);
      data::Batch global;
      global.inputs = narrow(tokens, 1, 0, seq_len).contiguous();
      global.targets = narrow(tokens, 1, 1, seq_len).contiguous();
      const data::Batch mine = data::shard_of(global, rank, world);
      if (mode != "none") ddp.set_overlap(mode != "after");
      group.barrier();
      const auto start = std::chrono::steady_clock::now();
      const Tensor logits = model.forward(mine.inputs);
      const Tensor loss = cross_entropy(logits.reshape({-1, vocab}), mine.targets.reshape({-1}));
      optimizer.zero_grad();
      double comm = 0;
      if (mode == "none") {
        auto no_sync = ddp.no_sync();
        loss.backward();
        group.barrier();
      } else {
        loss.backward();
        group.barrier();  // the slower rank's backward: not communication (buckets in flight move on)
        ddp.average_gradients();
        comm = ddp.last_hook_seconds() + ddp.last_average_seconds();
      }
      if (mode == "zero1") zero->step();
      else optimizer.step();
      group.barrier();
      return std::make_pair(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), comm);
    };

    std::vector<std::string> modes = world > 1 ? std::vector<std::string>{"none", "after", "overlap"}
                                               : std::vector<std::string>{"none"};
    if (zero1 && world > 1) modes.push_back("zero1");
    std::map<std::string, Timings> timings;
    for (const auto& mode : modes)
      for (std::int64_t i = 0; i < warmup; ++i) step(mode);
    for (std::int64_t round = 0; round < rounds; ++round) {
      for (std::size_t m = 0; m < modes.size(); ++m) {
        const std::string& mode = modes[(m + static_cast<std::size_t>(round)) % modes.size()];
        std::vector<double> these;
        for (std::int64_t i = 0; i < steps; ++i) {
          const auto [seconds, comm] = step(mode);
          these.push_back(seconds);
          timings[mode].comm.push_back(comm);
        }
        timings[mode].all.insert(timings[mode].all.end(), these.begin(), these.end());
        timings[mode].round_medians.push_back(median(these));
      }
      if (group.is_main()) std::fprintf(stderr, "round %lld/%lld done\n", static_cast<long long>(round + 1), static_cast<long long>(rounds));
    }

    const double grad_mb = static_cast<double>(model.num_parameters()) * 4 / 1e6;
    if (group.is_main()) {
      std::printf("processes %d  threads %lld  parameters %lld (%.1f MB of float32 gradients)  buckets %lld  "
                  "global batch %lld x %lld tokens  %lld rounds x %lld steps per mode\n",
                  world, static_cast<long long>(threads), static_cast<long long>(model.num_parameters()), grad_mb,
                  static_cast<long long>(ddp.num_buckets()), static_cast<long long>(batch),
                  static_cast<long long>(seq_len), static_cast<long long>(rounds), static_cast<long long>(steps));
    }
    // Two measures of the communication a step pays. By difference: step(mode) − step(none),
    // which also carries the noise of the compute (large on a shared machine). Directly: the
    // time in the DDP hooks inside backward plus the time in average_gradients(), after a
    // barrier that takes the wait for the slower rank's backward out (each rank's, averaged).
    const double none_ms = 1e3 * median(timings["none"].all);
    std::map<std::string, double> by_difference, direct;
    for (const auto& mode : modes) {
      const Timings& t = timings[mode];
      const double ms = 1e3 * median(t.all);
      const auto [lo, hi] = std::minmax_element(t.round_medians.begin(), t.round_medians.end());
      by_difference[mode] = ms - none_ms;
      direct[mode] = 1e3 * group.mean(median(t.comm));
      if (group.is_main())
        std::printf("RESULT processes=%d mode=%s step_ms=%.2f range=%.2f-%.2f tokens_per_s=%.0f comm_ms=%.2f "
                    "step_minus_none_ms=%.2f\n",
                    world, mode.c_str(), ms, 1e3 * *lo, 1e3 * *hi, static_cast<double>(batch * seq_len) / (ms / 1e3),
                    direct[mode], by_difference[mode]);
    }
    if (world > 1 && group.is_main()) {
      std::printf("RESULT hidden=%.0f%% (1 - comm overlapped %.2f ms / comm after backward %.2f ms, measured directly)\n",
                  100 * (1 - direct["overlap"] / direct["after"]), direct["overlap"], direct["after"]);
      if (by_difference["after"] > 0)
        std::printf("RESULT hidden_by_difference=%.0f%% (1 - %.2f / %.2f ms of step time over no communication)\n",
                    100 * (1 - by_difference["overlap"] / by_difference["after"]), by_difference["overlap"],
                    by_difference["after"]);
      else
        std::printf("RESULT hidden_by_difference=n/a (after backward the step was %.2f ms over no communication: "
                    "below the noise)\n", by_difference["after"]);
    }
    if (zero) {
      // Plain DDP keeps every moment on every rank: the total is each rank's share there.
      const double total_mb = static_cast<double>(zero->total_state_bytes()) / 1e6;
      const double mine_mb = static_cast<double>(zero->state_bytes()) / 1e6;
      const double largest_mb = group.max(static_cast<std::uint64_t>(zero->state_bytes())) / 1e6;
      if (group.is_main())
        std::printf("RESULT optimizer_state_mb_per_rank ddp=%.2f zero1=%.2f (rank 0; largest rank %.2f) = %.0f%% of ddp's\n",
                    total_mb, mine_mb, largest_mb, 100 * largest_mb / total_mb);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp_scaling: rank %d: error: %s\n", group.rank(), e.what());
    group.abort(1);
  }
  return 0;
}
