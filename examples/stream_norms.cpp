// stream_norms.cpp — how large the residual stream grows with depth under each placement and
// each stream scheme (docs/residuals.md's figure). Pre-LN adds every sublayer's update to a
// stream that nothing normalizes, so its size grows with depth (Xiong et al. 2020; the "curse of
// depth" of LayerNorm Scaling and GPAS); the schemes and placements after it each answer that
// growth in their own way. For each design, models of --layers blocks are drawn with --seeds
// seeds and the root mean square of the stream that each block reads is measured on validation
// windows, at init and after --steps AdamW steps:
//
//   rms_l = sqrt(mean(h_l²)),  h_0 the embeddings, h_l what block l + 1 (or the head) reads
//
// kept by the model's stream hooks (nn::StreamRecorder). Writes stream_norms.csv (design,
// seed, steps, layer, rms, and the validation loss) and two charts, stream_norms_init.svg and
// stream_norms_trained.svg (the mean over seeds, the range as error bars), to --out; the page's
// charts are this program's, with its defaults:
//
//   build/examples/stream_norms --out docs/residuals
#include <tapegrad/tapegrad.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

#include "cli_checks.hpp"
#include "common/char_lm.hpp"
#include "common/report.hpp"

using namespace tapegrad;

namespace {

constexpr std::int64_t kT = 32, kB = 16, kEvalBatches = 4;

struct Settings {
  std::int64_t steps = 300, layers = 16, d_model = 32, seeds = 3, threads = 1;
  double lr = 3e-3;
  std::string out = "stream_norms_out";
};

// One design: a label, what it sets on Pre-LN's config (the default every design starts from),
// and what it installs on its optimizer (nGPT: the renormalization after every step).
struct Design {
  std::string label;
  std::function<void(nn::TransformerLMConfig&)> set;
  std::function<void(optim::Optimizer&, nn::TransformerLM&)> setup{};
};

// The designs of the figure: the placements that answer the stream's growth, and the schemes of
// the stream (nn/stream/). A design whose placement or scheme a build lacks is refused by name.
std::vector<Design> designs() {
  auto placement = [](const char* name) { return [name](nn::TransformerLMConfig& c) { c.block.placement = name; }; };
  auto scheme = [](const char* name) { return [name](nn::TransformerLMConfig& c) { c.stream.scheme = name; }; };
  return {
      {"Pre-LN", placement("pre")},
      {"Post-LN", placement("post")},
      {"Peri-LN", placement("peri")},
      // LayerNorm Scaling without the depth-scaled init it replaces (docs/residuals.md)
      {"LayerNorm Scaling", [](nn::TransformerLMConfig& c) { c.block.placement = "lns", c.init = nn::InitScheme::xavier; }},
      {"Pre-LN + GPAS", placement("gpas")},
      {"DenseFormer", scheme("denseformer")},
      {"value residual", scheme("value_residual")},
      {"Hyper-Connections", scheme("hyper_connections")},  // n = 4 copies; the hooks see their sum
      {"mHC", scheme("mhc")},
      {"Attention Residuals", scheme("attention_residuals")},
      // nGPT's blocks: SwiGLU, no biases, rotary positions (nn/placement/ngpt.cpp); the stream on
      // the unit sphere, its rms 1/√d_model by construction. Trained at the others' lr.
      {"nGPT",
       [](nn::TransformerLMConfig& c) {
         c.block.placement = "ngpt", c.block.activation = nn::Activation::swiglu, c.block.bias = false, c.block.rope = true;
       },
       [](optim::Optimizer& opt, nn::TransformerLM& model) { optim::register_ngpt_normalization(opt, model); }},
  };
}

// A model of design d drawn from seed (trained by study::train_char_lm, as logit_lens's).
std::shared_ptr<nn::TransformerLM> make_model(const Settings& s, const Design& d, std::int64_t seed, std::int64_t vocab) {
  manual_seed(static_cast<std::uint64_t>(seed));
  nn::TransformerLMConfig config;
  config.vocab_size = vocab;
  config.max_seq_len = kT;
  config.n_layers = s.layers;
  config.block.d_model = s.d_model;
  config.block.n_heads = 4;
  config.tie_weights = false;  // as logit_lens.cpp: Post-LN stays on the unigram plateau tied
  d.set(config);
  return std::make_shared<nn::TransformerLM>(config);
}

// rms_l of the stream on the first kEvalBatches validation windows, and the validation loss.
struct Measured {
  std::vector<double> rms;  // layer 0..L
  double loss = NAN;
};
Measured measure(nn::TransformerLM& model, const data::TokenStream& stream) {
  nn::StreamRecorder recorder(model);
  Measured m;
  std::int64_t batches = 0;
  m.loss = training::evaluate_lm(model, stream, kEvalBatches, kB, kT, [&](const data::Batch&) {
    const std::vector<Tensor> h = recorder.streams();
    if (m.rms.empty()) m.rms.assign(h.size(), 0.0);
    for (std::size_t l = 0; l < h.size(); ++l) m.rms[l] += mean(mul(h[l], h[l])).item();
    ++batches;
  });
  for (double& r : m.rms) r = std::sqrt(r / static_cast<double>(batches));
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"The residual stream's size by depth under each placement and stream scheme (docs/residuals.md)"};
  app.add_option("--steps", s.steps, "training steps of each model")->check(cli::positive);
  app.add_option("--layers", s.layers, "blocks of each model")->check(cli::range(1, 256));
  app.add_option("--d-model", s.d_model, "model width (4 heads: a multiple of 4)")->check(cli::positive);
  app.add_option("--seeds", s.seeds, "models of each design, seeds 1..N")->check(cli::range(1, 100));
  app.add_option("--lr", s.lr, "AdamW's peak learning rate")->check(cli::positive);
  app.add_option("--threads", s.threads, "threads for OpenMP and OpenBLAS")->check(cli::positive);
  app.add_option("--out", s.out, "folder of the CSV file and the charts");
  CLI11_PARSE(app, argc, argv);
  set_num_threads(static_cast<int>(s.threads));
  try {
    if (s.d_model % 4 != 0) throw std::invalid_argument("--d-model: must be a multiple of 4 (the heads), got " + std::to_string(s.d_model));
    const data::Corpus corpus = data::Corpus::default_corpus();
    const data::CharTokenizer tokenizer = data::CharTokenizer::from_texts(corpus.texts());
    const data::TokenStream stream(corpus, tokenizer, /*val_fraction=*/0.1);
    std::filesystem::create_directories(s.out);

    study::Table table({"design", "seed", "steps", "layer", "rms", "val_loss"});
    const std::string what = std::to_string(s.layers) + " blocks, d_model " + std::to_string(s.d_model);
    study::LineChart at_init{"The stream's size by depth at init (" + what + ")", "layer (0: the embeddings)",
                             "rms of the stream the next block reads"};
    study::LineChart trained{"The stream's size by depth after " + std::to_string(s.steps) + " steps (" + what + ")",
                             "layer (0: the embeddings)", "rms of the stream the next block reads"};
    for (study::LineChart* c : {&at_init, &trained}) c->integer_x = true, c->log_y = true;
    const std::vector<Design> all = designs();
    // the page's table: the stream after the last block, mean [min, max] over the seeds
    std::string markdown = "| design | rms after the last block, at init | after " + std::to_string(s.steps) +
                           " steps | validation loss |\n|---|---|---|---|\n";
    auto cell = [](const study::Series& line) {
      char c[80];
      std::snprintf(c, sizeof c, "%.3g [%.3g, %.3g]", line.y.back(), line.y_low.back(), line.y_high.back());
      return std::string(c);
    };
    training::Progress progress(static_cast<double>(all.size() * static_cast<std::size_t>(s.seeds)));
    progress.note("rms of the stream after the last block, mean over " + std::to_string(s.seeds) +
                  " seeds [min, max], and the validation loss after " + std::to_string(s.steps) + " steps");
    for (const Design& d : all) {
      std::map<std::int64_t, std::vector<std::vector<double>>> rms;  // steps -> per seed, per layer
      std::vector<double> losses;
      for (std::int64_t seed = 1; seed <= s.seeds; ++seed) {
        auto model = make_model(s, d, seed, tokenizer.vocab_size());
        for (const std::int64_t steps : {std::int64_t{0}, s.steps}) {
          if (steps > 0) {
            std::function<void(optim::Optimizer&)> setup;
            if (d.setup) setup = [&](optim::Optimizer& opt) { d.setup(opt, *model); };
            study::train_char_lm(*model, stream, s.steps, s.lr, static_cast<std::uint64_t>(seed), kB, kT, d.label, setup);
          }
          const Measured m = measure(*model, stream);
          rms[steps].push_back(m.rms);
          if (steps > 0) losses.push_back(m.loss);
          for (std::size_t l = 0; l < m.rms.size(); ++l)
            table.add({d.label, std::to_string(seed), std::to_string(steps), std::to_string(l), study::fmt(m.rms[l]),
                       study::fmt(m.loss)});
        }
        progress.done += 1;
        progress.show(d.label + " seed " + std::to_string(seed) + " of " + std::to_string(s.seeds));
      }
      for (const auto& [steps, per_seed] : rms) {
        study::Series line{d.label, {}, {}};
        line.markers = true;
        for (std::size_t l = 0; l < per_seed.front().size(); ++l) {
          std::vector<double> v;
          for (const auto& r : per_seed) v.push_back(r[l]);
          line.x.push_back(static_cast<double>(l));
          line.y.push_back(study::mean(v));
          line.y_low.push_back(*std::min_element(v.begin(), v.end()));
          line.y_high.push_back(*std::max_element(v.begin(), v.end()));
        }
        (steps == 0 ? at_init : trained).series.push_back(line);
      }
      const study::Series& init_line = at_init.series.back();
      const study::Series& trained_line = trained.series.back();
      char row[200];
      std::snprintf(row, sizeof row, "%-18s  at init %8.3f [%.3f, %.3f]   trained %8.3f [%.3f, %.3f]   val loss %.4f",
                    d.label.c_str(), init_line.y.back(), init_line.y_low.back(), init_line.y_high.back(),
                    trained_line.y.back(), trained_line.y_low.back(), trained_line.y_high.back(), study::mean(losses));
      progress.note(row);
      char loss[40];
      std::snprintf(loss, sizeof loss, "%.3f", study::mean(losses));
      markdown += "| " + d.label + " | " + cell(init_line) + " | " + cell(trained_line) + " | " + loss + " |\n";
    }
    table.write_csv(s.out + "/stream_norms.csv");
    at_init.write_svg(s.out + "/stream_norms_init.svg");
    trained.write_svg(s.out + "/stream_norms_trained.svg");
    std::printf("%s\n%s\nwrote %s/stream_norms.csv, stream_norms_init.svg and stream_norms_trained.svg\n",
                markdown.c_str(), progress.timing().c_str(), s.out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stream_norms: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
