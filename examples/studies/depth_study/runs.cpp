// runs.cpp — building, measuring and training the models of the depth study.
#include "runs.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace depth_study {

using namespace tapegrad;

namespace {
// The windows of T + 1 tokens starting at `starts`: inputs = window[:-1], targets = window[1:].
data::Batch windows_at(std::span<const data::TokenId> tokens, const std::vector<std::int64_t>& starts, std::int64_t T) {
  std::vector<std::int64_t> inputs, targets;
  for (std::int64_t s : starts)
    for (std::int64_t t = 0; t < T; ++t) {
      inputs.push_back(tokens[s + t]);
      targets.push_back(tokens[s + t + 1]);
    }
  const std::int64_t B = static_cast<std::int64_t>(starts.size());
  return {Tensor::from_vector(inputs, {B, T}), Tensor::from_vector(targets, {B, T}), starts};
}

// n window starts spread evenly over the non-overlapping windows of tokens[begin, end).
std::vector<std::int64_t> spread(std::int64_t begin, std::int64_t end, std::int64_t n, std::int64_t T) {
  const std::int64_t available = (end - begin - 1) / T;
  if (available < 1) throw ValueError("the validation split is too short for windows of --seq-len " + std::to_string(T) + " tokens");
  n = std::min(n, available);
  std::vector<std::int64_t> starts;
  for (std::int64_t k = 0; k < n; ++k) starts.push_back(begin + (k * available / n) * T);
  return starts;
}
}  // namespace

Data make_data(const data::TokenStream& stream, std::int64_t vocab_size, std::int64_t probe_sequences,
               std::int64_t eval_batches, std::int64_t batch, std::int64_t seq_len) {
  Data d;
  d.stream = &stream;
  d.vocab_size = vocab_size;
  const auto val = stream.tokens(data::Split::val);
  const std::int64_t half = static_cast<std::int64_t>(val.size()) / 2;
  d.probe = windows_at(val, spread(0, half, probe_sequences, seq_len), seq_len);
  const std::vector<std::int64_t> starts = spread(half, static_cast<std::int64_t>(val.size()), eval_batches * batch, seq_len);
  for (std::size_t b = 0; b < starts.size(); b += batch)
    d.validation.push_back(windows_at(val, {starts.begin() + b, starts.begin() + std::min(starts.size(), b + batch)}, seq_len));
  return d;
}

std::string Setup::name() const { return std::string(tied_head ? "tied" : "untied") + ":" + init + ":" + std::to_string(warmup); }

Setup Setup::parse(const std::string& text) {
  const auto first = text.find(':'), second = text.find(':', first == std::string::npos ? first : first + 1);
  if (first == std::string::npos || second == std::string::npos)
    throw ValueError("setup '" + text + "': expected HEAD:INIT:WARMUP, e.g. untied:gpt2-unscaled:15");
  Setup s;
  const std::string head = text.substr(0, first), warmup = text.substr(second + 1);
  if (head != "tied" && head != "untied") throw ValueError("setup '" + text + "': the head is tied or untied, not '" + head + "'");
  s.tied_head = head == "tied";
  s.init = text.substr(first + 1, second - first - 1);
  nn::init_scheme_from_name(s.init);  // throws, naming the valid ones
  if (warmup.empty() || warmup.find_first_not_of("0123456789") != std::string::npos)
    throw ValueError("setup '" + text + "': the warm-up is a number of steps, not '" + warmup + "'");
  s.warmup = std::stoll(warmup);
  return s;
}

std::string Setup::describe() const {
  return std::string(tied_head ? "tied" : "untied") + " head, " + init + " init, " + std::to_string(warmup) + " warm-up steps";
}

std::shared_ptr<nn::TransformerLM> build_model(const Variant& variant, std::int64_t depth, const Setup& setup,
                                               const ModelShape& shape, std::int64_t vocab_size, std::uint64_t seed) {
  manual_seed(seed);
  nn::TransformerLMConfig config;
  config.vocab_size = vocab_size;
  config.max_seq_len = shape.seq_len;
  config.n_layers = depth;
  config.block.d_model = shape.d_model;
  config.block.n_heads = shape.heads;
  config.block.activation = nn::Activation::gelu_tanh;
  config.block.placement = variant.placement;
  config.block.norm = variant.norm;
  config.block.residual_scale = variant.residual_scale;
  config.b2t_scaling = variant.b2t_scaling;
  config.stream = variant.stream;
  if (variant.embed_scale_sqrt_d) {
    config.embed_scale = std::sqrt(static_cast<double>(shape.d_model));
    config.embed_scale_learnable = true;
  }
  config.block.branch_depth_exponent = variant.branch_exponent;
  if (variant.branch_exponent != 0) config.block.branch_base_depth = variant.branch_base_depth;
  // nGPT's blocks are LLaMA's (nn/placement/ngpt.cpp refuses GELU, biases and learned positions)
  if (variant.llama || nn::placement_info(variant.placement).hypersphere) {
    config.block.activation = nn::Activation::swiglu;
    config.block.d_ff = nn::llama_ffn_hidden(shape.d_model, 8);
    config.block.bias = false;
    config.block.rope = true;
  }
  config.tie_weights = setup.tied_head;
  config.init = nn::init_scheme_from_name(setup.init);
  return std::make_shared<nn::TransformerLM>(config);
}

