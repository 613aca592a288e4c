"""Every docstring example in the package runs and prints what it shows.

The examples are the first code a user copies; run here (each module in an
empty working folder), they cannot drift from the code. Examples that need a
release, a network or minutes say `# doctest: +SKIP`.
"""

import doctest
import importlib
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("albert_keras", "checkpoints_convert")


def modules_with_examples():
    """Dotted names of the package modules whose source holds a `>>>` line."""
    names = []
    for package in PACKAGES:
        for folder, _, files in os.walk(os.path.join(ROOT, package)):
            for file in files:
                path = os.path.join(folder, file)
                if (
                    file.endswith(".py")
                    and ">>> " in open(path, encoding="utf-8").read()
                ):
                    module = os.path.relpath(path, ROOT)[: -len(".py")]
                    names.append(module.replace(os.sep, ".").removesuffix(".__init__"))
    return sorted(names)


def test_the_packages_have_examples():
    assert len(modules_with_examples()) > 50


@pytest.mark.parametrize("name", modules_with_examples())
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = []
    for test in doctest.DocTestFinder(exclude_empty=True).find(module):
        runner.run(test, out=report.append)
    assert runner.summarize(verbose=False).failed == 0, "".join(report)
