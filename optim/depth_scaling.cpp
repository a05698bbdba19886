// depth_scaling.cpp — depth_scaled_groups: Adam's learning rate and ε under Depth-μP / CompleteP.
#include "depth_scaling.hpp"

#include <cmath>

namespace tapegrad::optim {

std::vector<ParamGroup<AdamOptions>> depth_scaled_groups(const nn::TransformerLM& model, const AdamOptions& options,
                                                         bool decay_embeddings) {
  const nn::TransformerBlockConfig& b = model.config.block;
  const double alpha = b.branch_depth_exponent;
  if (alpha == 0.0) return weight_decay_groups(model, options, decay_embeddings);
  if (model.config.n_layers < 1)
    throw ValueError("depth_scaled_groups: the model has no block, so no depth to scale by (n_layers = 0)");
  const double r = static_cast<double>(model.config.n_layers) / static_cast<double>(b.branch_base_depth);
  AdamOptions base = options;
  base.eps(options.eps() * std::pow(r, -alpha));
  AdamOptions blocks = base;
  blocks.lr(options.lr() * std::pow(r, alpha - 1.0));

  const WeightDecaySplit split = split_for_weight_decay(model, decay_embeddings);
  std::vector<ParamGroup<AdamOptions>> groups;
  auto add = [&](const NamedTensors& params, bool in_blocks, bool decays) {
    NamedTensors kept;
    for (const auto& [name, p] : params)
      if ((name.rfind("blocks.", 0) == 0) == in_blocks) kept.emplace_back(name, p);
    if (kept.empty()) return;
    AdamOptions o = in_blocks ? blocks : base;
    if (!decays) o.weight_decay(0.0);
    groups.push_back({std::move(kept), o});
  };
  add(split.decay, true, true);
  add(split.no_decay, true, false);
  add(split.decay, false, true);
  add(split.no_decay, false, false);
  return groups;
}

}  // namespace tapegrad::optim
