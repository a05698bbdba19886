// lm_cache_check.hpp — generation on a KV cache against the whole forward, the check that the
// tests of the stream schemes share. Header-only.
#pragma once

#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

#include "nn/nn_helpers.hpp"

// The logits of lm (float64, vocab >= 7, max_seq_len >= 6, in eval mode) on one sequence of six
// tokens fed to a KV cache in steps of 4, 1 and 1 tokens equal those of one whole forward
// within 1e-12. A macro, so that a failure names the test's line.
#define CHECK_LM_CACHED_EQUALS_WHOLE(lm)                                                                          \
  do {                                                                                                             \
    const ::tapegrad::Tensor cc_tokens_ = ::tapegrad::tensor({1, 2, 3, 4, 5, 6}, {1, 6}, ::tapegrad::DType::int64); \
    ::tapegrad::NoGradGuard cc_no_grad_;                                                                           \
    const ::tapegrad::Tensor cc_whole_ = (lm).forward(cc_tokens_);                                                \
    ::tapegrad::nn::KVCache cc_cache_ = (lm).make_kv_cache(1, 6);                                                 \
    const ::tapegrad::Tensor cc_first_ = (lm).forward_cached(::tapegrad::narrow(cc_tokens_, 1, 0, 4), cc_cache_); \
    const ::tapegrad::Tensor cc_second_ = (lm).forward_cached(::tapegrad::narrow(cc_tokens_, 1, 4, 1), cc_cache_); \
    const ::tapegrad::Tensor cc_third_ = (lm).forward_cached(::tapegrad::narrow(cc_tokens_, 1, 5, 1), cc_cache_);  \
    CHECK_CLOSE(::tapegrad::cat({cc_first_, cc_second_, cc_third_}, 1), cc_whole_, 1e-12);                         \
  } while (0)
