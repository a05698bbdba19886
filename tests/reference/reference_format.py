"""reference_format.py — writes the text format that tests/support/reference.hpp reads.

    tapegrad-reference 1
    # written by <script> with torch <version>
    <name> <float64|int64> <ndim> <d0> <d1> ...
    <values, space-separated; floats with repr() precision, exact for float64>
    ...

Shared by the make_*_reference.py scripts of this folder (run with Debian's /usr/bin/python3).
"""
import os
import sys

import torch


def write_reference(path, entries, script):
    """entries: list of (name, tensor) with float64 or int64 tensors."""
    lines = [
        "tapegrad-reference 1",
        f"# written by tests/reference/{script} with torch {torch.__version__}",
    ]
    for name, t in entries:
        dtype = {torch.float64: "float64", torch.int64: "int64"}[t.dtype]
        lines.append(" ".join([name, dtype, str(t.dim())] + [str(s) for s in t.shape]))
        values = t.reshape(-1).tolist()
        if t.dtype == torch.float64:
            lines.append(" ".join(repr(float(v)) for v in values))
        else:
            lines.append(" ".join(str(int(v)) for v in values))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(entries)} tensors to {os.path.relpath(path)}", file=sys.stderr)
