// attention_grads.hpp — an attention function's output and the gradients of its three inputs,
// and their comparison, for the attention tests (the fused op against its composition, the
// flash kernels against the materialized ones). Header-only, as the rest of support/.
#pragma once

#include <tapegrad/tapegrad.hpp>

#include "reference.hpp"  // CHECK_CLOSE

namespace tapegrad::testing {

struct AttentionGrads {
  Tensor out, dq, dk, dv;
};

// Output and the gradients reaching fresh copies of q, k, v when the output receives dout.
template <typename F>
AttentionGrads run_with_grads(F fn, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dout) {
  Tensor ql = q.detach().clone().requires_grad_(), kl = k.detach().clone().requires_grad_(),
         vl = v.detach().clone().requires_grad_();
  Tensor out = fn(ql, kl, vl);
  out.backward(dout);
  return {out.detach(), ql.grad(), kl.grad(), vl.grad()};
}

// Output and each gradient within tol (absolute and relative).
inline void check_same_grads(const AttentionGrads& a, const AttentionGrads& b, double tol) {
  CHECK_CLOSE("out", a.out, b.out, tol, tol);
  CHECK_CLOSE("dq", a.dq, b.dq, tol, tol);
  CHECK_CLOSE("dk", a.dk, b.dk, tol, tol);
  CHECK_CLOSE("dv", a.dv, b.dv, tol, tol);
}

}  // namespace tapegrad::testing
