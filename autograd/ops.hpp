// ops.hpp — the differentiable functional API. One declaration per op, with its formula.
//
// Every op accepts float32 and float64 (int64 where it only moves data) and records a Node
// when an input requires grad. Binary ops broadcast like NumPy. Dims may be negative.
// The forward and backward kernels of each op sit side by side in autograd/ops/*.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensor.hpp"

namespace tapegrad {

class Generator;

// ---------------------------------------------------------------- elementwise (ops/elementwise.cpp)
Tensor add(const Tensor& a, const Tensor& b);  // a + b
Tensor sub(const Tensor& a, const Tensor& b);  // a - b
Tensor mul(const Tensor& a, const Tensor& b);  // a * b
Tensor div(const Tensor& a, const Tensor& b);  // a / b
Tensor pow(const Tensor& a, const Tensor& b);  // a ^ b  (d/db = a^b log a, needs a > 0)
Tensor add(const Tensor& a, double b);
Tensor sub(const Tensor& a, double b);
Tensor rsub(double a, const Tensor& b);        // a - b
Tensor mul(const Tensor& a, double b);
Tensor div(const Tensor& a, double b);
Tensor rdiv(double a, const Tensor& b);        // a / b
Tensor pow(const Tensor& a, double exponent);  // a ^ p
Tensor neg(const Tensor& a);                   // -a

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);
Tensor operator-(const Tensor& a);

// ---------------------------------------------------------------- unary (ops/unary.cpp)
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);     // 1 / sqrt(x)
Tensor abs(const Tensor& x);       // d/dx = sign(x), 0 at 0 (as PyTorch)
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);   // 1 / (1 + e^-x)
Tensor relu(const Tensor& x);      // max(x, 0); d/dx = 0 at 0 (as PyTorch)
// approximate = "none": x·Φ(x) with the exact normal CDF Φ(x) = (1 + erf(x/√2))/2;
// approximate = "tanh": 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (GPT-2's GELU).
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor silu(const Tensor& x);      // x·sigmoid(x)
Tensor erf(const Tensor& x);       // 2/√π ∫₀ˣ exp(−t²) dt; d/dx = 2/√π·exp(−x²) (as torch.erf)
// min(max(x, lo), hi); gradient 1 inside [lo, hi] and 0 outside (as PyTorch).
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi);

// ---------------------------------------------------------------- reductions (ops/reduce.cpp)
// An empty dims list means all dims.
Tensor sum(const Tensor& x);
Tensor sum(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim = false);
// Maximum over one dim; the gradient flows to the first maximal element (as PyTorch's
// max(dim) indices).
Tensor max(const Tensor& x, std::int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x);  // maximum of all elements
// argmax over one dim, as int64 (not differentiable); without dim, of the flattened tensor (0-d).
Tensor argmax(const Tensor& x, std::int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x);
// sum((x - mean)^2) / (N - correction); correction = 1 is the unbiased estimate (PyTorch's
// default), 0 the population variance.
Tensor var(const Tensor& x, const std::vector<std::int64_t>& dims, std::int64_t correction = 1,
           bool keepdim = false);
// Sums a broadcast gradient back to `shape` (the reverse of broadcasting).
Tensor sum_to_shape(const Tensor& x, const Shape& shape);

// ---------------------------------------------------------------- matmul (ops/matmul.cpp)
// (M, K) @ (K, N) -> (M, N); N-d inputs are batches of matrices whose batch dims broadcast:
// (B, 1, M, K) @ (H, K, N) -> (B, H, M, N). 1-d inputs are treated as in torch.matmul.
// Runs on BLAS gemm; the backward uses gemm with transpose flags:
//   dA = dC · Bᵀ,  dB = Aᵀ · dC.
Tensor matmul(const Tensor& a, const Tensor& b);
// The textbook triple loop, for tests only.
Tensor matmul_naive(const Tensor& a, const Tensor& b);
// x · weightᵀ + bias with weight (out, in), as torch.nn.functional.linear.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
// The feed-forward linear(gelu(linear(x, w1, b1), approximate), w2, b2) as one op
// (ops/gelu_mlp.cpp): the same numbers, but it keeps only fc1's output for the backward and
// recomputes gelu's there, a quarter less activation memory per transformer block.
Tensor gelu_mlp(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
                const std::string& approximate = "none");

