// check.hpp — --check: read the outputs back from disk and say what is wrong with them.
#pragma once

#include <string>
#include <vector>

#include "stages.hpp"

namespace depth_study {

// Problems found, one sentence each (empty: all is well). Checks that every file written
// exists and is not empty, that each SVG is an SVG, that each CSV has its expected columns and
// only finite numbers outside runs whose outcome is "diverged", that every trained run of the
// plan is in runs.csv, that every Pre-LN grid run's loss fell, and that every claim got a
// verdict in report.md and report.html. `written`: the names of the files written into dir.
std::vector<std::string> check_outputs(const std::string& dir, const std::vector<std::string>& written, const Settings& s,
                                       const Results& results);

}  // namespace depth_study
