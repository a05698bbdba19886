// lm_gradcheck.hpp — the float64 gradcheck of a whole language model that the tests of
// placements, norms, streams and parametrizations share. Header-only.
#pragma once

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "nn/nn_helpers.hpp"
#include "support/gradcheck_catch.hpp"

// Every parameter of lm (a float64 TransformerLM with max_seq_len >= 3, its parameters moved
// off their init values first: randomize_parameters_) against a loss that weighs every logit
// of two sequences of three tokens, the weights drawn from weight_seed. A macro, so that a
// failure names the test's line.
#define CHECK_LM_GRADCHECK(lm, weight_seed)                                                                \
  do {                                                                                                     \
    const ::tapegrad::Tensor lmg_tokens_ =                                                                 \
        ::tapegrad::tensor({1, 2, 3, 4, 0, 1}, {2, 3}, ::tapegrad::DType::int64);                         \
    const ::tapegrad::Tensor lmg_w_ = ::tapegrad::testing::param({2, 3, (lm).config.vocab_size}, weight_seed); \
    CHECK_GRADCHECK([&](const ::tapegrad::TensorList&) { return sum(mul((lm).forward(lmg_tokens_), lmg_w_)); }, \
                    ::tapegrad::testing::with_parameters({}, (lm)));                                      \
  } while (0)
