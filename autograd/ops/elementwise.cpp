// elementwise.cpp — add, sub, mul, div, pow with NumPy broadcasting, and their scalar forms.
//
// Forward: out[i] = f(a[ia], b[ib]) over the broadcast shape, reading a and b through
// strides (a broadcast dim has stride 0, so nothing is copied).
// Forward rules (jvp): each input's tangent is broadcast to the output's shape, as the input is:
//   add: da + db,  sub: da - db,  mul: da·b + a·db,  div: (da - out·db) / b,
//   pow: b·a^(b-1)·da + out·log(a)·db
// Backward: the gradient of each input has the output's shape and is summed back to the
// input's shape (sum_to_shape), the reverse of broadcasting:
//   add: da = dout,        db = dout
//   sub: da = dout,        db = -dout
//   mul: da = dout · b,    db = dout · a
//   div: da = dout / b,    db = -dout · a / b² = -dout · out / b
//   pow: da = dout · b · a^(b-1),   db = dout · out · log(a)
#include <cmath>

#include "../cpu/parallel.hpp"
#include "../forward_ad.hpp"
#include "../grad_mode.hpp"
#include "../node.hpp"
#include "../ops.hpp"
#include "../shape.hpp"

namespace tapegrad {

namespace {

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype())
    throw DTypeError(std::string(op) + ": dtypes differ (" + dtype_name(a.dtype()) + " " +
                     shape_str(a.shape()) + " and " + dtype_name(b.dtype()) + " " +
                     shape_str(b.shape()) + "); convert one with .to()");
}

// out = f(a, b) elementwise over the broadcast shape.
template <typename F>
Tensor binary_forward(const Tensor& a, const Tensor& b, const char* op, F f) {
  check_same_dtype(a, b, op);
  const Shape out_shape = broadcast_shapes(a.shape(), b.shape(), op);
  Tensor out = Tensor::empty(out_shape, a.dtype());
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out.data<T>();
    const std::int64_t n = out.numel();
    const bool a_full = a.is_contiguous() && a.shape() == out_shape;
    const bool b_full = b.is_contiguous() && b.shape() == out_shape;
    if (a_full && b_full) {  // the common case: same shapes, no broadcasting
      parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for simd nowait
        for (std::int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
      });
    } else if (a_full && b.numel() == 1) {  // tensor op scalar
      const T s = pb[0];
      parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for simd nowait
        for (std::int64_t i = 0; i < n; ++i) po[i] = f(pa[i], s);
      });
    } else {  // general broadcasting through strides
      const Shape sa = broadcast_strides(a.shape(), a.strides(), out_shape);
      const Shape sb = broadcast_strides(b.shape(), b.strides(), out_shape);
      const std::int64_t ndim = static_cast<std::int64_t>(out_shape.size());
      const std::int64_t inner = ndim ? out_shape[ndim - 1] : 1;
      const std::int64_t ia = ndim ? sa[ndim - 1] : 0, ib = ndim ? sb[ndim - 1] : 0;
      const std::int64_t rows = inner ? n / inner : 0;
      parallel_region_if(n > kParallelGrain, [&] {
#pragma omp for nowait
        for (std::int64_t r = 0; r < rows; ++r) {
          // decode the row number into offsets of a and b
          std::int64_t rest = r, oa = 0, ob = 0;
          for (std::int64_t d = ndim - 2; d >= 0; --d) {
            const std::int64_t idx = rest % out_shape[d];
            rest /= out_shape[d];
            oa += idx * sa[d];
            ob += idx * sb[d];
          }
          T* row = po + r * inner;
          for (std::int64_t j = 0; j < inner; ++j) row[j] = f(pa[oa + j * ia], pb[ob + j * ib]);
        }
      });
    }
  });
  return out;
}

