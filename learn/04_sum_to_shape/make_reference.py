#!/usr/bin/env python3
# make_reference.py — PyTorch's values for exercise 4 (reference.inc, which test.cpp #includes):
# Tensor.sum_to_size, PyTorch's sum_to_shape, on a gradient, and the gradients of a broadcasting
# add and mul.
# Rerun from the repository's root with Debian's python3-torch:
#   /usr/bin/python3 learn/04_sum_to_shape/make_reference.py
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the sources
sys.path.insert(0, os.path.join(here, "..", "grading"))
from reference import binary_case, header, values, write  # noqa: E402


def sum_case(name, grad_shape, shape, seed):
    grad = torch.randn(tuple(grad_shape), generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    want = grad.sum_to_size(shape)
    return ("// grad %s summed to %s by torch's sum_to_size\nconst SumCase %s = {%s, %s, %s, %s};\n"
            % (list(grad_shape), list(shape), name, values(list(grad_shape)), values(grad), values(list(shape)), values(want)))


text = header(__file__, "exercise 4 (sum_to_shape and broadcasting gradients)")
text += sum_case("to_4_1", (2, 4, 3), (4, 1), 4)
text += sum_case("to_2_1_3", (5, 2, 4, 3), (2, 1, 3), 44)
text += binary_case("add_2_1_3_and_4_1", torch.add, (2, 1, 3), (4, 1), 5)
text += binary_case("mul_3_1_and_2_1_4", torch.mul, (3, 1), (2, 1, 4), 6)
text += binary_case("mul_0d_and_2_3", torch.mul, (), (2, 3), 7)
write(__file__, text)
