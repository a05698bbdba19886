# reference_cases.py — what the tensor exercises' make_reference.py scripts share: one reference
# case of a two-input op as a C++ learn::grading::BinaryCase (grading.hpp), for reference.inc.
import torch


def values(numbers):
    """a C++ braced list of the numbers, each to 17 digits (a double's every bit)"""
    return "{" + ", ".join("%.17g" % v for v in numbers) + "}"


def binary_case(name, op, a_shape, b_shape, seed):
    """random a and b (float64, seeded), weights R, L = sum(R * op(a, b)) and PyTorch's dL/da, dL/db,
    as `const learn::grading::BinaryCase <name> = {...};`"""
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(tuple(a_shape), generator=gen, dtype=torch.float64, requires_grad=True)
    b = torch.randn(tuple(b_shape), generator=gen, dtype=torch.float64, requires_grad=True)
    out = op(a, b)
    r = torch.randn(tuple(out.shape), generator=gen, dtype=torch.float64)
    (out * r).sum().backward()
    fields = [values(a.shape), values(a.detach().reshape(-1).tolist()), values(b.shape),
              values(b.detach().reshape(-1).tolist()), values(r.shape), values(r.reshape(-1).tolist()),
              values(a.grad.reshape(-1).tolist()), values(b.grad.reshape(-1).tolist())]
    return ("// a %s, b %s\nconst learn::grading::BinaryCase %s = {\n    %s};\n"
            % (list(a_shape), list(b_shape), name, ",\n    ".join(fields)))


def header(script):
    return ("// reference.inc — PyTorch's values (torch %s), written by make_reference.py; do not edit.\n"
            "// Rerun from the repository's root with Debian's python3-torch:\n"
            "//   /usr/bin/python3 %s\n" % (torch.__version__, script))
