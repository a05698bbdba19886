// gradcheck.cpp — analytic gradients against central differences: the full Jacobian, or one
// random projection of it per input (fast mode).
#include "gradcheck.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine.hpp"
#include "forward_ad.hpp"
#include "grad_mode.hpp"
#include "ops.hpp"
#include "random.hpp"

namespace tapegrad {

namespace {

// "[1, 2]" for the row-major index of flat element i in shape.
std::string index_str(std::int64_t i, const Shape& shape) { return shape_str(unravel_index(i, shape)); }

// The inputs gradcheck differentiates: defined and requiring grad.
bool checked(const Tensor& x) { return x.defined() && x.requires_grad(); }

void clear_grads(const TensorList& inputs) {
  for (const Tensor& x : inputs)
    if (x.defined()) x.impl().grad.reset();
}

// n positive entries of unit norm, as PyTorch's fast gradcheck draws its u and v: with no
// signs to cancel, Σu·Σv bounds vᵀEu for a matrix E of entries within ±1.
std::vector<double> random_unit_vector(std::int64_t n, Generator& gen) {
  std::vector<double> u = rand({n}, gen, DType::float64).to_vector();
  double norm = 0;
  for (double x : u) norm += x * x;
  norm = std::sqrt(norm);
  for (double& x : u) x /= norm;
  return u;
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

// The comparisons of one gradcheck: the largest |analytic - numerical|, and the report of the
// one that exceeds its tolerance most (a NaN, when it is the first failure, as infinitely far).
class Mismatches {
 public:
  // describe() writes the failure report; it is called only for a new worst mismatch.
  template <class Describe>
  void add(double err, double tolerance, Describe describe) {
    result_.max_abs_error = std::max(result_.max_abs_error, std::isnan(err) ? INFINITY : err);
    const double excess = err - tolerance;
    if (excess > worst_excess_ || (std::isnan(err) && result_.ok)) {
      result_.ok = false;
      worst_excess_ = std::isnan(err) ? INFINITY : excess;
      std::ostringstream report;
      describe(report);
      result_.report = report.str();
    }
  }

  // The result, with passed_prefix + the largest error as the report if nothing failed.
  GradcheckResult finish(const std::string& passed_prefix) {
    if (result_.ok) {
      std::ostringstream ok;
      ok << passed_prefix << result_.max_abs_error;
      result_.report = ok.str();
    }
    return result_;
  }

 private:
  GradcheckResult result_;
  double worst_excess_ = 0;
};

// gradcheck's fast mode (gradcheck.hpp): for each input k, vᵀJ_k u_k from one backward
// against central differences along u_k.
GradcheckResult fast_gradcheck(const GradcheckFn& fn, const TensorList& inputs, const Tensor& out,
                               const GradcheckOptions& opt) {
  Generator gen(20260102);
  const std::vector<double> v = random_unit_vector(out.numel(), gen);
  const double sum_v = sum(v);

  // vJ[k] = vᵀJ_k, the gradient of ⟨fn(inputs), v⟩ with respect to input k: one backward.
  std::vector<std::vector<double>> vJ(inputs.size());
  clear_grads(inputs);
  Tensor y = fn(inputs);
  if (y.requires_grad()) {  // otherwise the output is independent of every input: vJ = 0
    y.backward(tensor(v, y.shape(), DType::float64));
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (checked(inputs[k]) && inputs[k].grad().defined()) vJ[k] = inputs[k].grad().to_vector();
  }
  clear_grads(inputs);

  Mismatches mismatches;
  NoGradGuard no_grad;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (!checked(inputs[k])) continue;
    const Tensor& x = inputs[k];
    double* px = x.data<double>();
    const std::int64_t n = x.numel();
    const std::vector<double> u = random_unit_vector(n, gen);
    const std::vector<double> saved(px, px + n);
    for (std::int64_t i = 0; i < n; ++i) px[i] = saved[i] + opt.eps * u[i];
    const std::vector<double> plus = fn(inputs).to_vector();
    for (std::int64_t i = 0; i < n; ++i) px[i] = saved[i] - opt.eps * u[i];
    const std::vector<double> minus = fn(inputs).to_vector();
    std::copy(saved.begin(), saved.end(), px);

    double numerical = 0, analytic = 0;
    for (std::size_t j = 0; j < v.size(); ++j) numerical += v[j] * (plus[j] - minus[j]) / (2 * opt.eps);
    for (std::size_t i = 0; i < vJ[k].size(); ++i) analytic += vJ[k][i] * u[i];
    const double err = std::abs(analytic - numerical);
    const double atol = opt.atol * sum(u) * sum_v;
    if (opt.check_forward_ad) {  // vᵀ(J·u) from one jvp along u
      TensorList tangents(inputs.size());
      tangents[k] = tensor(u, x.shape(), DType::float64);
      const std::vector<double> Ju = jvp(fn, inputs, tangents).second.to_vector();
      double forward = 0;
      for (std::size_t j = 0; j < v.size(); ++j) forward += v[j] * Ju[j];
      const double ferr = std::abs(forward - numerical);
      mismatches.add(ferr, atol + opt.rtol * std::abs(numerical), [&](std::ostream& report) {
        report << "gradcheck (fast mode, forward mode) failed: input " << k << " (shape " << shape_str(x.shape())
               << "): jvp's vᵀJu " << forward << " but central difference gives " << numerical << " (|diff| " << ferr
               << " > " << atol << " + rtol " << opt.rtol << " * " << std::abs(numerical) << ")";
      });
    }
    mismatches.add(err, atol + opt.rtol * std::abs(numerical), [&](std::ostream& report) {
      report << "gradcheck (fast mode) failed: input " << k << " (shape " << shape_str(x.shape())
             << "): analytic vᵀJu " << analytic << " but central difference gives " << numerical << " (|diff| "
             << err << " > atol " << opt.atol << " * Σu * Σv = " << atol << " + rtol " << opt.rtol << " * "
             << std::abs(numerical) << "); run it without fast_mode to find the element";
    });
  }
  return mismatches.finish("gradcheck (fast mode) passed: max |analytic - numerical| of vᵀJu = ");
}

}  // namespace

GradcheckResult gradcheck(const GradcheckFn& fn, const TensorList& inputs, const GradcheckOptions& opt) {
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& x = inputs[k];
    if (!checked(x)) continue;
    if (x.dtype() != DType::float64)
      throw DTypeError("gradcheck: input " + std::to_string(k) + " is " + dtype_name(x.dtype()) +
                       "; finite differences need float64 inputs");
    if (!x.is_leaf() || !x.is_contiguous())
      throw ValueError("gradcheck: input " + std::to_string(k) + " must be a contiguous leaf tensor");
  }

