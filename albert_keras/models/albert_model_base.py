"""`AlbertModelBase`: what the backbone and the task models share above Keras."""

from __future__ import annotations

from albert_keras.models.early_setattr import early_setattr
from albert_keras.models.input_ranges import check_input_ranges
from albert_keras.models.input_selection import lists_as_arrays
from albert_keras.models.jax_failure_recovery import keeping_variables
from albert_keras.models.quantized_layers import quantize_quietly


class AlbertModelBase:
    """A mixin, listed before `keras.Model`, for `AlbertBackbone` and `TaskModel`.

    It gives both the same behaviour on top of Keras's:
    - layers may be assigned before `keras.Model.__init__` (PyTorch backend);
    - Python lists are taken as inputs (one array each);
    - NumPy ids outside the model's tables are refused with a clear error
      (`check_input_ranges`), in calls and in `fit`, `evaluate`, `predict`;
    - `fit`, `evaluate` and `predict` leave the model usable when they raise
      on JAX (`keeping_variables`);
    - `quantize` collects garbage once and warns only where it matters.

    A plain class rather than a `keras.Model` subclass: Keras swaps
    `keras.Model` for its functional class in the bases of a model built from
    inputs and outputs, and leaves a mixin's bases alone.

    Example:
    >>> import keras
    >>> class Doubler(AlbertModelBase, keras.Model):
    ...     def __init__(self):
    ...         x = keras.Input((2,), name="x")
    ...         super().__init__({"x": x}, {"y": x * 2})
    >>> y = Doubler()({"x": [[1.0, 2.0]]})["y"]  # a list taken as an array
    >>> keras.ops.convert_to_numpy(y).tolist()
    [[2.0, 4.0]]
    """

    def __setattr__(self, name, value):
        early_setattr(self, name, value, super().__setattr__)

    def __call__(self, inputs, *args, **kwargs):
        inputs = lists_as_arrays(inputs)
        check_input_ranges(self, inputs)
        return super().__call__(inputs, *args, **kwargs)

    def _check_loop_inputs(self, args, kwargs):
        check_input_ranges(self, args[0] if args else kwargs.get("x"))
        validation = kwargs.get("validation_data")
        if isinstance(validation, (tuple, list)) and validation:
            check_input_ranges(self, validation[0])

    def fit(self, *args, **kwargs):
        self._check_loop_inputs(args, kwargs)
        return keeping_variables(self, super().fit, *args, **kwargs)

    def evaluate(self, *args, **kwargs):
        self._check_loop_inputs(args, kwargs)
        return keeping_variables(self, super().evaluate, *args, **kwargs)

    def predict(self, *args, **kwargs):
        # On JAX a failed loop left the weights empty (jax_failure_recovery).
        self._check_loop_inputs(args, kwargs)
        return keeping_variables(self, super().predict, *args, **kwargs)

    def quantize(self, mode=None, **kwargs):
        """`keras.Model.quantize`, with one garbage collection at the end
        instead of one per kernel replaced (seconds on a large model), and no
        warning for each layer that has nothing to quantize."""
        quantize_quietly(super().quantize, mode, **kwargs)
