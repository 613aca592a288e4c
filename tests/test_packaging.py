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


def _setup_cfg():
    import configparser

    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, "setup.cfg"), encoding="utf-8")
    return config


def test_the_readme_names_the_pythons_and_keras_that_setup_cfg_requires():
    """The README's install paragraph and setup.cfg name the same Pythons,
    TensorFlow versions and Keras floor, and the Keras installed meets it.
    (The floors were Python 3.10, TensorFlow 2.16 and Keras 3.5, but the
    int8 path needs Keras 3.13, the quantizer's per-call axis, which needs
    Python 3.11; on 3.10 pip took Keras 3.12 and int8 attention failed.)"""
    import re

    config = _setup_cfg()
    requires = config["options"]["install_requires"]
    keras_floor = re.search(r"^keras>=([\d.]+)$", requires, re.M).group(1)
    low, high = re.fullmatch(
        r">=3\.(\d+), <3\.(\d+)", config["options"]["python_requires"]
    ).groups()
    pythons = [f"3.{minor}" for minor in range(int(low), int(high))]
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert f"`keras>={keras_floor}`" in readme
    tf_low, tf_high = re.search(
        r"^tensorflow>=2\.(\d+),<2\.(\d+)$", requires, re.M
    ).groups()
    tfs = [f"2.{minor}" for minor in range(int(tf_low), int(tf_high))]
    assert f"`tensorflow-text` ({' or '.join(tfs)})" in readme
    ends = [pythons[0], pythons[-1]]
    named = " or ".join(pythons) if len(pythons) < 3 else " to ".join(ends)
    assert f"Python {named}." in readme
    classifiers = re.findall(r"Python :: (3\.\d+)", config["metadata"]["classifiers"])
    assert classifiers == pythons
    import keras

    installed = tuple(int(part) for part in keras.__version__.split(".")[:2])
    assert installed >= tuple(int(part) for part in keras_floor.split(".")[:2])


def test_the_tensorflow_family_pins_agree():
    """tensorflow, tensorflow-text and the tests' tf-keras are released in
    step: one range for the three (tf-keras said >=2.16 after the others had
    moved to 2.20, a version of the oracle's Keras no tested TensorFlow has)."""
    import re

    config = _setup_cfg()
    lines = (
        config["options"]["install_requires"] + config["options.extras_require"]["test"]
    )
    pins = dict(
        re.findall(r"^(tensorflow|tensorflow-text|tf-keras)(>=.*)$", lines, re.M)
    )
    assert sorted(pins) == ["tensorflow", "tensorflow-text", "tf-keras"], pins
    assert len(set(pins.values())) == 1, pins
