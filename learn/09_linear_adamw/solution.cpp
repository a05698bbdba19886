// Exercise 9, solved: nn.Linear and torch.optim.AdamW, written out.
//
// Linear: y = x·Wᵀ + b. W is (out, in), so that each row is one output's weights; PyTorch's
// default init draws W and b from U(−1/√in, 1/√in), which keeps the variance of y near that of x
// when the inputs are of unit scale (each of the in terms contributes about 1/(3·in)).
//
// AdamW (Loshchilov & Hutter 2019), at step t for each parameter θ with gradient g:
//   m = β1·m + (1 − β1)·g           a running mean of g
//   v = β2·v + (1 − β2)·g²          a running mean of g²
//   m̂ = m / (1 − β1ᵗ), v̂ = v / (1 − β2ᵗ)
//                                   bias correction: m and v start at 0, so early on they are
//                                   (1 − β1ᵗ) and (1 − β2ᵗ) times too small
//   θ ← θ − lr·(m̂ / (√v̂ + ε) + λ·θ)
//                                   decoupled decay: λ·θ is added to the step, not to g, so it
//                                   never goes through m and v (Adam's L2 does, and is then
//                                   divided by √v̂ like the gradient)
#include <cmath>

#include "09_linear_adamw/exercise.hpp"

namespace learn {

using namespace tapegrad;

Linear::Linear(std::int64_t in_features, std::int64_t out_features, Generator& gen, DType dtype)
    : UnaryModule("Linear") {
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  Tensor w = Tensor::empty({out_features, in_features}, dtype);
  nn::init::uniform_(w, -bound, bound, gen);
  weight = register_parameter("weight", w);  // registered first: the state dict's order
  Tensor b = Tensor::empty({out_features}, dtype);
  nn::init::uniform_(b, -bound, bound, gen);
  bias = register_parameter("bias", b);
}

Tensor Linear::forward(const Tensor& x) { return matmul(x, transpose(weight, 0, 1)) + bias; }

void adamw_step(const std::vector<Tensor>& params, AdamWState& state, const AdamWOptions& o) {
  NoGradGuard no_grad;  // the update itself is not part of any graph
  if (state.m.empty())
    for (const Tensor& p : params) {
      state.m.push_back(zeros_like(p));
      state.v.push_back(zeros_like(p));
    }
  state.step += 1;
  const double t = static_cast<double>(state.step);
  const double correction1 = 1 - std::pow(o.beta1, t), correction2 = 1 - std::pow(o.beta2, t);
  for (std::size_t i = 0; i < params.size(); ++i) {
    Tensor theta = params[i];  // a handle: copy_ below writes the module's own tensor
    const Tensor g = theta.grad();
    if (!g.defined()) continue;
    state.m[i] = o.beta1 * state.m[i] + (1 - o.beta1) * g;
    state.v[i] = o.beta2 * state.v[i] + (1 - o.beta2) * g * g;
    const Tensor m_hat = state.m[i] / correction1, v_hat = state.v[i] / correction2;
    theta.copy_(theta - o.lr * (m_hat / (sqrt(v_hat) + o.eps) + o.weight_decay * theta));
  }
}

}  // namespace learn
