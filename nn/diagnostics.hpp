// diagnostics.hpp — the questions users of this field ask of a deep transformer, one file of
// nn/diagnostics/ each, all of them made of hooks or of reads after backward:
//   grad_norms       do gradients vanish or explode toward the bottom layers?
//   layer_stats      do layers collapse (consecutive outputs nearly identical)?
//   output_recorder  each block's output, kept by forward hooks
//   residual_writes  how much does each sublayer write into the residual stream?
//   measures         the L2 norm and the token cosine the others are made of
#pragma once

#include "diagnostics/grad_norms.hpp"
#include "diagnostics/layer_stats.hpp"
#include "diagnostics/measures.hpp"
#include "diagnostics/output_recorder.hpp"
#include "diagnostics/residual_writes.hpp"
