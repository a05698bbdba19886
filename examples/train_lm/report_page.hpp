// report_page.hpp — train_lm's live report, train_lm.html: one self-contained page drawn with
// the studies' report code (study::Document and study::LineChart of examples/common/: its CSS
// and SVG charts inline, nothing fetched, it opens offline in any browser). A table of the
// run's settings and where it stands, then the charts over the steps: training and validation
// loss, learning rate, gradient norm, tokens/s and the gradient norm of each block.
#pragma once

#include <cstdint>
#include <string>

#include "history.hpp"

namespace lm {

// What the page says about the run besides its measurements, each a line of text.
struct PageFacts {
  std::string model, data, run;
  std::int64_t planned_steps = 0;
  double baseline = 0;      // the unigram baseline on the validation split (nats per token)
  std::string blocks_file;  // the file with every block's gradient norm (the chart shows up to 8)
};

// The page, as HTML.
std::string report_page(const History& history, const PageFacts& facts);

}  // namespace lm
