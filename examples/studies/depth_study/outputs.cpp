// outputs.cpp — the CSV files and SVG charts of a depth-study run, then report.md.
#include "outputs.hpp"

#include <cmath>
#include <filesystem>

#include "common/study.hpp"
#include "common/report.hpp"

namespace depth_study {

using study::fmt;

const std::vector<CsvSpec>& csv_specs() {
  static const std::vector<CsvSpec> specs = {
      {"runs.csv",
       {"init", "placement", "status", "depth", "parameters", "lr", "steps", "steps_done", "initial_loss",
        "final_train_loss", "val_loss", "seconds"},
       3},
      {"snapshots.csv",
       {"init", "placement", "stage", "depth", "probe_loss", "grad_block_1", "grad_block_L", "ratio_1_to_L",
        "emb_output_grad", "tok_emb_grad", "total_grad", "rms_block_1", "rms_block_L", "mean_cosine"},
       3},
      {"layers.csv", {"init", "placement", "stage", "depth", "layer", "grad_norm", "rms", "cosine_to_previous"}, 3},
      {"loss_curves.csv", {"init", "placement", "status", "depth", "step", "lr", "loss", "smoothed_loss"}, 3},
      {"sweep.csv",
       {"init", "placement", "status", "depth", "lr", "steps", "steps_done", "initial_loss", "final_train_loss",
        "val_loss"},
       3},
  };
  return specs;
}

std::string stage_label(const std::string& stage, std::int64_t steps) {
  return stage == "init" ? "at initialization" : "after " + std::to_string(steps) + " steps";
}
std::string layer_chart_file(const std::string& metric, const std::string& init, std::int64_t depth, const std::string& stage) {
  return metric + "_" + init + "_L" + std::to_string(depth) + "_" + stage + ".svg";
}
std::string ratio_chart_file(const std::string& init, const std::string& stage) {
  return "grad_ratio_by_depth_" + init + "_" + stage + ".svg";
}
std::string loss_chart_file(const std::string& init, std::int64_t depth) {
  return "loss_" + init + "_L" + std::to_string(depth) + ".svg";
}
std::string val_loss_chart_file(const std::string& init) { return "val_loss_by_depth_" + init + ".svg"; }
std::string sweep_chart_file(const std::string& init) { return "lr_sweep_" + init + ".svg"; }

std::vector<const RunRecord*> select(const std::vector<RunRecord>& runs, const std::string& init, std::int64_t depth) {
  std::vector<const RunRecord*> out;
  for (const RunRecord& r : runs)
    if (r.init == init && r.depth == depth) out.push_back(&r);
  return out;
}

double bottom_to_top_ratio(const Snapshot& s) {
  return s.grad_norm.empty() ? NAN : s.grad_norm.front() / s.grad_norm.back();
}

namespace {

// A chart with no series yet, x ticks at whole numbers (layers, depths, steps).
study::LineChart chart(const std::string& title, const std::string& x_label, const std::string& y_label, bool log_y = false) {
  study::LineChart c(title, x_label, y_label);
  c.log_y = log_y;
  c.integer_x = true;
  return c;
}

std::string num(std::int64_t v) { return std::to_string(v); }
// CSV numbers keep 7 significant digits (float32 precision); the report shows 4.
std::string full(double v) { return fmt(v, 7); }

// The smoothed training loss of the CSV and the charts (study::smooth: EMA with bias correction).
std::vector<double> smooth(const std::vector<double>& loss) { return study::smooth(loss, 0.95); }

std::vector<study::Table> make_tables(const std::vector<RunRecord>& runs, const std::vector<SweepRecord>& sweep,
                                      const Settings& s) {
  const auto& specs = csv_specs();
  study::Table run_t(specs[0].columns), snap_t(specs[1].columns), layer_t(specs[2].columns), curve_t(specs[3].columns),
      sweep_t(specs[4].columns);
  for (const RunRecord& r : runs) {
    const std::string& v = r.variant->name;
    auto add_snapshot = [&](const std::string& stage, const Snapshot& x) {
      snap_t.add({r.init, v, stage, num(r.depth), full(x.loss), full(x.grad_norm.front()), full(x.grad_norm.back()),
                  full(bottom_to_top_ratio(x)), full(x.emb_output_grad), full(x.tok_emb_grad), full(x.total_grad),
                  full(x.rms.front()), full(x.rms.back()), full(study::mean(x.cosine))});
      for (std::size_t l = 0; l < x.grad_norm.size(); ++l)
        layer_t.add({r.init, v, stage, num(r.depth), num(static_cast<std::int64_t>(l) + 1), full(x.grad_norm[l]),
                     full(x.rms[l]), full(x.cosine[l])});
    };
    add_snapshot("init", r.at_init);
    if (r.has_after) add_snapshot("trained", r.after);
    if (!r.trained) continue;
    const TrainResult& t = r.train;
    run_t.add({r.init, v, t.status, num(r.depth), num(r.parameters), full(s.train.lr), num(s.train.steps),
               num(static_cast<std::int64_t>(t.loss.size())), full(t.initial_loss), full(t.final_loss), full(t.val_loss),
               fmt(t.seconds, 4)});
    const std::vector<double> smoothed = smooth(t.loss);
    for (std::size_t i = 0; i < t.loss.size(); ++i)
      curve_t.add({r.init, v, t.status, num(r.depth), num(static_cast<std::int64_t>(i) + 1), full(t.lr[i]), full(t.loss[i]),
                   full(smoothed[i])});
  }
  for (const SweepRecord& w : sweep)
    sweep_t.add({w.init, w.variant->name, w.train.status, num(w.depth), full(w.lr), num(s.sweep_steps),
                 num(static_cast<std::int64_t>(w.train.loss.size())), full(w.train.initial_loss), full(w.train.final_loss),
                 full(w.train.val_loss)});
  return {run_t, snap_t, layer_t, curve_t, sweep_t};
}

// One line per variant of a per-layer quantity: x = layer 1..L, y = f(value).
study::LineChart layer_chart(const std::vector<const RunRecord*>& runs, const std::string& stage, const std::string& title,
                             const std::string& y_label, bool log_y, std::vector<double> Snapshot::*field,
                             double (*f)(double) = [](double v) { return v; }) {
  study::LineChart c = chart(title, "layer (1 = bottom, next to the embeddings)", y_label, log_y);
  for (const RunRecord* r : runs) {
    if (stage == "trained" && !r->has_after) continue;  // its loss went non-finite
    const Snapshot& x = stage == "init" ? r->at_init : r->after;
    study::Series series{r->variant->label, {}, {}};
    for (std::size_t l = 1; l <= (x.*field).size(); ++l) {
      series.x.push_back(static_cast<double>(l));
      series.y.push_back(f((x.*field)[l - 1]));
    }
    c.series.push_back(series);
  }
  return c;
}

// A horizontal reference line across [x0, x1].
study::Series level(const std::string& name, double y, double x0, double x1) { return {name, {x0, x1}, {y, y}}; }

void write_charts(const std::string& dir, const Settings& s, const SetupInfo& info, const std::vector<RunRecord>& runs,
                  const std::vector<SweepRecord>& sweep, std::vector<std::string>& written) {
  auto save = [&](const study::LineChart& c, const std::string& file) {
    c.write_svg(dir + "/" + file);
    written.push_back(file);
  };
  const std::string steps = std::to_string(s.train.steps) + " steps";
  for (const std::string& init : s.all_inits()) {
    const bool trained = s.is_trained(init);
    const std::vector<std::string> stages = trained ? std::vector<std::string>{"init", "trained"} : std::vector<std::string>{"init"};
    for (const std::string& stage : stages) {
      const std::string when = stage_label(stage, s.train.steps) + ", init " + init;
      for (std::int64_t depth : s.depths) {
        const auto sel = select(runs, init, depth);
        const std::string L = "L = " + std::to_string(depth) + ", ";
        save(layer_chart(sel, stage, "Gradient norm by layer, " + L + when, "‖∇ block‖ (log scale)", true, &Snapshot::grad_norm),
             layer_chart_file("grad_norm", init, depth, stage));
        if (!trained) continue;  // the compared inits get the gradient charts only
        save(layer_chart(sel, stage, "Activation RMS by layer, " + L + when, "RMS of block output (log scale)", true, &Snapshot::rms),
             layer_chart_file("rms", init, depth, stage));
        // 1 − cos on a log axis: 0.01 and 0.0001 (both "about 1" on a linear axis) are far apart.
        save(layer_chart(sel, stage, "1 − cos(h_l, h_l-1) by layer, " + L + when, "1 − mean cosine to previous layer (log scale)",
                         true, &Snapshot::cosine, [](double c) { return 1 - c; }),
             layer_chart_file("cosine", init, depth, stage));
      }
      // Bottom-to-top gradient ratio against depth: one point per depth.
      study::LineChart ratio = chart("‖∇ block 1‖ / ‖∇ block L‖ by depth, " + when, "depth L (blocks)", "ratio (log scale)", true);
      for (const std::string& name : s.placements) {
        study::Series series{variant_from_name(name).label, {}, {}};
        for (const RunRecord& r : runs)
          if (r.init == init && r.variant->name == name && (stage == "init" || r.has_after)) {
            series.x.push_back(static_cast<double>(r.depth));
            series.y.push_back(bottom_to_top_ratio(stage == "init" ? r.at_init : r.after));
          }
        ratio.series.push_back(series);
      }
      save(ratio, ratio_chart_file(init, stage));
    }
    if (!trained) continue;
    for (std::int64_t depth : s.depths) {
      study::LineChart loss = chart("Training loss, L = " + std::to_string(depth) + ", lr " + fmt(s.train.lr) + ", init " + init,
                                    "step", "training loss (EMA 0.95), nats/token");
      for (const RunRecord* r : select(runs, init, depth)) loss.series.push_back(study::loss_curve(r->variant->label, r->train.loss, 0.95));
      loss.series.push_back(level("unigram (train split)", info.unigram_train, 1, static_cast<double>(s.train.steps)));
      save(loss, loss_chart_file(init, depth));
    }
    study::LineChart val = chart("Validation loss after " + steps + " by depth, init " + init, "depth L (blocks)", "validation loss, nats/token");
    for (const std::string& name : s.placements) {
      study::Series series{variant_from_name(name).label, {}, {}};
      for (const RunRecord& r : runs)
        if (r.init == init && r.variant->name == name) {
          series.x.push_back(static_cast<double>(r.depth));
          series.y.push_back(r.train.status == "non-finite" ? NAN : r.train.val_loss);
        }
      val.series.push_back(series);
    }
    val.series.push_back(level("unigram (validation)", info.unigram_validation, static_cast<double>(s.depths.front()),
                               static_cast<double>(s.depths.back())));
    save(val, val_loss_chart_file(init));
  }
  if (sweep.empty()) return;
  const std::string init = sweep.front().init;
  study::LineChart c = chart("Learning-rate sweep, L = " + std::to_string(s.sweep_depth) + ", " + std::to_string(s.sweep_steps) +
                                 " steps, init " + init,
                             "log10(learning rate)", "validation loss, nats/token (gap: non-finite)");
  c.integer_x = false;  // log10(3e-4) = -3.5
  for (const std::string& name : s.placements) {
    study::Series series{variant_from_name(name).label, {}, {}};
    for (const SweepRecord& w : sweep)
      if (w.variant->name == name) {
        series.x.push_back(std::log10(w.lr));
        series.y.push_back(w.train.status == "non-finite" ? NAN : w.train.val_loss);
      }
    c.series.push_back(series);
  }
  c.series.push_back(level("unigram (validation)", info.unigram_validation, std::log10(s.sweep_lrs.front()),
                           std::log10(s.sweep_lrs.back())));
  save(c, sweep_chart_file(init));
}

}  // namespace

std::vector<std::string> write_outputs(const std::string& dir, const Settings& settings, const SetupInfo& info,
                                       const std::vector<RunRecord>& runs, const std::vector<SweepRecord>& sweep) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> written;
  const std::vector<study::Table> tables = make_tables(runs, sweep, settings);
  for (std::size_t i = 0; i < tables.size(); ++i) {
    tables[i].write_csv(dir + "/" + csv_specs()[i].file);
    written.push_back(csv_specs()[i].file);
  }
  write_charts(dir, settings, info, runs, sweep, written);
  tapegrad::io::write_file_atomic(dir + "/report.md", report_markdown(settings, info, runs, sweep));
  written.push_back("report.md");
  return written;
}

}  // namespace depth_study
