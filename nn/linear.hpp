// linear.hpp — Linear: y = x·Wᵀ + b, W: (out_features, in_features), b: (out_features).
//
// Init (PyTorch's default): W and b ~ U(-1/√in, 1/√in).
#pragma once

#include "module.hpp"
#include "../autograd/options.hpp"

namespace tapegrad::nn {

struct LinearOptions {
  LinearOptions(std::int64_t in_features, std::int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  TAPEGRAD_ARG(std::int64_t, in_features);
  TAPEGRAD_ARG(std::int64_t, out_features);
  TAPEGRAD_ARG(bool, bias) = true;
  TAPEGRAD_ARG(DType, dtype) = DType::float32;
};

class Linear : public UnaryModule {
 public:
  explicit Linear(const LinearOptions& options);
  Linear(std::int64_t in_features, std::int64_t out_features) : Linear(LinearOptions(in_features, out_features)) {}
  // x: (..., in) -> (..., out)
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  LinearOptions options;
  Tensor weight;  // (out, in)
  Tensor bias;    // (out), undefined without bias
};

}  // namespace tapegrad::nn
