// logit_lens.cpp — the residual stream read at every depth (docs/residual-stream.md). A Pre-LN
// and a Post-LN model of 4 blocks are trained 300 steps on tiny_lm's characters; then, on the
// validation windows, each model's logit lens (nostalgebraist 2020): the stream after every
// block decoded by the model's own readout, as if it were the last,
//
//   loss_l = CE(lm_head(final_norm(h_l)), targets),  l = 0 (the embeddings), 1..L
//
// (Post-LN has no final norm: its blocks end with one), and, on one validation batch, how much
// each sublayer and each attention head writes into the stream (Elhage et al. 2021). Writes
// logit_lens.csv, writes.csv, heads.csv and the chart logit_lens.svg (the loss per layer, one
// line per placement) to --out; the page's chart is this program's, with its defaults:
//
//   build/examples/logit_lens --out docs/residual-stream     # one thread, 13 s of CPU
#include <tapegrad/tapegrad.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>

#include "cli_checks.hpp"
#include "common/char_lm.hpp"
#include "common/report.hpp"

using namespace tapegrad;

namespace {

constexpr std::int64_t kT = 32, kB = 16, kEvalBatches = 8;

struct Settings {
  std::int64_t steps = 300, layers = 4, d_model = 64, seed = 1, threads = 1;
  double lr = 3e-3;
  std::string out = "logit_lens_out";
};

// A model of `placement` trained s.steps AdamW steps (warm-up over a tenth, then cosine) on
// batches of the training split. Its LM head is its own: tied to the embedding, Post-LN stays
// on the unigram plateau at this size (examples/residual_depth.cpp says the same).
std::shared_ptr<nn::TransformerLM> train(const Settings& s, const nn::Placement& placement, const data::TokenStream& stream,
                                         std::int64_t vocab) {
  manual_seed(static_cast<std::uint64_t>(s.seed));  // both placements start from the same draws
  nn::TransformerLMConfig config;
  config.vocab_size = vocab;
  config.max_seq_len = kT;
  config.n_layers = s.layers;
  config.block.d_model = s.d_model;
  config.block.n_heads = 4;
  config.block.placement = placement;
  config.tie_weights = false;
  auto model = std::make_shared<nn::TransformerLM>(config);
  study::train_char_lm(*model, stream, s.steps, s.lr, static_cast<std::uint64_t>(s.seed), kB, kT, placement.name);
  return model;
}

// Every sublayer's and every head's write on the first validation batch, as rows of two tables.
void add_writes(nn::TransformerLM& model, const data::TokenStream& stream, const std::string& label,
                study::Table& writes, study::Table& heads) {
  NoGradGuard no_grad;
  model.eval();
  nn::WriteRatioRecorder sublayers(model);
  nn::HeadWriteRecorder per_head(model);
  data::Batch b;
  auto it = stream.windows(data::Split::val, kB, kT);
  it.next(b);
  (void)model.forward(b.inputs);
  for (const nn::ResidualWrite& w : sublayers.writes())
    writes.add({label, w.block, w.sublayer, study::fmt(w.input_norm), study::fmt(w.output_norm), study::fmt(w.ratio),
                study::fmt(w.read_write_cosine)});
  for (const nn::HeadWrites& a : per_head.writes())
    for (std::size_t h = 0; h < a.norms.size(); ++h) heads.add({label, a.path, std::to_string(h), study::fmt(a.norms[h])});
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"The logit lens, sublayer writes and head writes of a Pre-LN and a Post-LN model (docs/residual-stream.md)"};
  app.add_option("--steps", s.steps, "training steps of each model")->check(cli::positive);
  app.add_option("--layers", s.layers, "blocks of each model")->check(cli::range(1, 64));
  app.add_option("--d-model", s.d_model, "model width (4 heads: a multiple of 4)")->check(cli::positive);
  app.add_option("--lr", s.lr, "AdamW's peak learning rate")->check(cli::positive);
  app.add_option("--seed", s.seed, "initial weights and batch order");
  app.add_option("--threads", s.threads, "threads for OpenMP and OpenBLAS")->check(cli::positive);
  app.add_option("--out", s.out, "folder of the CSV files and the chart");
  CLI11_PARSE(app, argc, argv);
  set_num_threads(static_cast<int>(s.threads));
  try {
    if (s.d_model % 4 != 0) throw std::invalid_argument("--d-model: must be a multiple of 4 (the heads), got " + std::to_string(s.d_model));
    const data::Corpus corpus = data::Corpus::default_corpus();
    const data::CharTokenizer tokenizer = data::CharTokenizer::from_texts(corpus.texts());
    const data::TokenStream stream(corpus, tokenizer, /*val_fraction=*/0.1);
    training::Unigram unigram(tokenizer.vocab_size());
    unigram.add_all(stream.tokens(data::Split::train));
    const double baseline = unigram.cross_entropy(stream.tokens(data::Split::val));
    std::filesystem::create_directories(s.out);

    study::Table lens({"placement", "layer", "loss", "top1_agreement", "unigram_baseline"});
    study::Table writes({"placement", "block", "sublayer", "input_norm", "output_norm", "ratio", "read_write_cosine"});
    study::Table heads({"placement", "attention", "head", "norm"});
    study::LineChart chart{"The logit lens after " + std::to_string(s.steps) + " steps", "layer (0: the embeddings)",
                           "validation loss of the decoded stream (nats/character)"};
    chart.integer_x = true;
    std::printf("logit lens: validation loss of the stream after each block (0: the embeddings), decoded by the "
                "model's readout; unigram baseline %.4f\n", baseline);
    for (const nn::Placement& placement : {nn::Placement::pre, nn::Placement::post}) {
      const std::string label = nn::placement_info(placement).label;
      auto model = train(s, placement, stream, tokenizer.vocab_size());
      const training::LensEvaluation e = training::evaluate_lens(*model, stream, kEvalBatches, kB, kT);
      study::Series line{label, {}, {}};
      line.markers = true;
      std::printf("%-8s", label.c_str());
      for (const nn::LensLayer& l : e.layers) {
        lens.add({label, std::to_string(l.layer), study::fmt(l.loss), study::fmt(l.top1_agreement), study::fmt(baseline)});
        line.x.push_back(static_cast<double>(l.layer)), line.y.push_back(l.loss);
        std::printf("  %lld: %.4f (%.0f%%)", static_cast<long long>(l.layer), l.loss, 100 * l.top1_agreement);
      }
      std::printf("   validation loss %.4f\n", e.loss);
      chart.series.push_back(line);
      add_writes(*model, stream, label, writes, heads);
    }
    chart.series.push_back({"unigram baseline", {0, static_cast<double>(s.layers)}, {baseline, baseline}, true});
    lens.write_csv(s.out + "/logit_lens.csv");
    writes.write_csv(s.out + "/writes.csv");
    heads.write_csv(s.out + "/heads.csv");
    chart.write_svg(s.out + "/logit_lens.svg");
    std::printf("\n%s\nwrote %s/logit_lens.csv, writes.csv, heads.csv and logit_lens.svg\n", writes.markdown().c_str(),
                s.out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "logit_lens: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
