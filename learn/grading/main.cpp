// main.cpp — the exercises' test runner: Catch2 with the learn reporter (reporter.cpp) unless
// another is asked for (-r console shows Catch2's own detail).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

int main(int argc, char** argv) {
  Catch::Session session;
  session.configData().reporterName = "learn";
  if (const int status = session.applyCommandLine(argc, argv); status != 0) return status;
  return session.run();
}
