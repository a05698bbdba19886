// test_module_call.cpp — calling a module, module(x), runs its forward pre-hooks, its forward
// and its forward hooks once, as PyTorch's __call__ does: a module of your own needs no hook
// code in its forward, and the library's modules (whose forward runs the hooks itself) do not
// run them twice.
#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

namespace {

// A user's module, written as docs/custom-module.md shows: no ForwardCall in its forward.
class Scale : public nn::UnaryModule {
 public:
  Scale() : UnaryModule("Scale") { factor = register_parameter("factor", full({1}, 2.0)); }
  Tensor forward(const Tensor& x) override { return mul(x, factor); }
  Tensor factor;
};

// Two inputs: the one-line operator() that call() gives any signature.
class Blend : public nn::Module {
 public:
  Blend() : Module("Blend") {}
  Tensor forward(const Tensor& a, const Tensor& b) { return add(a, mul(b, 0.5)); }
  Tensor operator()(Tensor a, Tensor b) { return call({&a, &b}, [&] { return forward(a, b); }); }
};

struct Counts {
  int pre = 0, post = 0;
};

void count_hooks(nn::Module& m, Counts& c, std::vector<HookHandle>* keep = nullptr) {
  auto h1 = m.register_forward_pre_hook([&c](nn::Module&, TensorList&) { ++c.pre; });
  auto h2 = m.register_forward_hook([&c](nn::Module&, const TensorList&, Tensor&) { ++c.post; });
  if (keep) {
    keep->push_back(h1);
    keep->push_back(h2);
  }
}

}  // namespace

TEST_CASE("module call: a user module's hooks run through module(x)", "[nn][hooks]") {
  Scale scale;
  Counts c;
  count_hooks(scale, c);
  Tensor y = scale(ones({3}));
  CHECK(c.pre == 1);
  CHECK(c.post == 1);
  CHECK(y.to_vector() == std::vector<double>{2, 2, 2});
  scale.forward(ones({3}));  // forward() alone is the bare function, as in PyTorch
  CHECK(c.pre == 1);
}

TEST_CASE("module call: a pre-hook's input and a hook's output replace the real ones", "[nn][hooks]") {
  Scale scale;
  scale.register_forward_pre_hook([](nn::Module&, TensorList& in) { in[0] = mul(in[0], 10.0); });
  scale.register_forward_hook([](nn::Module&, const TensorList& in, Tensor& out) {
    CHECK(in[0].to_vector() == std::vector<double>{10});  // the hook sees the replaced input
    out = add(out, 1.0);
  });
  CHECK(scale(ones({1})).item() == 21.0);  // (1·10)·2 + 1
}

TEST_CASE("module call: library modules run their hooks once, called or forwarded", "[nn][hooks]") {
  auto linear = std::make_shared<nn::Linear>(3, 2);
  Counts c;
  count_hooks(*linear, c);
  (*linear)(ones({1, 3}));
  CHECK(c.pre == 1);
  CHECK(c.post == 1);
  linear->forward(ones({1, 3}));  // the library's forward opens its own ForwardCall
  CHECK(c.pre == 2);
  CHECK(c.post == 2);
}

TEST_CASE("module call: Sequential calls its children, so their hooks run", "[nn][hooks]") {
  auto scale = std::make_shared<Scale>();
  nn::Sequential seq{scale, std::make_shared<nn::Linear>(3, 2)};
  Counts c;
  count_hooks(*scale, c);
  seq(ones({1, 3}));
  CHECK(c.post == 1);
}

TEST_CASE("module call: a module with two inputs, and hooks that throw", "[nn][hooks]") {
  Blend blend;
  Counts c;
  count_hooks(blend, c);
  CHECK(blend(ones({2}), full({2}, 4.0)).to_vector() == std::vector<double>{3, 3});
  CHECK(c.pre == 1);
  CHECK(c.post == 1);
  Scale scale;
  auto h = scale.register_forward_pre_hook([](nn::Module&, TensorList&) { throw std::runtime_error("no"); });
  CHECK_THROWS_WITH(scale(ones({1})), Catch::Matchers::Contains("forward pre-hook") && Catch::Matchers::Contains("no"));
  h.remove();
  // A throw leaves nothing behind: an inner library call still runs its own hooks.
  auto linear = std::make_shared<nn::Linear>(1, 1);
  Counts lc;
  count_hooks(*linear, lc);
  linear->forward(ones({1, 1}));
  CHECK(lc.post == 1);
}

TEST_CASE("module call: model(tokens) on a TransformerLM", "[nn][hooks]") {
  nn::TransformerLMConfig config;
  config.vocab_size = 11;
  config.block.d_model = 8;
  config.block.n_heads = 2;
  config.n_layers = 1;
  config.max_seq_len = 4;
  auto model = std::make_shared<nn::TransformerLM>(config);
  Counts c;
  count_hooks(*model, c);
  Tensor tokens = Tensor::from_vector<std::int64_t>({1, 2, 3}, {1, 3});
  Tensor logits = (*model)(tokens);
  CHECK(logits.shape() == Shape{1, 3, 11});
  CHECK(c.post == 1);
}
