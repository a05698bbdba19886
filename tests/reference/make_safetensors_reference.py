#!/usr/bin/env python3
"""Writes tests/reference/torch_model.safetensors and tests/reference/safetensors_reference.txt:
a small PyTorch model's weights in the safetensors format, and the values tapegrad must read.

Regenerate (from the repository root, with an interpreter that has torch, e.g. Debian's
python3-torch):

    /usr/bin/python3 tests/reference/make_safetensors_reference.py

and commit both files with this script. tests/io/test_safetensors.cpp reads them and needs
no Python.

Debian's torch 1.13 has no `safetensors` package, so the format is written here by hand, from
its specification (https://github.com/huggingface/safetensors):

    u64 N, little-endian | N bytes of UTF-8 JSON header | raw little-endian tensor bytes

    header: {"__metadata__": {str: str}, <name>: {"dtype": "F32" | "F64" | "I64",
             "shape": [dims], "data_offsets": [begin, end]}, ...}

data_offsets are byte offsets into the data after the header. The layout chosen here is the
one tapegrad writes too, so that a file read by tapegrad and written back is byte-identical:
compact JSON (separators "," and ":"), "__metadata__" first, the tensors in state_dict
order with their data in the same order, the header padded with spaces to a multiple of 8
bytes (as the Rust reference implementation does).

Contents:
  - the state_dict of torch.nn.Sequential(Linear(3, 4), LayerNorm(4), Linear(4, 2)), float32,
    named "0.weight", "0.bias", "1.weight", "1.bias", "2.weight", "2.bias" (tapegrad's
    nn::Sequential of the same layers has the same names);
  - "extra.f64" (float64, 2x2), "extra.i64" (int64, values beyond 2^53 and negative),
    "extra.scalar" (float32, 0-d) and "extra.empty" (float32, 0x3), to cover the other
    dtypes and edge shapes (tapegrad's model reports them as unexpected keys).

safetensors_reference.txt (the format of make_reference.py) holds every tensor's values
under "tensor.<name>" (float32 values are exact in float64), plus an input "x" (5, 3) and
the model's float32 output "y" = model(x).

    /usr/bin/python3 tests/reference/make_safetensors_reference.py --check FILE

reads FILE with the same hand-written reader into torch tensors and prints them: use it to
check that a file written by tapegrad loads in PyTorch.
"""

import json
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_SAFETENSORS = os.path.join(HERE, "torch_model.safetensors")
OUT_REFERENCE = os.path.join(HERE, "safetensors_reference.txt")

DTYPES = {torch.float32: ("F32", "<f4"), torch.float64: ("F64", "<f8"), torch.int64: ("I64", "<i8")}
FROM_CODE = {"F32": (torch.float32, "<f4"), "F64": (torch.float64, "<f8"), "I64": (torch.int64, "<i8")}


def write_safetensors(path, tensors, metadata):
    """tensors: list of (name, tensor); metadata: dict of str -> str (may be empty)."""
    header = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    blobs, offset = [], 0
    for name, t in tensors:
        code, np_dtype = DTYPES[t.dtype]
        data = np.ascontiguousarray(t.detach().cpu().numpy()).astype(np_dtype).tobytes()
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def write_hf_folder(folder, config, tensors):
    """A Hugging Face model folder as tapegrad's exporters write it: config.json as
    PretrainedConfig.to_json_file (json.dumps, indent=2, sorted keys) and model.safetensors with
    save_pretrained's {"format": "pt"} metadata. tensors: list of (name, tensor)."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, {"format": "pt"})


def read_safetensors(path):
    """Returns (list of (name, tensor) in data order, metadata dict)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    data = raw[8 + n :]
    metadata = header.pop("__metadata__", {})
    tensors = []
    for name, info in sorted(header.items(), key=lambda item: item[1]["data_offsets"]):
        dtype, np_dtype = FROM_CODE[info["dtype"]]
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[begin:end], dtype=np_dtype).reshape(info["shape"])
        tensors.append((name, torch.from_numpy(array.copy()).to(dtype)))
    return tensors, metadata


def check(path):
    tensors, metadata = read_safetensors(path)
    print(f"metadata: {metadata}")
    for name, t in tensors:
        print(f"{name} {t.dtype} {list(t.shape)}\n{t}")


def write_reference(path, entries):
    lines = [
        "tapegrad-reference 1",
        f"# written by tests/reference/make_safetensors_reference.py with torch {torch.__version__}",
    ]
    for name, t in entries:
        dtype = "int64" if t.dtype == torch.int64 else "float64"
        lines.append(" ".join([name, dtype, str(t.dim())] + [str(s) for s in t.shape]))
        values = t.reshape(-1).tolist()
        if dtype == "float64":
            lines.append(" ".join(repr(float(v)) for v in values))
        else:
            lines.append(" ".join(str(int(v)) for v in values))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
        return
    assert sys.byteorder == "little"
    torch.manual_seed(20240620)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4), torch.nn.Linear(4, 2))
    with torch.no_grad():  # LayerNorm starts at weight 1, bias 0: make it non-trivial
        model[1].weight.uniform_(0.5, 1.5)
        model[1].bias.uniform_(-0.5, 0.5)
    tensors = [(name, t.detach().clone()) for name, t in model.state_dict().items()]
    tensors += [
        ("extra.f64", torch.tensor([[1.0 / 3.0, -2.5e-300], [1e300, 0.1]], dtype=torch.float64)),
        ("extra.i64", torch.tensor([2**53 + 1, -(2**62), 7], dtype=torch.int64)),
        ("extra.scalar", torch.tensor(0.1, dtype=torch.float32)),
        ("extra.empty", torch.zeros(0, 3, dtype=torch.float32)),
    ]
    metadata = {"format": "pt", "producer": "make_safetensors_reference.py"}
    write_safetensors(OUT_SAFETENSORS, tensors, metadata)

    # The reader must give back exactly what was written.
    back, back_metadata = read_safetensors(OUT_SAFETENSORS)
    assert back_metadata == metadata
    assert [n for n, _ in back] == [n for n, _ in tensors]
    for (name, a), (_, b) in zip(tensors, back):
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), name

    x = torch.randn(5, 3, dtype=torch.float32)
    with torch.no_grad():
        y = model(x)
    entries = [("tensor." + name, t) for name, t in tensors]
    entries += [("x", x), ("y", y)]
    write_reference(OUT_REFERENCE, entries)
    print(
        f"wrote {len(tensors)} tensors to {os.path.relpath(OUT_SAFETENSORS)} and "
        f"{len(entries)} entries to {os.path.relpath(OUT_REFERENCE)}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
