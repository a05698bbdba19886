// ddp_scaling.cpp — throughput of data-parallel training under mpirun: one global batch per
// step, split over the processes, for a transformer LM on random tokens. Rank 0 prints
// tokens/s, ms per step and ms per step inside MPI_Allreduce. bench/ddp_scaling.sh runs it
// with 1 and 2 processes and works out the scaling efficiency.
//
//   mpirun -n 2 ddp_scaling --threads 1 --steps 20
//
// Each step is timed from a barrier to a barrier, so that the slowest rank sets the time, as
// it does in training. Before the allreduce, a barrier (timed apart as "wait") lets the
// faster rank wait for the slower one, so that allreduce_ms is the transfer and the sum
// alone; in training that wait is part of the allreduce.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <tapegrad/distributed/ddp.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

int main(int argc, char** argv) {
  std::int64_t layers = 4, d_model = 128, heads = 4, seq_len = 64, batch = 16, vocab = 256;
  std::int64_t steps = 20, warmup = 3, threads = 1;
  double bucket_mb = 25;
  CLI::App app{"Data-parallel training throughput (run it under mpirun)"};
  app.add_option("--layers", layers, "transformer blocks")->check(CLI::PositiveNumber);
  app.add_option("--d-model", d_model, "model width")->check(CLI::PositiveNumber);
  app.add_option("--heads", heads, "attention heads")->check(CLI::PositiveNumber);
  app.add_option("--seq-len", seq_len, "tokens per sequence")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "global batch: sequences per step over all processes")->check(CLI::PositiveNumber);
  app.add_option("--vocab", vocab, "vocabulary size")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_option("--threads", threads, "threads per process")->check(CLI::PositiveNumber);
  app.add_option("--bucket-mb", bucket_mb, "megabytes of gradients per allreduce")->check(CLI::PositiveNumber);
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

    Generator gen(7);  // the same draws on every rank: each keeps its rows of the global batch
    std::vector<double> step_s, wait_s, reduce_s;
    for (std::int64_t step = 0; step < warmup + steps; ++step) {
      const Tensor tokens = randint(0, vocab, {batch, seq_len + 1}, gen);
      data::Batch global;
      global.inputs = narrow(tokens, 1, 0, seq_len).contiguous();
      global.targets = narrow(tokens, 1, 1, seq_len).contiguous();
      const data::Batch mine = data::shard_of(global, rank, world);

      group.barrier();
      const auto start = std::chrono::steady_clock::now();
      const Tensor logits = model.forward(mine.inputs);
      const Tensor loss = cross_entropy(logits.reshape({-1, vocab}), mine.targets.reshape({-1}));
      optimizer.zero_grad();
      loss.backward();
      const auto wait_start = std::chrono::steady_clock::now();
      group.barrier();
      const double wait = std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_start).count();
      ddp.average_gradients();
      optimizer.step();
      group.barrier();
      if (step < warmup) continue;
      step_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      wait_s.push_back(wait);
      reduce_s.push_back(ddp.last_allreduce_seconds());
    }

    // Medians: robust to a step that another program on the machine slowed down.
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double step_med = median(step_s), wait_med = group.mean(median(wait_s)), reduce_med = group.mean(median(reduce_s));
    if (group.is_main()) {
      std::printf("processes %d  threads %lld  parameters %lld  buckets %lld  global batch %lld x %lld tokens\n", world,
                  static_cast<long long>(threads), static_cast<long long>(model.num_parameters()),
                  static_cast<long long>(ddp.num_buckets()), static_cast<long long>(batch),
                  static_cast<long long>(seq_len));
      std::printf("RESULT processes=%d step_ms=%.2f tokens_per_s=%.0f allreduce_ms=%.3f wait_ms=%.3f\n", world,
                  1e3 * step_med, static_cast<double>(batch * seq_len) / step_med, 1e3 * reduce_med, 1e3 * wait_med);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp_scaling: rank %d: error: %s\n", group.rank(), e.what());
    group.abort(1);
  }
  return 0;
}
