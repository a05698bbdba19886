// denseformer.cpp — DenseFormer's depth-weighted average (Pagliardini, Mohtashami, Fleuret,
// Jaggi 2024, "DenseFormer: Enhancing Information Flow in Transformers via Depth Weighted
// Averaging", arXiv 2402.02622; reference code epfml/DenseFormer).
//
// After block l (1-based), the stream is a learned mix of everything written so far:
//
//   Y_l = Σ_{j=0..l} α_{l,j}·X_j        X_0 = the embedding, X_j = block j's output
//
// and block l + 1 reads Y_l (the head reads Y_L). α_{l,l} = 1 and the others 0 at init, so the
// model starts as the plain stream. Dilation k keeps only the X_j with j ≡ l (mod k); period p
// averages after every p-th block only (the blocks between pass their output on). The paper
// finds the learned α reuse the embedding and early blocks, and a DenseFormer matching a
// deeper plain model's loss (claim 16 of the depth study).
//
// The parameters: stream.alphas.i.weight, α of the i-th average (1-D, one per X_j it reads).
#include "stream.hpp"

#include "../../autograd/ops.hpp"
#include "../containers.hpp"
#include "../transformer_block.hpp"

namespace tapegrad::nn {

namespace {

// The weights of one average: a 1-D parameter, outside weight decay as norm gains are.
class DepthWeights final : public Module {
 public:
  // n weights, the last (the newest output's) 1 and the others 0.
  DepthWeights(std::int64_t n, DType dtype) : Module("DepthWeights") {
    std::vector<double> w(static_cast<std::size_t>(n), 0.0);
    w.back() = 1.0;
    weight = register_parameter("weight", tensor(w, {n}, dtype));
  }
  Tensor weight;
};

class DenseFormer final : public ResidualStream {
 public:
  DenseFormer(const StreamBuild& b) : ResidualStream("DenseFormer"), k_(b.stream.dwa_dilation), p_(b.stream.dwa_period) {
    alphas_ = register_module("alphas", std::make_shared<ModuleList>());
    for (std::int64_t l = 1; l <= b.n_layers; ++l)
      if (l % p_ == 0) {
        average_of_.push_back(static_cast<std::int64_t>(alphas_->size()));
        alphas_->push_back(std::make_shared<DepthWeights>(l / k_ + 1, b.block.dtype));  // j = l mod k, .., l − k, l
      } else {
        average_of_.push_back(-1);
      }
  }

  StreamState begin(const Tensor& h0) override {
    StreamState s = ResidualStream::begin(h0);
    s.outputs = {h0};  // X_0
    return s;
  }

  void run_block(StreamState& s, TransformerBlock& block, BlockContext& ctx, std::int64_t l) override {
    ResidualStream::run_block(s, block, ctx, l);  // x = block(x): X_{l+1}
    s.outputs.push_back(s.x);
    const std::int64_t i = average_of_[static_cast<std::size_t>(l)];
    if (i < 0) return;  // between periods the block's output goes on as it is
    // Y = Σ_j α_j·X_j over j ≡ l + 1 (mod k), oldest first: the weights' order.
    const Tensor& alpha = static_cast<DepthWeights&>(*(*alphas_)[static_cast<std::size_t>(i)]).weight;
    const std::int64_t newest = l + 1;
    Tensor y;
    for (std::int64_t j = newest % k_, w = 0; j <= newest; j += k_, ++w) {
      const Tensor term = mul(s.outputs[static_cast<std::size_t>(j)], narrow(alpha, 0, w, 1));
      y = y.defined() ? add(y, term) : term;
    }
    s.x = y;
  }

 private:
  std::int64_t k_, p_;
  std::shared_ptr<ModuleList> alphas_;
  std::vector<std::int64_t> average_of_;  // [l]: the index of block l's average in alphas, −1 for none
};

}  // namespace

StreamInfo denseformer_stream() {
  return {.name = "denseformer",
          .label = "DenseFormer",
          .formula = "x_l = Σ_{j≤l} α_{l,j}·X_j over the embedding X_0 and the block outputs X_j (α_{l,l} = 1 at init)",
          .paper = "Pagliardini et al. 2024",
          .dwa_settings = true,
          .make = [](const StreamBuild& b) { return std::make_shared<DenseFormer>(b); }};
}

}  // namespace tapegrad::nn
