"""Runs tinygrad's ONNX frontend (tinygrad.nn.onnx.OnnxRunner) over a folder of ONNX backend
tests (scripts/onnx_node_data.py writes them) and counts them the way
examples/onnx_node_tests.rs counts ferrograd: same outputs in number, shape, dtype and values
(the case's rtol/atol, NaN equal to NaN). NotImplementedError (an op or opset it lacks) counts
as unsupported, any other error or a wrong output as failed.

Usage: python3 scripts/onnx_tinygrad_count.py DIR [DIR ...]   (DEV=CPU for its CPU device)
"""

import json
import os
import signal
import sys

import numpy as np
import onnx
from onnx import numpy_helper
from tinygrad import Tensor
from tinygrad.nn.onnx import OnnxRunner


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def check(test_dir):
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    tol = {"rtol": 1e-3, "atol": 1e-7}
    if os.path.exists(os.path.join(test_dir, "data.json")):
        tol.update(json.load(open(os.path.join(test_dir, "data.json"))))
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    outputs = [o.name for o in model.graph.output]
    runner = OnnxRunner(os.path.join(test_dir, "model.onnx"))
    sets = sorted(d for d in os.listdir(test_dir) if d.startswith("test_data_set_"))
    for s in sets:
        d = os.path.join(test_dir, s)
        n_in = len([f for f in os.listdir(d) if f.startswith("input_")])
        n_out = len([f for f in os.listdir(d) if f.startswith("output_")])
        feed = {inputs[i]: read_pb(os.path.join(d, f"input_{i}.pb")) for i in range(n_in)}
        got = runner(feed)
        for k in range(n_out):
            want = read_pb(os.path.join(d, f"output_{k}.pb"))
            out = got[outputs[k]]
            out = out.numpy() if isinstance(out, Tensor) else np.asarray(out)
            if out.shape != want.shape or out.dtype != want.dtype:
                return f"output {k}: {out.dtype}{out.shape} where {want.dtype}{want.shape} was expected"
            if want.dtype == object:
                if not np.array_equal(out, want):
                    return f"output {k}: wrong strings"
            elif not np.allclose(out.astype(np.float64), want.astype(np.float64), equal_nan=True, **tol):
                return f"output {k}: values differ"
    return None


def main():
    counts = {"passed": 0, "failed": 0, "unsupported": 0}
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("over 120 s")))
    for root in sys.argv[1:]:
        for name in sorted(os.listdir(root)):
            test_dir = os.path.join(root, name)
            if not os.path.exists(os.path.join(test_dir, "model.onnx")):
                continue
            signal.alarm(120)
            try:
                problem = check(test_dir)
                verdict = "failed" if problem else "passed"
            except NotImplementedError as e:
                verdict, problem = "unsupported", str(e).splitlines()[0] if str(e) else "NotImplementedError"
            except Exception as e:  # noqa: BLE001 -- any error is this test's failure
                verdict, problem = "failed", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            finally:
                signal.alarm(0)
            counts[verdict] += 1
            print(f"{verdict:11} {name}" + (f"  ({problem[:150]})" if problem else ""), flush=True)
    print(f"tinygrad onnx node tests: {counts['passed']} passed, {counts['failed']} failed, {counts['unsupported']} unsupported")


if __name__ == "__main__":
    main()