namespace {

double l2(const Tensor& t) {
  double s = 0;
  for (double v : t.to_vector()) s += v * v;
  return std::sqrt(s);
}

// The means of v over consecutive blocks of `stride` values (the last block may be shorter).
// A non-finite value makes its block's mean non-finite, so a trace keeps its NaN and Inf.
std::vector<double> block_means(const std::vector<double>& v, std::int64_t stride) {
  std::vector<double> out;
  for (std::size_t b = 0; b < v.size(); b += static_cast<std::size_t>(stride)) {
    const std::size_t e = std::min(v.size(), b + static_cast<std::size_t>(stride));
    double sum = 0;
    for (std::size_t i = b; i < e; ++i) sum += v[i];
    out.push_back(sum / static_cast<double>(e - b));
  }
  return out;
}

// ‖(∇p for p in params)‖₂ over the gradients that are set.
double grad_norm_of(const std::vector<Tensor>& params) {
  double s = 0;
  for (const Tensor& p : params)
    if (p.grad().defined()) s += std::pow(l2(p.grad()), 2);
  return std::sqrt(s);
}

// The model's own forward, watched by hooks: a forward pre-hook on the first block keeps h₀
// (the embeddings' output) and adds a zero leaf `probe` to it — h₀ + 0 changes nothing, and
// probe.grad() is then ∂loss/∂h₀ — and forward hooks keep each block's output.
struct ProbeForward {
  Tensor logits, h0, probe;
  std::vector<Tensor> outputs;
};
ProbeForward probe_forward(nn::TransformerLM& model, const Tensor& tokens) {
  ProbeForward f;
  nn::OutputRecorder outputs(*model.blocks);
  HookHandle add_probe = (*model.blocks)[0]->register_forward_pre_hook([&f](nn::Module&, TensorList& inputs) {
    f.h0 = inputs[0];  // (B, T, C)
    f.probe = zeros(f.h0.shape(), f.h0.dtype()).requires_grad_();
    inputs[0] = add(f.h0, f.probe);
  });
  f.logits = model.forward(tokens);  // (B, T, V)
  add_probe.remove();
  f.outputs = outputs.outputs();
  return f;
}

}  // namespace

Snapshot measure(nn::TransformerLM& model, const data::Batch& probe) {
  model.zero_grad();
  ProbeForward f = probe_forward(model, probe.inputs);
  const std::int64_t V = f.logits.size(-1);
  const Tensor loss = cross_entropy(f.logits.reshape({-1, V}), probe.targets.reshape({-1}));
  loss.backward();

  Snapshot s;
  s.loss = loss.item();
  s.grad_norm = nn::block_grad_norms(*model.blocks);
  const nn::LayerStats stats = nn::layer_stats(f.outputs, f.h0);
  s.rms = stats.rms;
  s.cosine = stats.cosine_to_previous;
  s.emb_output_grad = f.probe.grad().defined() ? l2(f.probe.grad()) : 0.0;
  s.tok_emb_grad = model.tok_emb->weight.grad().defined() ? l2(model.tok_emb->weight.grad()) : 0.0;
  s.total_grad = nn::total_grad_norm(model);
  return s;
}

double probe_forward_mismatch(nn::TransformerLM& model, const data::Batch& probe) {
  NoGradGuard no_grad;
  const Tensor ours = probe_forward(model, probe.inputs).logits;
  const Tensor theirs = model.forward(probe.inputs);
  return max(abs(sub(ours, theirs))).item();
}

double validation_loss(nn::TransformerLM& model, const Data& data) {
  NoGradGuard no_grad;
  double total = 0;
  std::int64_t n = 0;
  for (const data::Batch& b : data.validation) {
    const Tensor logits = model.forward(b.inputs);
    const std::int64_t count = b.targets.numel();
    total += cross_entropy(logits.reshape({count, -1}), b.targets.reshape({count}), Reduction::sum).item();
    n += count;
  }
  return total / static_cast<double>(n);
}

std::vector<double> stream_rms(nn::TransformerLM& model, const data::Batch& probe) {
  NoGradGuard no_grad;
  nn::StreamRecorder recorder(model);
  model.forward(probe.inputs);
  std::vector<double> rms;
  for (const Tensor& h : recorder.streams()) rms.push_back(std::sqrt(mean(mul(h, h)).item()));
  return rms;
}