// ---------------------------------------------------------------- views and joins (ops/view.cpp, ops/join.cpp)
// reshape: a view when the layout allows, otherwise a copy. One size may be -1 (inferred).
Tensor reshape(const Tensor& x, const Shape& shape);
// view: like reshape, but throws ShapeError instead of copying a non-contiguous tensor.
Tensor view(const Tensor& x, const Shape& shape);
Tensor flatten(const Tensor& x, std::int64_t start_dim = 0, std::int64_t end_dim = -1);
Tensor unsqueeze(const Tensor& x, std::int64_t dim);
Tensor squeeze(const Tensor& x, std::int64_t dim);  // removes dim if its size is 1
Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1);  // a strided view
Tensor permute(const Tensor& x, const Shape& dims);                       // a strided view
// Repeats size-1 dims without copying (stride 0); the gradient sums over them.
Tensor expand(const Tensor& x, const Shape& shape);
Tensor contiguous(const Tensor& x);
// Elements [start, start + length) along dim, as a view.
Tensor narrow(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t length);
// Python's x[i] along dim: element i (negative counts from the end), that dim removed, a view.
Tensor select(const Tensor& x, std::int64_t dim, std::int64_t index);
// Python's x[start:end:step] along dim, as a view (end clamps to the size; step > 0).
Tensor slice(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t end,
             std::int64_t step = 1);
Tensor cat(const TensorList& tensors, std::int64_t dim = 0);
Tensor stack(const TensorList& tensors, std::int64_t dim = 0);
// Pieces of split_size along dim (the last may be smaller).
TensorList split(const Tensor& x, std::int64_t split_size, std::int64_t dim = 0);
// `chunks` pieces of ceil(size / chunks) along dim (as torch.chunk).
TensorList chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim = 0);
// Converts dtype; differentiable between float32 and float64.
Tensor to_dtype(const Tensor& x, DType dtype);

// ---------------------------------------------------------------- indexing (ops/index.cpp)
// Rows of x along dim picked by int64 indices (1-d). Backward scatter-adds.
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& indices);
// weight: (V, C), indices: int64 of any shape (...) -> (..., C). Backward scatter-adds
// into the rows that were used.
Tensor embedding(const Tensor& weight, const Tensor& indices);
// x where mask is false, value where mask is true; mask is any tensor (nonzero = true)
// broadcastable to x.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
// condition ? a : b, elementwise with broadcasting (condition nonzero = true).
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
// out[p] = x[p with dim replaced by index[p]] (index: int64, x's number of dims, out of its
// shape), as torch.gather. Backward: a scatter_add.
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index);
// self, with src[p] added at [p with dim replaced by index[p]] (src: index's shape), as
// torch.scatter_add. Backward: dself = dout, dsrc = gather(dout, dim, index).
Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);

// ---------------------------------------------------------------- no gradient (ops/compare.cpp)
// a == b, a != b, a < b, a <= b, a > b, a >= b elementwise with broadcasting: int64 0/1 (tapegrad
// has no bool dtype; PyTorch gives bool). Never requires grad.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, double b);
Tensor ne(const Tensor& a, double b);
Tensor lt(const Tensor& a, double b);
Tensor le(const Tensor& a, double b);
Tensor gt(const Tensor& a, double b);
Tensor ge(const Tensor& a, double b);
// The k largest (largest = false: smallest) elements along dim, in order, and their int64
// indices, as torch.topk (ties by index). The values are gather(x, dim, indices): differentiable.
std::pair<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t dim = -1, bool largest = true);

// ---------------------------------------------------------------- softmax (ops/softmax.cpp)
// exp(x - max) / sum(exp(x - max)) along dim (numerically stable).
Tensor softmax(const Tensor& x, std::int64_t dim);
// x - max - log(sum(exp(x - max))) along dim.
Tensor log_softmax(const Tensor& x, std::int64_t dim);

// ---------------------------------------------------------------- losses (ops/loss.cpp)
enum class Reduction { none, mean, sum };
// logits: (N, C) or (N, C, d1, ...) as PyTorch, targets: int64 (N) or (N, d1, ...).
// Fused log_softmax + negative log-likelihood. Targets equal to ignore_index contribute
// nothing, and the mean divides by the number of targets that are not ignored.
// label_smoothing ε mixes the one-hot target with the uniform distribution:
// loss = (1-ε)·nll + ε·mean_c(-log p_c), as torch.nn.functional.cross_entropy.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets,
                     Reduction reduction = Reduction::mean, std::int64_t ignore_index = -100,
                     double label_smoothing = 0.0);
// (x - y)^2, reduced.
Tensor mse_loss(const Tensor& x, const Tensor& y, Reduction reduction = Reduction::mean);

// ---------------------------------------------------------------- normalization (ops/layer_norm.cpp)
// Over the trailing dims given by normalized_shape:
//   y = (x - mean) / sqrt(var + eps) * weight + bias   (biased variance, as PyTorch)
// weight and bias have shape normalized_shape and may be undefined (no affine).
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
//   y = x / sqrt(mean(x^2) + eps) * weight   (over the trailing normalized_shape dims)
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                double eps = 1e-6);

