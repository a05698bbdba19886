// init.hpp — parameter initializers, each written as the formula it applies.
//
// All draw from a Generator (the default one unless given), so a model built after
// manual_seed(s) is the same on every run. fan_in / fan_out of a (out, in) weight are
// in / out, as PyTorch computes them.
#pragma once

#include "../autograd/random.hpp"
#include "../autograd/tensor.hpp"

namespace tapegrad::nn::init {

void uniform_(Tensor& t, double low, double high, Generator& gen = default_generator());
void normal_(Tensor& t, double mean, double std, Generator& gen = default_generator());
void zeros_(Tensor& t);
void ones_(Tensor& t);
void constant_(Tensor& t, double value);

// fan_in = size(1) · receptive field, fan_out = size(0) · receptive field.
std::pair<double, double> fan_in_and_out(const Tensor& t);

// U(-b, b), b = gain · sqrt(6 / (fan_in + fan_out))  (Glorot & Bengio 2010)
void xavier_uniform_(Tensor& t, double gain = 1.0, Generator& gen = default_generator());
// N(0, std²), std = gain · sqrt(2 / (fan_in + fan_out))
void xavier_normal_(Tensor& t, double gain = 1.0, Generator& gen = default_generator());
// PyTorch's default for nn.Linear weights: kaiming_uniform(a = √5), i.e. U(-b, b) with
// b = 1 / sqrt(fan_in). Biases of nn.Linear use the same bound.
void linear_default_(Tensor& weight, Generator& gen = default_generator());

}  // namespace tapegrad::nn::init
