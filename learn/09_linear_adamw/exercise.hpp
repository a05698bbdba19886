// Exercise 9: a Linear module and one AdamW step. test.cpp, exercise.cpp and solution.cpp
// include this header; you edit only exercise.cpp. README.md beside this file explains both.
#pragma once

#include <cstdint>
#include <vector>

#include <tapegrad/tapegrad.hpp>

#include "scalar/value.hpp"  // learn::Todo

namespace learn {

// y = x·Wᵀ + b, W: (out, in), b: (out), registered as the parameters "weight" and "bias" and both
// drawn from U(−1/√in, 1/√in) with gen (PyTorch's default for nn.Linear).
class Linear : public tapegrad::nn::UnaryModule {
 public:
  Linear(std::int64_t in_features, std::int64_t out_features, tapegrad::Generator& gen,
         tapegrad::DType dtype = tapegrad::DType::float32);
  // x: (..., in) -> (..., out)
  tapegrad::Tensor forward(const tapegrad::Tensor& x) override;

  tapegrad::Tensor weight;  // (out, in)
  tapegrad::Tensor bias;    // (out)
};

// torch.optim.AdamW's hyper-parameters and defaults.
struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
};

// What AdamW remembers between steps: the moments m and v, one tensor per parameter (empty
// before the first step), and the number of steps taken so far.
struct AdamWState {
  std::vector<tapegrad::Tensor> m, v;
  std::int64_t step = 0;
};

// One AdamW step over params (each with its .grad() from backward()), updating each parameter in
// place and the state. The decay applies to every parameter given, as torch.optim.AdamW does on
// one parameter group. A parameter without a gradient is left as it is.
void adamw_step(const std::vector<tapegrad::Tensor>& params, AdamWState& state, const AdamWOptions& options);

}  // namespace learn
