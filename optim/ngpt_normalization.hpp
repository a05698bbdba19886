// ngpt_normalization.hpp — nGPT's renormalization as a step post-hook (Loshchilov et al. 2024,
// arXiv 2410.01131; nn/ngpt.hpp has the model's side): after every optimizer step, every matrix
// of the model goes back to unit vectors along d_model, as NVIDIA/ngpt's train.py calls its
// normalize_matrices after each step. One line in a training loop:
//
//   optim::AdamW opt(optim::weight_decay_groups(*model, optim::AdamOptions(3e-4)));
//   optim::register_ngpt_normalization(opt, *model);
#pragma once

#include "optimizer.hpp"

namespace tapegrad::optim {

// Installs nn::ngpt_normalize_weights(model) as a post-hook of every opt.step(), labelled "nGPT
// renormalization" in errors. model must outlive the hook; the handle removes it.
HookHandle register_ngpt_normalization(Optimizer& opt, nn::Module& model);

}  // namespace tapegrad::optim
