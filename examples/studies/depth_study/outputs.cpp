// outputs.cpp — the CSV files of a depth-study run, then the charts and the two reports.
#include "outputs.hpp"

#include <cmath>
#include <filesystem>

#include <tapegrad/io/file.hpp>

#include "claims.hpp"
#include "summary.hpp"
#include "common/report.hpp"

namespace depth_study {

using study::fmt;

const std::vector<CsvSpec>& csv_specs() {
  static const std::vector<CsvSpec> specs = {
      {"profile.csv", {"init", "placement", "outcome", "depth", "seed", "layer", "grad_norm", "rms", "emb_output_grad"}, 3},
      {"runs.csv",
       {"stage", "placement", "setup", "outcome", "depth", "lr", "seed", "steps_done", "initial_loss", "final_train_loss",
        "plateau", "val_loss", "mean_cosine", "droppable_share", "seconds", "norm_grad_trend"},
       4, 1},  // norm_grad_trend: vanishing, exploding or steady (summary.hpp's norm_grad_trend; claim 11)
      {"skip.csv", {"placement", "outcome", "depth", "lr", "seed", "layer", "cosine_to_previous", "val_loss", "skipped_val_loss"}, 2},
      {"translate.csv", {"placement", "outcome", "layers", "seed", "val_loss", "exact_match", "token_accuracy", "seconds"}, 2},
      // the stream stage's runs, per layer 0 (the embeddings) … L: the stream's rms at init and
      // after training, and the logit lens's validation loss (claims 14 and 18)
      {"stream.csv", {"placement", "outcome", "setup", "depth", "lr", "seed", "steps", "layer", "rms_init", "rms_trained", "lens_loss"}, 3},
  };
  return specs;
}

namespace {

std::string number(double v) { return fmt(v, 6); }
std::string cell(std::int64_t v) { return std::to_string(v); }

std::vector<study::Table> tables(const Settings& s, const Results& r) {
  const auto& specs = csv_specs();
  study::Table profile(specs[0].columns), runs(specs[1].columns), skip(specs[2].columns), translate(specs[3].columns),
      stream(specs[4].columns);
  for (const ProfileRecord& p : r.profile)
    for (std::size_t l = 0; l < p.at_init.grad_norm.size(); ++l)
      profile.add({p.init, p.variant->name, "init", cell(p.depth), cell(static_cast<std::int64_t>(p.seed)), cell(std::int64_t(l + 1)),
                   number(p.at_init.grad_norm[l]), number(p.at_init.rms[l]), number(p.at_init.emb_output_grad)});
  for (const TrainedRecord& t : r.trained) {
    runs.add({t.stage, t.variant->name, t.setup.name(), t.outcome, cell(t.depth), number(t.lr), cell(std::int64_t(t.seed)),
              cell(t.train.steps_done), number(t.train.initial_loss), number(t.train.final_loss),
              number(t.train.plateau), number(t.train.val_loss), t.measured_after ? number(mean_cosine(t.after)) : "",
              t.measured_after ? number(droppable_share(t, s.skip_threshold)) : "", number(t.train.seconds),
              norm_grad_trend(t.train.norm_grad_norm, static_cast<std::int64_t>(t.train.trace_index(t.setup.warmup)))});
    if (t.measured_stream && t.stage == "stream") {
      const auto at = [](const std::vector<double>& v, std::size_t l) { return l < v.size() ? number(v[l]) : std::string(); };
      for (std::size_t l = 0; l < t.stream_rms_after.size(); ++l)
        stream.add({t.variant->name, t.outcome, t.setup.name(), cell(t.depth), number(t.lr), cell(std::int64_t(t.seed)),
                    cell(t.steps), cell(std::int64_t(l)), at(t.stream_rms_init, l), at(t.stream_rms_after, l), at(t.lens, l)});
    }
    if (!t.measured_after) continue;
    for (std::size_t l = 0; l < t.skip_losses.size(); ++l)
      skip.add({t.variant->name, t.outcome, cell(t.depth), number(t.lr), cell(std::int64_t(t.seed)), cell(std::int64_t(l + 1)),
                number(t.after.cosine[l]), number(t.train.val_loss), number(t.skip_losses[l])});
  }
  for (const TranslateRecord& t : r.translate)
    translate.add({t.placement, t.diverged ? "diverged" : "trained", cell(t.layers), cell(std::int64_t(t.seed)),
                   number(t.val_loss), number(t.exact_match), number(t.token_accuracy), number(t.seconds)});
  return {profile, runs, skip, translate, stream};
}

}  // namespace

std::vector<std::string> write_outputs(const std::string& dir, const Settings& s, const Results& r) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> written;
  const auto& specs = csv_specs();
  const std::vector<study::Table> csv = tables(s, r);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    csv[i].write_csv(dir + "/" + specs[i].file);
    written.push_back(specs[i].file);
  }
  const Report report = build_report(s, r);
  for (const auto& [file, chart] : report.charts) {
    chart.write_svg(dir + "/" + file);
    written.push_back(file);
  }
  tapegrad::io::write_file_atomic(dir + "/report.md", report.document.markdown());
  tapegrad::io::write_file_atomic(dir + "/report.html", report.document.html());
  written.push_back("report.md");
  written.push_back("report.html");
  return written;
}

}  // namespace depth_study