std::vector<double> lens_losses(nn::TransformerLM& model, const Data& data) {
  nn::LogitLens lens;
  {
    NoGradGuard no_grad;
    nn::StreamRecorder recorder(model);
    const nn::Readout readout = nn::lm_readout(model);
    for (const data::Batch& b : data.validation) {
      model.forward(b.inputs);
      lens.add(recorder.streams(), readout, b.targets);
    }
  }
  std::vector<double> losses;
  for (const nn::LensLayer& l : lens.layers()) losses.push_back(l.loss);
  return losses;
}

std::vector<double> skip_block_losses(nn::TransformerLM& model, const Data& data) {
  std::vector<double> losses;
  for (std::size_t l = 0; l < model.blocks->size(); ++l) {
    HookHandle skip = (*model.blocks)[l]->register_forward_hook(
        [](nn::Module&, const TensorList& inputs, Tensor& output) { output = inputs[0]; });
    losses.push_back(validation_loss(model, data));
    skip.remove();
  }
  return losses;
}

TrainResult train(nn::TransformerLM& model, const Data& data, const TrainOptions& o,
                  const std::function<bool(std::int64_t, double)>& after_step) {
  const auto start = std::chrono::steady_clock::now();
  // Under a depth parametrization the blocks' lr and Adam's eps follow the depth as well
  // (study::make_optimizer's overload for a language model)
  const std::unique_ptr<optim::Optimizer> optimizer = study::make_optimizer(model, o);
  // nGPT's matrices go back to the unit sphere after every step, as train_lm does it (the hook
  // lives as long as the optimizer)
  if (nn::placement_info(model.config.block.placement).hypersphere) optim::register_ngpt_normalization(*optimizer, model);
  auto schedule = training::make_schedule(*optimizer, o.schedule_settings());
  const nn::NamedTensors params = model.named_parameters();
  std::vector<Tensor> norm_params;  // every γ and β of the norm layers (names with "norm")
  for (const auto& [name, p] : params)
    if (name.find("norm") != std::string::npos) norm_params.push_back(p);
  Generator batches(o.batch_seed);
  double step_seconds = 0;
  TrainResult r;
  // The plateau is averaged over the steps final_loss averages, the last tenth: only those
  // steps compute it (an interrupted run is discarded, so it never needs the others).
  const std::int64_t last_tenth = std::max<std::int64_t>(1, o.steps / 10);
  std::vector<double> plateau;  // per step of the last tenth
  for (std::int64_t step = 0; step < o.steps; ++step) {
    const auto step_start = std::chrono::steady_clock::now();
    schedule->apply(step);
    const data::Batch batch = data.stream->sample_batch(data::Split::train, o.batch, o.seq_len, batches);
    const Tensor logits = model.forward(batch.inputs);
    const Tensor loss = cross_entropy(logits.reshape({-1, data.vocab_size}), batch.targets.reshape({-1}));
    const double l = loss.item();
    r.loss.push_back(l);
    if (data.unigram && step >= o.steps - last_tenth) plateau.push_back(data.unigram->cross_entropy(batch.targets.to_vector<std::int64_t>()));
    r.lr.push_back(optimizer->lr(0));
    double norm_grad = NAN;
    const training::UpdateResult u =
        std::isfinite(l) ? training::update(*optimizer, loss, params, o.clip, [&] { norm_grad = grad_norm_of(norm_params); })
                         : training::UpdateResult{NAN, l, "loss", ""};
    if (std::isfinite(l)) r.grad_norm.push_back(u.grad_norm), r.norm_grad_norm.push_back(norm_grad);
    step_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
    if (!u.ok()) {
      r.status = "non-finite";  // a NaN or Inf loss or gradient: no step is taken
      break;
    }
    if (!after_step(step + 1, l)) {
      r.interrupted = true;
      break;
    }
  }
  model.zero_grad();
  r.initial_loss = r.loss.empty() ? NAN : r.loss.front();
  if (r.status == "ok" && !r.loss.empty()) {
    r.final_loss = study::mean_of_last(r.loss, std::max<std::size_t>(1, r.loss.size() / 10));
    if (!plateau.empty()) r.plateau = study::mean_of_last(plateau, plateau.size());
    r.val_loss = validation_loss(model, data);
    if (!std::isfinite(r.val_loss)) r.status = "non-finite";
    else if (!(r.final_loss < r.initial_loss)) r.status = "no progress";
  } else {
    r.final_loss = r.val_loss = NAN;
  }
  r.steps_done = static_cast<std::int64_t>(r.loss.size());
  if (r.steps_done > TrainResult::kTracePoints) {
    r.trace_stride = (r.steps_done + TrainResult::kTracePoints - 1) / TrainResult::kTracePoints;
    for (auto* trace : {&r.loss, &r.lr, &r.grad_norm, &r.norm_grad_norm}) *trace = block_means(*trace, r.trace_stride);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.step_seconds = step_seconds;
  return r;
}

}  // namespace depth_study
