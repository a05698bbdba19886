// libtorch_train_step.cpp — bench/torch_train_step.py in PyTorch's C++ API (LibTorch), for
// comparison without the Python interpreter in the loop.
//
// The same GPT-2-style LM, step, configs, flags and printout as torch_train_step.py (--csv gives
// the same columns, so compare_train_step.py --libtorch reads it the same way): learned positions,
// tied head, GELU-tanh MLP 4x, LayerNorm eps 1e-5, causal self-attention written out (matmul,
// masked_fill, softmax, matmul), AdamW (lr 3e-4, weight decay 0.1 on the matrices but the
// embeddings), cross-entropy; Pre-LN or Post-LN. The modules are built and initialized in the
// Python script's order from the same generator, and the data come from a generator seeded
// seed + 1 as there, so both start from the same weights and tokens.
//
// Built only with -DTAPEGRAD_BENCH_LIBTORCH=ON and Debian's libtorch-dev (see bench/README.md):
//
//   build/bench/libtorch_train_step --config S --threads 1
//   build/bench/libtorch_train_step --config M --placement post --steps 10 --warmup 2
//
// --threads calls at::set_num_threads, which sets OpenMP's thread count; Debian's OpenMP build
// of OpenBLAS follows it.
#include <CLI/CLI.hpp>

#include <torch/torch.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace {

struct Config {
  int64_t layers, d_model, heads, seq_len, batch, vocab;
};

// As in torch_train_step.py and train_step.cpp.
const std::map<std::string, Config> kConfigs = {
    {"S", {4, 128, 4, 64, 8, 256}},
    {"M", {6, 384, 6, 256, 8, 256}},
    {"G", {12, 768, 12, 64, 4, 50257}},
    {"L", {6, 384, 6, 2048, 1, 256}},
};

// Matmul FLOPs of one training step, counted as train_step.cpp counts them.
double step_flops(const Config& c) {
  const double tokens = static_cast<double>(c.batch * c.seq_len), d = static_cast<double>(c.d_model);
  const double T = static_cast<double>(c.seq_len), B = static_cast<double>(c.batch);
  const double per_layer = 2 * tokens * 12 * d * d + 2 * 2 * B * T * T * d;
  return 3 * (static_cast<double>(c.layers) * per_layer + 2 * tokens * d * static_cast<double>(c.vocab));
}

struct BlockImpl : torch::nn::Module {
  BlockImpl(const Config& c, bool pre) : c(c), pre(pre) {
    // Registered (and so initialized) in the Python Block's order.
    ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model}).eps(1e-5)));
    ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model}).eps(1e-5)));
    qkv = register_module("qkv", torch::nn::Linear(c.d_model, 3 * c.d_model));
    proj = register_module("proj", torch::nn::Linear(c.d_model, c.d_model));
    fc1 = register_module("fc1", torch::nn::Linear(c.d_model, 4 * c.d_model));
    fc2 = register_module("fc2", torch::nn::Linear(4 * c.d_model, c.d_model));
    causal = register_buffer("causal", torch::ones({c.seq_len, c.seq_len}, torch::kBool).triu(1));
  }

  torch::Tensor attn(const torch::Tensor& x) {
    const int64_t B = c.batch, T = c.seq_len, H = c.heads, hd = c.d_model / c.heads;
    const auto qkv_ = qkv->forward(x).view({B, T, 3, H, hd}).permute({2, 0, 3, 1, 4});
    const auto q = qkv_[0], k = qkv_[1], v = qkv_[2];
    const auto s = q.matmul(k.transpose(-2, -1)) * std::pow(static_cast<double>(hd), -0.5);
    const auto p = s.masked_fill(causal, -std::numeric_limits<double>::infinity()).softmax(-1);
    return proj->forward(p.matmul(v).transpose(1, 2).reshape({B, T, c.d_model}));
  }

  torch::Tensor mlp(const torch::Tensor& x) { return fc2->forward(torch::gelu(fc1->forward(x), "tanh")); }

  torch::Tensor forward(torch::Tensor x) {
    if (pre) {
      x = x + attn(ln1->forward(x));
      return x + mlp(ln2->forward(x));
    }
    x = ln1->forward(x + attn(x));
    return ln2->forward(x + mlp(x));
  }

  Config c;
  bool pre;
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
  torch::Tensor causal;
};
TORCH_MODULE(Block);

