// denormals.hpp — flushing subnormal floats to zero, as torch.set_flush_denormal does.
//
// A float below 1.2e-38 (a double below 2.2e-308) is subnormal: it keeps shrinking in fewer
// bits instead of becoming 0, and x86 cores compute with it through a slow microcode path,
// tens of times slower than a normal multiply-add. Deep stacks whose signals or gradients
// vanish (a transformer without residual connections, for one) fill their tensors with such
// values, and a training step can run 5-10x slower for numbers that carry no information.
// With flushing on, the CPU treats subnormal inputs as 0 (DAZ) and writes 0 for subnormal
// results (FTZ): the step runs at its normal speed, and every value that was not subnormal
// is unchanged.
//
//   tapegrad::set_flush_denormal(true);   // PyTorch: torch.set_flush_denormal(True)
#pragma once

namespace tapegrad {

// Turns flushing on or off on the calling thread and on every thread of the OpenMP pool
// (tapegrad's loops and OpenBLAS run there); set_num_threads applies it to a pool it grows.
// Returns false, changing nothing, where the CPU has no such mode (not x86 SSE).
bool set_flush_denormal(bool on);
// Whether set_flush_denormal(true) is in effect.
bool flush_denormal();

}  // namespace tapegrad
