// diagnostics.hpp — the questions users of this field ask of a deep transformer, one file of
// nn/diagnostics/ each, all of them made of hooks or of reads after backward:
//   grad_norms       do gradients vanish or explode toward the bottom layers?
//   layer_stats      do layers collapse (consecutive outputs nearly identical)?
//   output_recorder  each block's output, kept by forward hooks
//   stream_recorder  the residual stream at every depth: the embeddings, then each block's output
//   residual_writes  how much does each sublayer write into the stream (‖F‖, ‖x‖, cos(x, F))?
//   head_writes      how much does each attention head write (‖W_O^h·z_h‖)?
//   logit_lens       what would the model predict from the stream at each depth?
//   measures         the L2 norm and the token cosine the others are made of
// docs/residual-stream.md explains each with its formula and paper.
#pragma once

#include "diagnostics/grad_norms.hpp"
#include "diagnostics/head_writes.hpp"
#include "diagnostics/layer_stats.hpp"
#include "diagnostics/logit_lens.hpp"
#include "diagnostics/measures.hpp"
#include "diagnostics/output_recorder.hpp"
#include "diagnostics/residual_writes.hpp"
#include "diagnostics/stream_recorder.hpp"
