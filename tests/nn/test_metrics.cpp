// test_metrics.cpp — nn::accuracy (nn/metrics.hpp): the share of rows whose argmax is the
// target, ignore_index left out, refusals by message.
#include <catch2/catch.hpp>

#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using Catch::Matchers::Contains;

TEST_CASE("accuracy: the share of rows whose largest logit is the target", "[nn][metrics]") {
  const Tensor logits = tensor({2, 1, 0,  0, 3, 1,  1, 1, 0,  0, 0, 5}, {4, 3}).requires_grad_();
  CHECK(nn::accuracy(logits, tensor({0, 1, 1, 0}, {4}, DType::int64)) == 0.5);  // a tie goes to the first: row 2 says 0
  CHECK(nn::accuracy(logits, tensor({0, 1, 0, 2}, {4}, DType::int64)) == 1.0);
  CHECK(nn::accuracy(logits, tensor({0, -100, -100, 1}, {4}, DType::int64)) == 0.5);  // ignore_index, as cross_entropy
  // a sequence model's (B, T, V) logits and (B, T) targets
  CHECK(nn::accuracy(logits.reshape({2, 2, 3}), tensor({0, 1, 0, 2}, {2, 2}, DType::int64)) == 1.0);
  CHECK_THROWS_WITH(nn::accuracy(logits, tensor({0, 1, 0}, {3}, DType::int64)),
                    Contains("logits [4, 3] need targets of shape [4], got [3]"));
  CHECK_THROWS_WITH(nn::accuracy(logits, tensor({0, 1, 0, 2}, {4})), Contains("targets must be int64"));
  CHECK_THROWS_WITH(nn::accuracy(logits, full({4}, -100, DType::int64)), Contains("every target is ignore_index"));
}
