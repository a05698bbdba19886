// dropout.cpp — inverted dropout (Srivastava et al., 2014, scaled at training time):
//   mask[i] = (u_i >= p) / (1 - p) with u_i ~ U[0, 1) drawn from the generator
//   forward:  out = x · mask         backward: dx = dout · mask
// The expected value of out equals x, so evaluation needs no rescaling: out = x when not
// training (or when p = 0). p = 1 zeroes everything, as PyTorch. Not fused into other ops.
#include <sstream>

#include "../node.hpp"
#include "../ops.hpp"
#include "../random.hpp"

namespace tapegrad {

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  if (!(p >= 0.0 && p <= 1.0)) {  // also rejects NaN
    std::ostringstream msg;
    msg << "dropout: probability p must be in [0, 1], got " << p;
    throw ValueError(msg.str());
  }
  if (!is_floating(x.dtype()))
    throw DTypeError(std::string("dropout: expected a float32 or float64 tensor, got ") +
                     dtype_name(x.dtype()) + " of shape " + shape_str(x.shape()));
  if (!training || p == 0.0) return x;

  Generator& g = gen ? *gen : default_generator();
  const Tensor xc = x.detach().contiguous();
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  Tensor mask = Tensor::empty(x.shape(), x.dtype());  // 0 or 1/(1-p): the scaled mask
  dispatch_floating(x.dtype(), "dropout", [&]<typename T>() {
    const T* px = xc.data<T>();
    T* po = out.data<T>();
    T* pm = mask.data<T>();
    const std::int64_t n = x.numel();
    // p = 1 keeps nothing, and 1/(1-p) would be infinite: no draws, mask of zeros.
    const bool drop_all = p == 1.0;
    const T scale = drop_all ? T(0) : static_cast<T>(1.0 / (1.0 - p));
    // One draw per element in order, on one thread: the same seed gives the same mask
    // whatever the number of threads.
    for (std::int64_t i = 0; i < n; ++i) {
      pm[i] = drop_all || g.next_double() < p ? T(0) : scale;
      po[i] = px[i] * pm[i];
    }
  });

  if (!should_record({x})) return out;
  // Saves the mask, not x: the gradient only needs which elements were kept.
  record(out, "dropout", {x}, [mask](const Tensor& dout) -> TensorList { return {mul(dout, mask)}; },
         DoubleBackward::supported, Saves::nothing);
  if (forward_rules_wanted()) record_forward(out, [mask](const TensorList& t) { return mul(t[0], mask); });  // linear in x, mask fixed
  return out;
}

}  // namespace tapegrad
