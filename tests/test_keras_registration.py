"""`import albert_keras` registers every Keras class of the package, whichever
of Keras and the package is imported first, so `keras.saving.load_model` reads
our `.keras` files in a fresh process that imports nothing else."""

import ast
import functools
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from albert_keras import AlbertBackbone, AlbertClassifier, AlbertConfig
from albert_keras.models import with_tokenizer
from albert_keras.tokenizers import AlbertWordPieceTokenizer
from albert_keras.training import create_optimizer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXTS = ["a good film .", "not a good film at all ."]
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "film", "."]
IMPORT_ORDERS = {
    "keras_first": "import keras\nimport albert_keras\n",
    "albert_keras_first": "import albert_keras\nimport keras\n",
    "tensorflow_first": "import tensorflow\nimport albert_keras\nimport keras\n",
    "albert_keras_then_tensorflow": "import albert_keras\nimport tensorflow\n"
    "import keras\n",
    # A layer module first: the package's first module to import Keras is then
    # half-imported when Keras is loaded (registering imported it and failed).
    "a_layer_module_first": "from albert_keras.layers.shared_transformer_encoder"
    " import block_names\nimport keras\n",
}


def _run(script, cwd):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=cwd, env=env
    )


def _registered_classes():
    """(module, class) for every class of the package under
    `@keras.saving.register_keras_serializable`, read from the sources."""
    found = []
    for folder, _, files in os.walk(os.path.join(REPO, "albert_keras")):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and any(
                    "register_keras_serializable" in ast.unparse(d)
                    for d in node.decorator_list
                ):
                    found.append((os.path.relpath(path, REPO), node.name))
    return found


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A compiled classifier (FastLamb, WarmupPolynomialDecay) and a text-in
    model, saved, with the outputs they give here."""
    folder = tmp_path_factory.mktemp("registration")
    tokenizer = AlbertWordPieceTokenizer(VOCABULARY)
    config = AlbertConfig.from_preset(
        "albert_tiny", vocab_size=tokenizer.vocabulary_size()
    )
    classifier = AlbertClassifier(AlbertBackbone(config), num_classes=2)
    classifier.compile(optimizer=create_optimizer("lamb", 1e-3, 10, 2))
    classifier.save(folder / "classifier.keras")
    text_model = with_tokenizer(classifier, tokenizer, sequence_length=16)
    text_model.save(folder / "text.keras")
    np.save(folder / "logits.npy", text_model(tf.constant(TEXTS))["logits"].numpy())
    return folder


# After the import order: which of the classes named in argv are unregistered
# (checked before any load, which could import a module itself), then the
# saved files load and give the same logits.
LOAD = (
    "import sys\n"
    "import numpy as np\n"
    "names = set(keras.saving.get_custom_objects())\n"
    "missing = [c for c in sys.argv[1:] if 'albert_keras>' + c not in names]\n"
    "print('MISSING', missing)\n"
    "classifier = keras.saving.load_model('classifier.keras')\n"
    "assert type(classifier).__name__ == 'AlbertClassifier'\n"
    "assert type(classifier.optimizer).__name__ == 'FastLamb'\n"
    "schedule = classifier.optimizer._learning_rate\n"
    "assert type(schedule).__name__ == 'WarmupPolynomialDecay', schedule\n"
    "text = keras.saving.load_model('text.keras')\n"
    f"logits = text(keras.ops.convert_to_tensor({TEXTS!r}))['logits']\n"
    "diff = np.abs(keras.ops.convert_to_numpy(logits) - np.load('logits.npy'))\n"
    "assert diff.max() < 1e-6, diff\n"
    "print('LOADED')\n"
)


@functools.cache
def _fresh_process_run(order, folder):
    """One fresh Python per import order, shared by the tests of that order
    (each start pays TensorFlow's import)."""
    classes = [name for _, name in _registered_classes()]
    script = IMPORT_ORDERS[order] + LOAD
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, "-c", script, *classes],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
    )


@pytest.mark.parametrize("order", sorted(IMPORT_ORDERS))
def test_keras_files_load_whatever_was_imported_first(order, saved):
    result = _fresh_process_run(order, saved)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "LOADED" in result.stdout


@pytest.mark.parametrize("order", ["keras_first", "albert_keras_first"])
def test_every_keras_class_of_the_package_is_registered(order, saved):
    classes = _registered_classes()
    assert len(classes) > 20, classes
    result = _fresh_process_run(order, saved)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "MISSING []" in result.stdout, (result.stdout, classes)


def test_data_creation_imports_neither_keras_nor_tensorflow(tmp_path):
    # `import albert_keras` waits for Keras rather than loading it.
    script = (
        "import sys\n"
        "import albert_keras\n"
        "from albert_keras.tokenizers import vocabulary_files\n"
        "import checkpoints_convert.hf_names\n"
        "print('LOADED', [m for m in ('tensorflow', 'keras') if m in sys.modules])\n"
    )
    result = _run(script, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "LOADED []" in result.stdout, result.stdout


@pytest.mark.parametrize("order", ["keras_first", "albert_keras_first"])
def test_jax_without_tensorflow_loads_the_models(order, saved):
    # The text-in models and tokenizer layers need TensorFlow and stay
    # unregistered; the task models and our optimizer load.
    pytest.importorskip("jax")
    script = (
        "import sys\n"
        'sys.modules["tensorflow"] = None  # as on a machine with JAX only\n'
        + IMPORT_ORDERS[order]
        + "assert keras.backend.backend() == 'jax'\n"
        "classifier = keras.saving.load_model('classifier.keras')\n"
        "assert type(classifier.optimizer).__name__ == 'FastLamb'\n"
        "print('LOADED')\n"
    )
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=saved,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "LOADED" in result.stdout


def test_python_dash_m_runs_the_commands():
    """`python -m albert_keras.cli` (runpy asks the import watcher's loader for
    the module's code)."""
    result = subprocess.run(
        [sys.executable, "-m", "albert_keras.cli", "create-data", "--help"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "--max-seq-length" in result.stdout


def test_commands_that_need_tensorflow_say_so_without_a_traceback(tmp_path):
    """On a JAX-only machine, `finetune` names what to install, exit status 2."""
    pytest.importorskip("jax")
    script = (
        "import sys\n"
        'sys.modules["tensorflow"] = None  # as on a machine with JAX only\n'
        "from albert_keras.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    data = os.path.join(os.path.dirname(__file__), "data", "tasks", "rt_sentiment")
    command = ["finetune", "--task", "classify", "--init", "albert_tiny"]
    command += ["--train", os.path.join(data, "train.jsonl")]
    command += ["--dev", os.path.join(data, "dev.jsonl"), "--output-dir", "run"]
    env = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", script, *command],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 2, result.stderr[-3000:]
    assert "albert-keras finetune: error: it needs TensorFlow" in result.stderr
    assert "pip install tensorflow tensorflow-text" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()
