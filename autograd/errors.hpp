// errors.hpp — the exceptions tapegrad throws, and helpers that write their messages.
//
// Every message names the op and the shapes involved, e.g.
//   "add: shapes [2, 3] and [4] cannot be broadcast together (dim -1: 3 vs 4)".
// Catch tapegrad::Error to catch them all.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tapegrad {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Shapes that do not fit the op (broadcasting, matmul inner dims, reshape sizes, dims out of range).
class ShapeError : public Error {
 public:
  using Error::Error;
};
// A dtype the op does not accept, or two inputs whose dtypes differ.
class DTypeError : public Error {
 public:
  using Error::Error;
};
// Misuse of the autograd graph: backward without a gradient, through a freed graph, ...
class GraphError : public Error {
 public:
  using Error::Error;
};
// A bad argument value (negative probability, eps <= 0, index out of range, ...).
class ValueError : public Error {
 public:
  using Error::Error;
};

// "[2, 3]"
std::string shape_str(const std::vector<std::int64_t>& shape);
// A number as error messages show it: "0.001", "-1", "nan".
std::string number_str(double value);

}  // namespace tapegrad
