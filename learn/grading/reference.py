"""reference.py — what every exercise's make_reference.py shares: PyTorch's values written as a
C++ fragment, reference.inc, beside the script (test.cpp #includes it).

    text = header(__file__, "exercise 3's products")   # who made it, and how to remake it
    text += binary_case("plain", lambda a, b: a @ b, (3, 4), (4, 2), 3)
    text += arrays({"x": x, "targets": t}, ints=("targets",))
    write(__file__, text)

Numbers are written as Python's repr of a float, the shortest text that reads back as the
same double: the C++ test compares against PyTorch's very bits.
"""
import os

import torch


def values(numbers):
    """a C++ braced list: a tensor's elements (row-major) or a list of numbers; ints stay ints"""
    if isinstance(numbers, torch.Tensor):
        numbers = numbers.detach().reshape(-1).tolist()
    return "{" + ", ".join(str(v) if isinstance(v, int) else repr(float(v)) for v in numbers) + "}"


def header(script, about):
    """the first lines of reference.inc: what it holds, the torch that made it, how to remake it"""
    here = os.path.dirname(os.path.abspath(script))
    path = "learn/%s/%s" % (os.path.basename(here), os.path.basename(script))
    return ("// reference.inc — the values of PyTorch %s for %s, made by\n"
            "// make_reference.py beside this file; do not edit. Rerun from the repository's root with\n"
            "// Debian's python3-torch:  /usr/bin/python3 %s\n" % (torch.__version__, about, path))


def arrays(named, ints=()):
    """`const tapegrad::Shape <name>_shape` and `const std::vector<double> <name>` for each tensor;
    those named in ints are written as integers (class indices)"""
    lines = []
    for name, value in named.items():
        lines.append("const tapegrad::Shape %s_shape = %s;" % (name, values(list(value.shape))))
        numbers = value.detach().reshape(-1).tolist()
        lines.append("const std::vector<double> %s = %s;"
                     % (name, values([int(v) for v in numbers] if name in ints else [float(v) for v in numbers])))
    return "\n".join(lines) + "\n"


def binary_case(name, op, a_shape, b_shape, seed):
    """random a and b (float64, seeded), weights R, L = sum(R * op(a, b)) and PyTorch's dL/da, dL/db,
    as `const learn::grading::BinaryCase <name> = {...};` (grading.hpp)"""
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(tuple(a_shape), generator=gen, dtype=torch.float64, requires_grad=True)
    b = torch.randn(tuple(b_shape), generator=gen, dtype=torch.float64, requires_grad=True)
    out = op(a, b)
    r = torch.randn(tuple(out.shape), generator=gen, dtype=torch.float64)
    (out * r).sum().backward()
    fields = [values(list(a.shape)), values(a), values(list(b.shape)), values(b), values(list(r.shape)), values(r),
              values(a.grad), values(b.grad)]
    return ("// a %s, b %s\nconst learn::grading::BinaryCase %s = {\n    %s};\n"
            % (list(a_shape), list(b_shape), name, ",\n    ".join(fields)))


def write(script, text):
    """writes text to reference.inc beside script"""
    with open(os.path.join(os.path.dirname(os.path.abspath(script)), "reference.inc"), "w") as out:
        out.write(text)
