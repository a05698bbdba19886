// mfu.hpp — model-FLOPs utilization: the FLOP/s a training run achieves on its model's
// arithmetic, as a fraction of the FLOP/s this machine's GEMM reaches (measured at start).
//
//   const training::Mfu mfu = training::Mfu::measure(nn::flops_per_token(model, T).step(), DType::float32);
//   std::puts(mfu.peak_line().c_str());   // GEMM peak: 140 GFLOP/s (float32, 2 threads, 512x512x512)
//   mfu.text(tokens_per_second);          // "MFU 23%"
//
//   MFU = flops_per_token · tokens/s / (processes · peak)
//
// The convention of PaLM (Chowdhery et al. 2022, https://arxiv.org/abs/2204.02311, appendix
// B): model FLOPs, forward + backward (nn::flops_per_token: 3 × the forward's matrix
// products), without the recomputation of activation checkpointing — a run that recomputes
// does more arithmetic for the same tokens and shows a lower MFU, as it should: the number
// compares runs by useful work. The peak is a rate of this machine's BLAS on one square
// shape with this process's threads (autograd/cpu/gemm_rate.hpp), not a datasheet figure; with
// several processes each measures its own share of the cores at the same time.
#pragma once

#include <string>

#include "../autograd/cpu/gemm_rate.hpp"

namespace tapegrad::training {

struct Mfu {
  double flops_per_token = 0;  // forward + backward, model FLOPs
  GemmShape shape;
  DType dtype = DType::float32;
  GemmRate peak;
  int processes = 1;  // data-parallel processes sharing the tokens/s (each with its peak)

  // Measures the peak on `shape` for about `seconds` with the current thread count.
  static Mfu measure(double flops_per_token, DType dtype, int processes = 1, const GemmShape& shape = {},
                     double seconds = 0.3);
  // The fraction of the peak: flops_per_token · tokens_per_second / (processes · peak).
  double of(double tokens_per_second) const;
  // "GEMM peak: 140 GFLOP/s (float32, 2 threads, 512x512x512)"
  std::string peak_line() const;
  // "MFU 23%" (one decimal below 10%: "MFU 4.2%")
  std::string text(double tokens_per_second) const;
};

}  // namespace tapegrad::training
