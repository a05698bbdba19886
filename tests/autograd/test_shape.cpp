// test_shape.cpp — shape.hpp's arithmetic that error messages lean on: unravel_index turns a
// flat row-major position into the index a message names.
#include <catch2/catch.hpp>

#include <tapegrad/tapegrad.hpp>

using namespace tapegrad;

TEST_CASE("unravel_index gives the row-major multi-index, as numpy.unravel_index", "[shape]") {
  CHECK(unravel_index(5, {2, 3}) == Shape{1, 2});
  CHECK(unravel_index(0, {2, 3}) == Shape{0, 0});
  CHECK(unravel_index(7, {2, 3, 4}) == Shape{0, 1, 3});
  CHECK(unravel_index(23, {2, 3, 4}) == Shape{1, 2, 3});
  CHECK(unravel_index(0, {}).empty());  // a 0-d tensor's one element
  // every position of a shape, in order, walks the odometer
  const Shape shape{3, 1, 2};
  for (std::int64_t flat = 0; flat < shape_numel(shape); ++flat) {
    const Shape i = unravel_index(flat, shape);
    CHECK((i[0] * 1 + i[1]) * 2 + i[2] == flat);
  }
}
