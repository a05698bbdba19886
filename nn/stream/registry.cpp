// registry.cpp — the stream schemes a config, a command line or a study can name. Each unit's
// file defines its entry (name, formula, paper, how to build it); adding a scheme to the
// library is one unit file and one line in the list below. A program adds its own with
// register_stream().
#include <sstream>

#include "stream.hpp"
#include "../name_list.hpp"

namespace tapegrad::nn {

StreamInfo plain_stream(), denseformer_stream(), value_residual_stream(), hyper_connections_stream(), mhc_stream(),
    attention_residuals_stream();

namespace {
std::deque<StreamInfo>& registry() {
  static std::deque<StreamInfo> schemes = {
      plain_stream(),           // plain           x_l = block_l(x_{l−1})
      denseformer_stream(),     // denseformer     x_l = Σ_j α_{l,j}·X_j
      value_residual_stream(),  // value_residual  V_n ← λ1·V_1 + λ2·V_n
      hyper_connections_stream(),  // hyper_connections  x_i ← Σ_j H_res_ij·x_j + H_post_i·F(N(Σ_j H_pre_j·x_j))
      mhc_stream(),                // mhc             the same, H_res doubly stochastic (Sinkhorn–Knopp)
      attention_residuals_stream(),  // attention_residuals  h_k = Σ_{i<k} softmax_i(w_k·RMSNorm(v_i))·v_i
  };
  return schemes;
}
}  // namespace

const std::deque<StreamInfo>& stream_registry() { return registry(); }

void register_stream(StreamInfo info) {
  register_entry(registry(), std::move(info), "register_stream", "stream scheme");
}

const StreamInfo& stream_info(const StreamScheme& s) { return entry_named(registry(), s.name, "stream scheme"); }

StreamScheme stream_scheme_from_name(const std::string& name) { return StreamScheme(stream_info(name).name); }

std::string stream_names(const std::string& last_separator) { return name_list(registry(), last_separator); }

std::string stream_help() {
  std::ostringstream os;
  os << "Stream schemes (x_l: the stream after block l, X_0 the embedding and X_j block j's output, V_n: block n's "
        "attention values, v_i: the i-th sublayer's output):\n";
  for (const StreamInfo& s : registry())
    os << "  " << s.name << std::string(s.name.size() < 16 ? 16 - s.name.size() : 1, ' ') << s.formula << "\n";
  return os.str();
}

}  // namespace tapegrad::nn
