// lens.cpp — LensLog of lens.hpp: the CSV rows and the log line of each evaluation's lens.
#include "lens.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace lm {

using namespace tapegrad;

std::string lens_path(const std::string& log) {
  if (log.empty()) return "";
  return std::filesystem::path(log).replace_extension(".lens.csv").string();
}

LensLog::LensLog(const std::string& path, std::int64_t resume_step) {
  if (!path.empty())
    file_ = training::open_step_file(path, "step,layer,loss,top1_agreement", resume_step, "logit-lens file", "--log");
}

std::string LensLog::add(std::int64_t step, const std::vector<nn::LensLayer>& layers) {
  std::string line = "logit lens at step " + std::to_string(step) + " (val loss by layer; top-1 agreement with layer " +
                     std::to_string(layers.empty() ? 0 : layers.back().layer) + "):";
  for (const nn::LensLayer& l : layers) {
    if (file_.is_open())
      file_ << step << ',' << l.layer << ',' << training::csv_number(l.loss) << ','
            << training::csv_number(l.top1_agreement) << '\n';
    char cell[64];
    std::snprintf(cell, sizeof cell, "  %lld: %.4f (%.0f%%)", static_cast<long long>(l.layer), l.loss,
                  100 * l.top1_agreement);
    line += cell;
  }
  if (file_.is_open()) file_.flush();  // readable while the run goes on
  return line;
}

}  // namespace lm
