// report.hpp — what the study examples and train_lm's live report write: CSV files, Markdown
// tables and SVG line charts, and the small sums (the mean of a tail, a smoothed curve) that
// their reports quote. No plotting library: an SVG chart is a few dozen lines of text that any
// browser (and GitHub's Markdown view) displays, so they need nothing beyond the compiler.
//
//   study::Table t({"placement", "loss"});
//   t.add({"pre", study::fmt(1.234)});
//   report << t.markdown();                       // | placement | loss | ...
//   t.write_csv("out/losses.csv");
//
//   study::LineChart chart{"Gradient norm by layer", "layer", "‖∇W‖ (log scale)"};
//   chart.log_y = true;
//   chart.integer_x = true;                        // layers: no tick at 1.5
//   chart.series.push_back({"Pre-LN", {1, 2, 3}, {0.1, 0.2, 0.3}});
//   chart.series.push_back({"Pre-LN, trained", {1, 2, 3}, {0.2, 0.2, 0.2}, true});  // dashed
//   study::Series s{"Post-LN, 3 seeds", {6, 12, 24}, {0.5, 0.1, 0.01}};
//   s.y_low = {0.4, 0.08, 0.005}, s.y_high = {0.6, 0.12, 0.02};  // error bars (mean ± spread)
//   s.markers = true;                                            // a dot at each depth
//   study::Series raw{"loss", steps, losses};  raw.faint = true;  // noisy: drawn light
//   chart.caption = "Where a line ends, that placement stops training";  // under the chart in a report
//   chart.write_svg("out/grad_norm.svg");
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace study {

// A number as text: 4 significant digits, "nan" / "inf" spelled out (diverged runs).
std::string fmt(double v, int significant = 4);
// "a, b, c"
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");
// Text for XML and HTML, in an element or an attribute value: & < > " escaped (the SVG charts'
// labels, report.html's text).
std::string xml_escape(std::string_view s);

class Table {
 public:
  explicit Table(std::vector<std::string> columns);
  // Throws std::invalid_argument when the row has a different number of cells.
  void add(std::vector<std::string> row);
  std::string markdown() const;
  std::string csv() const;                      // RFC 4180 quoting where needed
  void write_csv(const std::string& path) const;  // atomically (io::write_file_atomic)
  const std::vector<std::string>& columns() const { return columns_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

struct Series {
  std::string name;
  std::vector<double> x, y;  // non-finite y values leave a gap (and end a diverged curve)
  // Dashed line. The k-th dashed series takes the colour of the k-th solid one, so a chart of
  // two variants × three tasks shows each task in one colour, each variant in one line style.
  bool dashed = false;
  // A marker at each drawn point, for sparse data (a few depths) where a line alone hides
  // where the measurements are. Each series of a chart gets its own shape (circle, square,
  // triangle, diamond, ...: kMarkerShapes), so that series of one colour or on top of each other
  // stay apart; hollow on dashed series, filled on solid ones. Where several marked series share
  // a point (the same x and y), each is moved a few pixels sideways ("dodged"), so all show.
  bool markers = false;
  // Drawn light (a third of the opacity): the raw values of a noisy curve whose smoothed
  // version is the series to read, as a training loss. (Series are drawn in order: list it
  // first to have it behind the others.)
  bool faint = false;
  // Error bars: empty for none, else one value per y; a vertical bar from y_low to y_high
  // with small caps at each drawn point (a non-finite end, or one <= 0 on a log axis, is left
  // out: the bar starts at the point). The axis range includes them. (The {} let aggregate
  // initializations such as {name, x, y} leave them out without a -Wmissing-field-initializers.)
  std::vector<double> y_low{}, y_high{};
};

// The marker shapes, in the order the marked series of a chart take them (then again).
inline constexpr const char* kMarkerShapes[] = {"circle", "square", "triangle", "diamond", "triangle-down", "pentagon"};

struct LineChart {
  LineChart(std::string title, std::string x_label, std::string y_label);

  std::string title, x_label, y_label;
  std::vector<Series> series;
  bool log_y = false;      // log10 axis; values <= 0 are left out
  // log10 x axis (learning rates, widths); points with x <= 0 are left out. Ticks at the
  // powers of ten, and at 2 and 5 times them when the range spans under two decades.
  bool log_x = false;
  bool integer_x = false;  // x ticks at whole numbers only (layers, depths)
  // Explicit y ticks (value, label), in place of the automatic ones: a categorical axis, as
  // depths 0 ("none"), 3, 6, 12 drawn at 0, 1, 2, 3. The axis range includes them.
  std::vector<std::pair<double, std::string>> y_ticks{};
  int width = 720, height = 420;
  // What the reader should look at, in a sentence or two (inline Markdown): study::Document
  // writes it under the chart in report.md and report.html. Not part of the SVG itself.
  std::string caption{};

  // Throws std::invalid_argument when a series' y_low or y_high is set with a length other than y's.
  std::string svg() const;
  void write_svg(const std::string& path) const;  // atomically
};

// ---------------------------------------------------------------- small sums

// Mean of v; NaN when v is empty.
double mean(const std::vector<double>& v);
// Mean of the last n values (fewer when v is shorter); NaN when v is empty.
double mean_of_last(const std::vector<double>& v, std::size_t n);
// Exponential moving average with bias correction, as Adam's moments:
// m_t = β·m_{t−1} + (1 − β)·v_t, smoothed_t = m_t / (1 − β^t).
std::vector<double> smooth(const std::vector<double>& v, double beta);
// A training-loss curve for a chart: x = step 1, 2, ..., y = smooth(loss, beta).
Series loss_curve(const std::string& name, const std::vector<double>& loss, double beta, bool dashed = false);

}  // namespace study
