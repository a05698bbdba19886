// layer_stats.cpp — RMS and cosine to the previous layer.
#include "layer_stats.hpp"

#include <cmath>

#include "../../autograd/grad_mode.hpp"
#include "../../autograd/ops.hpp"
#include "measures.hpp"

namespace tapegrad::nn {

LayerStats layer_stats(const std::vector<Tensor>& outputs, const Tensor& input) {
  NoGradGuard no_grad;
  LayerStats stats;
  for (std::size_t l = 0; l < outputs.size(); ++l) {
    const Tensor& h = outputs[l];
    stats.rms.push_back(std::sqrt(mean(mul(h, h)).item()));
    const Tensor& previous = l == 0 ? input : outputs[l - 1];
    stats.cosine_to_previous.push_back(previous.defined() ? mean_token_cosine(h, previous, "layer_stats") : NAN);
  }
  return stats;
}

}  // namespace tapegrad::nn
