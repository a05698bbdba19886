// checkpoint.cpp — checkpoint(): a forward that keeps nothing, a backward that recomputes.
#include "checkpoint.hpp"

#include "engine.hpp"
#include "grad_mode.hpp"
#include "node.hpp"
#include "random.hpp"

namespace tapegrad {


Tensor checkpoint(const CheckpointFn& fn, const TensorList& inputs) {
  if (!is_grad_enabled()) return fn(inputs);  // nothing would be recorded anyway
  // 1. Forward, unrecorded: only the inputs and the generator's state are kept.
  const GeneratorState rng_before = default_generator().get_state();
  Tensor out;
  bool depends_on_grad = false;
  {
    detail::RequiresGradProbe probe;
    NoGradGuard no_grad;
    out = fn(inputs);
    depends_on_grad = probe.seen();
  }
  if (!depends_on_grad) return out;  // a constant: nothing to backpropagate to
  if (!out.defined() || !is_floating(out.dtype()))
    throw ValueError("checkpoint: the function must return a float tensor to backpropagate through");
  TensorList saved;
  std::vector<bool> wants_grad;
  for (const Tensor& t : inputs) {
    saved.push_back(t.defined() ? t.detach() : Tensor());
    wants_grad.push_back(t.defined() && t.requires_grad());
  }
  // 2. Backward: recompute from the same generator state, recorded, then backpropagate.
  record(out, "checkpoint", inputs, [fn, saved, wants_grad, rng_before](const Tensor& dout) -> TensorList {
    TensorList leaves;
    for (std::size_t i = 0; i < saved.size(); ++i) {
      Tensor leaf = saved[i].defined() ? saved[i].detach() : Tensor();  // a fresh leaf on the same data
      if (wants_grad[i]) leaf.requires_grad_();
      leaves.push_back(leaf);
    }
    Tensor recomputed;
    {
      GradModeGuard recording(true);
      const GeneratorState rng_after = default_generator().get_state();
      default_generator().set_state(rng_before);
      recomputed = fn(leaves);
      default_generator().set_state(rng_after);  // the stream goes on as if fn had run once
    }
    if (recomputed.requires_grad()) recomputed.backward(dout);
    TensorList dinputs;
    for (std::size_t i = 0; i < leaves.size(); ++i) dinputs.push_back(wants_grad[i] ? leaves[i].grad() : Tensor());
    return dinputs;
  });
  return out;
}

}  // namespace tapegrad
