// numbers_fingerprint.cpp — a few AdamW steps of 53 model configurations (every placement ×
// norm, dropout, the inits, residual scales, B2T scaling, AdaLN, AdaLN-Zero, seq2seq; float32
// and float64; config S), the losses and parameter sums printed as hex floats. A refactor that must not
// change numbers builds it against the library before and after and diffs the outputs, which
// must be identical (same machine, same OPENBLAS_CORETYPE, OMP_NUM_THREADS=1):
//
//   cmake --build build --target numbers_fingerprint
//   OMP_NUM_THREADS=1 build/bench/numbers_fingerprint > after.txt && diff before.txt after.txt
//
// (for the "before", build this file against the older library: g++ -std=c++20 -O2
// -march=native -I <old build>/include numbers_fingerprint.cpp <old build>/libtapegrad.a
// -fopenmp $(pkg-config --libs openblas)).
// It uses only the configs' public fields, so that one source builds against both versions.
// The last line, config S (bench_configs.hpp), has products large enough for tapegrad's own GEMM
// (GemmBackend::tapegrad): tests/scripts/fingerprint_on_backends.sh diffs the output on openblas
// and on tapegrad, which must be identical too. The BLAS kernels' family goes to stderr.
#include <tapegrad/tapegrad.hpp>

#include "bench_configs.hpp"

#include <cstdio>
#include <string>
#include <vector>

using namespace tapegrad;

namespace {

double param_sum(const nn::Module& m) {
  double s = 0;
  for (const Tensor& p : m.parameters())
    for (double v : p.to_vector()) s += v;
  return s;
}

template <typename Step>
void run(const std::string& name, nn::Module& model, Step&& step) {
  optim::AdamW opt(optim::weight_decay_groups(model, optim::AdamOptions(3e-3).weight_decay(0.1)));
  std::printf("%-40s params %a", name.c_str(), param_sum(model));
  for (int i = 0; i < 4; ++i) {
    Tensor loss = step();
    opt.zero_grad();
    loss.backward();
    optim::clip_grad_norm_(model.parameters(), 1.0);
    opt.step();
    std::printf(" %a", loss.item());
  }
  std::printf(" after %a\n", param_sum(model));
}

void lm(const std::string& name, nn::Placement p, nn::NormKind n, DType dtype, double dropout, std::int64_t classes,
        double residual_scale = 1.0, bool b2t_scaling = false, nn::InitScheme init = nn::InitScheme::gpt2) {
  manual_seed(7);
  nn::TransformerLMConfig c;
  c.vocab_size = 11;
  c.max_seq_len = 8;
  c.n_layers = 3;
  c.block.d_model = 16;
  c.block.n_heads = 2;
  c.block.d_ff = 24;
  c.block.placement = p;
  c.block.norm = n;
  c.block.dtype = dtype;
  c.block.dropout = dropout;
  c.block.attn_dropout = dropout;
  c.block.residual_scale = residual_scale;
  c.n_classes = classes;
  c.init = init;
  if (b2t_scaling) c.b2t_scaling = true;
  nn::TransformerLM model(c);
  Generator gen(3);
  run(name, model, [&] {
    std::vector<std::int64_t> ids;
    for (int i = 0; i < 2 * 7; ++i) ids.push_back(static_cast<std::int64_t>(gen.next_below(11)));
    std::vector<std::int64_t> tgt(ids.begin() + 1, ids.end());
    tgt.push_back(0);
    Tensor x = Tensor::from_vector(ids, {2, 7}), y = Tensor::from_vector(tgt, {2, 7});
    Tensor cls = classes ? Tensor::from_vector(std::vector<std::int64_t>{0, classes - 1}, {2}) : Tensor();
    return cross_entropy(model.forward(x, cls).reshape({14, 11}), y.reshape({14}));
  });
}

void s2s(const std::string& name, nn::Placement p, DType dtype, double dropout) {
  manual_seed(9);
  nn::Seq2SeqConfig c;
  c.src_vocab_size = 10;
  c.tgt_vocab_size = 12;
  c.max_seq_len = 8;
  c.n_encoder_layers = 2;
  c.n_decoder_layers = 3;
  c.block.d_model = 8;
  c.block.n_heads = 2;
  c.block.d_ff = 16;
  c.block.placement = p;
  c.block.dtype = dtype;
  c.block.dropout = dropout;
  nn::Seq2SeqTransformer model(c);
  Generator gen(4);
  run(name, model, [&] {
    std::vector<std::int64_t> src, tgt, out;
    for (int i = 0; i < 2 * 5; ++i) src.push_back(static_cast<std::int64_t>(gen.next_below(10)));
    for (int i = 0; i < 2 * 6; ++i) tgt.push_back(static_cast<std::int64_t>(gen.next_below(12)));
    for (int i = 0; i < 2 * 6; ++i) out.push_back(static_cast<std::int64_t>(gen.next_below(12)));
    Tensor logits = model.forward(Tensor::from_vector(src, {2, 5}), Tensor::from_vector(tgt, {2, 6}));
    return cross_entropy(logits.reshape({12, 12}), Tensor::from_vector(out, {12}));
  });
}

// Config S itself (bench_configs.hpp, the model train_step times): its products (512x128x512 and
// the like) are those tapegrad's own GEMM takes.
void lm_s() {
  manual_seed(11);
  const bench::BenchConfig s = bench::config_named("S");
  nn::TransformerLM model(bench::lm_config_of(s));
  Generator gen(5);
  run("lm S f32", model, [&] {
    const std::int64_t tokens = s.batch * s.seq_len;
    std::vector<std::int64_t> ids, tgt;
    for (std::int64_t i = 0; i < tokens; ++i) ids.push_back(static_cast<std::int64_t>(gen.next_below(s.vocab)));
    for (std::int64_t i = 0; i < tokens; ++i) tgt.push_back(static_cast<std::int64_t>(gen.next_below(s.vocab)));
    Tensor x = Tensor::from_vector(ids, {s.batch, s.seq_len}), y = Tensor::from_vector(tgt, {tokens});
    return cross_entropy(model.forward(x).reshape({tokens, s.vocab}), y);
  });
}

}  // namespace

