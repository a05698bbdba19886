// generate.cpp — choosing the next token (greedy, temperature, top-k, top-p) and
// TransformerLM::generate: the prompt through the model once, then one token per step on a
// KVCache, each step's logits those of recomputing the whole sequence (tests/nn/test_generate).
#include "generate.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <string>

#include "../autograd/grad_mode.hpp"
#include "../autograd/ops.hpp"
#include "transformer_lm.hpp"

namespace tapegrad::nn {

namespace {
// "generate: <rule>, got <value>" as a ValueError, the value printed as streams print it.
template <typename V>
[[noreturn]] void refuse(const std::string& rule, V value) {
  std::ostringstream message;
  message << "generate: " << rule << ", got " << value;
  throw ValueError(message.str());
}
}  // namespace

void validate_generate_options(const GenerateOptions& o, std::int64_t vocab_size) {
  if (!(o.temperature >= 0) || !std::isfinite(o.temperature))
    refuse("temperature must be >= 0 and finite (0: greedy)", o.temperature);
  if (o.top_k < 0) refuse("top_k must be >= 0 (0: all tokens)", o.top_k);
  if (!(o.top_p > 0 && o.top_p <= 1)) refuse("top_p must be in (0, 1] (1: all tokens)", o.top_p);
  for (std::int64_t t : o.stop_tokens)
    if (t < 0 || t >= vocab_size)
      throw ValueError("generate: stop token " + std::to_string(t) + " is not in the vocabulary [0, " +
                       std::to_string(vocab_size) + ")");
}

namespace {
// The nucleus (Holtzman et al. 2019): zero every weight outside the smallest set of the
// largest weights whose sum reaches top_p·total; returns the kept sum. Ties are taken in
// token order, so the set is unique.
double keep_nucleus(std::vector<double>& w, double top_p, double total) {
  std::vector<std::int64_t> order(w.size());
  std::iota(order.begin(), order.end(), std::int64_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return w[a] > w[b]; });
  double kept = 0;
  std::size_t n = 0;
  while (n < order.size() && w[order[n]] > 0 && (n == 0 || kept < top_p * total)) kept += w[order[n++]];
  for (std::size_t i = n; i < order.size(); ++i) w[order[i]] = 0.0;
  return kept;
}
}  // namespace

std::int64_t next_token(std::vector<double> row, const GenerateOptions& o, Generator& gen) {
  const auto V = static_cast<std::int64_t>(row.size());
  const std::int64_t argmax = std::max_element(row.begin(), row.end()) - row.begin();
  if (o.temperature == 0) return argmax;
  // keep the top_k largest logits: those >= the k-th largest
  double cutoff = -INFINITY;
  if (o.top_k > 0 && o.top_k < V) {
    std::vector<double> sorted = row;
    std::nth_element(sorted.begin(), sorted.begin() + (o.top_k - 1), sorted.end(), std::greater<>());
    cutoff = sorted[o.top_k - 1];
  }
  // w_j = exp((z_j − max z) / temperature) ∝ softmax(z / temperature)_j, 0 when not kept
  const double top = row[argmax];
  double total = 0;
  for (double& v : row) total += (v = v >= cutoff ? std::exp((v - top) / o.temperature) : 0.0);
  if (o.top_p < 1) total = keep_nucleus(row, o.top_p, total);
  // the first j with u < w_0 + ... + w_j, u uniform in [0, total)
  double u = gen.next_double() * total;
  std::int64_t last_kept = argmax;
  for (std::int64_t j = 0; j < V; ++j) {
    if (row[j] <= 0) continue;
    last_kept = j;
    if ((u -= row[j]) < 0) return j;
  }
  return last_kept;  // u rounded past the sum: the last kept token
}

