// mhc.cpp — mHC, manifold-constrained Hyper-Connections (Xie, Wei, Cao, et al. 2025, DeepSeek,
// "mHC: Manifold-Constrained Hyper-Connections", arXiv 2512.24880): the widened stream of
// hyper_connections.hpp, with H_res kept on the Birkhoff polytope (doubly stochastic) and
// H_pre, H_post nonnegative. Per sublayer, from the copies flattened to one vector (§4.1):
//
//   x⃗' = RMSNorm(vec(x))                                   (1 × nC: every copy at once)
//   H̃_pre  = α_pre ·(x⃗'·φ_pre)       + b_pre              (1 × n)
//   H̃_post = α_post·(x⃗'·φ_post)      + b_post             (1 × n)
//   H̃_res  = α_res ·mat(x⃗'·φ_res)    + b_res              (n × n)
//   H_pre = σ(H̃_pre);  H_post = 2·σ(H̃_post);  H_res = Sinkhorn–Knopp(H̃_res), t_max iterations
//
// and x_i ← Σ_j H_res_ij·x_j + H_post_i·F(N(Σ_j H_pre_j·x_j)) as in HC. A doubly stochastic
// H_res is a convex mix of permutations: its spectral norm is at most 1 and products of them
// stay doubly stochastic, so the composite map Π_l H_res_l over any depth keeps the stream's
// mean and cannot amplify it. The paper credits this with HC's instability gone (HC's composite
// gain reached ~3000 in its 27B model, mHC's stays near 1) at 6.7% more training time with n = 4.
//
// What the paper leaves open, and what is chosen here:
//   - the initialization: φ = 0 and α = 0.01 (the gating factor of the paper's Table; the
//     dynamic terms start at 0 as in HC), and the biases as HC's static init passed through the
//     constraints, as lucidrains' mHC does: b_pre one-hot on copy k mod n, b_res = I, b_post = 1.
//     So at init H_pre = σ(e_k) (0.73 on copy k, 0.5 elsewhere), H_post = 2σ(1) ≈ 1.46 and H_res
//     = Sinkhorn(exp(I)) (e/(e + n − 1) on the diagonal); with n = 1 this is not Pre-LN: h_in =
//     σ(1)·x and x ← x + 2σ(1)·F(N(h_in)).
//   - the RMSNorm has a learned gain (nC), eps the block's norm_eps.
//   - hc_dynamic = false keeps the biases alone: static mHC, an ablation, not the paper's model.
//   - the paper's fused kernels, recomputation and mixed precision are its infrastructure, not
//     the model's numbers: left out.
//   - DeepSeek-V4's inference code writes the mix as out_j = Σ_i comb_ij·x_i and normalizes the
//     columns last, and starts Sinkhorn–Knopp from softmax(H̃_res) + ε: the same map as the
//     paper's Eq. 3 with comb = H_resᵀ (here rows are normalized last and x_i ← Σ_j H_res_ij·x_j),
//     and softmax is exp followed by the first of the normalizations; only its ε differs. The
//     paper's text is followed here: exp, t_max iterations, no ε.
//
// The parameters, per sublayer k: stream.connections.k.b_pre (n), b_post (n), b_res (n, n); with
// the dynamic terms also norm.weight (nC), phi (nC, 2n + n²) (φ_pre, φ_post, φ_res side by
// side), alpha_pre, alpha_post, alpha_res (0-d).
#include <cmath>

#include "hyper_connections.hpp"

#include "../../autograd/ops.hpp"
#include "../containers.hpp"
#include "../norm.hpp"
#include "../transformer_block.hpp"

