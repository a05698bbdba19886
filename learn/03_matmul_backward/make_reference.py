#!/usr/bin/env python3
# make_reference.py — PyTorch's gradients of exercise 3's products, the values test.cpp checks
# the student's backward against (reference.inc, which test.cpp #includes).
# Rerun from the repository's root with Debian's python3-torch:
#   /usr/bin/python3 learn/03_matmul_backward/make_reference.py
# Each case: random A and B (seeded), L = sum(R * (A @ B)), and PyTorch's dL/dA and dL/dB.
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the sources
sys.path.insert(0, os.path.join(here, "..", "grading"))
from reference import binary_case, header, write  # noqa: E402

text = header(__file__, "exercise 3's products")
text += binary_case("plain", lambda a, b: a @ b, (3, 4), (4, 2), 3)
text += binary_case("batched", lambda a, b: a @ b, (2, 3, 4), (4, 5), 33)
write(__file__, text)
