// nn_helpers.hpp — small helpers shared by the tests of nn/: comparing tensors, overwriting
// parameters with random values, and gradcheck inputs made of an input plus a module's
// parameters. Header-only (tests/CMakeLists.txt compiles only tests/*/test_*.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "support/tensor_diff.hpp"

namespace tapegrad::testing {

// CHECK that two tensors agree within atol, printing both shapes and the worst difference.
#define CHECK_CLOSE(actual, expected, atol)                                                        \
  do {                                                                                             \
    const ::tapegrad::Tensor cc_a_ = (actual), cc_e_ = (expected);                                 \
    INFO(#actual " " << ::tapegrad::shape_str(cc_a_.shape()) << " vs " #expected " "              \
                     << ::tapegrad::shape_str(cc_e_.shape()) << ": max |diff| = "                  \
                     << ::tapegrad::testing::max_abs_diff(cc_a_, cc_e_));                          \
    CHECK(::tapegrad::testing::max_abs_diff(cc_a_, cc_e_) <= (atol));                              \
  } while (0)

// Overwrites t in place (not recorded) with N(0, scale²) values drawn from a generator
// seeded by seed: moves parameters away from special init values (ones, zeros).
inline void randomize_(Tensor t, std::uint64_t seed, double scale = 1.0) {
  Generator gen(seed);
  normal_(t, 0.0, scale, gen);
}

// Randomizes every parameter of m, each with its own seed.
inline void randomize_parameters_(const nn::Module& m, std::uint64_t seed, double scale = 0.5) {
  for (const Tensor& p : m.parameters()) randomize_(p, seed++, scale);
}

// The gradcheck inputs: `inputs` first, then every parameter of m (leaves the module shares,
// so gradcheck's in-place perturbations reach the module).
inline TensorList with_parameters(TensorList inputs, const nn::Module& m) {
  for (const Tensor& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

// Standard deviation (population) of all elements of t.
inline double std_of(const Tensor& t) {
  const std::vector<double> v = t.to_vector();
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  return std::sqrt(var / static_cast<double>(v.size()));
}

// The placements the library registers itself, taken as the program starts, before any test
// case runs. docs/custom-block.md's case registers one of its own (a registry keeps what it is
// given), so the cases that check every placement of the library walk this list rather than
// the registry: they then pass whether ctest runs each case alone or the whole binary runs at
// once. The references stay valid (the registry is a deque that only grows at its end).
inline const std::vector<std::reference_wrapper<const nn::PlacementInfo>> kLibraryPlacements = [] {
  std::vector<std::reference_wrapper<const nn::PlacementInfo>> out;
  for (const nn::PlacementInfo& p : nn::placement_registry()) out.emplace_back(p);
  return out;
}();

// Finite differences see through a stop-gradient; autograd, by design, does not. GPAS's
// G(u) = u − SiLU(β)·sg(u) has the derivative (1 − SiLU(β))·I in u but the backward I, so a
// gradcheck of a model with it can pass only where SiLU(β) = 0. This closes every block gate
// (TransformerBlock::gate) after randomize_parameters_; the gradient of β itself, −SiLU'(0)·u,
// is still checked. Second derivatives see the stop-gradient even there (∂²G/∂β∂u is
// −SiLU'(β)·I, the backward's is 0): a gradgradcheck leaves the gates out of its inputs
// (with_parameters_but_gates). tests/nn/test_gpas.cpp checks the stop-gradient at β ≠ 0 by hand.
inline bool is_block_gate(const std::string& name) { return name == "gate" || name.ends_with(".gate"); }
inline void close_block_gates_(nn::Module& m) {
  NoGradGuard no_grad;
  for (auto& [name, p] : m.named_parameters())
    if (is_block_gate(name)) p.fill_(0.0);
}
inline TensorList with_parameters_but_gates(TensorList inputs, const nn::Module& m) {
  for (const auto& [name, p] : m.named_parameters())
    if (!is_block_gate(name)) inputs.push_back(p);
  return inputs;
}

// c made fit for its placement, for the tests that loop over every placement with one config:
// nGPT's blocks (PlacementInfo::hypersphere) are SwiGLU with no biases and rotary positions.
// They have no cross-attention: those loops skip their seq2seq models (supports_seq2seq).
inline nn::TransformerBlockConfig fit_for_placement(nn::TransformerBlockConfig c) {
  if (!nn::placement_info(c.placement).hypersphere) return c;
  c.activation = nn::Activation::swiglu;
  c.bias = false;
  c.rope = true;
  return c;
}
inline bool supports_seq2seq(const nn::PlacementInfo& p) { return !p.hypersphere; }

// A small decoder-only LM config for tests: d_model 16, 2 heads, d_ff 32.
inline nn::TransformerLMConfig tiny_lm(std::int64_t vocab = 8, std::int64_t max_seq_len = 8, std::int64_t n_layers = 2) {
  nn::TransformerLMConfig c;
  c.vocab_size = vocab;
  c.max_seq_len = max_seq_len;
  c.n_layers = n_layers;
  c.block.d_model = 16;
  c.block.n_heads = 2;
  c.block.d_ff = 32;
  return c;
}

// The float64 LM of the tests that write a model out by hand: vocab 7, T 6, d_model 8, 2 heads,
// d_ff 16.
inline nn::TransformerLMConfig tiny_f64_lm(std::int64_t n_layers = 3) {
  nn::TransformerLMConfig c = tiny_lm(7, 6, n_layers);
  c.block.d_model = 8;
  c.block.d_ff = 16;
  c.block.dtype = DType::float64;
  return c;
}

// A small encoder-decoder config for tests: d_model 8, 2 heads, d_ff 16.
inline nn::Seq2SeqConfig tiny_seq2seq(std::int64_t n_encoder, std::int64_t n_decoder,
                                      nn::Placement placement = nn::Placement::pre) {
  nn::Seq2SeqConfig c;
  c.src_vocab_size = 10;
  c.tgt_vocab_size = 12;
  c.max_seq_len = 8;
  c.n_encoder_layers = n_encoder;
  c.n_decoder_layers = n_decoder;
  c.block.d_model = 8;
  c.block.n_heads = 2;
  c.block.d_ff = 16;
  c.block.placement = placement;
  return c;
}

// int64 (B, n / B) from n ids.
inline Tensor tokens_of(const std::vector<std::int64_t>& ids, std::int64_t B) {
  return Tensor::from_vector(ids, {B, static_cast<std::int64_t>(ids.size()) / B});
}

// The index of the largest value of row `row` of a (rows, V) list, first one on ties.
inline std::int64_t argmax_row(const std::vector<double>& values, std::int64_t row, std::int64_t V) {
  const auto begin = values.begin() + row * V;
  return std::max_element(begin, begin + V) - begin;
}

}  // namespace tapegrad::testing
