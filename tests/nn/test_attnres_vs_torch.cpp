// test_attnres_vs_torch.cpp — 2-layer TransformerLMs under Attention Residuals, Full (S = 1) and
// Block (S = 2), against the same models in plain PyTorch (tests/reference/make_attnres_reference.py,
// written from the paper's equations in the form of the official README's pseudocode: the
// official repository has no runnable model). From the reference's weights: the logits, the
// loss and every gradient within 1e-10, then 20 AdamW steps, every loss and every parameter
// after the last within 1e-10 (reference.hpp's check_adamw_steps says why the key bias within
// 1e-8).
#include <string>
#include <utility>

#include "nn/stream_reference_lm.hpp"

using namespace tapegrad;
using namespace tapegrad::testing;

namespace {

constexpr double kTol = 1e-10;

const ReferenceFile& attnres_reference() {
  static const ReferenceFile file(std::string(TAPEGRAD_REFERENCE_DIR) + "/attnres_reference.txt",
                                  "tests/reference/make_attnres_reference.py");
  return file;
}

// The reference's cases: their prefix and attnres_block_size.
const std::pair<const char*, std::int64_t> kCases[] = {{"attnres_full.", 1}, {"attnres_block2.", 2}};

std::shared_ptr<nn::TransformerLM> reference_lm(const std::string& prefix, std::int64_t block_size) {
  nn::StreamConfig stream;
  stream.scheme = "attention_residuals";
  stream.attnres_block_size = block_size;
  return reference_stream_lm(stream, attnres_reference(), prefix);
}

}  // namespace

TEST_CASE("Attention Residuals LMs match PyTorch: logits, loss and every gradient", "[nn][stream][attnres][reference]") {
  for (const auto& [prefix, S] : kCases) {
    DYNAMIC_SECTION(prefix) {
      auto lm = reference_lm(prefix, S);
      // a query and a gain for each of the 4 sublayers and the output
      CHECK(check_stream_reference(*lm, attnres_reference(), prefix, kTol) == 10);
    }
  }
}

TEST_CASE("Attention Residuals LMs follow PyTorch's 20 AdamW steps", "[nn][stream][attnres][reference][optim]") {
  for (const auto& [prefix, S] : kCases) {
    DYNAMIC_SECTION(prefix) {
      auto lm = reference_lm(prefix, S);
      check_adamw_steps(*lm, attnres_reference(), prefix, [&] { return reference_stream_loss(*lm, attnres_reference(), prefix); },
                        kTol, 8);
    }
  }
}
