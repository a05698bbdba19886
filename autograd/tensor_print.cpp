// tensor_print.cpp — std::cout << x in PyTorch's print format, so that a printed tensor reads as
// Python prints it:
//   tensor([[ 1.0000, -2.5000],
//           [ 3.0000,  4.2500]], dtype=torch.float64, requires_grad=True)
// Nested brackets, one innermost row per line, every value right-aligned to the widest; 4
// decimals, or scientific notation when the magnitudes span more than a factor of 1000 or
// reach past 1e8 or below 1e-4, or "1." when every value is a whole number; the dtype only
// when it is not the default of its kind (float32, int64); past 1000 elements, 3 values at
// each edge of a dim and "..." between. The grad_fn is the tape node's name (<mul>), where
// PyTorch names its backward class (<MulBackward0>).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "node.hpp"
#include "shape.hpp"
#include "tensor.hpp"

namespace tapegrad {

namespace {

enum class Style { integer, whole, fixed, scientific };

Style style_of(const std::vector<double>& v, DType dtype) {
  if (dtype == DType::int64) return Style::integer;
  double max_abs = 0, min_abs = INFINITY;
  bool whole = true;
  for (double x : v)
    if (std::isfinite(x)) {
      whole = whole && x == std::nearbyint(x);
      if (x != 0) max_abs = std::max(max_abs, std::abs(x)), min_abs = std::min(min_abs, std::abs(x));
    }
  if (max_abs == 0) return whole ? Style::whole : Style::fixed;  // all zeros (or not finite)
  if (whole) return max_abs >= 1e8 ? Style::scientific : Style::whole;
  return max_abs / min_abs > 1000 || max_abs >= 1e8 || min_abs < 1e-4 ? Style::scientific : Style::fixed;
}

std::string text_of(double x, Style style) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[48];
  switch (style) {
    case Style::integer: std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(x)); break;
    case Style::whole: std::snprintf(buf, sizeof buf, "%.0f.", x); break;
    case Style::fixed: std::snprintf(buf, sizeof buf, "%.4f", x); break;
    case Style::scientific: std::snprintf(buf, sizeof buf, "%.4e", x); break;
  }
  return buf;
}

struct Printer {
  const std::vector<std::string>& text;  // every value's text, row-major
  const Shape& shape;
  const Shape strides;
  std::size_t width = 0;
  bool summarize = false;

  // Calls fn(flat index) on the values printed (with summarize, 3 at each edge of each dim).
  template <typename Fn>
  void visit(std::size_t d, std::int64_t offset, Fn&& fn) const {
    if (d == shape.size()) return fn(offset);
    const std::int64_t n = shape[d];
    for (std::int64_t i = 0; i < n; ++i) {
      if (summarize && n > 6 && i == 3) i = n - 3;
      visit(d + 1, offset + i * strides[d], fn);
    }
  }

  void print(std::ostream& os, std::size_t d, std::int64_t offset, int indent) const {
    if (shape.empty()) {
      os << text[static_cast<std::size_t>(offset)];
      return;
    }
    os << '[';
    const std::int64_t n = shape[d];
    const bool innermost = d + 1 == shape.size();
    // between sub-tensors: a newline, and one more per dim below the next-to-innermost
    const std::string separator =
        innermost ? ", " : "," + std::string(shape.size() - d - 1, '\n') + std::string(static_cast<std::size_t>(indent + 1), ' ');
    for (std::int64_t i = 0; i < n; ++i) {
      if (summarize && n > 6 && i == 3) {
        os << (innermost ? " ..." : "...") << separator;  // PyTorch's own spacing
        i = n - 3;
      }
      if (innermost) {
        const std::string& t = text[static_cast<std::size_t>(offset + i * strides[d])];
        os << std::string(width - t.size(), ' ') << t;
      } else {
        print(os, d + 1, offset + i * strides[d], indent + 1);
      }
      if (i + 1 < n) os << separator;
    }
    os << ']';
  }
};

std::string torch_dtype(DType dtype) { return std::string("torch.") + dtype_name(dtype); }

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  const std::vector<double> v = t.to_vector<double>();
  std::string suffix;
  if (t.dtype() != DType::float32 && t.dtype() != DType::int64) suffix += ", dtype=" + torch_dtype(t.dtype());
  if (t.grad_fn()) suffix += ", grad_fn=<" + t.grad_fn()->name + ">";
  else if (t.requires_grad()) suffix += ", requires_grad=True";
  if (t.numel() == 0) {
    std::string size;
    if (t.dim() > 1) {
      size = ", size=(";
      for (std::int64_t d = 0; d < t.dim(); ++d) size += (d ? ", " : "") + std::to_string(t.shape()[d]);
      size += ")";
    }
    return os << "tensor([]" << size << suffix << ')';
  }
  const Style style = style_of(v, t.dtype());
  std::vector<std::string> text(v.size());
  Printer printer{text, t.shape(), contiguous_strides(t.shape())};
  printer.summarize = t.numel() > 1000;
  printer.visit(0, 0, [&](std::int64_t i) {
    text[static_cast<std::size_t>(i)] = text_of(v[static_cast<std::size_t>(i)], style);
    printer.width = std::max(printer.width, text[static_cast<std::size_t>(i)].size());
  });
  os << "tensor(";
  printer.print(os, 0, 0, 7);
  return os << suffix << ')';
}

}  // namespace tapegrad
