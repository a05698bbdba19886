// variants.hpp — the ways of joining sublayers to the residual stream that the depth study
// compares, each under a command-line name. A variant is a placement (nn/residual.hpp), a norm
// kind and a residual scale α; per sublayer F (attention, then the feed-forward network):
//
//   none          y = LN(F(x))                  no residual connection at all
//   post          y = LN(x + F(x))              Post-LN (Vaswani et al. 2017)
//   pre           y = x + F(LN(x))              Pre-LN (GPT-2), a final LN before the output layer
//   b2t           Post-LN plus the block input added before the block's last LN
//                 (Takase et al. 2022)
//   b2t-scaled    b2t with every Linear weight of the blocks scaled by L^-1/2 at init
//                 (b2t_scaling, nn/model_init.hpp)
//   deepnorm      y = LN(α·x + F(x)), α = (2L)^1/4, Xavier init with gain β = (8L)^-1/4
//                 for FFN, value and output projections (Wang et al. 2022)
//   rezero        y = x + a·F(x), a learnable scalar a = 0 at init, no norm (Bachlechner et al. 2020)
//   pre-rmsnorm   y = x + F(RMSNorm(x))
//   post-rmsnorm  y = RMSNorm(x + F(x))
//   pre-scaled    y = x/√2 + F(LN(x))
//   post-scaled   y = LN(x/√2 + F(x))
#pragma once

#include <string>
#include <vector>

#include <tapegrad/tapegrad.hpp>

namespace depth_study {

struct Variant {
  std::string name;     // on the command line and in the CSV files: "post"
  std::string label;    // in tables and chart legends: "Post-LN"
  std::string formula;  // one line for the report
  tapegrad::nn::Placement placement = tapegrad::nn::Placement::pre;
  tapegrad::nn::NormKind norm = tapegrad::nn::NormKind::layernorm;
  double residual_scale = 1.0;
  bool b2t_scaling = false;  // the blocks' Linear weights × L^(-1/2) at init
};

const std::vector<Variant>& all_variants();
// "none, post, pre, ..." for --help and error messages.
std::string variant_names();
// Throws std::invalid_argument naming the unknown name and the valid ones.
const Variant& variant_from_name(const std::string& name);

}  // namespace depth_study
