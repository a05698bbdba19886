// depth_study_torch_twin.cpp — the depth study's PyTorch twin (depth_study/torch_twin.hpp)
// checked against tapegrad's own runs, on the same data, settings and batches.
//
// Every run is trained twice: by tapegrad (depth_study::train, as the study does) and by
// depth_study_torch.py. For the seeds of --shared-seeds the script starts from tapegrad's
// initial weights, so every step's loss must agree to --tolerance (float32 rounding); the other
// seeds draw their own weights in torch, and their runs must be sane: finite, the right
// number of steps, an initial loss near ln V (the gpt2 init's logits are tiny), and the same
// status as tapegrad's. Prints a row per run and, over the seeds, each placement's mean
// validation loss in both frameworks. Exit status 0: all of it holds; 1: it does not; 77 (ctest's
// skip): no python with torch.
//
//   depth_study_torch_twin                                # tiny: what ctest runs
//   depth_study_torch_twin --d-model 64 --heads 4 --seq-len 32 --batch 8 --steps 150 --warmup 15
//       --depths 6 --seeds 1,2,3 --shared-seeds '' --lr 1e-3   # the study's sizes (one line), torch's own draws
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <CLI/CLI.hpp>

#include "depth_study/torch_twin.hpp"
#include "depth_study/variants.hpp"

using namespace tapegrad;
using namespace depth_study;

