// recompute.cpp — aliases and the recomputed backward (recompute.hpp).
#include "recompute.hpp"

#include "engine.hpp"
#include "grad_mode.hpp"
#include "node.hpp"

namespace tapegrad::detail {

TensorList aliases_of(const TensorList& inputs) {
  TensorList out;
  out.reserve(inputs.size());
  for (const Tensor& x : inputs) {
    if (!x.defined() || !x.requires_grad()) {
      out.push_back(x);
      continue;
    }
    Tensor alias = x.detach();  // the same storage, shape and strides
    record(alias, "alias", {x}, [](const Tensor& dout) -> TensorList { return {dout}; }, DoubleBackward::supported, Saves::nothing);
    if (forward_rules_wanted()) record_forward(alias, [](const TensorList& t) { return t[0]; });
    out.push_back(alias);
  }
  return out;
}

TensorList backward_by_recomputing(const CompositeFn& composite, const TensorList& inputs, const Tensor& dout) {
  const bool create_graph = is_grad_enabled();
  TensorList in, wanted;
  Tensor out;
  {
    GradModeGuard recording(true);  // the recomputation is recorded even when the backward is not
    in = aliases_of(inputs);
    out = composite(in);
  }
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (in[i].defined() && in[i].requires_grad()) wanted.push_back(in[i]);
  TensorList grads(inputs.size());
  if (!out.defined() || !out.requires_grad()) return grads;  // nothing on a path to the inputs
  const TensorList caught = backward_to(out, dout, wanted, create_graph);
  for (std::size_t i = 0, k = 0; i < inputs.size(); ++i)
    if (in[i].defined() && in[i].requires_grad()) grads[i] = caught[k++];
  return grads;
}

}  // namespace tapegrad::detail