  Tensor out = fn(inputs);
  if (out.dtype() != DType::float64)
    throw DTypeError(std::string("gradcheck: the function returned ") + dtype_name(out.dtype()) +
                     ", expected float64");
  if (opt.fast_mode) return fast_gradcheck(fn, inputs, out, opt);
  const std::int64_t m = out.numel();

  // analytic[k][j * n_k + i] = ∂out_j / ∂input_k[i], one backward per output element j.
  std::vector<std::vector<double>> analytic(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (checked(inputs[k])) analytic[k].assign(m * inputs[k].numel(), 0.0);
  for (std::int64_t j = 0; j < m; ++j) {
    clear_grads(inputs);
    Tensor y = fn(inputs);
    if (!y.requires_grad()) break;  // output independent of every input: all zeros
    std::vector<double> onehot(m, 0.0);
    onehot[j] = 1.0;
    y.backward(tensor(onehot, y.shape(), DType::float64));
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (analytic[k].empty() || !inputs[k].grad().defined()) continue;
      const std::vector<double> g = inputs[k].grad().to_vector();
      for (std::size_t i = 0; i < g.size(); ++i) analytic[k][j * g.size() + i] = g[i];
    }
  }
  clear_grads(inputs);

  Mismatches mismatches;
  NoGradGuard no_grad;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (analytic[k].empty()) continue;
    const Tensor& x = inputs[k];
    double* px = x.data<double>();
    const std::int64_t n = x.numel();
    for (std::int64_t i = 0; i < n; ++i) {
      const double saved = px[i];
      px[i] = saved + opt.eps;
      const std::vector<double> plus = fn(inputs).to_vector();
      px[i] = saved - opt.eps;
      const std::vector<double> minus = fn(inputs).to_vector();
      px[i] = saved;
      std::vector<double> column;  // J·e_i by forward mode, when asked
      if (opt.check_forward_ad) {
        TensorList tangents(inputs.size());
        tangents[k] = zeros_like(x);
        tangents[k].data<double>()[i] = 1.0;
        column = jvp(fn, inputs, tangents).second.to_vector();
      }
      for (std::int64_t j = 0; j < m; ++j) {
        const double numerical = (plus[j] - minus[j]) / (2 * opt.eps);
        if (!column.empty()) {
          const double ferr = std::abs(column[j] - numerical);
          mismatches.add(ferr, opt.atol + opt.rtol * std::abs(numerical), [&](std::ostream& report) {
            report << "gradcheck failed (forward mode): input " << k << " (shape " << shape_str(x.shape())
                   << ") element " << index_str(i, x.shape()) << ", output element " << index_str(j, out.shape())
                   << ": jvp gives " << column[j] << " but central difference gives " << numerical << " (|diff| "
                   << ferr << " > atol " << opt.atol << " + rtol " << opt.rtol << " * " << std::abs(numerical) << ")";
          });
        }
        const double a = analytic[k][j * n + i];
        const double err = std::abs(a - numerical);
        mismatches.add(err, opt.atol + opt.rtol * std::abs(numerical), [&](std::ostream& report) {
          report << "gradcheck failed: input " << k << " (shape " << shape_str(x.shape()) << ") element "
                 << index_str(i, x.shape()) << ", output element " << index_str(j, out.shape())
                 << ": analytic gradient " << a << " but central difference gives " << numerical
                 << " (|diff| " << err << " > atol " << opt.atol << " + rtol " << opt.rtol << " * "
                 << std::abs(numerical) << ")";
        });
      }
    }
  }
  return mismatches.finish("gradcheck passed: max |analytic - numerical| = ");
}

