// norm_kind.cpp — the norm registry: one entry per norm.
#include "norm_kind.hpp"

#include "ada_ln.hpp"
#include "name_list.hpp"
#include "pointwise_norm.hpp"

namespace tapegrad::nn {

namespace {

std::shared_ptr<Norm> layer_norm_of(const NormSpec& s) {
  return std::make_shared<LayerNorm>(NormOptions(s.dim).eps(s.eps).dtype(s.dtype));
}
std::shared_ptr<Norm> rms_norm_of(const NormSpec& s) {
  return std::make_shared<RMSNorm>(NormOptions(s.dim).eps(s.eps).dtype(s.dtype));
}
std::shared_ptr<Norm> ada_ln_of(const NormSpec& s) {
  return std::make_shared<AdaLN>(AdaLNOptions(s.dim, s.cond_dim).eps(s.eps).dtype(s.dtype));
}
std::shared_ptr<Norm> ada_ln_zero_of(const NormSpec& s) { return std::make_shared<AdaLNZero>(s.dim, s.eps); }
// A stack of AdaLN-Zero blocks ends with an AdaLN of its own whose modulation starts at zero:
// a plain LN at init, as DiT's final layer.
std::shared_ptr<Norm> zero_ada_ln_of(const NormSpec& s) {
  return std::make_shared<AdaLN>(AdaLNOptions(s.dim, s.cond_dim).eps(s.eps).zero_init(true).dtype(s.dtype));
}

std::shared_ptr<Norm> dyt_of(const NormSpec& s) {
  return std::make_shared<DyT>(PointwiseNormOptions(s.dim).alpha0(s.alpha0).dtype(s.dtype));
}
// s starts at 0, as in Derf's code for every task
std::shared_ptr<Norm> derf_of(const NormSpec& s) {
  return std::make_shared<Derf>(PointwiseNormOptions(s.dim).alpha0(s.alpha0).dtype(s.dtype));
}

}  // namespace

std::string norm_role_name(NormRole role) {
  switch (role) {
    case NormRole::attention: return "attention";
    case NormRole::cross: return "cross";
    case NormRole::ffn: return "ffn";
    case NormRole::final: return "final";
  }
  return "?";
}

const std::vector<NormInfo>& norm_registry() {
  static const std::vector<NormInfo> norms = {
      {"layernorm", "N(x) = (x - mean)/sqrt(var + eps)·g + b", false, false, layer_norm_of, nullptr},
      {"rmsnorm", "N(x) = x/sqrt(mean(x²) + eps)·g", false, false, rms_norm_of, nullptr},
      {"adaln", "N(x, c) = LN(x)·(1 + scale(c)) + shift(c)", true, false, ada_ln_of, nullptr},
      {"adaln_zero", "AdaLN with a gate on each sublayer, all from one zero-initialized Linear per block", true, true,
       ada_ln_zero_of, zero_ada_ln_of},
      {"dyt", "N(x) = g·tanh(α·x) + b, α a learned scalar (DyT, Zhu et al. 2025, arXiv 2503.10622)", false,
       false, dyt_of, nullptr, true},
      {"derf", "N(x) = g·erf(α·x + s) + b, α and s learned scalars (Derf, Chen et al. 2025, arXiv 2512.10938)",
       false, false, derf_of, nullptr, true},
  };
  return norms;
}

std::string norm_names(const std::string& last_separator) { return name_list(norm_registry(), last_separator); }

const NormInfo& norm_info(const NormKind& kind) { return entry_named(norm_registry(), kind.name, "norm"); }

std::shared_ptr<Norm> make_norm(const NormKind& kind, const NormSpec& spec) { return norm_info(kind).make(spec); }

std::shared_ptr<Norm> make_final_norm(const NormKind& kind, const NormSpec& spec) {
  const NormInfo& info = norm_info(kind);
  return (info.make_final ? info.make_final : info.make)(spec);
}

std::string norm_kind_name(const NormKind& kind) { return kind.name; }

NormKind norm_kind_from_name(const std::string& name) { return NormKind(norm_info(NormKind(name)).name); }

}  // namespace tapegrad::nn
