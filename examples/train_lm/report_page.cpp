// report_page.cpp — the page of report_page.hpp: a study::Document of a table and five charts.
#include "report_page.hpp"

#include <algorithm>
#include <cmath>

#include "common/document.hpp"

namespace lm {

namespace {

// A chart of a long run draws at most this many points per series (every k-th step, and the
// last): a line is no sharper with more, and the page stays small (100k steps: about 100 kB).
constexpr std::size_t kMaxPoints = 1500;

study::Series series_of(const std::string& name, const Curve& c) {
  study::Series s{name, {}, {}};
  const std::size_t n = c.x.size(), every = std::max<std::size_t>(1, (n + kMaxPoints - 1) / kMaxPoints);
  for (std::size_t i = 0; i < n; ++i)
    if (i % every == 0 || i + 1 == n) s.x.push_back(c.x[i]), s.y.push_back(c.y[i]);
  return s;
}

study::LineChart chart_over_steps(const std::string& title, const std::string& y_label) {
  study::LineChart chart{title, "step", y_label};
  chart.integer_x = true;
  chart.width = 900;
  return chart;
}

// Up to 8 blocks, evenly spaced from the first to the last: more lines, and more than the
// palette's 8 colours, would hide each other.
std::vector<std::size_t> shown_blocks(std::size_t n) {
  std::vector<std::size_t> out;
  const std::size_t k = std::min<std::size_t>(n, 8);
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t b = k == 1 ? 0 : (i * (n - 1) + (k - 1) / 2) / (k - 1);
    if (out.empty() || out.back() != b) out.push_back(b);
  }
  return out;
}

std::string last_of(const Curve& c, int significant = 4) { return c.y.empty() ? "none yet" : study::fmt(c.y.back(), significant); }

// "steps 1 to 40" (or "no steps")
std::string span(const Curve& c) {
  if (c.x.empty()) return "no steps";
  return "steps " + study::fmt(c.x.front(), 12) + " to " + study::fmt(c.x.back(), 12);
}

study::Table settings_table(const History& h, const PageFacts& f) {
  const double done = h.loss.x.empty() ? 0 : h.loss.x.back();
  study::Table t({"", "this run"});
  t.add({"model", f.model});
  t.add({"data", f.data});
  t.add({"run", f.run});
  t.add({"steps", study::fmt(done, 12) + " of " + std::to_string(f.planned_steps) + " planned (" +
                      study::fmt(100 * done / std::max<double>(1, static_cast<double>(f.planned_steps)), 3) + "%)"});
  std::string val = "none yet";
  if (!h.val_loss.y.empty()) {
    const double v = h.val_loss.y.back();
    val = study::fmt(v) + " nats/token at step " + study::fmt(h.val_loss.x.back(), 12) + "; unigram baseline " +
          study::fmt(f.baseline) + " (" + (v < f.baseline ? "below" : "**not below**") + ")";
  }
  t.add({"validation loss", val});
  t.add({"training loss (smoothed)", last_of(h.smoothed)});
  t.add({"tokens/s", last_of(h.tokens_per_s, 3) + " (the last interval's; this machine's)"});
  return t;
}

}  // namespace

std::string report_page(const History& h, const PageFacts& f) {
  study::Document doc("train_lm: live report");
  doc.paragraph("A live report: train_lm writes this page again at every evaluation and with every checkpoint; "
                "reload it to follow the run. After `--resume` it covers the steps before the resume too.");
  doc.table(settings_table(h, f));
  doc.paragraph("The charts cover " + span(h.loss) + ": the training loss at " + std::to_string(h.loss.x.size()) +
                " steps, the validation loss at " + std::to_string(h.val_loss.x.size()) + " evaluations, the " +
                "per-block gradient norms at " + std::to_string(h.block_norms.empty() ? 0 : h.block_norms[0].x.size()) +
                " steps and tokens/s at " + std::to_string(h.tokens_per_s.x.size()) + " steps.");

  doc.heading("Loss");
  study::LineChart loss = chart_over_steps("Loss", "cross-entropy (nats/token)");
  study::Series raw = series_of("training", h.loss);
  raw.faint = true;  // first: drawn behind the others
  loss.series.push_back(raw);
  loss.series.push_back(series_of("training, smoothed", h.smoothed));
  study::Series val = series_of("validation", h.val_loss);
  val.markers = true;
  loss.series.push_back(val);
  doc.chart(loss, "");
  doc.paragraph("Smoothed: the metrics log's moving average, s = 0.95·s + 0.05·loss. The unigram baseline (a model "
                "that knows only how often each token occurs) is " + study::fmt(f.baseline) + " nats/token.");

  doc.heading("Learning rate");
  study::LineChart lr = chart_over_steps("Learning rate", "lr");
  lr.series.push_back(series_of("lr", h.lr));
  doc.chart(lr, "");

  doc.heading("Gradient norm");
  study::LineChart norm = chart_over_steps("Global gradient norm, before clipping", "‖∇‖₂ (log scale)");
  norm.log_y = true;
  norm.series.push_back(series_of("‖∇‖₂", h.grad_norm));
  doc.chart(norm, "");

  doc.heading("Tokens per second");
  study::LineChart speed = chart_over_steps("Training tokens per second", "tokens/s");
  speed.series.push_back(series_of("tokens/s", h.tokens_per_s));
  doc.chart(speed, "");
  doc.paragraph("Over each interval between two points: the tokens of its steps over the time of their updates "
                "(evaluations and checkpoints left out). A resumed run's first interval includes its warm-up.");

  doc.heading("Gradient norm per block");
  study::LineChart blocks = chart_over_steps("Gradient norm of each block, before clipping", "‖∇ block‖₂ (log scale)");
  blocks.log_y = true;
  const std::vector<std::size_t> shown = shown_blocks(h.block_norms.size());
  for (std::size_t b : shown) blocks.series.push_back(series_of("block " + std::to_string(b), h.block_norms[b]));
  doc.chart(blocks, "");
  doc.paragraph("The L2 norm of the gradients of all parameters of each transformer block (`blocks.N.`), after "
                "backward (and the processes' averaging under `--ddp`), before clipping. " +
                (shown.size() < h.block_norms.size()
                     ? std::to_string(shown.size()) + " of the " + std::to_string(h.block_norms.size()) +
                           " blocks are drawn; all are in `" + f.blocks_file + "`."
                     : "The numbers are in `" + f.blocks_file + "`."));
  return doc.html();
}

}  // namespace lm
