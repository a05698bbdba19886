// step_file.hpp — a CSV file of one row per step that a resumed run continues: a new run
// writes its header; a run resumed at step k keeps the header and its rows of steps 1..k (a
// run killed after its last checkpoint had written more), then appends after them. So the
// file of a stopped and resumed run equals a straight run's. The metrics log
// (metrics_log.hpp) is one; train_lm's live report keeps two more.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace tapegrad::training {

// Opens path for its rows, as above (resume_step < 0: a new run, the file is replaced). header
// is the first line, without its newline: a resumed run's file must start with it, else an
// io::FormatError names what the file is meant to be (what: "metrics log") and the flag that
// names another (flag: "--log"). A missing file on resume is started anew.
std::ofstream open_step_file(const std::string& path, const std::string& header, std::int64_t resume_step,
                             const std::string& what, const std::string& flag);

// A number for such a file: six significant digits, as C's %g, so that the same value always
// prints the same way (the files of two runs compare byte for byte).
std::string csv_number(double v);

}  // namespace tapegrad::training
