// attention_choice.hpp — internal: which attention kernel pair runs, from the op's options and
// sizes (attention.cpp; the kernels are in autograd/cpu/attention_kernels.hpp). Apart from the
// kernels' header because it reads AttentionOptions (ops.hpp), which the kernels must not see.
#pragma once

#include <cstdint>

#include "../ops.hpp"

namespace tapegrad::detail {

// The kernel that runs: options.kernel, or for automatic the rule documented at
// AttentionKernel (ops.hpp). Throws ValueError naming op when flash is forced with dropout.
AttentionKernel select_attention_kernel(const char* op, const AttentionOptions& options, std::int64_t Tq,
                                        std::int64_t Tk);

}  // namespace tapegrad::detail
