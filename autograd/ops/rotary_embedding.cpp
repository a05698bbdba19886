// rotary_embedding.cpp — rotary position embedding (RoPE; Su et al. 2021, "RoFormer", arXiv 2104.09864).
//
// Each head vector x (D dims, D even) of the token at position p is cut into D/2 pairs, and
// pair i is rotated by the angle p·ω_i, ω_i = θ^(−2i/D):
//   (a, b) -> (a·cos − b·sin,  b·cos + a·sin)
// The dot product of a rotated query at p and a rotated key at p' then depends on p − p' alone:
// positions enter attention as relative offsets, and no position table is learned.
//
// Which coordinates form pair i:
//   half split  (x_i, x_{i+D/2})   Hugging Face's LLaMA ("rotate_half"), the default
//   interleaved (x_{2i}, x_{2i+1}) the RoFormer paper, Meta's original LLaMA code, GPT-J
//
// The rotation is linear and orthogonal, so its backward is the rotation by −p·ω_i of the
// incoming gradient: the same op with the sines negated. The backward calls the op itself, so
// a recorded backward (create_graph) is differentiable with no second formula.
#include <cmath>
#include <vector>

#include "../cpu/parallel.hpp"
#include "../node.hpp"
#include "../ops.hpp"

namespace tapegrad {

namespace {

constexpr const char* kOp = "rotary_embedding";

// cos and sin of p·ω_i for the T positions offset..offset+T-1 and the D/2 frequencies, in
// double (the angle of a late position is large: rounding it in float32 would cost digits).
struct RotaryTable {
  std::vector<double> cos, sin;  // (T, D/2), row-major
};

RotaryTable rotary_table(std::int64_t T, std::int64_t D, std::int64_t offset, double theta, bool inverse) {
  const std::int64_t half = D / 2;
  RotaryTable table{std::vector<double>(T * half), std::vector<double>(T * half)};
  for (std::int64_t i = 0; i < half; ++i) {
    const double omega = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(D));
    for (std::int64_t t = 0; t < T; ++t) {
      const double angle = static_cast<double>(offset + t) * omega;
      table.cos[t * half + i] = std::cos(angle);
      table.sin[t * half + i] = inverse ? -std::sin(angle) : std::sin(angle);
    }
  }
  return table;
}

// y = x rotated, x and y contiguous (B, T, N, D); heads n >= rotate_heads are copied as they are.
template <typename T>
void rotate(T* y, const T* x, std::int64_t B, std::int64_t Tn, std::int64_t N, std::int64_t D,
            std::int64_t rotate_heads, bool interleaved, const RotaryTable& table) {
  const std::int64_t half = D / 2, rows = B * Tn;
  // a pair's two coordinates: (i, i + D/2) or (2i, 2i + 1)
  const std::int64_t first_step = interleaved ? 2 : 1, second_offset = interleaved ? 1 : half;
  parallel_region_if(rows * N * D > kParallelGrain, [&] {
#pragma omp for nowait
    for (std::int64_t row = 0; row < rows; ++row) {
      const std::int64_t t = row % Tn;
      const double* c = table.cos.data() + t * half;
      const double* s = table.sin.data() + t * half;
      for (std::int64_t n = 0; n < N; ++n) {
        const T* xh = x + (row * N + n) * D;
        T* yh = y + (row * N + n) * D;
        if (n >= rotate_heads) {
          std::copy(xh, xh + D, yh);
          continue;
        }
        for (std::int64_t i = 0; i < half; ++i) {
          const std::int64_t ia = i * first_step, ib = ia + second_offset;
          const T a = xh[ia], b = xh[ib], ci = static_cast<T>(c[i]), si = static_cast<T>(s[i]);
          yh[ia] = a * ci - b * si;
          yh[ib] = b * ci + a * si;
        }
      }
    }
  });
}

}  // namespace

Tensor rotary_embedding(const Tensor& x, const RotaryOptions& options) {
  if (x.dim() != 4)
    throw ShapeError(std::string(kOp) + ": x must be 4-d (B, T, heads, D), got " + shape_str(x.shape()));
  if (!is_floating(x.dtype()))
    throw DTypeError(std::string(kOp) + ": x must be float32 or float64, got " + dtype_name(x.dtype()));
  const std::int64_t B = x.size(0), T = x.size(1), N = x.size(2), D = x.size(3);
  if (D % 2 != 0)
    throw ShapeError(std::string(kOp) + ": the head dim D must be even (pairs of coordinates rotate), got D = " +
                     std::to_string(D) + " in " + shape_str(x.shape()));
  if (!(options.theta > 1.0))  // also rejects NaN
    throw ValueError(std::string(kOp) + ": theta (the frequency base) must be > 1, got " + std::to_string(options.theta));
  if (options.offset < 0)
    throw ValueError(std::string(kOp) + ": offset (the position of the first token) must be >= 0, got " +
                     std::to_string(options.offset));
  const std::int64_t rotate_heads = options.rotate_heads < 0 ? N : options.rotate_heads;
  if (rotate_heads > N)
    throw ValueError(std::string(kOp) + ": rotate_heads = " + std::to_string(rotate_heads) + " but x has " +
                     std::to_string(N) + " heads (" + shape_str(x.shape()) + ")");

  const RotaryTable table = rotary_table(T, D, options.offset, options.theta, options.inverse);
  const Tensor xc = x.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  dispatch_floating(x.dtype(), kOp, [&]<typename S>() {
    rotate(y.data<S>(), xc.data<S>(), B, T, N, D, rotate_heads, options.interleaved, table);
  });

  if (!should_record({x})) return y;
  record(y, kOp, {x}, [options](const Tensor& dout) -> TensorList {
    RotaryOptions back = options;  // dx = R(−p·ω)·dy: R is orthogonal, Rᵀ = R(−angle)
    back.inverse = !options.inverse;
    return {rotary_embedding(dout, back)};  // recorded under create_graph: differentiable again
  }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(y, [options](const TensorList& t) { return rotary_embedding(t[0], options); });  // linear in x
  return y;
}

}  // namespace tapegrad
