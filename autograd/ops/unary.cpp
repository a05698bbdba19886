// unary.cpp — elementwise functions of one tensor. Each forward is y = f(x); each backward
// is dx = dout · f'(x), computed in one fused loop from what the forward saved (x or y,
// whichever gives the derivative more cheaply):
//   exp:     f' = y                  log:   f' = 1/x
//   sqrt:    f' = 1/(2y)             rsqrt: f' = -y³/2
//   abs:     f' = sign(x)            tanh:  f' = 1 - y²
//   sigmoid: f' = y(1 - y)           relu:  f' = [x > 0]
//   silu:    f' = s(1 + x(1 - s)), s = sigmoid(x)
//   gelu:    f' = Φ(x) + x·φ(x) (exact), or the derivative of the tanh form
//   erf:     f' = 2/√π · exp(−x²)
//   clamp:   f' = [lo <= x <= hi]
// When the backward pass is recorded (create_graph), f' is computed with differentiable ops
// instead (record_unary), so these derivatives can be differentiated again.
#include <cmath>
#include <numbers>

#include "../cpu/parallel.hpp"
#include "../cpu/vec_math.hpp"
#include "../grad_mode.hpp"
#include "../node.hpp"
#include "../ops.hpp"
#include "gelu.hpp"

namespace tapegrad {

namespace {

// y = f(x) over a contiguous copy of x.
template <typename F>
Tensor unary_forward(const Tensor& x, const char* op, F f) {
  const Tensor xc = x.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  dispatch_floating(x.dtype(), op, [&]<typename T>() {
    const T* px = xc.data<T>();
    T* py = y.data<T>();
    const std::int64_t n = y.numel();
    parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for simd nowait
      for (std::int64_t i = 0; i < n; ++i) py[i] = f(px[i]);
    });
  });
  return y;
}

// dx = dout · dfdx(saved) elementwise, with `saved` the x or y kept by the forward.
template <typename F>
Tensor unary_backward(const Tensor& dout, const Tensor& saved, const char* op, F dfdx) {
  const Tensor g = dout.contiguous();
  Tensor dx = Tensor::empty(saved.shape(), saved.dtype());
  dispatch_floating(saved.dtype(), op, [&]<typename T>() {
    const T* pg = g.data<T>();
    const T* ps = saved.data<T>();
    T* pd = dx.data<T>();
    const std::int64_t n = dx.numel();
    parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for simd nowait
      for (std::int64_t i = 0; i < n; ++i) pd[i] = pg[i] * dfdx(ps[i]);
    });
  });
  return dx;
}

// f' as a tensor, computed by the raw loop (no graph): for the piecewise linear functions
// (abs, relu, clamp), whose derivative is constant where it exists, this is also the
// differentiable form (their second derivative is 0 almost everywhere, as in PyTorch).
template <typename F>
Tensor constant_derivative(const Tensor& saved, const char* op, F dfdx) {
  NoGradGuard no_grad;
  const Tensor xc = saved.contiguous();
  return unary_backward(ones(saved.shape(), saved.dtype()), xc, op, dfdx);
}

// Records y = f(x). The backward is dx = dout · f', the forward rule dy = f' · dx, with f' read from the saved input
// (save_output = false) or output (save_output = true): in one fused loop (dfdx) normally,
// and as derivative(saved), the same f' written with differentiable ops, when the backward
// pass is recorded (create_graph) — then saved is the output with its graph (saved_output).
template <typename DF, typename DG>
Tensor record_unary(Tensor y, const Tensor& x, const char* op, bool save_output, DF dfdx, DG derivative) {
  if (!should_record({x})) return y;
  Tensor saved = save_output ? y.detach() : x;
  record(y, op, {x}, [saved, op, dfdx, derivative, save_output](const Tensor& dout) -> TensorList {
    if (is_grad_enabled()) return {mul(dout, derivative(save_output ? saved_output(saved) : saved))};
    return {unary_backward(dout, saved.contiguous(), op, dfdx)};
  }, DoubleBackward::supported, save_output ? Saves::output : Saves::inputs);
  // Forward mode: the Jacobian of an elementwise f is diagonal, so J·t = f' ⊙ t, the backward's
  // own formula applied to the tangent.
  if (forward_rules_wanted()) record_forward(y, [saved, derivative](const TensorList& t) { return mul(t[0], derivative(saved)); });
  return y;
}

