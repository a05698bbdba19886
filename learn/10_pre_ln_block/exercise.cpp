// Exercise 10: one placement from its formula, the Pre-LN block. Read README.md beside this
// file first.
//
// The block's pieces are members, built for you (exercise.hpp): ln1, attn, ln2, ffn, each
// called with ->forward(h). Write
//   forward:      h = x + Attn(LN1(x)),   y = h + FFN(LN2(h))        (Pre-LN)
//   b2t_forward:  h = LN1(x + Attn(x)),   y = LN2(h + FFN(h) + x)    (B2T, optional)
#include "10_pre_ln_block/exercise.hpp"

namespace learn {

using namespace tapegrad;

Tensor PreLNBlock::forward(const Tensor& x) {
  (void)x;
  throw Todo("TODO exercise 10: return the Pre-LN block's y = h + FFN(LN2(h)), with h = x + Attn(LN1(x))");
}

Tensor PreLNBlock::b2t_forward(const Tensor& x) {
  (void)x;
  throw Todo("TODO exercise 10 (optional): return the B2T block's y = LN2(h + FFN(h) + x), with h = LN1(x + Attn(x))");
}

}  // namespace learn
