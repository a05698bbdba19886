// test_allocator.cpp — the caching allocator behind Storage: a training step in the steady
// state takes no new memory from the OS, blocks are reused by size class, the limit and
// empty_cache() hold.
#include <catch2/catch.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

namespace {
// Restores the cache limit a test changed.
struct CacheLimitGuard {
  std::size_t saved = cache_limit();
  explicit CacheLimitGuard(std::size_t limit) { set_cache_limit(limit); }
  ~CacheLimitGuard() { set_cache_limit(saved); }
};
}  // namespace

TEST_CASE("allocator: a training step in the steady state allocates no new memory", "[allocator]") {
  CacheLimitGuard guard(std::size_t(1) << 30);  // explicit: the default is 0 under ASan
  manual_seed(0);
  nn::TransformerLMConfig c;
  c.vocab_size = 32;
  c.max_seq_len = 16;
  c.n_layers = 2;
  c.block.d_model = 32;
  c.block.n_heads = 2;
  nn::TransformerLM model(c);
  optim::AdamW opt(model.named_parameters(), optim::AdamOptions(1e-3));
  Generator gen(1);
  const Tensor tokens = randint(0, 32, {4, 16}, gen);
  auto step = [&] {
    opt.zero_grad();
    Tensor loss = cross_entropy(model.forward(tokens).reshape({64, 32}), tokens.reshape({64}));
    loss.backward();
    opt.step();
  };
  step();
  step();  // the optimizer's moments exist from the first step on; the second is steady state
  const AllocatorStats before = allocator_stats();
  step();
  const AllocatorStats after = allocator_stats();
  CHECK(after.allocations - before.allocations > 50);  // the step does allocate tensors...
  CHECK(after.os_allocations == before.os_allocations);  // ...all from the cache
}

TEST_CASE("allocator: blocks are reused by size class, limit and empty_cache hold", "[allocator]") {
  CacheLimitGuard guard(std::size_t(64) << 20);
  empty_cache();
  CHECK(allocator_stats().cached_bytes == 0);
  { Tensor a = Tensor::empty({1000, 1000}, DType::float32); }
  CHECK(allocator_stats().cached_bytes >= 4000000);
  const auto before = allocator_stats();
  { Tensor b = Tensor::empty({999, 1001}, DType::float32); }  // 4 bytes fewer: the same size class
  CHECK(allocator_stats().os_allocations == before.os_allocations);
  empty_cache();
  CHECK(allocator_stats().cached_bytes == 0);

  set_cache_limit(0);  // caching off: every block goes back to the OS
  { Tensor c = Tensor::empty({1000}, DType::float32); }
  CHECK(allocator_stats().cached_bytes == 0);
  const auto off = allocator_stats();
  { Tensor d = Tensor::empty({1000}, DType::float32); }
  CHECK(allocator_stats().os_allocations == off.os_allocations + 1);
}

TEST_CASE("allocator: TAPEGRAD_CACHE_LIMIT_MB is whole MiB, empty keeps the default, anything else is a clear error",
          "[allocator]") {
  const std::size_t fallback = std::size_t(2) << 30;
  CHECK(detail::cache_limit_from_setting(nullptr, fallback) == fallback);
  CHECK(detail::cache_limit_from_setting("", fallback) == fallback);  // not 0: set but empty
  CHECK(detail::cache_limit_from_setting("0", fallback) == 0);
  CHECK(detail::cache_limit_from_setting("512", fallback) == std::size_t(512) << 20);
  CHECK(detail::cache_limit_from_setting("17592186044415", fallback) == std::size_t(17592186044415) << 20);
  for (const char* bad : {"abc", "512MB", "1.5", "-1", " 64", "64 ", "17592186044416", "99999999999999999999999"}) {
    CAPTURE(bad);
    CHECK_THROWS_MATCHES(detail::cache_limit_from_setting(bad, fallback), ValueError,
                         Catch::Matchers::Message("TAPEGRAD_CACHE_LIMIT_MB must be a whole number of MiB (0 turns the "
                                                  "tensor cache off), got \"" + std::string(bad) + "\""));
  }
}

TEST_CASE("allocator: zeros are zeros even in a reused block", "[allocator]") {
  CacheLimitGuard guard(std::size_t(64) << 20);
  { Tensor a = full({4096}, 7.0, DType::float32); }
  const Tensor z = zeros({4096}, DType::float32);
  CHECK(z.sum().item() == 0);
}

TEST_CASE("allocator: a large request whose class is empty takes a free block up to twice its size", "[allocator]") {
  CacheLimitGuard guard(std::size_t(64) << 20);
  empty_cache();
  { Tensor a = Tensor::empty({1 << 20}, DType::float32); }  // a free 4 MiB block
  const auto before = allocator_stats();
  {
    Tensor b = Tensor::empty({3 << 18}, DType::float32);  // 3 MiB: takes the 4 MiB block
    CHECK(allocator_stats().os_allocations == before.os_allocations);
    CHECK(allocator_stats().cached_bytes == 0);
    Tensor c = Tensor::empty({1 << 18}, DType::float32);  // 1 MiB: no free block within 2 MiB
    CHECK(allocator_stats().os_allocations == before.os_allocations + 1);
  }
  CHECK(allocator_stats().cached_bytes == (std::size_t(5) << 20));  // b gave back the whole 4 MiB block
  empty_cache();
  { Tensor small = Tensor::empty({1024}, DType::float32); }  // 4 KiB: below the borrowing size
  const auto small_before = allocator_stats();
  { Tensor smaller = Tensor::empty({512}, DType::float32); }
  CHECK(allocator_stats().os_allocations == small_before.os_allocations + 1);
}

TEST_CASE("allocator: random sizes, random frees: no block is ever handed out twice", "[allocator]") {
  // Every live tensor holds its own index; a block handed to two tensors at once (a
  // bookkeeping slip in best fit, say) would show as another index in it.
  CacheLimitGuard guard(std::size_t(256) << 20);
  empty_cache();
  Generator gen(5);
  std::vector<Tensor> live;
  std::vector<float> tag;
  for (int i = 0; i < 3000; ++i) {
    if (!live.empty() && gen.next_double() < 0.45) {  // free a random one, checking it first
      const std::size_t k = static_cast<std::size_t>(gen.next_double() * double(live.size())) % live.size();
      const float* p = live[k].data<float>();
      bool intact = true;
      for (std::int64_t j = 0; j < live[k].numel(); j += 997) intact = intact && p[j] == tag[k];
      REQUIRE(intact);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      tag.erase(tag.begin() + static_cast<std::ptrdiff_t>(k));
      continue;
    }
    // 1 KiB to 4 MiB, spread over many size classes, half of them above the borrowing size
    const std::int64_t n = 256 + static_cast<std::int64_t>(gen.next_double() * gen.next_double() * (1 << 20));
    live.push_back(full({n}, static_cast<double>(i), DType::float32));
    tag.push_back(static_cast<float>(i));
  }
  for (std::size_t k = 0; k < live.size(); ++k) {
    const float* p = live[k].data<float>();
    bool intact = true;
    for (std::int64_t j = 0; j < live[k].numel(); j += 997) intact = intact && p[j] == tag[k];
    CHECK(intact);
    CHECK(p[live[k].numel() - 1] == tag[k]);  // the last element: the block is at least this large
  }
  const AllocatorStats s = allocator_stats();
  CHECK(s.os_allocations < s.allocations);  // blocks were reused (and borrowed) along the way
}
