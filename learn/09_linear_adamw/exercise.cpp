// Exercise 9: a Linear module and one AdamW step. Read README.md beside this file first.
//
// (a) Linear: in the constructor, make W (out × in) and b (out) of the given dtype, fill both
//     from U(−1/√in, 1/√in) with gen, and register them as "weight" and "bias"; forward
//     returns x·Wᵀ + b.
// (b) adamw_step: step += 1, then for each parameter θ with gradient g:
//       m = β1·m + (1 − β1)·g,   v = β2·v + (1 − β2)·g²
//       m̂ = m / (1 − β1ᵗ),      v̂ = v / (1 − β2ᵗ)
//       θ ← θ − lr·(m̂ / (√v̂ + ε) + λ·θ)
#include <cmath>

#include "09_linear_adamw/exercise.hpp"

namespace learn {

using namespace tapegrad;

Linear::Linear(std::int64_t in_features, std::int64_t out_features, Generator& gen, DType dtype)
    : UnaryModule("Linear") {
  (void)in_features, (void)out_features, (void)gen, (void)dtype;
  throw Todo("TODO exercise 9: register weight (out × in) and bias (out), both drawn from U(−1/√in, 1/√in) with gen");
}

Tensor Linear::forward(const Tensor& x) {
  (void)x;
  throw Todo("TODO exercise 9: return x·Wᵀ + b");
}

void adamw_step(const std::vector<Tensor>& params, AdamWState& state, const AdamWOptions& options) {
  (void)params, (void)state, (void)options;
  throw Todo("TODO exercise 9: one AdamW step: update m, v and every parameter in place, and count the step");
}

}  // namespace learn
