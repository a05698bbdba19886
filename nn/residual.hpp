// residual.hpp — Residual: how a sublayer F (attention, FFN) is joined to the residual
// stream, with which norm N, in which placement. Each placement is one formula:
//
//   post      y = N(α·x + F(x) + skip)   Post-LN (Vaswani et al. 2017; BERT). α ≠ 1 is DeepNorm
//                                         (Wang et al. 2022, arXiv 2203.00555). `skip` is B2T's
//                                         extra connection (Takase et al. 2022, arXiv 2206.00330):
//                                         the block input, added before the block's last norm.
//   pre       y = α·x + F(N(x))          Pre-LN (GPT-2/3); a stack of them ends with a final norm.
//   rezero    y = x + a·F(x)             ReZero (Bachlechner et al. 2020, arXiv 2003.04887): a
//                                         learnable scalar a = 0 at init, no norm.
//   none      y = N(F(x)), or F(x)       no residual at all (to show why residuals are needed).
//
// α is the residual scale (1 by default; e.g. 1/√2, or DeepNorm's alpha). The norm is any
// module of norm.hpp or an AdaLN (then forward needs the condition).
#pragma once

#include <functional>

#include "module.hpp"

namespace tapegrad::nn {

enum class Placement { post, pre, b2t, deepnorm, rezero, none };
std::string placement_name(Placement p);
Placement placement_from_name(const std::string& name);

enum class NormKind { layernorm, rmsnorm, adaln, adaln_zero };
std::string norm_kind_name(NormKind k);
NormKind norm_kind_from_name(const std::string& name);

// The norm a placement needs: LayerNorm(dim, eps), RMSNorm(dim, eps) or AdaLN(dim, cond_dim).
std::shared_ptr<Module> make_norm(NormKind kind, std::int64_t dim, double eps, std::int64_t cond_dim, DType dtype);
// N(x), passing cond to an AdaLN.
Tensor apply_norm(Module& norm, const Tensor& x, const Tensor& cond);

using Sublayer = std::function<Tensor(const Tensor&)>;

class Residual : public Module {
 public:
  // The residual forms of the table above: post (also for deepnorm and b2t), pre, rezero, none.
  enum class Form { post, pre, rezero, none };
  Residual(Form form, std::shared_ptr<Module> norm, double alpha = 1.0, DType dtype = DType::float32);
  Tensor forward(const Tensor& x, const Sublayer& F, const Tensor& cond = Tensor(), const Tensor& skip = Tensor());
  std::string extra_repr() const override;

  // Diagnostics: when capture_stats is true, each forward stores ‖x‖ and ‖F(·)‖ (L2 over the
  // whole batch), so ‖F‖/‖x‖ tells how much this sublayer writes into the residual stream.
  bool capture_stats = false;
  double last_input_norm = 0, last_update_norm = 0;

  Form form;
  double alpha;
  std::shared_ptr<Module> norm;  // null for rezero, optional for none
  Tensor scale;                  // rezero's a, a 0-d parameter
};

}  // namespace tapegrad::nn
