"""The wheel `pip install .` builds holds the whole package, data files too.

The tests run on an editable install, which reads every file from the
checkout; a wheel holds only what setup.cfg names. This builds one from a
copy of the package sources (no network: `--no-build-isolation`) and checks
it against the checkout.
"""

import os
import shutil
import subprocess
import sys
import zipfile

from albert_keras import sample_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("albert_keras", "checkpoints_convert")


def _package_files():
    """Every file of the packages in the checkout, as paths in a wheel, but
    the folders' README.md (notes for developers; data/'s, the provenance
    of the embedded files, ships with them)."""
    files = set()
    for package in PACKAGES:
        for folder, subfolders, names in os.walk(os.path.join(ROOT, package)):
            subfolders[:] = [s for s in subfolders if s != "__pycache__"]
            for name in names:
                notes = name == "README.md" and os.path.basename(folder) != "data"
                if not notes and not name.endswith((".pyc", ".pyo")):
                    path = os.path.relpath(os.path.join(folder, name), ROOT)
                    files.add(path.replace(os.sep, "/"))
    return files


def _build_wheel(tmp_path):
    source = tmp_path / "source"
    for package in PACKAGES:
        shutil.copytree(
            os.path.join(ROOT, package),
            source / package,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, name), source / name)
    command = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps"]
    command += ["--no-build-isolation", "--no-index", "-w", str(tmp_path), "."]
    subprocess.run(command, cwd=source, check=True, capture_output=True)
    (wheel,) = tmp_path.glob("albert_keras-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return {n for n in archive.namelist() if ".dist-info/" not in n}


def test_the_wheel_holds_every_module_and_data_file(tmp_path):
    in_wheel = _build_wheel(tmp_path)
    in_checkout = _package_files()
    # The embedded corpus and vocabulary: `albert-keras pretrain`'s default.
    for path in (sample_text.CORPUS_PATH, sample_text.SPM_MODEL_PATH):
        assert os.path.relpath(path, ROOT).replace(os.sep, "/") in in_wheel
    assert sorted(in_checkout - in_wheel) == []
    assert sorted(in_wheel - in_checkout) == []
