// residual.cpp — Residual and the names of placements and norms.
#include "residual.hpp"

#include <cmath>
#include <sstream>

#include "../autograd/grad_mode.hpp"
#include "../autograd/ops.hpp"
#include "ada_ln.hpp"
#include "norm.hpp"

namespace tapegrad::nn {

std::string placement_name(Placement p) {
  switch (p) {
    case Placement::post: return "post";
    case Placement::pre: return "pre";
    case Placement::b2t: return "b2t";
    case Placement::deepnorm: return "deepnorm";
    case Placement::rezero: return "rezero";
    case Placement::none: return "none";
  }
  return "?";
}

Placement placement_from_name(const std::string& name) {
  for (Placement p : {Placement::post, Placement::pre, Placement::b2t, Placement::deepnorm, Placement::rezero,
                      Placement::none})
    if (placement_name(p) == name) return p;
  throw ValueError("unknown placement '" + name + "' (expected post, pre, b2t, deepnorm, rezero or none)");
}

std::string norm_kind_name(NormKind k) {
  switch (k) {
    case NormKind::layernorm: return "layernorm";
    case NormKind::rmsnorm: return "rmsnorm";
    case NormKind::adaln: return "adaln";
    case NormKind::adaln_zero: return "adaln_zero";
  }
  return "?";
}

NormKind norm_kind_from_name(const std::string& name) {
  for (NormKind k : {NormKind::layernorm, NormKind::rmsnorm, NormKind::adaln, NormKind::adaln_zero})
    if (norm_kind_name(k) == name) return k;
  throw ValueError("unknown norm '" + name + "' (expected layernorm, rmsnorm, adaln or adaln_zero)");
}

std::shared_ptr<Module> make_norm(NormKind kind, std::int64_t dim, double eps, std::int64_t cond_dim, DType dtype) {
  switch (kind) {
    case NormKind::layernorm: return std::make_shared<LayerNorm>(NormOptions(dim).eps(eps).dtype(dtype));
    case NormKind::rmsnorm: return std::make_shared<RMSNorm>(NormOptions(dim).eps(eps).dtype(dtype));
    case NormKind::adaln:
    case NormKind::adaln_zero:
      return std::make_shared<AdaLN>(AdaLNOptions(dim, cond_dim).eps(eps).zero_init(kind == NormKind::adaln_zero).dtype(dtype));
  }
  throw ValueError("make_norm: unknown norm kind");
}

Tensor apply_norm(Module& norm, const Tensor& x, const Tensor& cond) {
  if (auto* ada = dynamic_cast<AdaLN*>(&norm)) return ada->forward(x, cond);
  if (auto* ln = dynamic_cast<LayerNorm*>(&norm)) return ln->forward(x);
  if (auto* rms = dynamic_cast<RMSNorm*>(&norm)) return rms->forward(x);
  throw ValueError("apply_norm: " + norm.type_name() + " is not a norm");
}

Residual::Residual(Form form_, std::shared_ptr<Module> norm_, double alpha_, DType dtype)
    : Module("Residual"), form(form_), alpha(alpha_) {
  if ((form == Form::post || form == Form::pre) && !norm_)
    throw ValueError("Residual: post and pre placements need a norm");
  if (form == Form::rezero && norm_) throw ValueError("Residual: rezero has no norm");
  if (norm_) norm = register_module("norm", norm_);
  if (form == Form::rezero) scale = register_parameter("scale", zeros({}, dtype));
}

Tensor Residual::forward(const Tensor& x, const Sublayer& F, const Tensor& cond, const Tensor& skip) {
  const auto scope = anomaly_scope();
  auto scaled_x = [&] { return alpha == 1.0 ? x : mul(x, alpha); };
  auto update = [&](const Tensor& input) {  // F(input), measured when capturing
    Tensor f = F(input);
    if (capture_stats) {
      NoGradGuard no_grad;
      last_input_norm = std::sqrt(sum(mul(x, x)).item());
      last_update_norm = std::sqrt(sum(mul(f, f)).item());
    }
    return f;
  };
  switch (form) {
    case Form::post: {  // y = N(α·x + F(x) + skip)
      Tensor total = add(scaled_x(), update(x));
      if (skip.defined()) total = add(total, skip);
      return apply_norm(*norm, total, cond);
    }
    case Form::pre:  // y = α·x + F(N(x))
      return add(scaled_x(), update(apply_norm(*norm, x, cond)));
    case Form::rezero:  // y = x + a·F(x)
      return add(x, mul(update(x), scale));
    case Form::none:  // y = N(F(x)) or F(x)
      return norm ? apply_norm(*norm, update(x), cond) : update(x);
  }
  throw ValueError("Residual: unknown form");
}

std::string Residual::extra_repr() const {
  static const char* names[] = {"post", "pre", "rezero", "none"};
  std::string s = names[static_cast<int>(form)];
  if (alpha != 1.0) {
    std::ostringstream os;
    os << ", alpha=" << alpha;
    s += os.str();
  }
  return s;
}

}  // namespace tapegrad::nn
