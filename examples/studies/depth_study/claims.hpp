// claims.hpp — the claims the depth study tests, each as articles on residual connections
// and LayerNorm state it, and the report that judges them:
//
//    1  without residual connections the first layers' gradient falls to about 5% after 12
//       layers, and training is unstable beyond 4 layers
//    2  a 100-layer model cannot be trained without residual connections and normalization
//    3  Post-LN: beyond 12 layers the first layer's gradient collapses; below, Post-LN trains well
//    4  Pre-LN trains stably at 48 layers and more
//    5  Pre-LN makes consecutive layers alike ("layer collapse"), cutting the effective depth
//    6  Pre-LN needs a learning rate 20–30% higher than Post-LN
//    7  B2T trains where Post-LN does not, and beats Pre-LN
//    8  scaling each residual connection by 1/√2 avoids variance explosion in deep networks
//    9  LLaMA-style models stay stable up to 128 layers; LayerNorm Scaling and Peri-LN fix
//       Pre-LN's ineffective deep layers
//   10  the LayerNorm ε should be 1e-5 … 1e-12 depending on FP16 or BF16 (not measurable here)
//   11  the seed article's diagnostic: the norm layers' gradient norm → 0 means the lr is too
//       low, → ∞ calls for gradient clipping (tested as a forecast of which runs fail)
//
// and the residual stream's designs (the stream stage):
//   12  Depth-μP / CompleteP: the best learning rate transfers across depth under branch
//       multipliers 1/√L or 1/L, and drifts under the standard parametrization
//   13  DyT is ahead of LayerNorm with few tokens and behind with many (Derf beside it)
//   14  mHC keeps the stream bounded with depth where Hyper-Connections grow it
//   15  value residual reaches Pre-LN's loss with about 20% fewer tokens
//   16  nGPT reaches the same loss in 4–20× fewer steps
//   17  DenseFormer matches a deeper model's loss
//   18  the logit lens: the depth at which the prediction forms, Post-LN against Pre-LN
//
// Each claim's section gives the claim, the setup that tests it, the measurement (tables and
// charts, every trained figure as mean ± spread over the seeds, with the diverged runs
// counted) and a verdict per part of the claim: supported, not supported, depends (on a
// setting the report shows side by side), or not measured (and why). A verdict that compares
// two figures over seeds rests on a 95% interval (summary.hpp: paired t by seed, a log ratio,
// Wilson for a share of runs): supported when it excludes no effect in the claimed direction,
// not supported when it excludes it the other way or lies inside the stated equivalence band,
// and otherwise "not measured" with the word inconclusive and the seeds that would settle it.
// The rules that turn a measurement into a verdict are in the claims_*.cpp files, next to each
// claim's section.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/document.hpp"
#include "stages.hpp"

namespace depth_study {

struct ClaimVerdict {
  int claim = 0;
  study::Verdict verdict = study::Verdict::not_measured;
  std::string text;
};

struct Report {
  study::Document document{"Depth study"};
  std::vector<std::pair<std::string, study::LineChart>> charts;  // file name, chart
  std::vector<ClaimVerdict> verdicts;                             // every part of every claim
  std::map<int, std::string> sections;  // claim number -> its heading's id, the target of its verdicts' links
};

Report build_report(const Settings& s, const Results& r);

}  // namespace depth_study