Tensor scalar_like(const Tensor& a, double value) { return scalar_tensor(value, a.dtype()); }

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(a, b, "add", [](auto x, auto y) { return x + y; });
  if (!should_record({a, b})) return out;
  record(out, "add", {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& dout) -> TensorList {
    return {sum_to_shape(dout, sa), sum_to_shape(dout, sb)};
  }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [shape = out.shape()](const TensorList& t) {
    return detail::tangent_to_shape(detail::tangent_sum(t[0], t[1]), shape);
  });
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(a, b, "sub", [](auto x, auto y) { return x - y; });
  if (!should_record({a, b})) return out;
  const bool need_b = b.requires_grad();
  record(out, "sub", {a, b},
         [sa = a.shape(), sb = b.shape(), need_b](const Tensor& dout) -> TensorList {
           return {sum_to_shape(dout, sa), need_b ? sum_to_shape(neg(dout), sb) : Tensor()};
         }, DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [shape = out.shape()](const TensorList& t) {
    return detail::tangent_to_shape(detail::tangent_sum(t[0], t[1].defined() ? neg(t[1]) : Tensor()), shape);
  });
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(a, b, "mul", [](auto x, auto y) { return x * y; });
  if (!should_record({a, b})) return out;
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  // Save only what each gradient needs: da needs b, db needs a.
  record(out, "mul", {a, b},
         [a = need_b ? a : Tensor(), b = need_a ? b : Tensor(), need_a, need_b,
          sa = a.shape(), sb = b.shape()](const Tensor& dout) -> TensorList {
           return {need_a ? sum_to_shape(mul(dout, b), sa) : Tensor(),
                   need_b ? sum_to_shape(mul(dout, a), sb) : Tensor()};
         }, DoubleBackward::supported, Saves::inputs);
  if (forward_rules_wanted()) record_forward(out, [a, b, shape = out.shape()](const TensorList& t) {
    return detail::tangent_to_shape(detail::tangent_sum(t[0].defined() ? mul(t[0], b) : Tensor(), t[1].defined() ? mul(a, t[1]) : Tensor()), shape);
  });
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(a, b, "div", [](auto x, auto y) { return x / y; });
  if (!should_record({a, b})) return out;
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  record(out, "div", {a, b},
         [b, out = need_b ? out.detach() : Tensor(), need_a, need_b, sa = a.shape(),
          sb = b.shape()](const Tensor& dout) -> TensorList {
           Tensor da = need_a ? sum_to_shape(div(dout, b), sa) : Tensor();
           Tensor db = need_b ? sum_to_shape(neg(div(mul(dout, saved_output(out)), b)), sb) : Tensor();
           return {da, db};
         }, DoubleBackward::supported);
  if (forward_rules_wanted()) record_forward(out, [b, out = out.detach(), shape = out.shape()](const TensorList& t) {
    return detail::tangent_to_shape(div(detail::tangent_sum(t[0], t[1].defined() ? neg(mul(out, t[1])) : Tensor()), b), shape);
  });
  return out;
}

Tensor pow(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(a, b, "pow", [](auto x, auto y) { return std::pow(x, y); });
  if (!should_record({a, b})) return out;
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  record(out, "pow", {a, b},
         [a, b, out = out.detach(), need_a, need_b, sa = a.shape(),
          sb = b.shape()](const Tensor& dout) -> TensorList {
           Tensor da, db;
           if (need_a) da = sum_to_shape(mul(dout, mul(b, pow(a, sub(b, 1.0)))), sa);
           if (need_b) db = sum_to_shape(mul(dout, mul(saved_output(out), log(a))), sb);
           return {da, db};
         }, DoubleBackward::supported);
  if (forward_rules_wanted()) record_forward(out, [a, b, out = out.detach(), shape = out.shape()](const TensorList& t) {
    return detail::tangent_to_shape(detail::tangent_sum(t[0].defined() ? mul(t[0], mul(b, pow(a, sub(b, 1.0)))) : Tensor(),
                         t[1].defined() ? mul(t[1], mul(out, log(a))) : Tensor()),
                    shape);
  });
  return out;
}

Tensor pow(const Tensor& a, double exponent) {
  Tensor out = binary_forward(a, scalar_like(a, exponent), "pow",
                              [](auto x, auto y) { return std::pow(x, y); });
  if (!should_record({a})) return out;
  // d/da a^p = p · a^(p-1)
  record(out, "pow", {a}, [a, exponent](const Tensor& dout) -> TensorList {
    return {mul(dout, mul(pow(a, exponent - 1.0), exponent))};
  }, DoubleBackward::supported, Saves::inputs);
  if (forward_rules_wanted()) record_forward(out, [a, exponent](const TensorList& t) { return mul(t[0], mul(pow(a, exponent - 1.0), exponent)); });
  return out;
}

Tensor add(const Tensor& a, double b) { return add(a, scalar_like(a, b)); }
Tensor sub(const Tensor& a, double b) { return sub(a, scalar_like(a, b)); }
Tensor rsub(double a, const Tensor& b) { return sub(scalar_like(b, a), b); }
Tensor mul(const Tensor& a, double b) { return mul(a, scalar_like(a, b)); }
Tensor div(const Tensor& a, double b) { return div(a, scalar_like(a, b)); }
Tensor rdiv(double a, const Tensor& b) { return div(scalar_like(b, a), b); }
Tensor neg(const Tensor& a) { return mul(a, -1.0); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, double b) { return add(a, b); }
Tensor operator-(const Tensor& a, double b) { return sub(a, b); }
Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
Tensor operator/(const Tensor& a, double b) { return div(a, b); }
Tensor operator+(double a, const Tensor& b) { return add(b, a); }
Tensor operator-(double a, const Tensor& b) { return rsub(a, b); }
Tensor operator*(double a, const Tensor& b) { return mul(b, a); }
Tensor operator/(double a, const Tensor& b) { return rdiv(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }

}  // namespace tapegrad
