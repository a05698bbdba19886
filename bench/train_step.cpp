// train_step.cpp — how fast does a whole training step run? A GPT-2-style LM (learned
// positions, tied head, GELU-tanh MLP 4x, LayerNorm 1e-5, AdamW) in any placement, timed
// step by step after a warm-up. bench/torch_train_step.py builds the same model in PyTorch,
// and bench/compare_train_step.py runs both interleaved and prints the ratios.
//
//   train_step --config S --threads 1            # ms/step (median, min, max), tokens/s, GFLOP/s, peak RSS
//   train_step --config M --placement post --steps 10 --warmup 2
//   train_step --config S --profile              # time per op kind, forward and backward
//   train_step --config S --floor                # the step against its GEMM floor
//   TAPEGRAD_GEMM_BACKEND=auto train_step --floor --floor-backend openblas   # a step on oneDNN, OpenBLAS's floor
//   train_step --config M --versus tapegrad      # steps alternately on OpenBLAS and tapegrad's kernel, paired
//
// The GEMM floor: one step's products are counted by shape (autograd/cpu/gemm_census.hpp), each
// shape's rate is measured in this process with the same threads (autograd/cpu/gemm_rate.hpp),
// and the floor is Σ calls · 2MNK / rate: the step's time if it did nothing but its GEMMs,
// each at the speed BLAS reaches on it. The step's median over the floor says how much time
// goes elsewhere (elementwise ops, softmax, norms, the optimizer, allocation).
//
// GFLOP/s counts the matmul work of a step (3x the forward: the forward, then dA and dB in
// backward), attention's two batched products at full T x T (as the kernel computes them), and
// the LM head; the elementwise ops are left out.
#include <CLI/CLI.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <vector>

#include <tapegrad/autograd/profiler.hpp>
#include <tapegrad/tapegrad.hpp>

#include "../examples/cli_checks.hpp"
#include "bench_configs.hpp"
#include "bench_stats.hpp"

using namespace tapegrad;
using tapegrad::bench::BenchConfig;
using tapegrad::bench::config_named;

namespace {

struct GemmFloor {
  double ms = 0;       // Σ calls · 2MNK / rate, per step
  double step_ms = 0;  // the same products' time inside the step, per step
  std::string table;   // one line per shape, most time first
};

// Measures each shape of the census (seconds of timing each) and sums the floor; the census
// was taken over `steps` steps, so its counts and times are divided by that.
GemmFloor gemm_floor_of(const GemmCensus& census, int steps, double seconds) {
  struct Row {
    GemmCall call;
    double calls, gflops_per_s, ms, step_gflops_per_s, step_ms;
  };
  std::vector<Row> rows;
  GemmFloor f;
  for (const auto& [call, count] : census.calls) {
    const double calls = double(count) / steps, step_s = census.seconds.at(call) / steps;
    const double rate = measure_gemm_flops_per_second(call, seconds).flops_per_second;
    const double ms = 1000.0 * calls * call.flops() / rate;
    rows.push_back({call, calls, rate / 1e9, ms, calls * call.flops() / step_s / 1e9, 1000.0 * step_s});
    f.ms += ms;
    f.step_ms += 1000.0 * step_s;
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ms > b.ms; });
  char line[200];
  std::snprintf(line, sizeof line, "    %-28s %7s %9s %9s %9s %9s %6s\n", "GEMM (dtype, op, MxNxK)", "calls", "GFLOP/s",
                "ms/step", "in step", "ms there", "share");
  f.table = line;
  for (const Row& r : rows) {
    std::snprintf(line, sizeof line, "    %-28s %7.0f %9.1f %9.3f %9.1f %9.3f %5.1f%%\n", r.call.str().c_str(), r.calls,
                  r.gflops_per_s, r.ms, r.step_gflops_per_s, r.step_ms, 100 * r.ms / f.ms);
    f.table += line;
  }
  return f;
}