Tensor TransformerLM::generate(const Tensor& prompt, std::int64_t max_new_tokens, const GenerateOptions& o,
                               const Tensor& classes) {
  validate_generate_options(o, config.vocab_size);
  if (max_new_tokens < 0) refuse("max_new_tokens must be >= 0", max_new_tokens);
  const Tensor tokens = prompt.dim() == 1 ? prompt.reshape({1, prompt.size(0)}) : prompt;
  if (tokens.dim() != 2 || tokens.size(1) == 0 || tokens.dtype() != DType::int64)
    throw ShapeError("generate: prompt must be int64 (T) or (B, T) with T >= 1, got " + shape_str(prompt.shape()));
  const std::int64_t B = tokens.size(0), P = tokens.size(1), V = config.vocab_size, length = P + max_new_tokens;
  const bool slide = max_length() && length > *max_length();
  if (slide && !o.sliding_window)
    throw ValueError("generate: the prompt (" + std::to_string(P) + " tokens) and max_new_tokens (" +
                     std::to_string(max_new_tokens) + ") make " + std::to_string(length) +
                     " tokens, past max_seq_len " + std::to_string(config.max_seq_len) +
                     " of this model's learned positions (a rope model generates past max_seq_len; this one does "
                     "with GenerateOptions::sliding_window)");
  if (max_new_tokens == 0) return tokens;

  NoGradGuard no_grad;
  struct RestoreMode {  // eval for the call, then the caller's mode, also on an exception
    Module& m;
    bool training;
    ~RestoreMode() { m.train(training); }
  } restore{*this, is_training()};
  eval();
  Generator& gen = o.gen ? *o.gen : default_generator();
  std::vector<std::vector<std::int64_t>> seqs(B);
  const std::vector<std::int64_t> flat = tokens.to_vector<std::int64_t>();
  for (std::int64_t b = 0; b < B; ++b) seqs[b].assign(flat.begin() + b * P, flat.begin() + (b + 1) * P);
  std::vector<bool> ended(B, false);

  // The last `window` tokens of every row, (B, window): what a sliding window runs again.
  const auto last_window = [&](std::int64_t window) {
    std::vector<std::int64_t> rows;
    for (const auto& s : seqs) rows.insert(rows.end(), s.end() - std::min<std::int64_t>(window, static_cast<std::int64_t>(s.size())), s.end());
    return Tensor::from_vector(rows, {B, static_cast<std::int64_t>(rows.size()) / B});
  };
  const auto rerun = [&] {  // the window alone, from position 0, with a fresh cache
    KVCache fresh = make_kv_cache(B, *max_length());
    return forward_cached(last_window(*max_length()), fresh, classes);
  };
  KVCache cache = make_kv_cache(B, slide ? *max_length() : length);
  Tensor logits = slide ? rerun() : forward_cached(tokens, cache, classes);  // the prompt, once: (B, P, V)
  for (std::int64_t step = 0; step < max_new_tokens; ++step) {
    const std::vector<double> last = narrow(logits, 1, logits.size(1) - 1, 1).to_vector();  // (B, 1, V)
    std::vector<std::int64_t> fed(B);
    for (std::int64_t b = 0; b < B; ++b) {
      // an ended row repeats its stop token (the padding) and draws nothing
      const std::int64_t next =
          ended[b] ? seqs[b].back() : next_token({last.begin() + b * V, last.begin() + (b + 1) * V}, o, gen);
      ended[b] = ended[b] || std::find(o.stop_tokens.begin(), o.stop_tokens.end(), next) != o.stop_tokens.end();
      seqs[b].push_back(next);
      fed[b] = next;
    }
    if (step + 1 == max_new_tokens || std::all_of(ended.begin(), ended.end(), [](bool e) { return e; })) break;
    // one new token per row, through the cache while the sequence fits the positions
    logits = slide ? rerun() : forward_cached(Tensor::from_vector(fed, {B, 1}), cache, classes);
  }
  std::vector<std::int64_t> out;
  for (const auto& s : seqs) out.insert(out.end(), s.begin(), s.end());
  return Tensor::from_vector(out, {B, static_cast<std::int64_t>(seqs[0].size())});
}

}  // namespace tapegrad::nn