namespace tapegrad::nn {

Tensor sinkhorn_knopp(const Tensor& logits, std::int64_t iterations) {
  if (logits.dim() < 2 || logits.size(-1) != logits.size(-2))
    throw ShapeError("sinkhorn_knopp: logits must be (..., n, n), got " + shape_str(logits.shape()));
  if (iterations < 1) throw ValueError("sinkhorn_knopp: iterations must be >= 1, got " + std::to_string(iterations));
  const std::int64_t rows = logits.dim() - 2, cols = logits.dim() - 1;
  // a constant per matrix changes nothing after the first normalization: take the largest out
  const Tensor largest = max(max(logits.detach(), cols, true), rows, true);
  Tensor M = exp(logits - largest);
  for (std::int64_t t = 0; t < iterations; ++t) {
    M = M / sum(M, {rows}, true);  // T_c: each column sums to 1
    M = M / sum(M, {cols}, true);  // T_r: each row sums to 1
  }
  return M;
}

namespace {

class ManifoldConnectionWeights final : public Module {
 public:
  ManifoldConnectionWeights(std::int64_t n, std::int64_t k, bool dynamic, const TransformerBlockConfig& c)
      : Module("ManifoldConnection") {
    std::vector<double> pre(static_cast<std::size_t>(n), 0.0), res(static_cast<std::size_t>(n * n), 0.0);
    pre[static_cast<std::size_t>(k % n)] = 1.0;
    for (std::int64_t i = 0; i < n; ++i) res[static_cast<std::size_t>(i * n + i)] = 1.0;
    b_pre = register_parameter("b_pre", tensor(pre, {n}, c.dtype));
    b_post = register_parameter("b_post", full({n}, 1.0, c.dtype));
    b_res = register_parameter("b_res", tensor(res, {n, n}, c.dtype));
    if (!dynamic) return;
    norm = register_module("norm", std::make_shared<RMSNorm>(NormOptions(n * c.d_model).eps(c.norm_eps).dtype(c.dtype)));
    phi = register_parameter("phi", zeros({n * c.d_model, 2 * n + n * n}, c.dtype));
    alpha_pre = register_parameter("alpha_pre", full({}, 0.01, c.dtype));
    alpha_post = register_parameter("alpha_post", full({}, 0.01, c.dtype));
    alpha_res = register_parameter("alpha_res", full({}, 0.01, c.dtype));
  }
  Tensor b_pre, b_post, b_res, phi, alpha_pre, alpha_post, alpha_res;
  std::shared_ptr<RMSNorm> norm;
};

class ManifoldHyperConnections final : public WidenedStream {
 public:
  explicit ManifoldHyperConnections(const StreamBuild& b)
      : WidenedStream("ManifoldHyperConnections", b), iterations_(b.stream.sinkhorn_iterations) {
    connections_ = register_module("connections", std::make_shared<ModuleList>());
    for (std::int64_t k = 0; k < 2 * b.n_layers; ++k)
      connections_->push_back(std::make_shared<ManifoldConnectionWeights>(n_, k, b.stream.hc_dynamic, b.block));
  }

 protected:
  HyperConnection connect(std::int64_t k, const Tensor& x) override {
    const auto& w = static_cast<ManifoldConnectionWeights&>(*(*connections_)[static_cast<std::size_t>(k)]);
    Tensor pre = w.b_pre, post = w.b_post, res = w.b_res;  // (n), (n), (n, n)
    if (w.norm) {
      Shape flat(x.shape().begin(), x.shape().end() - 2), square = flat;
      flat.push_back(x.size(-2) * x.size(-1));  // (B, T, nC)
      square.insert(square.end(), {n_, n_});    // (B, T, n, n)
      const Tensor proj = matmul(w.norm->forward(reshape(x, flat)), w.phi);  // (B, T, 2n + n²)
      const std::int64_t last = proj.dim() - 1;
      pre = pre + w.alpha_pre * narrow(proj, last, 0, n_);
      post = post + w.alpha_post * narrow(proj, last, n_, n_);
      res = res + w.alpha_res * reshape(narrow(proj, last, 2 * n_, n_ * n_), square);
    }
    return {.pre = sigmoid(pre), .res = sinkhorn_knopp(res, iterations_), .post = sigmoid(post) * 2.0};
  }

 private:
  std::int64_t iterations_;
  std::shared_ptr<ModuleList> connections_;  // [k]: sublayer k's, attention 2l and FFN 2l + 1
};

}  // namespace

StreamInfo mhc_stream() {
  return {.name = "mhc",
          .label = "mHC",
          .formula = "Hyper-Connections with H_res = Sinkhorn–Knopp(H̃_res) doubly stochastic, H_pre = σ(H̃_pre), "
                     "H_post = 2σ(H̃_post); H̃ = α·(RMSNorm(vec x)·φ) + b",
          .paper = "Xie et al. 2025 (DeepSeek)",
          .hc_settings = true,
          .sinkhorn_settings = true,
          .make = [](const StreamBuild& b) { return std::make_shared<ManifoldHyperConnections>(b); }};
}

}  // namespace tapegrad::nn
