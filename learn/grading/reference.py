"""reference.py — writes an exercise's reference.inc: PyTorch's values as a C++ fragment.

Each exercise's make_reference.py computes its values with PyTorch in float64 and calls
write_inc(); test.cpp #includes the file it writes, inside namespace reference:

    const tapegrad::Shape x_shape = {3, 4};
    const std::vector<double> x = {...};   // 17 significant digits: the double, exactly
"""
import os


def write_inc(script, name, arrays, ints=()):
    """Writes reference.inc beside `script`: arrays maps a name to a float64 torch tensor, ints
    names those of them to write as integers (class indices)."""
    here = os.path.dirname(os.path.abspath(script))
    exercise = os.path.basename(here)
    lines = [
        f"// reference.inc — PyTorch's values for exercise {name}, made by make_reference.py beside",
        f"// this file. Do not edit: rerun  /usr/bin/python3 learn/{exercise}/make_reference.py",
        "// (Debian's python3-torch) from the repository's root.",
    ]
    for key, value in arrays.items():
        shape = ", ".join(str(d) for d in value.shape)
        lines.append(f"const tapegrad::Shape {key}_shape = {{{shape}}};")
        write = (lambda v: str(int(v))) if key in ints else (lambda v: repr(float(v)))
        numbers = ", ".join(write(v) for v in value.flatten().tolist())
        lines.append(f"const std::vector<double> {key} = {{{numbers}}};")
    with open(os.path.join(here, "reference.inc"), "w") as out:
        out.write("\n".join(lines) + "\n")
