// test_module_hooks.cpp — forward pre-hooks and forward hooks (nn/module.hpp): a pre-hook's
// replacement is what the forward computes with, a forward hook's what it returns; order and
// removal; every module of a transformer runs its hooks; errors name the module's path.
#include <map>

#include "nn/nn_helpers.hpp"

using namespace tapegrad;
using Catch::Contains;
using tapegrad::testing::max_abs_diff;

TEST_CASE("module hooks: a pre-hook may replace the inputs, a forward hook the output", "[hooks][module]") {
  manual_seed(1);
  nn::Linear lin(3, 2);
  const Tensor x = randn({4, 3});
  const Tensor plain = lin.forward(x);
  HookHandle doubled = lin.register_forward_pre_hook([](nn::Module& m, TensorList& inputs) {
    CHECK(m.type_name() == "Linear");
    REQUIRE(inputs.size() == 1);
    inputs[0] = inputs[0] * 2.0;
  });
  const Tensor y2 = lin.forward(x);
  doubled.remove();
  CHECK_CLOSE(y2, lin.forward(x * 2.0), 1e-6);
  // the forward hook sees the inputs after the pre-hooks, and its replacement is the output
  std::vector<std::string> order;
  auto pre = lin.register_forward_pre_hook([&](nn::Module&, TensorList& in) {
    order.push_back("pre");
    in[0] = in[0] + 1.0;
  });
  auto first = lin.register_forward_hook([&](nn::Module&, const TensorList& in, Tensor& out) {
    order.push_back("first");
    CHECK_CLOSE(in[0], x + 1.0, 0.0);
    out = out * 0.0;
  });
  auto second = lin.register_forward_hook([&](nn::Module&, const TensorList&, Tensor& out) {
    order.push_back("second");
    CHECK(max_abs_diff(out, zeros({4, 2})) == 0.0);  // the first one's replacement
  });
  CHECK_CLOSE(lin.forward(x), zeros({4, 2}), 0.0);
  CHECK(order == std::vector<std::string>{"pre", "first", "second"});
  pre.remove();
  first.remove();
  second.remove();
  CHECK_CLOSE(lin.forward(x), plain, 0.0);  // no hook left
}

TEST_CASE("module hooks: every module of a transformer runs its hooks, with its inputs", "[hooks][module]") {
  nn::TransformerLMConfig c = tapegrad::testing::tiny_lm(8, 6, 2);
  c.block.dropout = 0.1;
  nn::TransformerLM lm(c);
  std::map<std::string, int> pre_calls, calls;
  std::vector<HookHandle> handles;
  for (auto& [path, m] : lm.named_modules()) {
    const std::string name = path.empty() ? "<root>" : path;
    handles.push_back(m->register_forward_pre_hook([&pre_calls, name](nn::Module&, TensorList&) { ++pre_calls[name]; }));
    handles.push_back(m->register_forward_hook([&calls, name](nn::Module&, const TensorList&, Tensor&) { ++calls[name]; }));
  }
  (void)lm.forward(tensor({1, 2, 3, 4}, {1, 4}, DType::int64));
  // every module that computes something ran its hooks once; containers, residual holders and
  // the stream (the model runs it block by block, nn/stream/stream.hpp) have no forward
  for (auto& [path, m] : lm.named_modules()) {
    const std::string name = path.empty() ? "<root>" : path;
    INFO(name << " (" << m->type_name() << ")");
    const bool holder = m->type_name() == "ModuleList" || m->type_name() == "Residual" || name == "stream";
    CHECK(pre_calls[name] == (holder ? 0 : 1));
    CHECK(calls[name] == (holder ? 0 : 1));
  }
  CHECK(calls["blocks.1.attn.qkv"] == 1);
  CHECK(calls["blocks.0.ffn_residual.norm"] == 1);
  // a block's inputs: {x, key_padding_mask, memory, memory_padding_mask, cond}
  TensorList block_inputs;
  handles.push_back(lm.blocks->at<nn::TransformerBlock>(0)->register_forward_pre_hook(
      [&](nn::Module&, TensorList& in) { block_inputs = in; }));
  (void)lm.forward(tensor({1, 2, 3, 4}, {1, 4}, DType::int64));
  REQUIRE(block_inputs.size() == 5);
  CHECK(block_inputs[0].shape() == Shape{1, 4, 16});
  CHECK(!block_inputs[2].defined());
  for (HookHandle& h : handles) h.remove();
}

TEST_CASE("module hooks: errors name the module's path and type", "[hooks][module][errors]") {
  nn::TransformerLM lm(tapegrad::testing::tiny_lm(8, 6, 1));
  const Tensor tokens = tensor({1, 2, 3}, {1, 3}, DType::int64);
  auto attn = lm.blocks->at<nn::TransformerBlock>(0)->attn;
  HookHandle h = attn->register_forward_hook([](nn::Module&, const TensorList&, Tensor&) { throw ShapeError("boom"); }, "check");
  REQUIRE_THROWS_WITH(lm.forward(tokens), Contains("forward hook 'check' of module 'blocks.0.attn' (MultiHeadAttention) threw: boom"));
  h.remove();
  h = attn->register_forward_pre_hook([](nn::Module&, TensorList& in) { in.push_back(Tensor()); });
  REQUIRE_THROWS_WITH(lm.forward(tokens), Contains("forward pre-hook 1 of module 'blocks.0.attn' (MultiHeadAttention) "
                                                   "changed the number of inputs from 2 to 3"));
  h.remove();
  h = lm.register_forward_pre_hook([](nn::Module&, TensorList&) { throw ValueError("no"); });
  REQUIRE_THROWS_WITH(lm.forward(tokens), Contains("forward pre-hook 1 of the root module (TransformerLM) threw: no"));
  h.remove();
  CHECK(lm.forward(tokens).shape() == Shape{1, 3, 8});
}