// For the piecewise linear functions: the differentiable derivative is the constant one.
template <typename DF>
Tensor record_piecewise_linear(Tensor y, const Tensor& x, const char* op, DF dfdx) {
  return record_unary(y, x, op, false, dfdx,
                      [op, dfdx](const Tensor& x) { return constant_derivative(x, op, dfdx); });
}

// gelu's derivative as an op of its own (exact form), so that it is differentiable in turn:
//   g(x) = Φ(x) + x·φ(x),   g'(x) = 2φ(x) + x·φ'(x) = φ(x)·(2 − x²)   (φ' = −x·φ)
Tensor gelu_derivative(const Tensor& x) {
  using std::numbers::inv_sqrtpi;
  using std::numbers::sqrt2;
  Tensor g = unary_forward(x, "gelu_derivative", [](auto x) { return gelu_math::exact_slope(x); });
  if (!should_record({x})) return g;
  record(g, "gelu_derivative", {x}, [x](const Tensor& dout) -> TensorList {
    const Tensor x2 = mul(x, x);
    const Tensor pdf = mul(exp(mul(x2, -0.5)), inv_sqrtpi / sqrt2);
    return {mul(dout, mul(pdf, rsub(2.0, x2)))};
  }, DoubleBackward::supported, Saves::inputs);
  if (forward_rules_wanted()) record_forward(g, [x](const TensorList& t) {  // diagonal: the same formula on the tangent
    const Tensor x2 = mul(x, x);
    return mul(t[0], mul(mul(exp(mul(x2, -0.5)), inv_sqrtpi / sqrt2), rsub(2.0, x2)));
  });
  return g;
}

}  // namespace

Tensor exp(const Tensor& x) {
  Tensor y = unary_forward(x, "exp", [](auto v) { return vec::exp(v); });
  return record_unary(y, x, "exp", true, [](auto y) { return y; }, [](const Tensor& y) { return y; });
}

Tensor log(const Tensor& x) {
  Tensor y = unary_forward(x, "log", [](auto v) { return std::log(v); });
  return record_unary(y, x, "log", false, [](auto x) { return 1 / x; }, [](const Tensor& x) { return rdiv(1.0, x); });
}

Tensor sqrt(const Tensor& x) {
  Tensor y = unary_forward(x, "sqrt", [](auto v) { return std::sqrt(v); });
  return record_unary(y, x, "sqrt", true, [](auto y) { return 1 / (2 * y); },
                      [](const Tensor& y) { return rdiv(0.5, y); });
}

Tensor rsqrt(const Tensor& x) {
  Tensor y = unary_forward(x, "rsqrt", [](auto v) { return 1 / std::sqrt(v); });
  return record_unary(y, x, "rsqrt", true, [](auto y) { return -y * y * y / 2; },
                      [](const Tensor& y) { return mul(pow(y, 3.0), -0.5); });
}

Tensor abs(const Tensor& x) {
  Tensor y = unary_forward(x, "abs", [](auto v) { return std::abs(v); });
  return record_piecewise_linear(y, x, "abs", [](auto x) { return decltype(x)((x > 0) - (x < 0)); });
}

Tensor tanh(const Tensor& x) {
  Tensor y = unary_forward(x, "tanh", [](auto v) { return std::tanh(v); });
  return record_unary(y, x, "tanh", true, [](auto y) { return 1 - y * y; },
                      [](const Tensor& y) { return rsub(1.0, mul(y, y)); });
}

