// depth_scaling.hpp — the optimizer half of the depth parametrizations (Depth-μP, CompleteP):
// when a model's blocks take the branch multiplier m = (L_base/L)^α
// (TransformerBlockConfig::branch_depth_exponent α, branch_base_depth L_base), Adam's
// hyper-parameters tuned at depth L_base transfer to depth L only if the blocks' learning rate
// and Adam's ε scale with the depth too (Dey et al. 2025, "Don't be lazy: CompleteP enables
// compute-efficient deep transformers", arXiv 2505.01618, Table 1; EleutherAI/nanoGPT-mup's
// completep branch), with r = L / L_base:
//
//   the blocks' parameters   lr · r^(α−1)     (α = 1, CompleteP: unchanged; α = ½: lr/√r)
//   every parameter          ε · r^(−α)        (Adam's update stays in the regime it had at L_base)
//   embeddings, final norm,  lr                (their size does not grow with the depth)
//   head, the stream's own
//
//   optim::AdamW opt(optim::depth_scaled_groups(*model, optim::AdamOptions(3e-3).weight_decay(0.1)));
#pragma once

#include <vector>

#include "../nn/transformer_lm.hpp"
#include "adam.hpp"
#include "optimizer.hpp"

namespace tapegrad::optim {

// weight_decay_groups' split (decay, no decay) of the blocks' parameters with the scaled
// learning rate, then of the others with options' own, all four with the scaled ε; empty
// groups are left out. With α = 0 (the standard parametrization) the groups are
// weight_decay_groups' two with options as they are. ValueError naming the setting when the
// model has no block.
std::vector<ParamGroup<AdamOptions>> depth_scaled_groups(const nn::TransformerLM& model, const AdamOptions& options,
                                                         bool decay_embeddings = false);

}  // namespace tapegrad::optim
