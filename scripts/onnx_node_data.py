"""Writes ONNX's own backend test cases to a folder, one folder per test: model.onnx and
test_data_set_N/{input,output}_K.pb, plus data.json with the case's tolerances.

The `onnx` package ships its model tests already written out (onnx/backend/test/data), but its
per-operator node tests only as generators (onnx/backend/test/case/node); its
`cmd_tools generate-data` command writes the collected cases, and here it is handed the node cases
too. Usage: python3 scripts/onnx_node_data.py OUT_DIR
"""

import json
import os
import sys

import onnx.backend.test.case.model as model_cases
import onnx.backend.test.case.node as node_cases
from onnx.backend.test import cmd_tools


def main() -> None:
    out = sys.argv[1]
    cases = node_cases.collect_testcases(None)
    # generate_data writes whatever the model collector returns, laid out as kind/name.
    model_cases.collect_testcases = lambda: cases
    cmd_tools.generate_data(type("Args", (), {"output": out})())
    for case in cases:
        with open(os.path.join(out, case.kind, case.name, "data.json"), "w") as f:
            json.dump({"rtol": case.rtol, "atol": case.atol}, f)
    print(f"{len(cases)} node tests written to {out}/node")


if __name__ == "__main__":
    main()
