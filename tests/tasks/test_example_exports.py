"""The examples export quietly: `model.export` lists every TensorSpec of the
served signature (~100 lines) unless told `verbose=False`."""

import ast
import os

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _export_calls(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "export"
        ):
            yield node


def test_every_export_in_the_examples_is_quiet():
    calls = 0
    for name in sorted(os.listdir(EXAMPLES)):
        if not name.endswith(".py"):
            continue
        for call in _export_calls(os.path.join(EXAMPLES, name)):
            calls += 1
            verbose = [k.value for k in call.keywords if k.arg == "verbose"]
            quiet = verbose and isinstance(verbose[0], ast.Constant)
            assert quiet and verbose[0].value is False, (
                f"{name}:{call.lineno}: export(..., verbose=False), or it prints "
                "the signature's TensorSpecs"
            )
    assert calls  # classify_rt_sentiment.py exports its text model