GradcheckResult gradgradcheck(const GradcheckFn& fn, const TensorList& inputs, const GradcheckOptions& opt) {
  Tensor v;
  {
    GradModeGuard recording(true);
    const Tensor y = fn(inputs);
    Generator gen(20260101);
    v = randn(y.shape(), gen, DType::float64);
  }
  // g(inputs): every input's ∂⟨fn, v⟩/∂input (those that require grad), flattened and joined.
  // It records its own graph whatever the caller's grad mode (gradcheck evaluates it under
  // NoGradGuard too).
  const GradcheckFn first_derivative = [&](const TensorList& in) {
    GradModeGuard recording(true);
    TensorList wanted;
    for (const Tensor& x : in)
      if (checked(x)) wanted.push_back(x);
    const Tensor y = fn(in);
    if (!y.requires_grad()) return zeros({1}, DType::float64);
    const TensorList g = grad({y}, wanted, {v}, {.retain_graph = true, .create_graph = true, .allow_unused = true});
    TensorList flat;
    for (std::size_t k = 0; k < g.size(); ++k)
      flat.push_back(g[k].defined() ? g[k].reshape({-1}) : zeros({wanted[k].numel()}, DType::float64));
    return cat(flat, 0);
  };
  GradcheckResult r = gradcheck(first_derivative, inputs, opt);
  r.report = (r.ok ? "gradgradcheck passed (" : "gradgradcheck failed (") + r.report + ")";
  return r;
}

}  // namespace tapegrad
