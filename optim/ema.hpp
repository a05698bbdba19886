// ema.hpp — an exponential moving average of a model's parameters ("EMA weights", Polyak
// averaging): a shadow copy that follows the trained weights slowly and usually evaluates a
// little better than the last iterate, because it averages out the noise of the last steps.
//
//   optim::ExponentialMovingAverage ema(model.named_parameters(), 0.999);
//   ... optimizer.step(); ema.update();            // after every step
//   { optim::ExponentialMovingAverage::Swapped use(ema); evaluate(model); }  // the model holds the averages here
//
// The update, after step t (Polyak & Juditsky 1992; as torch.optim.swa_utils.AveragedModel
// with get_ema_multi_avg_fn, which also copies the weights at its first update):
//
//   t = 1:  θ̄ = θ
//   t > 1:  θ̄ ← θ̄ + (1 − decay)·(θ − θ̄)            (torch.lerp with weight 1 − decay)
//
// so θ̄ weighs the weights of k steps ago by (1 − decay)·decayᵏ: its horizon is about
// 1 / (1 − decay) steps (1000 for 0.999). The averages live in the parameters' dtype, as
// PyTorch keeps them. Only parameters are averaged, not buffers (AveragedModel's default).
#pragma once

#include <cstdint>

#include "../nn/module.hpp"

namespace tapegrad::optim {

class ExponentialMovingAverage {
 public:
  // params: the tensors to follow (their storage is read at every update); decay in [0, 1).
  ExponentialMovingAverage(nn::NamedTensors params, double decay);

  // One update from the current parameter values (the first copies them).
  void update();

  // The averages, named as the parameters ("blocks.0.attn.qkv.weight", ...). They alias the
  // averages (as Module::state_dict does): clone for a snapshot; saving copies anyway.
  nn::NamedTensors averages() const;
  // Restores averages that averages() gave (a checkpoint's), and the update count (for the
  // first update's copy). Throws ValueError naming a parameter whose average is missing or
  // has another shape or dtype.
  void load_averages(const nn::NamedTensors& averages, std::int64_t num_updates);

  double decay() const { return decay_; }
  std::int64_t num_updates() const { return num_updates_; }

  // Exchanges the parameters' values with the averages (twice: back as before). Exact: the
  // bytes are swapped, not recomputed.
  void swap_with_parameters();

  // The model holds the averages while this lives (evaluation, sampling).
  class Swapped {
   public:
    explicit Swapped(ExponentialMovingAverage& ema) : ema_(ema) { ema_.swap_with_parameters(); }
    ~Swapped() { ema_.swap_with_parameters(); }
    Swapped(const Swapped&) = delete;
    Swapped& operator=(const Swapped&) = delete;

   private:
    ExponentialMovingAverage& ema_;
  };

 private:
  nn::NamedTensors params_;
  std::vector<Tensor> averages_;
  double decay_;
  std::int64_t num_updates_ = 0;
};

}  // namespace tapegrad::optim
