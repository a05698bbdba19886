// stream.cpp — the plain stream's steps (every scheme's defaults) and the checks of a
// StreamConfig.
#include "stream.hpp"

#include <cmath>

#include "../name_list.hpp"
#include "../transformer_block.hpp"

namespace tapegrad::nn {

StreamState ResidualStream::begin(const Tensor& h0) {
  StreamState s;
  s.x = h0;
  return s;
}

void ResidualStream::run_block(StreamState& s, TransformerBlock& block, BlockContext& ctx, std::int64_t) {
  s.x = block.forward(s.x, ctx);
}

Tensor ResidualStream::end(StreamState& s) { return s.x; }

HookHandle ResidualStream::register_stream_hook(StreamHook hook, std::string label) {
  return HookHandle(stream_hooks_, stream_hooks_->add(std::move(hook), std::move(label)));
}

void ResidualStream::observe(std::int64_t l, const Tensor& x) const {
  if (stream_hooks_->empty()) return;
  for (const auto& hook : stream_hooks_->snapshot()) hook.fn(l, x);
}

void ResidualStream::observe(std::int64_t l, const StreamState& s) const {
  if (stream_hooks_->empty()) return;
  observe(l, readout(s));
}

void StreamConfig::validate() const {
  const StreamInfo& info = stream_info(scheme);  // ValueError naming the registered schemes
  const StreamConfig d;
  // A setting another scheme uses must stay at its default: it would do nothing here.
  auto refuse_unless = [&](bool used, bool at_default, const std::string& field, const std::string& value,
                           bool StreamInfo::*uses, const std::string& default_value) {
    if (!used && !at_default)
      throw ValueError("StreamConfig: " + field + " = " + value + " applies to " +
                       name_list_if(stream_registry(), [&](const StreamInfo& i) { return i.*uses; }) + " only, not to " +
                       info.name + "; leave it at " + default_value);
  };
  const bool dense = info.dwa_settings, values = info.value_settings;
  if (dwa_dilation < 1 || dwa_period < 1)
    throw ValueError("StreamConfig: dwa_dilation (" + std::to_string(dwa_dilation) + ") and dwa_period (" +
                     std::to_string(dwa_period) + ") must be >= 1");
  refuse_unless(dense, dwa_dilation == d.dwa_dilation, "dwa_dilation", std::to_string(dwa_dilation), &StreamInfo::dwa_settings, "1");
  refuse_unless(dense, dwa_period == d.dwa_period, "dwa_period", std::to_string(dwa_period), &StreamInfo::dwa_settings, "1");
  if (!std::isfinite(value_lambda1) || !std::isfinite(value_lambda2))
    throw ValueError("StreamConfig: value_lambda1 and value_lambda2 must be finite, got " + number_str(value_lambda1) +
                     " and " + number_str(value_lambda2));
  refuse_unless(values, value_lambda1 == d.value_lambda1, "value_lambda1", number_str(value_lambda1), &StreamInfo::value_settings, "0.5");
  refuse_unless(values, value_lambda2 == d.value_lambda2, "value_lambda2", number_str(value_lambda2), &StreamInfo::value_settings, "0.5");
  refuse_unless(values, value_lambda_learnable == d.value_lambda_learnable, "value_lambda_learnable",
                value_lambda_learnable ? "true" : "false", &StreamInfo::value_settings, "false");
  const bool hc = info.hc_settings, sinkhorn = info.sinkhorn_settings;
  if (hc_rate < 1 || sinkhorn_iterations < 1)
    throw ValueError("StreamConfig: hc_rate (" + std::to_string(hc_rate) + ") and sinkhorn_iterations (" +
                     std::to_string(sinkhorn_iterations) + ") must be >= 1");
  refuse_unless(hc, hc_rate == d.hc_rate, "hc_rate", std::to_string(hc_rate), &StreamInfo::hc_settings, "4");
  refuse_unless(hc, hc_dynamic == d.hc_dynamic, "hc_dynamic", hc_dynamic ? "true" : "false", &StreamInfo::hc_settings, "true");
  refuse_unless(sinkhorn, sinkhorn_iterations == d.sinkhorn_iterations, "sinkhorn_iterations",
                std::to_string(sinkhorn_iterations), &StreamInfo::sinkhorn_settings, "20");
  if (attnres_block_size < 1)
    throw ValueError("StreamConfig: attnres_block_size must be >= 1 (sublayers per block; 1: Full AttnRes), got " +
                     std::to_string(attnres_block_size));
  refuse_unless(info.attnres_settings, attnres_block_size == d.attnres_block_size, "attnres_block_size",
                std::to_string(attnres_block_size), &StreamInfo::attnres_settings, "1");
}

}  // namespace tapegrad::nn
