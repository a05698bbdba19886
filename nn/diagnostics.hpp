// diagnostics.hpp — the questions users of this field ask of a deep transformer:
// do gradients vanish or explode toward the bottom layers? Do layers collapse (consecutive
// outputs nearly identical)? How much does each sublayer write into the residual stream?
#pragma once

#include <string>
#include <vector>

#include "containers.hpp"
#include "module.hpp"

namespace tapegrad::nn {

struct ParameterNorms {
  std::string name;
  double grad_norm = 0;   // ‖∇p‖₂ (0 when the parameter has no gradient)
  double param_norm = 0;  // ‖p‖₂
};
// Every named parameter's gradient and value norms, after backward.
std::vector<ParameterNorms> parameter_norms(const Module& module);
// The global gradient norm N = (Σ over all parameters and elements |g|^p)^(1/p) (p = 2: the
// L2 norm; p = inf: max |g|), the one optim::clip_grad_norm_ measures and clips. Parameters
// without a gradient are skipped; a NaN gradient gives NaN. Sums run in double, in fixed
// chunks added in order, so the result is the same bits for any number of threads.
double grad_norm(const NamedTensors& params, double norm_type = 2.0);
// ValueError naming op unless norm_type > 0 (inf included): the orders grad_norm accepts.
void check_norm_type(double norm_type, const char* op);
// sqrt(Σ over all parameters of ‖∇p‖²): grad_norm(module.named_parameters()).
double total_grad_norm(const Module& module);
// One gradient norm per block: all parameters of blocks[l] together.
std::vector<double> block_grad_norms(const ModuleList& blocks);

struct LayerStats {
  std::vector<double> rms;                 // rms[l] = sqrt(mean(h_l²)) of block l's output
  std::vector<double> cosine_to_previous;  // [l] = mean over tokens of cos(h_l, h_{l-1}); [0] uses the block input
};
// outputs: each block's output (B, T, C), e.g. what an OutputRecorder on the blocks kept;
// input: what the first block received (may be undefined: then cosine_to_previous[0] is NaN).
LayerStats layer_stats(const std::vector<Tensor>& outputs, const Tensor& input = Tensor());

// The outputs of some modules, in the order they ran, kept by forward hooks (Module's hooks)
// from its construction to its destruction, which removes them:
//   nn::OutputRecorder outputs(*lm.blocks);  lm.forward(tokens);  layer_stats(outputs.outputs());
// Outputs are kept as they are (with their graph when recorded).
class OutputRecorder {
 public:
  explicit OutputRecorder(const ModuleList& modules);  // each module of the list
  explicit OutputRecorder(const std::vector<std::shared_ptr<Module>>& modules);
  ~OutputRecorder();
  OutputRecorder(const OutputRecorder&) = delete;
  OutputRecorder& operator=(const OutputRecorder&) = delete;
  const std::vector<Tensor>& outputs() const { return outputs_; }
  void clear() { outputs_.clear(); }

 private:
  std::vector<Tensor> outputs_;
  std::vector<HookHandle> handles_;
};

struct ResidualWrite {
  std::string path;    // e.g. "blocks.2.ffn_residual"
  double ratio = 0;    // ‖F‖ / ‖x‖ of the last forward
};

// How much each sublayer of each TransformerBlock under root writes into the residual
// stream, ‖F‖/‖x‖ (L2 over the whole batch) of the last forward: x is the stream entering the
// sublayer (what its formula hands first to the sublayer's norm, as Pre-LN's F(N(x)), or to
// the sublayer itself, as Post-LN's N(x + F(x))), F the sublayer's output (before AdaLN-Zero's
// gate). Made of forward hooks only, as any user could write them: pre-hooks on each
// sublayer's norm and module note the first input of a forward, a forward hook the output.
class WriteRatioRecorder {
 public:
  explicit WriteRatioRecorder(Module& root);
  ~WriteRatioRecorder();
  WriteRatioRecorder(const WriteRatioRecorder&) = delete;
  WriteRatioRecorder& operator=(const WriteRatioRecorder&) = delete;
  std::vector<ResidualWrite> ratios() const;

 private:
  struct Sublayer {
    std::string path;
    double input_norm = 0, output_norm = 0;
    bool seen_input = false;
  };
  std::vector<std::unique_ptr<Sublayer>> sublayers_;
  std::vector<HookHandle> handles_;
};

}  // namespace tapegrad::nn
