// resources.hpp — what a train_lm run asks of the machine, said before it starts: the memory
// estimate (refused when it exceeds --max-memory, by default the memory available), and the
// GEMM rate that the progress line's model-FLOPs utilization divides by.
#pragma once

#include <optional>

#include <tapegrad/tapegrad.hpp>

#include "data_parallel.hpp"
#include "options.hpp"

namespace lm {

// Prints the memory estimate of training `config` with these settings; throws
// std::runtime_error (naming the estimate, the limit and --max-memory) when the processes
// of this job on this machine would need more than --max-memory, or than the memory
// available when it is not given. Called before the model is built.
void check_memory(const Settings& s, const tapegrad::nn::TransformerLMConfig& config, const DataParallel& job);

// The MFU of the progress line, after measuring the GEMM rate (about 0.3 s; printed once);
// none with --no-mfu.
std::optional<tapegrad::training::Mfu> measure_mfu(const Settings& s, const tapegrad::nn::TransformerLM& model,
                                                   const DataParallel& job);

}  // namespace lm
