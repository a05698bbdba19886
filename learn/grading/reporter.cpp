// reporter.cpp — the learn reporter: one line per property of the exercise, ✓ or ✗, and under a
// ✗ the sentence its test gave (grading.hpp), or what went wrong in words: a part still marked
// TODO, an exception's message. No expressions, no file names, no line numbers: a student reads
// what is wrong with their code, not how the test is written.
#define CATCH_CONFIG_EXTERNAL_INTERFACES  // the reporter base classes
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace {

class LearnReporter : public Catch::StreamingReporterBase<LearnReporter> {
 public:
  using StreamingReporterBase::StreamingReporterBase;

  static std::string getDescription() { return "the learn track's: each property, held or not, in words"; }

  void assertionStarting(Catch::AssertionInfo const&) override {}

  bool assertionEnded(Catch::AssertionStats const& stats) override {
    const Catch::AssertionResult& r = stats.assertionResult;
    if (r.isOk()) return true;
    std::string why;
    for (const Catch::MessageInfo& info : stats.infoMessages)  // INFO's context, not the failure's own text
      if (info.type == Catch::ResultWas::Info) why += info.message + ": ";
    switch (r.getResultType()) {
      case Catch::ResultWas::ThrewException: {
        const std::string message = r.getMessage();
        why += message.rfind("TODO", 0) == 0 ? "not written yet (" + message + ")"
                                              : "your code threw an exception: " + message;
        break;
      }
      case Catch::ResultWas::FatalErrorCondition:
        why += "the program crashed (" + r.getMessage() + "): look for an index out of range or a null pointer";
        break;
      case Catch::ResultWas::ExplicitFailure:
        why += r.getMessage();
        break;
      default:  // a plain CHECK: its expression, as a last resort
        why += "expected " + r.getExpression() + (r.hasExpandedExpression() ? ", got " + r.getExpandedExpression() : "");
    }
    // a generated test (GENERATE) runs once per value: the same sentence is said once
    if (std::find(failures_.begin(), failures_.end(), why) == failures_.end()) failures_.push_back(why);
    return true;
  }

  void testCaseEnded(Catch::TestCaseStats const& stats) override {
    const bool ok = stats.totals.assertions.failed == 0;
    const auto& tags = stats.testInfo.tags;
    const bool optional = std::find(tags.begin(), tags.end(), "optional") != tags.end();
    (optional ? (ok ? optional_held_ : optional_failed_) : (ok ? held_ : failed_)) += 1;
    stream << (ok ? "  \xE2\x9C\x93 " : "  \xE2\x9C\x97 ") << stats.testInfo.name << "\n";  // ✓ ✗
    // a property run at many random values says its first sentences, then how many more: one bug
    // should not bury the lines above it
    constexpr std::size_t kShown = 3;
    for (std::size_t i = 0; i < failures_.size() && i < kShown; ++i) stream << "      " << failures_[i] << "\n";
    if (failures_.size() > kShown) stream << "      (and " << failures_.size() - kShown << " more like these)\n";
    failures_.clear();
    StreamingReporterBase::testCaseEnded(stats);
  }

  // An optional property (tagged [optional]: a variant for the curious) is counted apart: the
  // exercise is done when every other property holds.
  void testRunEnded(Catch::TestRunStats const& stats) override {
    const std::string extra = optional_held_ + optional_failed_ == 0
                                  ? ""
                                  : " (optional: " + std::to_string(optional_held_) + " of " +
                                        std::to_string(optional_held_ + optional_failed_) + " hold)";
    if (held_ + failed_ == 0) stream << "no property matched: is the exercise's number right?\n";
    else if (failed_ == 0) stream << "all " << held_ << " properties hold: the exercise is done" << extra << "\n";
    else stream << failed_ << " of " << held_ + failed_ << " properties do not hold yet" << extra << "\n";
    StreamingReporterBase::testRunEnded(stats);
  }

 private:
  std::vector<std::string> failures_;
  int held_ = 0, failed_ = 0, optional_held_ = 0, optional_failed_ = 0;
};

}  // namespace

CATCH_REGISTER_REPORTER("learn", LearnReporter)
