// generate.cpp — how fast does a TransformerLM generate? Greedy tokens/s of one sequence with
// the KV cache (TransformerLM::generate: the prompt once, then one token per step) against
// recomputing the whole sequence at every step (forward() on all tokens so far, the last
// position's logits), on a model of random weights: GPT-2-style (learned positions, tied head,
// GELU-tanh MLP 4x, Pre-LN), batch 1. bench/torch_generate.py times the same shape in PyTorch
// with its own KV cache. Both runs must give the same tokens; the program checks it.
//
//   generate                                    # 512 tokens at d_model 256, 6 layers, 1 thread
//   generate --tokens 16 --d-model 32 --layers 2  # a smoke run
//   generate --rope --kv-heads 2                  # rotary positions, grouped-query attention
//
// It also prints the tensor allocations per generated token (and how many needed new memory
// from the system), and the memory-bandwidth limit of one-token decoding: each token reads
// every weight and the whole cache once, so a token cannot take less than those bytes over the
// read bandwidth, measured here on a buffer of the same size (so in the same cache level).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <tapegrad/tapegrad.hpp>

#include "../examples/cli_checks.hpp"

using namespace tapegrad;

namespace {

// The fastest of `passes` full reads of a buffer of `bytes` bytes, in bytes per second: every
// float is loaded once per pass (a vectorized sum, on the program's threads).
double read_bandwidth(double bytes, int passes = 20) {
  std::vector<float> buffer(static_cast<std::size_t>(bytes / sizeof(float)) + 1, 1.0f);
  const auto n = static_cast<std::int64_t>(buffer.size());
  const float* data = buffer.data();
  double best = 1e30, sink = 0;
  for (int pass = 0; pass < passes; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    float sum = 0;
#pragma omp parallel for simd reduction(+ : sum)
    for (std::int64_t i = 0; i < n; ++i) sum += data[i];
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    sink += sum;
  }
  if (sink < 0) std::printf("%f", sink);  // keeps the sums from being optimized away
  return static_cast<double>(n) * sizeof(float) / best;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Time greedy generation with the KV cache against recomputing the sequence at every step"};
  std::int64_t tokens = 512, d_model = 256, layers = 6, heads = 4, kv_heads = 0, vocab = 256, prompt_len = 4;
  int threads = 1;
  bool rope = false, skip_recompute = false;
  std::uint64_t seed = 0;
  app.add_option("--tokens", tokens, "tokens to generate")->capture_default_str()->check(cli::positive);
  app.add_option("--d-model", d_model, "model width")->capture_default_str()->check(cli::positive);
  app.add_option("--layers", layers, "blocks")->capture_default_str()->check(cli::positive);
  app.add_option("--heads", heads, "attention heads")->capture_default_str()->check(cli::positive);
  app.add_option("--kv-heads", kv_heads, "key/value heads (grouped-query attention; 0: --heads)")->capture_default_str();
  app.add_option("--vocab", vocab, "vocabulary size")->capture_default_str()->check(cli::positive);
  app.add_option("--prompt", prompt_len, "prompt tokens (random)")->capture_default_str()->check(cli::positive);
  app.add_option("--threads", threads, "threads for OpenBLAS and tapegrad's loops")->capture_default_str();
  app.add_option("--seed", seed, "weights and prompt seed")->capture_default_str();
  app.add_flag("--rope", rope, "rotary positions instead of a learned table");
  app.add_flag("--skip-recompute", skip_recompute, "time the KV cache only");
  CLI11_PARSE(app, argc, argv);

  try {
    set_num_threads(threads);
    manual_seed(seed);
    nn::TransformerLMConfig c;
    c.vocab_size = vocab;
    c.max_seq_len = prompt_len + tokens;  // the whole sequence fits the learned positions
    c.n_layers = layers;
    c.block.d_model = d_model;
    c.block.n_heads = heads;
    c.block.n_kv_heads = kv_heads;
    c.block.activation = nn::Activation::gelu_tanh;
    c.block.rope = rope;
    nn::TransformerLM model(c);
    model.eval();
    Generator gen(seed + 1);
    const Tensor prompt = randint(0, vocab, {1, prompt_len}, gen);
    nn::GenerateOptions greedy;
    greedy.temperature = 0;
    auto seconds_since = [](std::chrono::steady_clock::time_point t0) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };

    std::printf("tapegrad: %lld generated tokens after a prompt of %lld, d_model %lld, %lld layers, %lld heads "
                "(%lld kv), vocab %lld, %s, batch 1, %d thread(s)\n",
                (long long)tokens, (long long)prompt_len, (long long)d_model, (long long)layers, (long long)heads,
                (long long)(kv_heads > 0 ? kv_heads : heads), (long long)vocab, rope ? "rope" : "learned positions",
                threads);
    model.generate(prompt, std::min<std::int64_t>(tokens, 8), greedy);  // warm-up: the allocator's cache
    auto t0 = std::chrono::steady_clock::now();
    const AllocatorStats before = allocator_stats();
    const std::vector<std::int64_t> cached = model.generate(prompt, tokens, greedy).to_vector<std::int64_t>();
    const double cached_s = seconds_since(t0);
    const AllocatorStats after = allocator_stats();
    const double cached_rate = static_cast<double>(tokens) / cached_s;
    std::printf("  kv cache:    %8.3f s  %10.1f tokens/s  (%.3f ms/token)\n", cached_s, cached_rate,
                1000 * cached_s / static_cast<double>(tokens));
    std::printf("  %.1f tensor allocations per token, %.3f of them new memory (the rest reused from the cache)\n",
                double(after.allocations - before.allocations) / double(tokens),
                double(after.os_allocations - before.os_allocations) / double(tokens));
    // Bytes one decoding step must read: every weight, and each layer's cached keys and values
    // (the mean cache length over the generated tokens).
    double weight_bytes = 0;
    for (const Tensor& p : model.parameters()) weight_bytes += double(p.numel()) * double(size_of(p.dtype()));
    const double kv_width = double(kv_heads > 0 ? kv_heads : heads) * double(d_model / heads);
    const double mean_length = double(prompt_len) + double(tokens - 1) / 2;
    const double cache_bytes = double(layers) * 2 * kv_width * mean_length * sizeof(float);
    const double bandwidth = read_bandwidth(weight_bytes + cache_bytes);
    const double limit_ms = 1000 * (weight_bytes + cache_bytes) / bandwidth;
    std::printf("  bandwidth limit: %.2f MB of weights + %.2f MB of cache (mean) per token at %.1f GB/s "
                "(read on a buffer that size) = %.3f ms/token; the kv cache runs at %.2fx the limit\n",
                weight_bytes / 1e6, cache_bytes / 1e6, bandwidth / 1e9, limit_ms,
                1000 * cached_s / double(tokens) / limit_ms);
    if (skip_recompute) return 0;

    // Recomputation: the whole sequence through forward() at every step.
    NoGradGuard no_grad;
    std::vector<std::int64_t> seq = prompt.to_vector<std::int64_t>();
    t0 = std::chrono::steady_clock::now();
    for (std::int64_t step = 0; step < tokens; ++step) {
      const auto T = static_cast<std::int64_t>(seq.size());
      const Tensor logits = narrow(model.forward(Tensor::from_vector(seq, {1, T})), 1, T - 1, 1);  // (1, 1, V)
      const std::vector<double> last = logits.to_vector();
      seq.push_back(std::max_element(last.begin(), last.end()) - last.begin());
    }
    const double recompute_s = seconds_since(t0);
    const double recompute_rate = static_cast<double>(tokens) / recompute_s;
    std::printf("  recompute:   %8.3f s  %10.1f tokens/s\n", recompute_s, recompute_rate);
    std::printf("  kv cache / recompute: %.1fx; tokens identical: %s\n", cached_rate / recompute_rate,
                seq == cached ? "yes" : "NO");
    return seq == cached ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "generate: error: %s\n", e.what());
    return 1;
  }
}
