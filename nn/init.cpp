// init.cpp — initializers. Calls are qualified (init::) because tapegrad::uniform_ and
// tapegrad::normal_ would otherwise also be found through argument-dependent lookup.
#include "init.hpp"

#include <cmath>

namespace tapegrad::nn::init {

void uniform_(Tensor& t, double low, double high, Generator& gen) { tapegrad::uniform_(t, low, high, gen); }
void normal_(Tensor& t, double mean, double std, Generator& gen) { tapegrad::normal_(t, mean, std, gen); }
void zeros_(Tensor& t) { t.fill_(0.0); }
void ones_(Tensor& t) { t.fill_(1.0); }
void constant_(Tensor& t, double value) { t.fill_(value); }

std::pair<double, double> fan_in_and_out(const Tensor& t) {
  if (t.dim() < 2)
    throw ShapeError("init: fan in and fan out need a tensor of at least 2 dims, got " + shape_str(t.shape()));
  double receptive = 1;
  for (std::int64_t d = 2; d < t.dim(); ++d) receptive *= static_cast<double>(t.shape()[d]);
  return {static_cast<double>(t.shape()[1]) * receptive, static_cast<double>(t.shape()[0]) * receptive};
}

void xavier_uniform_(Tensor& t, double gain, Generator& gen) {
  const auto [fan_in, fan_out] = fan_in_and_out(t);
  const double bound = gain * std::sqrt(6.0 / (fan_in + fan_out));
  init::uniform_(t, -bound, bound, gen);
}

void xavier_normal_(Tensor& t, double gain, Generator& gen) {
  const auto [fan_in, fan_out] = fan_in_and_out(t);
  init::normal_(t, 0.0, gain * std::sqrt(2.0 / (fan_in + fan_out)), gen);
}

void linear_default_(Tensor& weight, Generator& gen) {
  const double fan_in = fan_in_and_out(weight).first;
  const double bound = fan_in > 0 ? 1.0 / std::sqrt(fan_in) : 0.0;
  init::uniform_(weight, -bound, bound, gen);
}

}  // namespace tapegrad::nn::init
