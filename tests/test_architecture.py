"""The package's shape: layers point down, modules and functions fit a screen."""

import ast
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("albert_keras", "checkpoints_convert")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 100
# A module or function may be longer when a comment says why.
EXEMPT = "# long: "


def _sources():
    for package in PACKAGES:
        for folder, _, files in os.walk(os.path.join(REPO, package)):
            for name in sorted(files):
                if name.endswith(".py"):
                    yield os.path.join(folder, name)


def test_layers_point_down():
    """`lint-imports` with the layers contract of pyproject.toml."""
    command = shutil.which("lint-imports") or os.path.join(
        os.path.dirname(sys.executable), "lint-imports"
    )
    if not os.path.exists(command):
        pytest.fail("lint-imports is missing: pip install -e '.[test]'")
    run = subprocess.run(
        [command, "--no-cache"], cwd=REPO, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "1 kept, 0 broken" in run.stdout, run.stdout[-3000:]


def test_modules_and_functions_fit_on_a_screen():
    too_long = []
    for path in _sources():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.splitlines()
        name = os.path.relpath(path, REPO)
        if len(lines) > MAX_MODULE_LINES and EXEMPT not in text[:2000]:
            too_long.append(f"{name}: {len(lines)} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                exempt = EXEMPT in lines[node.lineno - 2] if node.lineno > 1 else False
                if length > MAX_FUNCTION_LINES and not exempt:
                    too_long.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    assert not too_long, "\n".join(too_long)


def test_every_module_is_listed_in_its_folders_readme():
    """A newcomer finds each module in the README of its folder."""
    missing = []
    for package in PACKAGES:
        for folder, _, files in os.walk(os.path.join(REPO, package)):
            readme = os.path.join(folder, "README.md")
            if not os.path.isfile(readme):
                continue
            with open(readme, encoding="utf-8") as f:
                text = f.read()
            missing += [
                os.path.relpath(os.path.join(folder, name), REPO)
                for name in sorted(files)
                if name.endswith(".py") and name != "__init__.py" and name not in text
            ]
    assert not missing, f"not in their folder's README.md: {missing}"


def _imports_of_conftest(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "conftest":
            yield node.lineno
        names = [a.name for a in getattr(node, "names", [])]
        if isinstance(node, ast.Import) and "conftest" in names:
            yield node.lineno


def test_no_test_imports_a_conftest():
    """`from conftest import ...` took the conftest of whichever test folder
    was imported last: `pytest tests/tokenizers tests/checkpoints_convert/x.py`
    failed to collect four tokenizer modules. Shared test helpers live in
    modules with names of their own (tests/tokenizers/tokenizer_cases.py)."""
    found = []
    for folder, _, files in os.walk(os.path.join(REPO, "tests")):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, REPO)
                found += [f"{rel}:{line}" for line in _imports_of_conftest(path)]
    assert not found, found


def test_the_readme_is_a_guide_under_20_kb():
    """README.md is the user guide, under 20,000 bytes; measurements and
    details go to docs/ (it grew past it twice, a sentence at a time)."""
    size = os.path.getsize(os.path.join(REPO, "README.md"))
    assert size < 20_000, f"README.md is {size} bytes: move details to docs/"
