// checkpoint.cpp — checkpoint(): a forward that keeps nothing, a backward that recomputes.
#include "checkpoint.hpp"

#include "engine.hpp"
#include "forward_ad.hpp"
#include "grad_mode.hpp"
#include "node.hpp"
#include "random.hpp"
#include "recompute.hpp"

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
  // 2. Backward: recompute from the same generator state, recorded, then backpropagate
  // (recompute.hpp); with create_graph that backward is itself recorded, so a checkpointed
  // block can be differentiated twice.
  record(out, "checkpoint", inputs, [fn, inputs, rng_before](const Tensor& dout) -> TensorList {
    const detail::CompositeFn replay = [&fn, &rng_before](const TensorList& in) {
      const GeneratorState rng_after = default_generator().get_state();
      default_generator().set_state(rng_before);
      Tensor recomputed = fn(in);
      default_generator().set_state(rng_after);  // the stream goes on as if fn had run once
      return recomputed;
    };
    return detail::backward_by_recomputing(replay, inputs, dout);
  }, DoubleBackward::supported, Saves::inputs);
  // forward: the jvp of fn run again from the same generator state (its inputs' tangents; what
  // fn reads besides its inputs has none, as everywhere in jvp)
  if (forward_rules_wanted()) record_forward(out, [fn, inputs, rng_before](const TensorList& t) {
    const GeneratorState rng_after = default_generator().get_state();
    default_generator().set_state(rng_before);
    const Tensor dout = detail::jvp_of(fn, inputs, t);
    default_generator().set_state(rng_after);
    return dout;
  });
  out.grad_fn()->reaches_hidden_leaves = true;
  return out;
}

}  // namespace tapegrad
