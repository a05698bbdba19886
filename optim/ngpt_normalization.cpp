// ngpt_normalization.cpp — register_ngpt_normalization.
#include "ngpt_normalization.hpp"

#include "../nn/ngpt.hpp"

namespace tapegrad::optim {

HookHandle register_ngpt_normalization(Optimizer& opt, nn::Module& model) {
  return opt.register_step_post_hook([&model](Optimizer&) { nn::ngpt_normalize_weights(model); },
                                     "nGPT renormalization");
}

}  // namespace tapegrad::optim
