// report.hpp — what adaln_conditional writes into --out (study::Outputs: summary.csv,
// curves.csv, the two loss charts, report.md) and what --check requires of it.
#pragma once

#include <string>
#include <vector>

#include "common/study.hpp"
#include "run.hpp"

namespace adaln_conditional {

// The settings as (option, value), in the order of --help: the command line that reproduces
// the run (with --smoke, the tiny values it chose).
tapegrad::training::Arguments arguments(const Settings& s);

// timing: the whole study's.
study::Outputs outputs(const std::vector<RunResult>& runs, const TaskMix& mix, const Settings& s, const std::string& timing);

// --check: the outputs exist and hold sane values. Returns the failures (empty: all good).
std::vector<std::string> check_outputs(const std::vector<RunResult>& runs, const std::string& out);

}  // namespace adaln_conditional