// Matmul FLOPs of one training step (forward + backward = 3 x forward).
double step_flops(const BenchConfig& c) {
  const double tokens = static_cast<double>(c.batch * c.seq_len), d = static_cast<double>(c.d_model);
  const double per_layer = 2 * tokens * (4 * d * d + 8 * d * d)                          // qkv+out, fc1+fc2
                           + 2 * 2 * static_cast<double>(c.batch) * c.seq_len * c.seq_len * d;  // QKᵀ, PV
  const double head = 2 * tokens * d * static_cast<double>(c.vocab);
  return 3 * (static_cast<double>(c.layers) * per_layer + head);
}

// The step on two GEMM libraries, alternating step by step in one process (own, other, other,
// own, ...: each pair in the opposite order to the last), so that a slow spell of this shared
// machine falls on both alike. Per pair, other's time over own's; their median and quartiles.
// (Run on the same library on both sides, the medians came out 1.000, 1.002 and 1.003 on M.)
struct PairedSteps {
  double own_ms, other_ms;             // medians of each side's steps
  double ratio, ratio_q1, ratio_q3;    // other / own: the median pair, the quartiles
  double ratio_min, ratio_max;
};

template <typename Step>
PairedSteps alternate_steps(blas::GemmBackend own, blas::GemmBackend other, int pairs, int warmup, Step&& step) {
  const auto timed = [&](blas::GemmBackend backend) {
    blas::set_gemm_backend(backend);
    const auto t0 = std::chrono::steady_clock::now();
    step();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  for (int i = 0; i < warmup; ++i) timed(other);  // its first products (a panel buffer) out of the timing
  std::vector<double> own_ms, other_ms, ratio;
  for (int p = 0; p < pairs; ++p) {
    double a, b;
    if (p % 2 == 0) a = timed(own), b = timed(other);
    else b = timed(other), a = timed(own);
    own_ms.push_back(a), other_ms.push_back(b), ratio.push_back(b / a);
  }
  blas::set_gemm_backend(own);
  using bench::quantile;
  return {quantile(own_ms, 0.5), quantile(other_ms, 0.5), quantile(ratio, 0.5), quantile(ratio, 0.25),
          quantile(ratio, 0.75), quantile(ratio, 0.0), quantile(ratio, 1.0)};
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// --floor-backend's and --versus's check: one of the library's names (blas::parse_gemm_backend),
// or "same" where allowed, and built into this tapegrad.
CLI::Validator backend_named(bool same_allowed) {
  const std::string names = std::string(same_allowed ? "same|" : "") + "openblas|dnnl|auto|tapegrad";
  const std::string choices = std::string(same_allowed ? "same, " : "") + "openblas, dnnl, auto or tapegrad";
  return CLI::Validator(
      [same_allowed, choices](std::string& text) -> std::string {
        if (same_allowed && text == "same") return "";
        try {
          const blas::GemmBackend backend = blas::parse_gemm_backend(text);
          if (blas::gemm_backend_available(backend)) return "";
          return backend == blas::GemmBackend::tapegrad
                     ? "'" + text + "' needs AVX-512, and this tapegrad was built without it (-DTAPEGRAD_NATIVE=ON "
                       "on an AVX-512 CPU)"
                     : "'" + text + "' needs oneDNN, and this tapegrad was built without it (-DTAPEGRAD_WITH_DNNL=ON)";
        } catch (const ValueError&) {
          return "must be " + choices + ", got '" + text + "'";
        }
      },
      names, "");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Time a transformer LM training step (forward, backward, AdamW)"};
  std::string config_name = "S", placement = "pre";
  int threads = 1, steps = 20, warmup = 3;
  std::uint64_t seed = 0;
  bool profile = false, csv = false, floor = false, checkpoint = false, keep_norm_outputs = false;
  double floor_seconds = 0.1;
  std::string floor_backend = "same", versus;
  app.add_option("--config", config_name, "S, M, G or L (see bench/README.md)")->capture_default_str();
  app.add_option("--placement", placement, "pre, post, b2t, deepnorm, rezero, none")->capture_default_str();
  app.add_option("--threads", threads, "threads for OpenBLAS and tapegrad's loops")->capture_default_str();
  app.add_option("--steps", steps, "timed steps")->capture_default_str()->check(cli::positive);
  app.add_option("--warmup", warmup, "untimed steps first (2 or more for the steady state: the second step still allocates, as the optimizer made its moments from cached memory in the first)")->capture_default_str()->check(cli::non_negative);
  app.add_option("--seed", seed, "initialization and data seed")->capture_default_str();
  app.add_flag("--profile", profile, "also print the time per op kind (forward and backward)");
  app.add_flag("--csv", csv, "one machine-readable line: config,placement,threads,median_ms,min_ms,max_ms,tokens_per_s,gflops,peak_rss_mib");
  app.add_flag("--floor", floor, "also measure the step's GEMM floor: its products by shape, each shape's rate measured "
               "here, and the step as a multiple of the floor (with --csv: two more columns, floor_ms and x_floor)");
  app.add_flag("--checkpoint-activations", checkpoint, "run every block under checkpoint(): its forward keeps only "
               "its input, its backward runs it again (less memory, one more forward)");
  app.add_flag("--keep-norm-outputs", keep_norm_outputs, "keep each norm's output for the backward instead of "
               "making it again there (set_recompute_enabled(false): faster, more memory)");
  app.add_option("--floor-seconds", floor_seconds, "seconds of timing per GEMM shape for --floor")
      ->capture_default_str()->check(cli::positive);
  app.add_option("--floor-backend", floor_backend, "the GEMM library whose rates make the floor: same (the step's own, "
                 "TAPEGRAD_GEMM_BACKEND), or openblas, dnnl, auto or tapegrad (e.g. a step on oneDNN against "
                 "OpenBLAS's floor, the reference of bench/README.md)")
      ->capture_default_str()
      ->check(backend_named(true));
  app.add_option("--versus", versus, "also run the timed steps alternately on this GEMM library (openblas, dnnl, auto "
                 "or tapegrad) and on the step's own, step by step, and print the ratio of each pair: a comparison "
                 "of the two that a slow spell of the machine hits alike")
      ->check(backend_named(false));
  CLI11_PARSE(app, argc, argv);
  const blas::GemmBackend step_backend = blas::gemm_backend();
  const blas::GemmBackend floor_library = floor_backend == "same" ? step_backend : blas::parse_gemm_backend(floor_backend);

  set_num_threads(threads);
  set_recompute_enabled(!keep_norm_outputs);
  const BenchConfig c = config_named(config_name);
  manual_seed(seed);
  nn::TransformerLM model(bench::lm_config_of(c, placement));
  model.set_activation_checkpointing(checkpoint);
  optim::AdamW opt(optim::weight_decay_groups(model, optim::AdamOptions(3e-4).weight_decay(0.1)));

  Generator gen(seed + 1);
  const Tensor tokens = randint(0, c.vocab, {c.batch, c.seq_len + 1}, gen);
  const Tensor inputs = narrow(tokens, 1, 0, c.seq_len).contiguous();
  const Tensor targets = narrow(tokens, 1, 1, c.seq_len).contiguous().reshape({-1});

  auto step = [&] {
    opt.zero_grad();
    // The logits are not kept past the loss, as in a training loop: the cross-entropy's backward
    // then writes their gradient over them.
    const Tensor loss = cross_entropy(model.forward(inputs).reshape({c.batch * c.seq_len, c.vocab}), targets);
    loss.backward();
    opt.step();
    return loss.item();
  };

  for (int i = 0; i < warmup; ++i) step();
  const AllocatorStats before = allocator_stats();
  std::vector<double> ms;
  profiler::Profile prof;
  {
    std::optional<profiler::ProfileGuard> guard;
    if (profile) guard.emplace(prof);
    for (int i = 0; i < steps; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      step();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  const AllocatorStats after = allocator_stats();
  std::optional<PairedSteps> paired;
  if (!versus.empty()) paired = alternate_steps(step_backend, blas::parse_gemm_backend(versus), steps, warmup, step);
  // The census: a few more steps, each product counted and timed where it runs.
  GemmCensus census;
  const int census_steps = std::min(steps, 10);
  if (floor) {
    GemmCensusGuard taking(census);
    for (int i = 0; i < census_steps; ++i) step();
  }
  const auto [fastest, slowest] = std::minmax_element(ms.begin(), ms.end());
  const double median = bench::median(ms);
  const double tokens_per_s = static_cast<double>(c.batch * c.seq_len) / (median / 1000);
  const double gflops = step_flops(c) / (median / 1000) / 1e9;
  GemmFloor gemm_floor;
  if (floor) {  // the rates from floor_library; the step ran on step_backend (the same by default)
    blas::set_gemm_backend(floor_library);
    gemm_floor = gemm_floor_of(census, census_steps, floor_seconds);
    blas::set_gemm_backend(step_backend);
  }
  if (csv) {
    std::printf("%s,%s,%d,%.2f,%.2f,%.2f,%.0f,%.1f,%.0f", config_name.c_str(), placement.c_str(), threads, median,
                *fastest, *slowest, tokens_per_s, gflops, peak_rss_mib());
    if (floor) std::printf(",%.2f,%.3f", gemm_floor.ms, median / gemm_floor.ms);
    std::printf("\n");
  } else {
    std::printf("tapegrad %s (%lld layers, d %lld, T %lld, B %lld, vocab %lld), %s, %d thread(s), BLAS core %s, "
                "GEMM backend %s\n",
                config_name.c_str(), (long long)c.layers, (long long)c.d_model, (long long)c.seq_len,
                (long long)c.batch, (long long)c.vocab, placement.c_str(), threads, blas_core_name().c_str(),
                blas::gemm_backend_name(blas::gemm_backend()));
    if (checkpoint) std::printf("  activation checkpointing: every block recomputed in backward\n");
    if (keep_norm_outputs) std::printf("  norm outputs kept for the backward (not made again there)\n");
    std::printf("  %.2f ms/step median (min %.2f, max %.2f over %d steps), %.0f tokens/s, %.1f GFLOP/s, peak RSS %.0f MiB\n",
                median, *fastest, *slowest, steps, tokens_per_s, gflops, peak_rss_mib());
    std::printf("  tensors: %.0f MiB live at most, %.0f MiB held by the allocator at most (live + cached for reuse)\n",
                double(Storage::peak_live_bytes()) / (1 << 20), double(allocator_stats().peak_bytes) / (1 << 20));
    std::printf("  %.0f tensor allocations per step, %.1f of them new memory (the rest reused from the cache)\n",
                double(after.allocations - before.allocations) / steps,
                double(after.os_allocations - before.os_allocations) / steps);
    // The optimizer makes its moments in the first step, from blocks the allocator had cached,
    // so the second step asks the system for memory again (and pays its page faults); from the
    // third on, a step allocates nothing new. With --warmup 1 the first timed step is not yet
    // the steady state: the median hardly moves, but --profile's sums do (G's feed-forward
    // forward: 84-86% of its time in GEMMs with --warmup 1, 93-95% with --warmup 2).
    if (after.os_allocations > before.os_allocations)
      std::printf("  note: the timed steps were not all in the steady state (they allocated new memory); "
                  "--warmup 2 or more times only steady steps\n");
  }
  if (floor && !csv) {
    std::printf("  GEMM floor %.2f ms: %.3f GFLOP in %lld products of %zu shapes, at their rates measured here on %s; "
                "the step is %.2fx its floor\n",
                gemm_floor.ms, census.total_flops() / census_steps / 1e9,
                static_cast<long long>(census.total_calls() / census_steps), census.calls.size(), blas::gemm_backend_name(floor_library),
                median / gemm_floor.ms);
    std::printf("  in the step (%d more steps, each product timed) the same products took %.2f ms, %.2fx the floor; "
                "the rest of the step %.2f ms\n",
                census_steps, gemm_floor.step_ms, gemm_floor.step_ms / gemm_floor.ms, median - gemm_floor.step_ms);
    std::cout << gemm_floor.table;
  }
  if (paired)
    std::printf("  versus %s, %d pairs of steps in turn: %.2f ms a step on %s, %.2f ms on %s; %s's time over %s's, "
                "pair by pair: median %.4f (quartiles %.4f-%.4f, range %.4f-%.4f)\n",
                versus.c_str(), steps, paired->own_ms, blas::gemm_backend_name(step_backend), paired->other_ms,
                versus.c_str(), versus.c_str(), blas::gemm_backend_name(step_backend), paired->ratio, paired->ratio_q1,
                paired->ratio_q3, paired->ratio_min, paired->ratio_max);
  if (profile) std::cout << prof.report(steps);
  return 0;
}