namespace {

struct Options {
  TorchSetup setup;
  std::vector<std::uint64_t> shared_seeds = {1};
  std::string dir = "depth_study_torch_twin_out", python, data;
  double tolerance = 1e-4;
  std::int64_t threads = 1;
  Options() {
    setup.d_model = 16, setup.heads = 2, setup.seq_len = 16, setup.batch = 4, setup.steps = 20, setup.warmup = 2;
    setup.lr_default = 3e-3, setup.depths = {2}, setup.seeds = {1, 2};
  }
};

bool contains(const std::vector<std::uint64_t>& v, std::uint64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The study's train() on the setup's settings, from a model built as the study builds it.
TrainResult train_in_tapegrad(const Options& o, const Data& data, const std::string& placement, std::int64_t depth,
                              double lr, std::uint64_t seed) {
  const TorchSetup& s = o.setup;
  const Setup setup{s.init, s.tie_head, s.warmup};
  auto model = build_model(variant_from_name(placement), depth, setup, {s.d_model, s.heads, s.seq_len}, data.vocab_size, seed);
  if (contains(o.shared_seeds, seed)) export_initial_weights(o.dir, *model, placement, depth, seed);
  TrainOptions t;
  t.schedule = s.schedule, t.lr = lr, t.weight_decay = s.weight_decay, t.min_lr_ratio = s.min_lr_ratio, t.clip = s.clip;
  t.beta2 = s.beta2, t.steps = s.steps, t.warmup = s.warmup, t.batch = s.batch, t.seq_len = s.seq_len;
  t.batch_seed = seed ^ 0x5eedULL;  // the study's convention, which export_for_torch follows
  return train(*model, data, t, [](std::int64_t, double) { return true; });
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  TorchSetup& s = o.setup;
  CLI::App app{"The depth study's PyTorch twin against tapegrad's runs"};
  app.add_option("--dir", o.dir, "folder for the export and the script's results");
  app.add_option("--python", o.python, "interpreter with torch ('' : python3, then /usr/bin/python3)");
  app.add_option("--data", o.data, "text file (default: the default corpus)");
  app.add_option("--placements", s.placements, "comma-separated: none, post, pre, b2t")->delimiter(',');
  app.add_option("--depths", s.depths)->delimiter(',');
  app.add_option("--seeds", s.seeds)->delimiter(',');
  app.add_option("--shared-seeds", o.shared_seeds, "seeds whose runs start from tapegrad's weights ('' : none)")->delimiter(',');
  app.add_option("--d-model", s.d_model);
  app.add_option("--heads", s.heads);
  app.add_option("--seq-len", s.seq_len);
  app.add_option("--batch", s.batch);
  app.add_option("--steps", s.steps);
  app.add_option("--warmup", s.warmup);
  app.add_option("--lr", s.lr_default);
  app.add_option("--init", s.init, "gpt2, gpt2-unscaled, pytorch or xavier");
  app.add_option_function<std::string>("--head", [&](const std::string& v) { s.tie_head = v == "tied"; }, "tied (default) or untied")
      ->check(CLI::IsMember({"tied", "untied"}));
  app.add_option("--tolerance", o.tolerance, "largest |loss difference| of a run with shared weights");
  app.add_option("--threads", o.threads, "threads of both frameworks");
  CLI11_PARSE(app, argc, argv);
  set_num_threads(static_cast<int>(o.threads));

  const data::Corpus corpus = o.data.empty() ? data::Corpus::default_corpus() : data::Corpus::from_files({o.data});
  const data::CharTokenizer tokenizer = data::CharTokenizer::from_texts(corpus.texts());
  const data::TokenStream stream(corpus, tokenizer, 0.1);
  const Data data = make_data(stream, tokenizer.vocab_size(), 4, 2, s.batch, s.seq_len);
  export_for_torch(o.dir, data, s);

  struct Pair {
    TrainResult tapegrad;
    TorchRun torch;
  };
  std::map<std::string, Pair> pairs;  // "placement L lr seed" -> both runs
  auto key = [](const std::string& p, std::int64_t L, double lr, std::uint64_t seed) {
    return p + " L=" + std::to_string(L) + " lr " + study::fmt(lr) + " seed " + std::to_string(seed);
  };
  for (std::int64_t depth : s.depths)
    for (const std::string& placement : s.placements)
      for (std::uint64_t seed : s.seeds)
        pairs[key(placement, depth, s.lr_default, seed)].tapegrad = train_in_tapegrad(o, data, placement, depth, s.lr_default, seed);

  const TorchOutcome torch = run_torch(o.dir, o.python, o.threads);
  if (!torch.skipped.empty()) {
    std::printf("skipped: %s\n", torch.skipped.c_str());
    return 77;
  }

  std::vector<std::string> problems;
  const double ln_v = std::log(static_cast<double>(data.vocab_size));
  double worst_shared = 0;
  std::printf("%-28s %-6s %34s %34s %12s\n", "run", "init", "tapegrad initial/final/val, s", "torch initial/final/val, s",
              "max |dloss|");
  for (const TorchRun& r : torch.runs) {
    const std::string k = key(r.placement, r.depth, r.lr, r.seed);
    if (!pairs.count(k)) {
      problems.push_back("the script ran " + k + ", which was not asked for");
      continue;
    }
    Pair& p = pairs[k];
    p.torch = r;
    const TrainResult& t = p.tapegrad;
    double diff = 0;
    for (std::size_t i = 0; i < std::min(t.loss.size(), r.loss.size()); ++i) diff = std::max(diff, std::abs(t.loss[i] - r.loss[i]));
    std::printf("%-28s %-6s %8.4f %8.4f %8.4f %6.1f    %8.4f %8.4f %8.4f %6.1f    %10.2e\n", k.c_str(),
                r.shared_init ? "shared" : "own", t.initial_loss, t.final_loss, t.val_loss, t.seconds, r.initial_loss,
                r.final_loss, r.val_loss, r.seconds, diff);
    auto expect = [&](bool ok, const std::string& what) {
      if (!ok) problems.push_back(k + ": " + what);
    };
    if (r.status != "non-finite") {
      expect(static_cast<std::int64_t>(r.loss.size()) == s.steps, std::to_string(r.loss.size()) + " step losses");
      expect(std::isfinite(r.final_loss) && std::isfinite(r.val_loss), "a non-finite loss in an 'ok' run");
    }
    if (s.init == "gpt2") expect(std::abs(r.initial_loss - ln_v) < 0.1, "initial loss " + study::fmt(r.initial_loss) + ", ln V " + study::fmt(ln_v));
    if (r.shared_init) {
      worst_shared = std::max(worst_shared, diff);
      expect(r.status == t.status, "status " + r.status + " in torch, " + t.status + " in tapegrad");
      expect(r.loss.size() == t.loss.size(), "the two runs took different numbers of steps");
      expect(diff <= o.tolerance, "the step losses differ by up to " + study::fmt(diff, 3));
      if (std::isfinite(t.val_loss)) expect(std::abs(r.val_loss - t.val_loss) <= o.tolerance, "the validation losses differ");
    }
    expect(r.shared_init == contains(o.shared_seeds, r.seed), "started from the wrong weights");
  }
  // The twin's wall time holds its runs' (and Python's start): the report quotes it.
  double run_seconds = 0;
  for (const TorchRun& r : torch.runs) run_seconds += r.seconds;
  if (!(torch.seconds >= run_seconds && run_seconds > 0))
    problems.push_back("the script took " + study::fmt(torch.seconds) + " s, its runs " + study::fmt(run_seconds) + " s");
  if (torch.runs.size() != pairs.size()) problems.push_back(std::to_string(torch.runs.size()) + " torch runs, expected " + std::to_string(pairs.size()));

  // Over the seeds, each placement's validation loss in both frameworks: mean ± standard deviation.
  std::printf("\nvalidation loss over %zu seed(s), mean ± sd:\n", s.seeds.size());
  auto mean_sd = [&](const std::vector<double>& v) {
    double m = 0, ss = 0;
    for (double x : v) m += x / static_cast<double>(v.size());
    for (double x : v) ss += (x - m) * (x - m);
    const double sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
    char text[64];
    std::snprintf(text, sizeof text, "%.4f ± %.4f", m, sd);
    return std::string(text);
  };
  for (std::int64_t depth : s.depths)
    for (const std::string& placement : s.placements) {
      std::vector<double> a, b;
      for (std::uint64_t seed : s.seeds) {
        const Pair& p = pairs[key(placement, depth, s.lr_default, seed)];
        a.push_back(p.tapegrad.val_loss);
        b.push_back(p.torch.val_loss);
      }
      std::printf("  %-5s L=%-3lld tapegrad %s  torch %s\n", placement.c_str(), static_cast<long long>(depth),
                  mean_sd(a).c_str(), mean_sd(b).c_str());
    }

  for (const std::string& problem : problems) std::printf("problem: %s\n", problem.c_str());
  if (!problems.empty()) return 1;
  std::printf("torch twin: %zu runs sane (torch %s, %lld thread(s), %.1f s)", torch.runs.size(), torch.torch_version.c_str(),
              static_cast<long long>(torch.threads), torch.seconds);
  if (!o.shared_seeds.empty()) std::printf("; with shared weights, every step's loss within %.2e of tapegrad's", worst_shared);
  std::printf("\n");
  return 0;
}
