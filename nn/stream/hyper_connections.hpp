// hyper_connections.hpp — the widened stream of Hyper-Connections (Zhu et al. 2024, arXiv
// 2409.19606; reference code lucidrains/hyper-connections) and of DeepSeek's mHC (Xie et al.
// 2025, "mHC: Manifold-Constrained Hyper-Connections", arXiv 2512.24880).
//
// The stream is n copies x_1..x_n of the hidden state (n the expansion rate), (B, T, n, C).
// Every sublayer k (attention and FFN of each block, k = 2l and 2l + 1) reads one mix of them
// and writes into each:
//
//   h_in = Σ_j H_pre_j·x_j                        (the width connection)
//   y    = F(N(h_in))                             Pre-LN inside: the sublayer's own norm
//   x_i ← Σ_j H_res_ij·x_j + H_post_i·y           (the depth connection)
//
// begin: n copies of the embedding; end: their sum (both papers; lucidrains' reduce_fn), which
// the model's final norm and head read. The schemes differ only in where H_pre, H_res, H_post
// come from (hyper_connections.cpp: HC's static matrices plus tanh terms of the input; mhc.cpp:
// sigmoids and a Sinkhorn–Knopp projection), so the stream and the formula are shared here.
//
// The stream hooks (ResidualStream::observe) see readout(s): the sum over the copies, a
// (B, T, C) tensor like every other scheme's, and what the head would read if the stack ended
// there: the logit lens and the stream recorder work unchanged. A diagnostic that wants the
// copies themselves casts the scheme to WidenedStream and calls copies().
#pragma once

#include "stream.hpp"

namespace tapegrad::nn {

class Sublayer;

// One sublayer's connections, each broadcastable over the stream's leading dims (B, T):
// static ones are (n), (n, n), (n); input-dependent ones (B, T, n), (B, T, n, n), (B, T, n).
struct HyperConnection {
  Tensor pre;   // H_pre_j:  h_in = Σ_j pre_j·x_j
  Tensor res;   // H_res_ij: x_i ← Σ_j res_ij·x_j + ...
  Tensor post;  // H_post_i: ... + post_i·y
};

// The stream of n copies, with the formula above; a scheme supplies connect().
class WidenedStream : public ResidualStream {
 public:
  // Refuses, by name, a block the formula does not hold: a placement other than Pre-LN (the
  // scheme carries its own Pre-LN-style join), α ≠ 1, cross-attention.
  WidenedStream(std::string name, const StreamBuild& b);
  StreamState begin(const Tensor& h0) override;                          // x = n copies of h0
  void run_block(StreamState& s, TransformerBlock& block, BlockContext& ctx, std::int64_t l) override;
  Tensor end(StreamState& s) override;                                   // Σ_i x_i
  Tensor readout(const StreamState& s) const override;                   // Σ_i x_i
  // The sublayers' inputs are mixes of the stream: a block recomputed alone would lose them.
  bool reaches_into_blocks() const override { return true; }
  std::int64_t rate() const { return n_; }
  // The n copies, (B, T, n, C), of a state this scheme made.
  static const Tensor& copies(const StreamState& s) { return s.x; }
  // x_i ← Σ_j H_res_ij·x_j + H_post_i·F(N(Σ_j H_pre_j·x_j)), for x (..., n, C).
  static Tensor apply(const Tensor& x, const HyperConnection& H, const Sublayer& F);

 protected:
  // Sublayer k's connections on the stream x (B, T, n, C).
  virtual HyperConnection connect(std::int64_t k, const Tensor& x) = 0;
  std::int64_t n_;
};

// Sinkhorn–Knopp (Sinkhorn and Knopp 1967) as mHC uses it: M = exp(logits), then `iterations`
// times a column normalization followed by a row normalization (mHC's M⁽ᵗ⁾ = T_r(T_c(M⁽ᵗ⁻¹⁾))),
// over the last two dims of logits (..., n, n). Rows then sum to 1 exactly (up to rounding),
// columns within the iterations' convergence. Composed of tapegrad ops, so autograd
// differentiates through every iteration. The logits' largest entry of each matrix is
// subtracted first (detached): exp cannot overflow, and the result is the same.
Tensor sinkhorn_knopp(const Tensor& logits, std::int64_t iterations);

}  // namespace tapegrad::nn
