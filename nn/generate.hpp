// generate.hpp — autoregressive generation: the options, and how the next token is chosen
// from one row of logits. TransformerLM::generate (generate.cpp) runs the loop on a KVCache.
//
// From logits z (V) the next token is
//   greedy (temperature 0)  argmax_j z_j (the first of equal maxima)
//   sampled                 j ~ p_j ∝ exp(z_j / temperature) over the kept tokens, where
//     top_k  keeps the k largest logits (Fan et al. 2018, "Hierarchical Neural Story Generation"),
//     top_p  then keeps the nucleus: the smallest set of the most likely tokens whose
//            probability sums to >= p, renormalized (Holtzman et al. 2019, "The Curious Case of
//            Neural Text Degeneration", arXiv 1904.09751).
// One uniform draw from the generator per sampled token, so a seed fixes the tokens.
#pragma once

#include <cstdint>
#include <vector>

#include "../autograd/random.hpp"

namespace tapegrad::nn {

struct GenerateOptions {
  double temperature = 1.0;  // 0: greedy (argmax)
  std::int64_t top_k = 0;    // 0: all tokens
  Generator* gen = nullptr;  // default generator when null
  double top_p = 1.0;        // in (0, 1]; 1: all tokens (after top_k)
  // A row ends when it emits one of these (the stop token is kept). The call returns when every
  // row ended or max_new_tokens were generated; a row that ended earlier is padded with its
  // stop token repeated, so every row has the same length and cut at its first stop token is
  // that row's sequence.
  std::vector<std::int64_t> stop_tokens;
  // Past max_seq_len, a model with learned positions has no position for the next token. With
  // sliding_window, each token past it is predicted from the last max_seq_len tokens alone,
  // run again without a cache (nanoGPT's crop, idx[:, -block_size:]): the text goes on, each
  // token seeing a window of the context. Without it, such a request is refused. A rope model
  // needs neither.
  bool sliding_window = false;
};

// Throws ValueError naming the first invalid option and its value (vocab_size: for stop_tokens).
void validate_generate_options(const GenerateOptions& options, std::int64_t vocab_size);

// The next token from one row of logits (V), as described above; draws from gen unless greedy.
std::int64_t next_token(std::vector<double> logits, const GenerateOptions& options, Generator& gen);

}  // namespace tapegrad::nn
