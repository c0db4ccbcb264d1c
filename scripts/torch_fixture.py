"""PyTorch checkpoints for tests/torch_load.rs, written by torch.save: state dicts of nn layers
(with their `_metadata`), every dtype ferrograd holds, strided views sharing one storage
(a transpose, a stepped slice, an offset, a broadcast, an overlapping as_strided), nested
containers and plain values; the values go to expected.json, the same values in the legacy
(pre-1.6, not zip) format to legacy.pt. `hostile.pt` names a function
(`builtins.print`) that a loader must refuse to call.

    python scripts/torch_fixture.py   # writes tests/fixtures/torch_load/ (needs torch)
"""
import json
import pathlib

import torch

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "torch_load"


def flat(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "data": t.detach().double().reshape(-1).tolist()}


class Evil:
    def __reduce__(self):
        return (print, ("a checkpoint ran code",))


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    base = torch.arange(20, dtype=torch.float32).reshape(4, 5) * 0.5 - 3
    views = {
        "base": base,
        "t": base.t(),
        "stepped": base[1:, ::2],
        "offset": base.reshape(-1)[7:12],
        "row_broadcast": base[2].expand(3, 5),
        "overlapping": base.reshape(-1).as_strided((3, 4), (2, 1), 1),
    }
    i = torch.arange(6) - 2
    dtypes = {
        "f32": i.float() * 1.5,
        "f64": i.double() / 3,
        "f16": i.half() * 0.25,
        "bf16": i.bfloat16() * 0.5,
        "i64": i * 1000000007,
        "i32": i.int() * 7,
        "i16": i.short() * 300,
        "i8": i.char() * 20,
        "u8": (i + 2).byte() * 40,
        "bool": i % 2 == 0,
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
    }
    layers = {
        "linear": torch.nn.Linear(3, 2).state_dict(),
        "conv": torch.nn.Conv2d(1, 2, 3).state_dict(),
        "bn": torch.nn.BatchNorm2d(2).state_dict(),
    }
    obj = {
        "views": views,
        "dtypes": dtypes,
        "layers": layers,
        "list": [base[0], 1, "a"],
        "tuple": (1, 2.0, None, True),
        "n": 3,
        "name": "ferrograd",
    }
    torch.save(obj, OUT / "checkpoint.pt")
    # The same values in the legacy format (PyTorch before 1.6): a stream of pickles and raw
    # storages, no zip.
    torch.save(obj, OUT / "legacy.pt", _use_new_zipfile_serialization=False)
    expected = {
        "views": {k: flat(v) for k, v in views.items()},
        "dtypes": {k: flat(v) for k, v in dtypes.items()},
        "layers": {f"{n}.{k}": flat(v) for n, sd in layers.items() for k, v in sd.items()},
    }
    (OUT / "expected.json").write_text(json.dumps(expected) + "\n")
    torch.save({"w": base, "evil": Evil()}, OUT / "hostile.pt")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
