// checkpointing.cpp — what activation checkpointing costs and saves: deep LMs (d_model 256,
// T 256 by default) trained a few steps with and without it, the two alternating, each
// reporting its step time (median over the timed steps) and its memory:
//
//   activations  the most bytes of tensors alive during a step beyond those alive before it
//                (parameters, their gradients — kept and zeroed between steps — and the
//                optimizer's moments): what the forward keeps for the backward, plus the
//                backward's own temporaries
//   total        the most bytes of tensors alive during the step
//
// Step times are each run's fastest timed step; the overhead is taken within each round (the two
// settings run next to each other, in alternating order) and summarized over the rounds.
//
//   checkpointing --layers 48,96 --steps 3 --warmup 1 --rounds 3
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <tapegrad/tapegrad.hpp>

#include "../examples/cli_checks.hpp"
#include "bench_stats.hpp"

using namespace tapegrad;
using bench::median;

namespace {

struct Measure {
  double median_ms = 0, min_ms = 0;
  std::size_t activation_bytes = 0, total_bytes = 0;
};

Measure run(std::int64_t layers, std::int64_t d_model, std::int64_t heads, std::int64_t T, std::int64_t B,
            std::int64_t vocab, bool checkpointed, int steps, int warmup) {
  manual_seed(0);
  nn::TransformerLMConfig c;
  c.vocab_size = vocab;
  c.max_seq_len = T;
  c.n_layers = layers;
  c.block.d_model = d_model;
  c.block.n_heads = heads;
  c.block.activation = nn::Activation::gelu_tanh;
  nn::TransformerLM model(c);
  model.set_activation_checkpointing(checkpointed);
  optim::AdamW opt(optim::weight_decay_groups(model, optim::AdamOptions(3e-4).weight_decay(0.1)));
  Generator gen(1);
  const Tensor tokens = randint(0, vocab, {B, T + 1}, gen);
  const Tensor inputs = narrow(tokens, 1, 0, T).contiguous(), targets = narrow(tokens, 1, 1, T).contiguous().reshape({-1});
  Measure m;
  std::vector<double> ms;
  const nn::NamedTensors params = model.named_parameters();
  for (int i = 0; i < warmup + steps; ++i) {
    for (const auto& [_, p] : params)  // zeroed, not freed: the gradients count as "before"
      if (p.grad().defined()) p.grad().fill_(0.0);
    const std::size_t before = Storage::live_bytes();
    Storage::reset_peak_live_bytes();
    const auto t0 = std::chrono::steady_clock::now();
    cross_entropy(model.forward(inputs).reshape({B * T, vocab}), targets).backward();
    opt.step();
    const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i < warmup) continue;
    ms.push_back(elapsed);
    m.activation_bytes = std::max(m.activation_bytes, Storage::peak_live_bytes() - before);
    m.total_bytes = std::max(m.total_bytes, Storage::peak_live_bytes());
  }
  m.median_ms = median(ms);
  m.min_ms = *std::min_element(ms.begin(), ms.end());
  return m;
}

double mib(std::size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Activation checkpointing: step time and peak memory of deep LMs with and without it"};
  std::vector<std::int64_t> depths = {48, 96};
  std::int64_t d_model = 256, heads = 4, T = 256, B = 4, vocab = 256;
  int steps = 3, warmup = 1, threads = 1, rounds = 1;
  app.add_option("--layers", depths, "depths to measure")->delimiter(',');
  app.add_option("--d-model", d_model, "model width");
  app.add_option("--heads", heads, "attention heads");
  app.add_option("--seq-len", T, "context length T");
  app.add_option("--batch", B, "sequences per step");
  app.add_option("--vocab", vocab, "vocabulary size");
  app.add_option("--steps", steps, "timed steps per run")->check(cli::positive);
  app.add_option("--warmup", warmup, "untimed steps first")->check(cli::non_negative);
  app.add_option("--rounds", rounds, "runs of each setting, the two settings alternating")->check(cli::positive);
  app.add_option("--threads", threads, "threads for OpenBLAS and tapegrad's loops");
  CLI11_PARSE(app, argc, argv);
  set_num_threads(threads);
  std::printf("d_model %lld, heads %lld, T %lld, B %lld, vocab %lld, %d thread(s), BLAS core %s; %d timed steps per run\n",
              (long long)d_model, (long long)heads, (long long)T, (long long)B, (long long)vocab, threads,
              blas_core_name().c_str(), steps);
  std::printf("layers,checkpointing,round,median_ms,min_ms,activation_mib,total_mib\n");
  for (std::int64_t L : depths) {
    std::vector<Measure> plain, ck;
    for (int r = 0; r < rounds; ++r) {
      // the order alternates (off, on / on, off), so a drift of the machine's load cancels
      const bool on_first = r % 2 == 1;
      for (bool checkpointed : {on_first, !on_first}) {
        const Measure m = run(L, d_model, heads, T, B, vocab, checkpointed, steps, warmup);
        (checkpointed ? ck : plain).push_back(m);
        std::printf("%lld,%s,%d,%.1f,%.1f,%.1f,%.1f\n", (long long)L, checkpointed ? "on" : "off", r + 1, m.median_ms,
                    m.min_ms, mib(m.activation_bytes), mib(m.total_bytes));
        std::fflush(stdout);
      }
    }
    // Time: each round's step time (its fastest step, the least disturbed by other load) and
    // the overhead of checkpointing within the round, on against off run next to each other.
    std::vector<double> t0, t1, overhead;
    for (int r = 0; r < rounds; ++r) {
      t0.push_back(plain[r].min_ms), t1.push_back(ck[r].min_ms);
      overhead.push_back(100 * (ck[r].min_ms / plain[r].min_ms - 1));
    }
    // Memory is deterministic: every round measures the same bytes.
    const double a0 = mib(plain[0].activation_bytes), a1 = mib(ck[0].activation_bytes);
    const double p0 = mib(plain[0].total_bytes), p1 = mib(ck[0].total_bytes);
    const double block_input = mib(static_cast<std::size_t>(B * T * d_model) * sizeof(float));
    std::printf("# %lld layers: step %.0f -> %.0f ms, overhead %+.0f%% (rounds: %+.0f%% to %+.0f%%); activations %.0f -> %.0f MiB "
                "(%.1fx less; %.2f MiB per block, a block's input is %.2f MiB); total %.0f -> %.0f MiB (%.1fx less)\n",
                (long long)L, median(t0), median(t1), median(overhead), *std::min_element(overhead.begin(), overhead.end()),
                *std::max_element(overhead.begin(), overhead.end()), a0, a1, a0 / a1, a1 / static_cast<double>(L),
                block_input, p0, p1, p0 / p1);
  }
  return 0;
}
