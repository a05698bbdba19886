// bench_gemm_backends.cpp — OpenBLAS against oneDNN per GEMM shape: the GFLOP/s of each float
// product of the training steps of configs S, M, G and L (bench/train_step --floor lists them,
// with their transposes and calls per step) and of issue 19's examples, through blas::gemm with
// the backend forced to openblas, then dnnl. Rounds interleave the two libraries (the order
// alternates), and each figure is the median of the rounds with their range. Below the table,
// each config's GEMM time per step at each library's rates, at the best of the two per shape,
// and with the rule of GemmBackend::automatic for this machine's kernels (autograd/cpu/blas.cpp).
//
//   OPENBLAS_CORETYPE=SkylakeX OMP_WAIT_POLICY=passive bench_gemm_backends --threads 1 --rounds 5
//   (OPENBLAS_CORETYPE=Haswell on a CPU without AVX-512)
//
// Built only with TAPEGRAD_WITH_DNNL. Not a Google Benchmark program: interleaved rounds and
// their medians are what this noisy shared machine needs (bench/README.md).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <tapegrad/autograd/cpu/blas.hpp>
#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;
using blas::GemmBackend;

namespace {

// One product of a step: config, op(A)op(B) ("NT": B stored transposed), C (M, N) = op(A) (M, K)
// · op(B) (K, N), and how many times one training step calls it (train_step --floor, 1 thread;
// "issue" rows are issue 19's examples, counted once).
struct StepGemm {
  const char* config;
  const char* op;
  std::int64_t M, N, K, calls;
};

const StepGemm kStepGemms[] = {
    // S: 18 shapes
    {"S", "TN", 128, 512, 512, 4}, {"S", "NT", 512, 128, 512, 4}, {"S", "TN", 512, 128, 512, 4},
    {"S", "NN", 512, 512, 128, 4}, {"S", "NT", 512, 512, 128, 4}, {"S", "NN", 512, 128, 512, 4},
    {"S", "NN", 512, 128, 384, 4}, {"S", "TN", 384, 128, 512, 4}, {"S", "NT", 512, 384, 128, 4},
    {"S", "NT", 64, 64, 32, 384}, {"S", "TN", 128, 128, 512, 4}, {"S", "NT", 512, 128, 128, 4},
    {"S", "NN", 64, 32, 64, 256}, {"S", "NN", 512, 128, 128, 4}, {"S", "TN", 64, 32, 64, 256},
    {"S", "TN", 256, 128, 512, 1}, {"S", "NT", 512, 256, 128, 1}, {"S", "NN", 512, 128, 256, 1},
    // M: 27 shapes
    {"M", "TN", 384, 1536, 2048, 6}, {"M", "NT", 2048, 384, 1536, 6}, {"M", "NN", 2048, 384, 1536, 6},
    {"M", "TN", 1536, 384, 2048, 6}, {"M", "NN", 2048, 1536, 384, 6}, {"M", "NT", 2048, 1536, 384, 6},
    {"M", "TN", 1152, 384, 2048, 6}, {"M", "NN", 2048, 384, 1152, 6}, {"M", "NT", 2048, 1152, 384, 6},
    {"M", "NN", 2048, 384, 384, 6}, {"M", "TN", 384, 384, 2048, 6}, {"M", "NT", 2048, 384, 384, 6},
    {"M", "NT", 64, 256, 64, 864}, {"M", "NT", 64, 192, 64, 864}, {"M", "TN", 64, 64, 256, 576},
    {"M", "NN", 64, 64, 256, 576}, {"M", "NT", 64, 128, 64, 864}, {"M", "TN", 64, 64, 192, 576},
    {"M", "NN", 64, 64, 192, 576}, {"M", "NT", 64, 64, 64, 864}, {"M", "TN", 64, 64, 128, 576},
    {"M", "NN", 64, 64, 128, 576}, {"M", "TN", 256, 384, 2048, 1}, {"M", "NN", 2048, 384, 256, 1},
    {"M", "NT", 2048, 256, 384, 1}, {"M", "TN", 64, 64, 64, 576}, {"M", "NN", 64, 64, 64, 576},
    // G: 18 shapes
    {"G", "NT", 256, 50257, 768, 1}, {"G", "NN", 256, 768, 50257, 1}, {"G", "TN", 50257, 768, 256, 1},
    {"G", "NT", 256, 768, 3072, 12}, {"G", "NN", 256, 768, 3072, 12}, {"G", "NT", 256, 3072, 768, 12},
    {"G", "NN", 256, 3072, 768, 12}, {"G", "TN", 768, 3072, 256, 12}, {"G", "TN", 3072, 768, 256, 12},
    {"G", "NT", 256, 2304, 768, 12}, {"G", "NN", 256, 768, 2304, 12}, {"G", "TN", 2304, 768, 256, 12},
    {"G", "TN", 768, 768, 256, 12}, {"G", "NT", 256, 768, 768, 12}, {"G", "NN", 256, 768, 768, 12},
    {"G", "NT", 64, 64, 64, 1728}, {"G", "TN", 64, 64, 64, 1152}, {"G", "NN", 64, 64, 64, 1152},
    // L: 24 shapes
    {"L", "NT", 64, 256, 64, 14688}, {"L", "TN", 256, 64, 64, 10368}, {"L", "NN", 64, 64, 256, 9504},
    {"L", "NN", 2048, 384, 1536, 6}, {"L", "NT", 2048, 384, 1536, 6}, {"L", "TN", 1536, 384, 2048, 6},
    {"L", "TN", 384, 1536, 2048, 6}, {"L", "NT", 2048, 1536, 384, 6}, {"L", "NN", 2048, 1536, 384, 6},
    {"L", "NN", 2048, 384, 1152, 6}, {"L", "TN", 1152, 384, 2048, 6}, {"L", "NT", 2048, 1152, 384, 6},
    {"L", "NT", 2048, 384, 384, 6}, {"L", "NN", 2048, 384, 384, 6}, {"L", "TN", 384, 384, 2048, 6},
    {"L", "NT", 64, 192, 64, 288}, {"L", "NT", 2048, 256, 384, 1}, {"L", "TN", 256, 384, 2048, 1},
    {"L", "NN", 2048, 384, 256, 1}, {"L", "NN", 64, 64, 192, 288}, {"L", "NT", 64, 128, 64, 288},
    {"L", "NN", 64, 64, 128, 288}, {"L", "NT", 64, 64, 64, 288}, {"L", "NN", 64, 64, 64, 288},
    // issue 19, item 5: attention's QKᵀ, S's projections, a head-sized product
    {"issue", "NT", 256, 256, 64, 1}, {"issue", "NT", 512, 128, 512, 1}, {"issue", "TN", 512, 128, 512, 1},
    {"issue", "NN", 64, 64, 64, 1},
};

struct Product {
  bool ta, tb;
  std::int64_t M, N, K;
  auto key() const { return std::tie(ta, tb, M, N, K); }
  bool operator<(const Product& o) const { return key() < o.key(); }
  double flops() const { return 2.0 * double(M) * double(N) * double(K); }
  std::string str() const {
    return std::string(ta ? "T" : "N") + (tb ? "T " : "N ") + std::to_string(M) + "x" + std::to_string(N) + "x" +
           std::to_string(K);
  }
};

Product product_of(const StepGemm& g) { return {g.op[0] == 'T', g.op[1] == 'T', g.M, g.N, g.K}; }

// Operands of one shape, filled once; C is overwritten (beta 0) by every product.
struct Operands {
  std::vector<float> A, B, C;
  explicit Operands(const Product& s) : A(std::size_t(s.M * s.K)), B(std::size_t(s.K * s.N)), C(std::size_t(s.M * s.N)) {
    Generator gen(7);
    const Tensor a = randn({s.M * s.K}, gen), b = randn({s.K * s.N}, gen);
    std::copy_n(a.data<float>(), A.size(), A.data());
    std::copy_n(b.data<float>(), B.size(), B.data());
  }
};

// GFLOP/s of `s` on `backend`: products repeated for at least `seconds` (and 3 times), after one
// untimed product; the mean over the timed block.
double rate(const Product& s, Operands& o, GemmBackend backend, double seconds) {
  blas::set_gemm_backend(backend);
  const std::int64_t lda = s.ta ? s.M : s.K, ldb = s.tb ? s.K : s.N;
  const auto product = [&] {
    blas::gemm<float>(s.ta, s.tb, s.M, s.N, s.K, 1.0f, o.A.data(), lda, o.B.data(), ldb, 0.0f, o.C.data(), s.N);
  };
  product();
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  std::int64_t n = 0;
  double elapsed = 0;
  do {
    product();
    ++n;
    elapsed = std::chrono::duration<double>(clock::now() - start).count();
  } while (elapsed < seconds || n < 3);
  return s.flops() * double(n) / elapsed / 1e9;
}

struct Summary {
  double median, min, max;
};
Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.front(), v.back()};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"OpenBLAS against oneDNN per GEMM shape of the training steps (float32)"};
  int threads = 1, rounds = 5;
  double seconds = 0.1;
  std::string configs = "S,M,G,L,issue";
  app.add_option("--threads", threads, "threads for both libraries (set_num_threads)")->check(CLI::PositiveNumber);
  app.add_option("--rounds", rounds, "interleaved rounds; the table gives their median and range")->check(CLI::PositiveNumber);
  app.add_option("--seconds", seconds, "seconds of products per shape, library and round")->check(CLI::PositiveNumber);
  app.add_option("--configs", configs, "which steps' shapes: a comma list of S, M, G, L, issue");
  CLI11_PARSE(app, argc, argv);
  if (!blas::gemm_backend_available(GemmBackend::dnnl)) {
    std::fprintf(stderr, "bench_gemm_backends: this tapegrad was built without oneDNN (TAPEGRAD_WITH_DNNL)\n");
    return 1;
  }
  set_num_threads(threads);
  const auto wanted = [&](const char* config) { return ("," + configs + ",").find("," + std::string(config) + ",") != std::string::npos; };

  // Each shape once, with the configs that call it.
  std::map<Product, std::string> shapes;
  for (const StepGemm& g : kStepGemms)
    if (wanted(g.config)) {
      std::string& in = shapes[product_of(g)];
      in += (in.empty() ? "" : ",") + std::string(g.config);
    }
  const GemmBackend libraries[2] = {GemmBackend::openblas, GemmBackend::dnnl};
  std::map<Product, std::vector<double>> rates[2];
  std::printf("bench_gemm_backends: %zu shapes, %d thread(s), %d rounds of %.2f s per shape and library, BLAS core %s\n",
              shapes.size(), threads, rounds, seconds, blas_core_name().c_str());
  std::fflush(stdout);
  for (int round = 0; round < rounds; ++round) {
    for (const auto& [shape, in] : shapes) {
      Operands operands(shape);
      for (int i = 0; i < 2; ++i) {
        const int lib = (round + i) % 2;  // openblas first in even rounds, dnnl first in odd ones
        rates[lib][shape].push_back(rate(shape, operands, libraries[lib], seconds));
      }
    }
    std::fprintf(stderr, "round %d of %d done\n", round + 1, rounds);
  }

  // Per shape: median [min-max] GFLOP/s of each library, their ratio, and the automatic rule's pick.
  blas::set_gemm_backend(GemmBackend::automatic);
  std::printf("%-18s %-16s %-22s %-22s %7s %6s\n", "op MxNxK", "in", "OpenBLAS GFLOP/s", "oneDNN GFLOP/s",
              "oneDNN/", "auto");
  std::map<Product, double> median[2];
  for (const auto& [shape, in] : shapes) {
    Summary s[2];
    for (int lib = 0; lib < 2; ++lib) {
      s[lib] = summarize(rates[lib][shape]);
      median[lib][shape] = s[lib].median;
    }
    char cell[2][64];
    for (int lib = 0; lib < 2; ++lib)
      std::snprintf(cell[lib], sizeof cell[lib], "%6.1f [%5.1f-%5.1f]", s[lib].median, s[lib].min, s[lib].max);
    const GemmBackend pick = blas::gemm_backend_for(shape.ta, shape.tb, shape.M, shape.N, shape.K);
    std::printf("%-18s %-16s %-22s %-22s %6.2fx %6s\n", shape.str().c_str(), in.c_str(), cell[0], cell[1],
                s[1].median / s[0].median, blas::gemm_backend_name(pick));
  }

  // Per config: ms of GEMM per step at the median rates.
  std::printf("\nGEMM ms per step at the median rates (%d thread(s)):\n", threads);
  std::printf("%-7s %10s %10s %12s %12s\n", "config", "OpenBLAS", "oneDNN", "best/shape", "auto rule");
  for (const char* config : {"S", "M", "G", "L"}) {
    if (!wanted(config)) continue;
    double ms[4] = {0, 0, 0, 0};
    for (const StepGemm& g : kStepGemms) {
      if (std::string(g.config) != config) continue;
      const Product s = product_of(g);
      const double t[2] = {s.flops() * double(g.calls) / (median[0][s] * 1e9) * 1e3,
                           s.flops() * double(g.calls) / (median[1][s] * 1e9) * 1e3};
      ms[0] += t[0];
      ms[1] += t[1];
      ms[2] += std::min(t[0], t[1]);
      ms[3] += blas::gemm_backend_for(s.ta, s.tb, s.M, s.N, s.K) == GemmBackend::dnnl ? t[1] : t[0];
    }
    std::printf("%-7s %10.2f %10.2f %12.2f %12.2f\n", config, ms[0], ms[1], ms[2], ms[3]);
  }
  return 0;
}
