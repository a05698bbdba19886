// depth_study_harness — what the depth study's harness costs on top of the training step it
// times: the same model, the same batches, interleaved rounds of
//
//   raw     the bare step: batch, forward, cross-entropy, backward, clipping, AdamW
//   study   depth_study's train() (examples/studies/depth_study/runs.hpp): the same steps
//           plus what the study keeps per step (losses, learning rates, gradient norms, the
//           plateau of the last tenth) and the validation loss at the end
//   skip    study plus the measurements after training at --skip-depth (a probe snapshot
//           and the validation loss with each block skipped)
//
// each as ms per block-step (the wall time / (steps × blocks)), median and range over rounds,
// and the study's and skip's ratio to raw. The whole study adds the runs at initialization,
// starting the processes and waiting for the last one: its report gives that figure from its
// own records (docs/depth-study.md, "Where the time goes").
//
//   depth_study_harness --d-model 32 --depth 12 --steps 200 --rounds 5
//   depth_study_harness --d-model 64 --depth 12 --steps 100 --rounds 5
#include <chrono>
#include <cstdio>

#include <CLI/CLI.hpp>
#include <tapegrad/tapegrad.hpp>

#include "bench_stats.hpp"
#include "depth_study/runs.hpp"

using namespace tapegrad;
using namespace depth_study;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The bare step, `steps` times, on the batches train() draws.
double raw_steps(nn::TransformerLM& model, const Data& data, const TrainOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  auto optimizer = study::make_optimizer(model, o);
  auto schedule = training::make_schedule(*optimizer, o.schedule_settings());
  const nn::NamedTensors params = model.named_parameters();
  Generator batches(o.batch_seed);
  for (std::int64_t step = 0; step < o.steps; ++step) {
    schedule->apply(step);
    const data::Batch batch = data.stream->sample_batch(data::Split::train, o.batch, o.seq_len, batches);
    const Tensor logits = model.forward(batch.inputs);
    const Tensor loss = cross_entropy(logits.reshape({-1, data.vocab_size}), batch.targets.reshape({-1}));
    training::update(*optimizer, loss, params, o.clip);
  }
  return seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t d_model = 32, depth = 12, steps = 200, rounds = 5, batch = 16, seq_len = 32;
  int threads = 1;
  std::string placement = "pre";
  CLI::App app{"The depth study's harness against the bare training step, ms per block-step"};
  app.add_option("--d-model", d_model)->capture_default_str();
  app.add_option("--depth", depth)->capture_default_str();
  app.add_option("--steps", steps, "steps per round")->capture_default_str();
  app.add_option("--rounds", rounds, "interleaved rounds of raw, study and skip")->capture_default_str();
  app.add_option("--batch", batch)->capture_default_str();
  app.add_option("--seq-len", seq_len)->capture_default_str();
  app.add_option("--placement", placement)->capture_default_str();
  app.add_option("--threads", threads)->capture_default_str();
  bool flush = true;
  app.add_option("--flush-denormal", flush, "subnormal floats as 0 (the study's default)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  set_num_threads(threads);
  set_flush_denormal(flush);

  const data::Corpus corpus = data::Corpus::default_corpus();
  const data::CharTokenizer tokenizer = data::CharTokenizer::from_texts(corpus.texts());
  const data::TokenStream stream(corpus, tokenizer, 0.1);
  Data data = make_data(stream, tokenizer.vocab_size(), 16, 4, batch, seq_len);
  training::Unigram unigram(data.vocab_size);
  unigram.add_all(stream.tokens(data::Split::train));
  data.unigram = unigram;
  TrainOptions o;
  o.batch = batch, o.seq_len = seq_len, o.steps = steps, o.lr = 3e-3, o.clip = 1.0, o.warmup = 15, o.batch_seed = 7;
  const ModelShape shape{d_model, 4, seq_len};
  const Variant& variant = variant_from_name(placement);
  const double block_steps = static_cast<double>(steps * depth);

  std::vector<double> raw, study, skip;
  for (std::int64_t r = 0; r < rounds; ++r) {
    {
      auto model = build_model(variant, depth, Setup{}, shape, data.vocab_size, 1);
      raw.push_back(1e3 * raw_steps(*model, data, o) / block_steps);
    }
    {
      auto model = build_model(variant, depth, Setup{}, shape, data.vocab_size, 1);
      const auto start = std::chrono::steady_clock::now();
      train(*model, data, o, [](std::int64_t, double) { return true; });
      study.push_back(1e3 * seconds_since(start) / block_steps);
    }
    {
      auto model = build_model(variant, depth, Setup{}, shape, data.vocab_size, 1);
      const auto start = std::chrono::steady_clock::now();
      train(*model, data, o, [](std::int64_t, double) { return true; });
      measure(*model, data.probe);
      model->zero_grad();
      skip_block_losses(*model, data);
      skip.push_back(1e3 * seconds_since(start) / block_steps);
    }
  }
  auto row = [&](const char* what, const std::vector<double>& v) {
    std::printf("%-6s %8.4f ms/block-step [%.4f - %.4f]   x%.3f of raw\n", what, bench::median(v), bench::quantile(v, 0),
                bench::quantile(v, 1), bench::median(v) / bench::median(raw));
  };
  std::printf("d_model %lld, %s, %lld blocks, batch %lld x %lld tokens, %lld steps, %lld rounds, %d thread(s); load %s\n",
              static_cast<long long>(d_model), placement.c_str(), static_cast<long long>(depth), static_cast<long long>(batch),
              static_cast<long long>(seq_len), static_cast<long long>(steps), static_cast<long long>(rounds), threads,
              training::load_average().c_str());
  row("raw", raw);
  row("study", study);
  row("skip", skip);
  return 0;
}
