// command_line.cpp — quoting for the shell.
#include "command_line.hpp"

namespace tapegrad::training {

std::string shell_quote(const std::string& arg) {
  const char* plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=,:+-";
  if (!arg.empty() && arg.find_first_not_of(plain) == std::string::npos) return arg;
  std::string q = "'";
  for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string command_line(const std::string& program, const Arguments& arguments) {
  std::string c = program;
  for (const auto& [option, value] : arguments) c += " " + option + " " + shell_quote(value);
  return c;
}

std::string invoked_command(const std::string& program, int argc, char** argv) {
  std::string c = program;
  for (int i = 1; i < argc; ++i) c += " " + shell_quote(argv[i]);
  return c;
}

}  // namespace tapegrad::training
