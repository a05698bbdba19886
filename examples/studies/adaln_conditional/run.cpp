// run.cpp — the task mix, the variants, the scores and the run of run.hpp.
#include "run.hpp"

#include <algorithm>
#include <chrono>

namespace adaln_conditional {

using namespace tapegrad;

TaskMix::TaskMix(const Settings& s) {
  for (const auto& n : s.tasks) {
    if (n == "copy") tasks.push_back(std::make_unique<data::CopyTask>(s.symbols, s.min_len, s.max_len));
    else if (n == "reverse") tasks.push_back(std::make_unique<data::ReverseTask>(s.symbols, s.min_len, s.max_len));
    else tasks.push_back(std::make_unique<data::SortTask>(s.symbols, s.min_len, s.max_len));
  }
}

std::vector<Example> TaskMix::sample(std::int64_t n, Generator& gen) const {
  std::vector<Example> rows;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto t = static_cast<std::int64_t>(gen.next_below(tasks.size()));
    rows.push_back({t, tasks[t]->sample(gen)});
  }
  return rows;
}

HeldOut held_out(const TaskMix& mix, std::int64_t per_task, std::uint64_t seed) {
  HeldOut val(mix.size());
  Generator gen(seed);
  for (std::int64_t t = 0; t < mix.size(); ++t)
    for (const auto& p : mix.tasks[t]->sample(per_task, gen)) val[t].push_back({t, p});
  return val;
}

std::vector<data::SeqPair> Variant::pairs(std::span<const Example> rows, std::int64_t V) const {
  std::vector<data::SeqPair> out;
  for (const Example& e : rows) {
    data::SeqPair p = e.pair;
    if (!adaln) p.source.insert(p.source.begin(), V + e.task);
    out.push_back(std::move(p));
  }
  return out;
}

Tensor Variant::classes(std::span<const Example> rows) const {
  if (!adaln) return Tensor();
  std::vector<std::int64_t> ids;
  for (const Example& e : rows) ids.push_back(e.task);
  return Tensor::from_vector(ids, {static_cast<std::int64_t>(ids.size())});
}

namespace {

std::shared_ptr<nn::TransformerLM> make_model(const Variant& v, const TaskMix& mix, const Settings& s) {
  nn::TransformerLMConfig c;
  c.vocab_size = mix.vocab().size() + (v.adaln ? 0 : mix.size());
  c.max_seq_len = 2 * s.max_len + 4;  // BOS <task> source SEP answer (the inputs drop the final EOS)
  c.n_layers = s.layers;
  c.block.d_model = s.d_model;
  c.block.n_heads = s.heads;
  c.block.activation = nn::Activation::gelu_tanh;
  c.block.placement = nn::Placement::pre;  // AdaLN-Zero is defined for pre only
  c.block.norm = v.adaln ? nn::NormKind::adaln_zero : nn::NormKind::layernorm;
  c.n_classes = v.adaln ? mix.size() : 0;
  c.init = nn::init_scheme_from_name(s.init);
  manual_seed(s.seed);  // the same initial draws for both variants, where their shapes agree
  return std::make_shared<nn::TransformerLM>(c);
}

// Teacher-forced, on each task's held-out rows: loss per answer token (EOS included), token
// accuracy, and the share of rows whose answer tokens are all the argmax.
std::vector<TaskEval> evaluate(nn::TransformerLM& model, const Variant& v, const HeldOut& val, std::int64_t V,
                               std::int64_t batch) {
  NoGradGuard no_grad;
  model.eval();
  std::vector<TaskEval> result;
  for (const auto& rows : val) {
    training::Scores scores;  // collate_lm's targets: the answer and EOS (the prompt is ignored)
    for (const auto chunk : study::chunks(rows, batch)) {
      const data::LMBatch b = data::collate_lm(v.pairs(chunk, V));
      scores.add(model.forward(b.inputs, v.classes(chunk)), b.targets);
    }
    result.push_back({scores.loss(), scores.token_accuracy(), scores.exact_match()});
  }
  model.train();
  return result;
}

// Greedy generation (temperature 0) of the first `n` held-out rows of each task, as words.
std::vector<Generation> generate_examples(nn::TransformerLM& model, const Variant& v, const TaskMix& mix, const HeldOut& val,
                                          std::int64_t n) {
  const data::Vocab& vocab = mix.vocab();
  std::vector<Generation> out;
  for (std::size_t t = 0; t < val.size(); ++t)
    for (std::int64_t i = 0; i < std::min<std::int64_t>(n, static_cast<std::int64_t>(val[t].size())); ++i) {
      const std::span<const Example> row(&val[t][i], 1);
      const data::SeqPair p = v.pairs(row, vocab.size())[0];
      std::vector<std::int64_t> prompt = {data::kBos};
      prompt.insert(prompt.end(), p.source.begin(), p.source.end());
      prompt.push_back(data::kSep);
      const auto T = static_cast<std::int64_t>(prompt.size());
      nn::GenerateOptions greedy;
      greedy.temperature = 0;
      const Tensor seq = model.generate(Tensor::from_vector(prompt, {1, T}), static_cast<std::int64_t>(p.target.size()) + 1,
                                        greedy, v.classes(row));
      const auto tokens = seq.to_vector<std::int64_t>();
      bool ended = false;
      std::vector<std::int64_t> answer = study::until_eos(tokens, T, tokens.size(), data::kEos, ended);
      for (auto& token : answer)
        if (token >= vocab.size()) token = data::kPad;  // a task token: show <pad>
      out.push_back({mix.tasks[t]->name(), vocab.join(val[t][i].pair.source), vocab.join(p.target), vocab.join(answer),
                     ended && answer == p.target});
    }
  return out;
}

}  // namespace

RunResult train_one(const Variant& v, const TaskMix& mix, const HeldOut& val, const Settings& s, training::Progress& progress) {
  RunResult r;
  r.variant = v;
  const auto start = std::chrono::steady_clock::now();
  auto model = make_model(v, mix, s);
  r.parameters = model->num_parameters();
  const std::int64_t V = mix.vocab().size(), model_V = model->config.vocab_size;

  Generator batch_gen(s.seed ^ 0xba7c4ULL);  // the same rows for both variants
  study::RunSteps steps;
  steps.name = v.name;
  steps.val_label = "val (mean over tasks)";
  steps.eval_interval = s.eval_interval;
  steps.batch_loss = [&](std::int64_t) {
    const std::vector<Example> rows = mix.sample(s.batch, batch_gen);
    const data::LMBatch b = data::collate_lm(v.pairs(rows, V));
    const Tensor logits = model->forward(b.inputs, v.classes(rows));
    return cross_entropy(logits.reshape({-1, model_V}), b.targets.reshape({-1}));
  };
  steps.validate = [&] {
    std::vector<double> losses;
    for (const TaskEval& e : evaluate(*model, v, val, V, s.batch)) losses.push_back(e.loss);
    r.val_loss.push_back(losses);
    return study::mean(losses);
  };
  study::train_run(*model, s, steps, progress, r);

  if (!r.diverged()) {
    r.final_eval = evaluate(*model, v, val, V, s.batch);
    r.generations = generate_examples(*model, v, mix, val, s.examples);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace adaln_conditional
