// command_line.hpp — the command line that reruns a run or a study, for its report and its
// log: every setting spelled out, since defaults may change between versions.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tapegrad::training {

// (option, value) pairs in the order of --help.
using Arguments = std::vector<std::pair<std::string, std::string>>;
// An argument as a POSIX shell reads it back ('' for the empty string).
std::string shell_quote(const std::string& arg);
// "program --option value ...".
std::string command_line(const std::string& program, const Arguments& arguments);
// The command as it was typed, argv[1..] quoted.
std::string invoked_command(const std::string& program, int argc, char** argv);

}  // namespace tapegrad::training