Tensor sigmoid(const Tensor& x) {
  Tensor y = unary_forward(x, "sigmoid", [](auto v) { return 1 / (1 + vec::exp(-v)); });
  return record_unary(y, x, "sigmoid", true, [](auto y) { return y * (1 - y); },
                      [](const Tensor& y) { return mul(y, rsub(1.0, y)); });
}

Tensor relu(const Tensor& x) {
  Tensor y = unary_forward(x, "relu", [](auto v) { return v > 0 ? v : decltype(v)(0); });
  return record_piecewise_linear(y, x, "relu", [](auto x) { return decltype(x)(x > 0); });
}

Tensor silu(const Tensor& x) {
  Tensor y = unary_forward(x, "silu", [](auto v) { return v / (1 + vec::exp(-v)); });
  return record_unary(
      y, x, "silu", false,
      [](auto x) {
        const auto s = 1 / (1 + vec::exp(-x));
        return s * (1 + x * (1 - s));
      },
      [](const Tensor& x) {
        const Tensor s = sigmoid(x);
        return mul(s, add(mul(x, rsub(1.0, s)), 1.0));
      });
}

Tensor gelu(const Tensor& x, const std::string& approximate) {
  if (approximate == "none") {
    Tensor y = unary_forward(x, "gelu", [](auto v) { return gelu_math::exact(v); });
    return record_unary(
        y, x, "gelu", false, [](auto x) { return gelu_math::exact_slope(x); },
        [](const Tensor& x) { return gelu_derivative(x); });
  }
  if (approximate == "tanh") {
    Tensor y = unary_forward(x, "gelu_tanh", [](auto v) { return gelu_math::tanh_form(v); });
    return record_unary(
        y, x, "gelu_tanh", false, [](auto x) { return gelu_math::tanh_form_slope(x); },
        [](const Tensor& x) {  // the same formula with tanh, mul and add
          using gelu_math::kTanhCubic;
          using gelu_math::kTanhScale;
          const Tensor x2 = mul(x, x);
          const Tensor t = tanh(mul(mul(add(mul(x2, kTanhCubic), 1.0), x), kTanhScale));
          const Tensor slope = mul(add(mul(x2, 3 * kTanhCubic), 1.0), kTanhScale);
          return add(mul(add(t, 1.0), 0.5), mul(mul(mul(x, rsub(1.0, mul(t, t))), 0.5), slope));
        });
  }
  throw ValueError("gelu: approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
}

// erf(x) = 2/√π ∫₀ˣ exp(−t²) dt, the rescaled normal CDF of Derf (nn/pointwise_norm.hpp).
// f' = 2/√π · exp(−x²) from the saved input; written with exp and mul it is differentiable in
// turn (f'' = −2x·f').
Tensor erf(const Tensor& x) {
  using std::numbers::inv_sqrtpi;
  Tensor y = unary_forward(x, "erf", [](auto v) { return std::erf(v); });
  return record_unary(
      y, x, "erf", false, [](auto x) { return decltype(x)(2 * inv_sqrtpi) * vec::exp(-x * x); },
      [](const Tensor& x) { return mul(exp(neg(mul(x, x))), 2 * inv_sqrtpi); });
}

Tensor clamp(const Tensor& x, std::optional<double> lo_opt, std::optional<double> hi_opt) {
  const double lo = lo_opt.value_or(-INFINITY), hi = hi_opt.value_or(INFINITY);
  if (lo > hi) throw ValueError("clamp: min " + std::to_string(lo) + " is greater than max " + std::to_string(hi));
  Tensor y = unary_forward(x, "clamp", [lo, hi](auto v) {
    using T = decltype(v);
    return v < T(lo) ? T(lo) : (v > T(hi) ? T(hi) : v);
  });
  return record_piecewise_linear(y, x, "clamp", [lo, hi](auto x) {
    using T = decltype(x);
    return T(x >= T(lo) && x <= T(hi));
  });
}

}  // namespace tapegrad
