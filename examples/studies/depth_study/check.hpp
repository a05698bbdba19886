// check.hpp — --check: read the outputs back from disk and say what is wrong with them.
#pragma once

#include <string>
#include <vector>

#include "settings.hpp"

namespace depth_study {

// Problems found, one sentence each (empty: all is well). Checks that every file written
// exists and is not empty, that each SVG is an SVG, that each CSV has its expected columns and
// only finite numbers outside runs whose status is "non-finite", and that every Pre-LN run's
// loss fell (status ok: final training loss below the first step's, validation loss too).
// `written`: the names of the files written into dir.
std::vector<std::string> check_outputs(const std::string& dir, const std::vector<std::string>& written, const Settings& s);

}  // namespace depth_study
