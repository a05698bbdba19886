// char_lm.cpp — train_char_lm (char_lm.hpp).
#include "char_lm.hpp"

#include <stdexcept>

namespace study {

using namespace tapegrad;

void train_char_lm(tapegrad::nn::TransformerLM& model, const tapegrad::data::TokenStream& stream, std::int64_t steps, double lr,
                   std::uint64_t seed, std::int64_t B, std::int64_t T, const std::string& label,
                   const std::function<void(optim::Optimizer&)>& setup) {
  optim::AdamW optimizer(optim::weight_decay_groups(model, optim::AdamOptions(lr).weight_decay(0.1)));
  if (setup) setup(optimizer);
  optim::WarmupCosine schedule(optimizer, steps / 10, steps, /*floor=*/0.1);
  Generator batches(seed);
  model.train();
  for (std::int64_t step = 0; step < steps; ++step) {
    schedule.apply(step);
    const data::Batch b = stream.sample_batch(data::Split::train, B, T, batches);  // int64 (B, T) each
    const Tensor loss = cross_entropy(model.forward(b.inputs).reshape({B * T, -1}), b.targets.reshape({B * T}));
    const training::UpdateResult r = training::update(optimizer, loss, model.named_parameters(), /*clip=*/1.0);
    if (!r.ok()) throw std::runtime_error(label + " stopped at step " + std::to_string(step) + ": " + r.problem);
  }
}

}  // namespace study
