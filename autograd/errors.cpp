// errors.cpp — message helpers for the exception types.
#include "errors.hpp"

#include <cmath>
#include <sstream>

#include "dtype.hpp"

namespace tapegrad {

std::string shape_str(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string number_str(double value) {
  // "nan", never "-nan": a NaN's sign bit means nothing to the reader of a message
  if (std::isnan(value)) return "nan";
  std::ostringstream os;
  os << value;
  return os.str();
}

void throw_unsupported_dtype(const char* op, DType dtype) {
  throw DTypeError(std::string(op) + ": dtype " + dtype_name(dtype) +
                   " is not supported (expected float32 or float64)");
}

}  // namespace tapegrad