int main() {
  std::fprintf(stderr, "numbers_fingerprint: BLAS core %s\n", blas_core_name().c_str());
  using P = nn::Placement;
  using N = nn::NormKind;
  for (DType dt : {DType::float32, DType::float64}) {
    const std::string d = dt == DType::float32 ? " f32" : " f64";
    for (P p : {P::post, P::pre, P::b2t, P::deepnorm, P::rezero, P::none})
      for (N n : {N::layernorm, N::rmsnorm}) {
        if (p == P::rezero && n == N::rmsnorm) continue;
        lm("lm " + nn::placement_name(p) + " " + nn::norm_kind_name(n) + d, p, n, dt, 0.0, 0);
      }
    lm("lm pre layernorm dropout" + d, P::pre, N::layernorm, dt, 0.1, 0);
    lm("lm b2t layernorm dropout" + d, P::b2t, N::layernorm, dt, 0.1, 0);
    lm("lm pre scaled" + d, P::pre, N::layernorm, dt, 0.0, 0, 0.7);
    lm("lm post scaled" + d, P::post, N::layernorm, dt, 0.0, 0, 0.7);
    lm("lm b2t b2t_scaling" + d, P::b2t, N::layernorm, dt, 0.0, 0, 1.0, true);
    lm("lm post xavier" + d, P::post, N::layernorm, dt, 0.0, 0, 1.0, false, nn::InitScheme::xavier);
    lm("lm pre pytorch" + d, P::pre, N::layernorm, dt, 0.0, 0, 1.0, false, nn::InitScheme::pytorch);
    lm("lm pre adaln" + d, P::pre, N::adaln, dt, 0.0, 3);
    lm("lm post adaln" + d, P::post, N::adaln, dt, 0.0, 3);
    lm("lm pre adaln_zero" + d, P::pre, N::adaln_zero, dt, 0.1, 3);
    for (P p : {P::post, P::pre, P::b2t, P::deepnorm, P::none})
      s2s("s2s " + nn::placement_name(p) + d, p, dt, 0.1);
  }
  lm_s();
}
