// Tests of io/state_dict: names and order, aliasing, strict and non-strict loading, and the
// errors that name the key and both shapes or dtypes.
#include "io_helpers.hpp"

using namespace tapegrad;
using Catch::Matchers::Contains;
using testing::same_bits;
using testing::small_model;

namespace {

// A module with a buffer and a child, to check PyTorch's order: own parameters, own buffers,
// then the children.
class WithBuffer : public nn::Module {
 public:
  WithBuffer() : nn::Module("WithBuffer") {
    scale = register_parameter("scale", ones({2}));
    steps = register_buffer("steps", tensor({7}, {1}, DType::int64));
    head = register_module("head", std::make_shared<nn::Linear>(2, 1));
  }
  Tensor scale, steps;
  std::shared_ptr<nn::Linear> head;
};

std::vector<std::string> keys(const io::StateDict& sd) {
  std::vector<std::string> out;
  for (const auto& [name, _] : sd) out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("state_dict: dotted names in PyTorch's order, buffers included", "[io][state_dict]") {
  auto model = small_model();
  CHECK(keys(io::state_dict(*model)) ==
        std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "2.weight", "2.bias"});
  WithBuffer m;
  const io::StateDict sd = state_dict(m);  // the tapegrad:: spelling
  CHECK(keys(sd) == std::vector<std::string>{"scale", "steps", "head.weight", "head.bias"});
  CHECK(sd.at("steps").dtype() == DType::int64);
}

TEST_CASE("state_dict: values alias the module's tensors, detached", "[io][state_dict]") {
  auto model = small_model();
  const io::StateDict sd = io::state_dict(*model);
  const Tensor& w = sd.at("0.weight");
  CHECK_FALSE(w.requires_grad());
  CHECK(w.is_leaf());
  auto linear = std::dynamic_pointer_cast<nn::Linear>((*model)[0]);
  REQUIRE(linear);
  linear->weight.fill_(3.0);  // training changes the module ...
  CHECK(w.to_vector()[0] == 3.0);  // ... and the state dict sees it
  CHECK(linear->weight.requires_grad());
}

TEST_CASE("StateDict: ordered, unique keys, clear errors", "[io][state_dict]") {
  io::StateDict sd;
  sd.insert("b", zeros({1}));
  sd.insert("a", ones({2}));
  CHECK(keys(sd) == std::vector<std::string>{"b", "a"});
  CHECK(sd.contains("a"));
  CHECK(sd.find("c") == nullptr);
  REQUIRE_THROWS_WITH(sd.insert("a", zeros({1})), Contains("duplicate key \"a\""));
  REQUIRE_THROWS_WITH(sd.insert("c", Tensor()), Contains("undefined"));
  REQUIRE_THROWS_AS(sd.at("zz"), ValueError);
  REQUIRE_THROWS_WITH(sd.at("zz"), Contains("no key \"zz\""));
}

TEST_CASE("load_state_dict: strict round trip copies in place", "[io][state_dict]") {
  auto source = small_model(1), target = small_model(2);
  const std::vector<Tensor> params_before = target->parameters();
  const io::LoadResult r = load_state_dict(*target, state_dict(*source));
  CHECK(r.ok());
  const auto src = source->named_parameters(), dst = target->named_parameters();
  REQUIRE(src.size() == dst.size());
  for (std::size_t i = 0; i < src.size(); ++i) {
    INFO(dst[i].first);
    CHECK(same_bits(dst[i].second, src[i].second));
    CHECK(dst[i].second.is_same(params_before[i]));  // the same handles: an optimizer keeps working
    CHECK(dst[i].second.requires_grad());
    CHECK(dst[i].second.is_leaf());
  }
  // The copy is a copy: changing the source afterwards leaves the target alone.
  std::dynamic_pointer_cast<nn::Linear>((*source)[0])->weight.fill_(9.0);
  CHECK(std::dynamic_pointer_cast<nn::Linear>((*target)[0])->weight.to_vector()[0] != 9.0);
}

TEST_CASE("load_state_dict: a non-contiguous source is copied element by element", "[io][state_dict]") {
  nn::Linear target(2, 3);
  io::StateDict sd;
  const Tensor w_t = tensor({1, 2, 3, 4, 5, 6}, {2, 3});  // viewed as its transpose (3, 2)
  sd.insert("weight", w_t.transpose(0, 1));
  sd.insert("bias", tensor({7, 8, 9}, {3}));
  REQUIRE(load_state_dict(target, sd).ok());
  CHECK(target.weight.to_vector() == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(target.bias.to_vector() == std::vector<double>{7, 8, 9});
}

TEST_CASE("load_state_dict: strict mode names missing and unexpected keys", "[io][state_dict]") {
  auto model = small_model();
  io::StateDict sd = io::state_dict(*small_model(5));
  io::StateDict partial;
  for (const auto& [name, t] : sd)
    if (name != "1.bias") partial.insert(name, t);
  partial.insert("2.extra", zeros({1}));
  const io::StateDict before = io::state_dict(*small_model());  // same seed as model: a snapshot
  REQUIRE_THROWS_AS(load_state_dict(*model, partial), ValueError);
  REQUIRE_THROWS_WITH(load_state_dict(*model, partial),
                      Contains("missing key(s) \"1.bias\"") && Contains("unexpected key(s) \"2.extra\""));
  // Nothing was copied by the failed strict load.
  CHECK(testing::same_state(io::state_dict(*model), before));

  SECTION("non-strict loads the matching keys and reports the others") {
    const io::LoadResult r = load_state_dict(*model, partial, false);
    CHECK(r.missing_keys == std::vector<std::string>{"1.bias"});
    CHECK(r.unexpected_keys == std::vector<std::string>{"2.extra"});
    CHECK_FALSE(r.ok());
    CHECK(same_bits(io::state_dict(*model).at("0.weight"), sd.at("0.weight")));
    CHECK(same_bits(io::state_dict(*model).at("1.bias"), before.at("1.bias")));  // untouched
  }
}

TEST_CASE("load_state_dict: shape and dtype mismatches name the key and both sides", "[io][state_dict]") {
  auto model = small_model();
  const io::StateDict before = io::state_dict(*small_model());
  io::StateDict sd = io::state_dict(*small_model(3));
  io::StateDict bad;
  for (const auto& [name, t] : sd) {
    if (name == "0.weight") bad.insert(name, zeros({3, 4}));
    else if (name == "2.bias") bad.insert(name, zeros({2}, DType::float64));
    else bad.insert(name, t);
  }
  for (bool strict : {true, false}) {
    INFO("strict = " << strict);
    REQUIRE_THROWS_AS(load_state_dict(*model, bad, strict), ShapeError);
    REQUIRE_THROWS_WITH(load_state_dict(*model, bad, strict),
                        Contains("\"0.weight\": [3, 4] in the state dict, [4, 3] in the module"));
  }
  CHECK(testing::same_state(io::state_dict(*model), before));  // checked before copying anything

  io::StateDict only_dtype;
  for (const auto& [name, t] : sd) only_dtype.insert(name, name == "2.bias" ? zeros({2}, DType::float64) : t);
  REQUIRE_THROWS_AS(load_state_dict(*model, only_dtype), DTypeError);
  REQUIRE_THROWS_WITH(load_state_dict(*model, only_dtype),
                      Contains("\"2.bias\": float64 in the state dict, float32 in the module"));
  CHECK(testing::same_state(io::state_dict(*model), before));
}

TEST_CASE("load_state_dict: a shape mismatch names the missing and unexpected keys too", "[io][state_dict]") {
  // what loading into a deeper model looks like: other shapes, and keys on one side only
  auto model = small_model();
  io::StateDict sd = io::state_dict(*small_model(3));
  io::StateDict bad;
  for (const auto& [name, t] : sd)
    if (name == "0.weight") bad.insert(name, zeros({3, 4}));
    else if (name != "2.bias") bad.insert(name, t);
  bad.insert("9.weight", zeros({1}));
  for (bool strict : {true, false}) {
    INFO("strict = " << strict);
    REQUIRE_THROWS_WITH(load_state_dict(*model, bad, strict),
                        Contains("\"0.weight\": [3, 4] in the state dict, [4, 3] in the module") &&
                            Contains("missing key(s) (in the module, not in the state dict): \"2.bias\"") &&
                            Contains("unexpected key(s) (in the state dict, not in the module): \"9.weight\""));
  }
}
