// run.cpp — the data, the scores and the run of run.hpp.
#include "run.hpp"

#include <algorithm>
#include <chrono>

namespace translate {

using namespace tapegrad;

TranslationData::TranslationData(std::int64_t val_size, std::uint64_t seed) {
  Generator gen(seed);
  while (static_cast<std::int64_t>(val.size()) < val_size) {
    data::SeqPair p = task.sample(gen);
    if (val_sources.insert(p.source).second) val.push_back(std::move(p));
  }
}

std::vector<data::SeqPair> TranslationData::train_batch(std::int64_t n, Generator& gen) const {
  std::vector<data::SeqPair> batch;
  while (static_cast<std::int64_t>(batch.size()) < n) {
    data::SeqPair p = task.sample(gen);
    if (!val_sources.count(p.source)) batch.push_back(std::move(p));
  }
  return batch;
}

double TranslationData::unigram_baseline(std::uint64_t seed) const {
  auto targets = [](const std::vector<data::SeqPair>& pairs) {
    std::vector<std::int64_t> tokens;
    for (const auto& p : pairs) {
      tokens.insert(tokens.end(), p.target.begin(), p.target.end());
      tokens.push_back(data::kEos);
    }
    return tokens;
  };
  training::Unigram unigram(task.vocab().size());
  Generator gen(seed);
  unigram.add_all(targets(train_batch(4000, gen)));
  return unigram.cross_entropy(targets(val));
}

std::string run_name(const std::string& placement, std::int64_t layers) { return placement + " L=" + std::to_string(layers); }

namespace {

// Teacher-forced: the decoder reads the true prefix. Loss per target token (EOS included);
// a token counts as right when the argmax of its logits is the true token.
training::Scores evaluate(nn::Seq2SeqTransformer& model, const TranslationData& d, std::int64_t batch) {
  NoGradGuard no_grad;
  model.eval();
  training::Scores scores;
  for (const auto chunk : study::chunks(d.val, batch)) {
    const data::Seq2SeqBatch b = data::collate_seq2seq(chunk);
    scores.add(model.forward(b.src, b.tgt_in, b.src_pad_mask, b.tgt_pad_mask), b.tgt_out);
  }
  model.train();
  return scores;
}

// Greedy decoding of every held-out source; exact when the words before the first EOS equal
// task.solve(source) and an EOS was produced. Keeps the first `keep` as examples.
double exact_match(nn::Seq2SeqTransformer& model, const TranslationData& d, std::int64_t batch, std::int64_t keep,
                   std::vector<Decoding>& examples) {
  const data::Vocab& vocab = d.task.vocab();
  const std::int64_t max_len = d.task.max_target_len() + 2;  // BOS, target, EOS
  double exact = 0;
  for (const auto chunk : study::chunks(d.val, batch)) {
    const data::Seq2SeqBatch b = data::collate_seq2seq(chunk);
    const Tensor out = model.greedy_decode(b.src, data::kBos, data::kEos, max_len, b.src_pad_mask);
    const auto width = static_cast<std::size_t>(out.size(1));
    const auto tokens = out.to_vector<std::int64_t>();
    for (std::size_t r = 0; r < chunk.size(); ++r) {
      bool ended = false;  // row r: BOS, then the decoded words
      const auto decoded = study::until_eos(tokens, r * width + 1, (r + 1) * width, data::kEos, ended);
      const std::vector<std::int64_t> expected = d.task.solve(chunk[r].source);
      const bool correct = ended && decoded == expected;
      exact += correct;
      if (static_cast<std::int64_t>(examples.size()) < keep)
        examples.push_back({vocab.join(chunk[r].source), vocab.join(expected), vocab.join(decoded), correct});
    }
  }
  return exact / static_cast<double>(d.val.size());
}

}  // namespace

RunResult train_one(const std::string& placement, std::int64_t layers, const TranslationData& d, const Settings& s,
                    training::Progress& progress) {
  RunResult r;
  r.placement = placement;
  r.layers = layers;
  const auto start = std::chrono::steady_clock::now();

  manual_seed(s.seed);  // the same initial draws for every run of the same shape
  nn::Seq2SeqConfig config;
  const std::int64_t V = d.task.vocab().size();
  config.src_vocab_size = config.tgt_vocab_size = V;
  config.max_seq_len = std::max(d.task.max_source_len(), d.task.max_target_len()) + 2;
  config.n_encoder_layers = config.n_decoder_layers = layers;
  config.block.d_model = s.d_model;
  config.block.n_heads = s.heads;
  config.block.d_ff = s.d_ff;
  config.block.activation = nn::activation_from_name(s.activation);
  config.block.placement = nn::placement_from_name(placement);
  config.block.dropout = s.dropout;
  config.init = nn::init_scheme_from_name(s.init);
  config.b2t_scaling = s.scaled(placement);
  nn::Seq2SeqTransformer model(config);
  r.parameters = model.num_parameters();

  Generator batch_gen(s.seed ^ 0xba7c4ULL);  // the same batches for every run
  study::RunSteps steps;
  steps.name = run_name(placement, layers);
  steps.eval_interval = s.eval_interval;
  steps.work_per_step = static_cast<double>(layers);
  steps.batch_loss = [&](std::int64_t) {
    const data::Seq2SeqBatch b = data::collate_seq2seq(d.train_batch(s.batch, batch_gen));
    const Tensor logits = model.forward(b.src, b.tgt_in, b.src_pad_mask, b.tgt_pad_mask);
    return cross_entropy(logits.reshape({-1, V}), b.tgt_out.reshape({-1}));
  };
  steps.validate = [&] {
    const training::Scores e = evaluate(model, d, s.batch);
    r.val_loss.push_back(e.loss());
    r.token_accuracy = e.token_accuracy();  // the last one is the final one: the last step evaluates
    return e.loss();
  };
  study::train_run(model, s, steps, progress, r);

  if (r.diverged()) r.token_accuracy = NAN;
  else r.exact_match = exact_match(model, d, s.batch, s.examples, r.decodings);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace translate