// ---------------------------------------------------------------- attention (ops/attention.cpp)
// Which kernel pair runs scaled_dot_product_attention and self_attention_packed. Both give
// the same result up to rounding (the flash kernel sums the softmax in another order).
//   materialized  S = q·kᵀ of one (batch, head) pair in a Tq·Tk scratch per thread; any option.
//   flash         tiled online softmax (FlashAttention, Dao et al. 2022, arXiv 2205.14135;
//                 backward as FlashAttention-2, Dao 2023, arXiv 2307.08691): Bq·Bk scratch per
//                 thread, never Tq·Tk. No attention dropout: forcing it with dropout active
//                 (training and dropout_p > 0) throws ValueError.
//   automatic     flash when dropout is inactive, Tq > 1 and Tq·Tk >= kFlashAttentionMinScores
//                 (where it measured faster, see cpu/attention_flash.cpp); materialized
//                 otherwise (dropout, KV-cache decode steps with Tq = 1, short sequences).
// A recorded backward (create_graph) differentiates the composite form whichever kernel ran.
enum class AttentionKernel { automatic, materialized, flash };
// automatic picks flash from Tq·Tk = 384·384 scores per pair on: measured faster from there
// (T = 384: 0.9× the materialized time, forward + backward; T = 2048: 0.63×), slower below
// (causal T = 256: 1.09×). See the figures in cpu/attention_flash.cpp. Machine-dependent: on a
// Zen 5 EPYC, once the staged kᵀ rows were padded (attention_staging.hpp), the materialized
// kernel ran causal attention faster up to T ≈ 1024 (bench/README.md); force it with
// `kernel = AttentionKernel::materialized` where its Tq·Tk scratch per thread is affordable.
inline constexpr std::int64_t kFlashAttentionMinScores = 384 * 384;

struct AttentionOptions {
  // Query i sees only keys j <= i + causal_offset. The default 0 aligns the mask top-left
  // (query i sees j <= i, as torch's is_causal); causal_offset = Tk − Tq aligns it
  // bottom-right, for Tq new queries after Tk − Tq cached keys (a KV cache step: query i is
  // at position i + Tk − Tq). Needs causal; must be >= 0.
  bool causal = false;
  std::int64_t causal_offset = 0;
  // (B, Tk), any dtype: nonzero marks a padded key that no query may attend to.
  Tensor key_padding_mask;
  // Dropout on the attention probabilities (training only), drawn from gen (default
  // generator when null).
  double dropout_p = 0.0;
  bool training = false;
  Generator* gen = nullptr;
  // Defaults to 1/sqrt(D).
  std::optional<double> scale;
  // The kernel pair (see AttentionKernel above).
  AttentionKernel kernel = AttentionKernel::automatic;
};
// q: (B, H, Tq, D), k: (B, Hkv, Tk, D), v: (B, Hkv, Tk, Dv) -> (B, H, Tq, Dv)
//   S = q·kᵀ·scale, masked entries = -inf;  P = softmax(S) (dropout);  out = P·v
// Hkv = H is multi-head attention; a divisor of H is grouped-query attention (Hkv = 1:
// multi-query), query head h reading kv head h / (H / Hkv) in place.
// One fused op with its own backward (P is recomputed from the saved row logsumexp, not
// stored). A query row whose keys are all masked outputs zeros (PyTorch gives NaN).
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const AttentionOptions& options = {});
// Self-attention from the packed projection qkv (B, T, 3C) = [q | k | v], n_heads heads of
// D = C / n_heads columns each, to the merged heads (B, T, C): the same result as splitting
// qkv into (B, H, T, D) views, scaled_dot_product_attention, and merging the heads back, with
// no copies around the kernel (forward or backward). key_padding_mask is (B, T).
// Grouped-query attention: n_kv_heads (a divisor of n_heads; 0 = n_heads) key and value heads,
// qkv = [q (H·D) | k (Hkv·D) | v (Hkv·D)], each kv head shared by n_heads / n_kv_heads query
// heads in place (never repeated in memory, forward or backward).
Tensor self_attention_packed(const Tensor& qkv, std::int64_t n_heads, const AttentionOptions& options = {},
                             std::int64_t n_kv_heads = 0);

// ------------------------------------------- rotary position embedding (ops/rotary_embedding.cpp)
struct RotaryOptions {
  double theta = 10000.0;         // the frequency base: pair i turns by p·θ^(−2i/D)
  bool interleaved = false;       // pairs (x_2i, x_2i+1) (RoFormer, Meta); default (x_i, x_i+D/2) (HF LLaMA)
  std::int64_t offset = 0;        // position of the first token (a KV cache continuing a sequence)
  std::int64_t rotate_heads = -1;  // rotate heads [0, rotate_heads) only, copy the rest (-1: all)
  bool inverse = false;           // rotate by −p·ω (the backward)
};
// x: (B, T, heads, D), D even -> the same shape, the head vectors of token t rotated by the
// angles of position offset + t. One op, forward and backward kernels side by side.
Tensor rotary_embedding(const Tensor& x, const RotaryOptions& options = {});

// ---------------------------------------------------------------- dropout (ops/dropout.cpp)
// In training: zero each element with probability p and scale the rest by 1/(1-p), with a
// mask drawn from gen (the default generator when null). Otherwise the identity.
Tensor dropout(const Tensor& x, double p, bool training, Generator* gen = nullptr);

}  // namespace tapegrad