struct LMImpl : torch::nn::Module {
  LMImpl(const Config& c, bool pre) : c(c), pre(pre) {
    tok = register_module("tok", torch::nn::Embedding(c.vocab, c.d_model));
    pos = register_module("pos", torch::nn::Embedding(c.seq_len, c.d_model));
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (int64_t i = 0; i < c.layers; ++i) blocks->push_back(Block(c, pre));
    if (pre) ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model}).eps(1e-5)));
    torch::NoGradGuard no_grad;
    for (auto& p : parameters())  // GPT-2's N(0, 0.02)
      if (p.dim() >= 2) torch::nn::init::normal_(p, 0.0, 0.02);
  }

  torch::Tensor forward(const torch::Tensor& idx) {
    auto x = tok->forward(idx) + pos->forward(torch::arange(c.seq_len, torch::kLong));
    for (const auto& block : *blocks) x = block->as<Block>()->forward(x);
    if (pre) x = ln_f->forward(x);
    return x.matmul(tok->weight.t());  // tied head
  }

  Config c;
  bool pre;
  torch::nn::Embedding tok{nullptr}, pos{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm ln_f{nullptr};
};
TORCH_MODULE(LM);

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Time bench/torch_train_step.py's training step in LibTorch (forward, backward, AdamW)"};
  std::string config_name = "S", placement = "pre";
  int threads = 1, steps = 20, warmup = 3;
  uint64_t seed = 0;
  bool csv = false;
  app.add_option("--config", config_name, "S, M, G or L (see bench/README.md)")
      ->capture_default_str()->check(CLI::IsMember({"S", "M", "G", "L"}));
  app.add_option("--placement", placement, "pre or post")->capture_default_str()->check(CLI::IsMember({"pre", "post"}));
  app.add_option("--threads", threads, "at::set_num_threads (OpenMP, and so OpenBLAS)")->capture_default_str();
  app.add_option("--steps", steps, "timed steps")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed steps first")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--seed", seed, "initialization and data seed")->capture_default_str();
  app.add_flag("--csv", csv, "one machine-readable line: config,placement,threads,median_ms,min_ms,max_ms,tokens_per_s,gflops,peak_rss_mib");
  CLI11_PARSE(app, argc, argv);

  at::set_num_threads(threads);
  torch::manual_seed(seed);
  const Config c = kConfigs.at(config_name);
  const int64_t B = c.batch, T = c.seq_len, V = c.vocab;
  LM model(c, placement == "pre");

  // As the Python script groups them: decay for matrices other than the embeddings.
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& item : model->named_parameters()) {
    const std::string& name = item.key();
    const bool matrix = item.value().dim() >= 2 && name.find("tok") == std::string::npos &&
                        name.find("pos") == std::string::npos;
    (matrix ? decay : no_decay).push_back(item.value());
  }
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(3e-4).weight_decay(0.1)));
  groups.emplace_back(no_decay, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(3e-4).weight_decay(0.0)));
  torch::optim::AdamW opt(std::move(groups), torch::optim::AdamWOptions(3e-4));

  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed + 1);
  const auto tokens = torch::randint(0, V, {B, T + 1}, gen, torch::kLong);
  const auto inputs = tokens.slice(1, 0, T).contiguous(), targets = tokens.slice(1, 1, T + 1).reshape({-1});

  const auto parameters = model->parameters();
  auto step = [&] {
    for (auto p : parameters) p.mutable_grad().reset();  // zero_grad(set_to_none=True)
    const auto loss = torch::nn::functional::cross_entropy(model->forward(inputs).view({B * T, V}), targets);
    loss.backward();
    opt.step();
    return loss.item<double>();
  };

  double first_loss = 0, last_loss = 0;
  for (int i = 0; i < warmup; ++i) {
    last_loss = step();
    if (i == 0) first_loss = last_loss;
  }
  std::vector<double> ms;
  for (int i = 0; i < steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    last_loss = step();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (warmup == 0 && i == 0) first_loss = last_loss;
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[(sorted.size() - 1) / 2];  // statistics.median_low, as the Python script
  const double tokens_per_s = static_cast<double>(B * T) / (median / 1000);
  const double gflops = step_flops(c) / (median / 1000) / 1e9;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double rss = static_cast<double>(usage.ru_maxrss) / 1024;
  if (csv) {
    std::printf("%s,%s,%d,%.2f,%.2f,%.2f,%.0f,%.1f,%.0f\n", config_name.c_str(), placement.c_str(), threads, median,
                sorted.front(), sorted.back(), tokens_per_s, gflops, rss);
  } else {
    const char* blas_threads = std::getenv("OPENBLAS_NUM_THREADS");
    std::printf("libtorch %s %s (L %lld, d %lld, T %lld, B %lld, vocab %lld), %s, %d thread(s), OPENBLAS_NUM_THREADS=%s\n",
                TORCH_VERSION, config_name.c_str(), static_cast<long long>(c.layers), static_cast<long long>(c.d_model),
                static_cast<long long>(T), static_cast<long long>(B), static_cast<long long>(V), placement.c_str(),
                threads, blas_threads ? blas_threads : "unset");
    std::printf("  %.2f ms/step median (min %.2f, max %.2f over %d steps), %.0f tokens/s, %.1f GFLOP/s, peak RSS %.0f MiB\n",
                median, sorted.front(), sorted.back(), steps, tokens_per_s, gflops, rss);
    std::printf("  loss %.6f at the first step, %.6f at the last\n", first_loss, last_loss);
  }
  return 0;
}
