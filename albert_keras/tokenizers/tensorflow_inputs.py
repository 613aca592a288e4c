"""`keep_tensorflow_inputs`: a layer of TensorFlow string and ragged ops under
any Keras backend."""


def keep_tensorflow_inputs(layer):
    """Lets `layer` take TensorFlow tensors as they are, whatever the backend.

    Keras converts a layer's positional inputs to the backend's tensors
    (JAX or torch arrays), which cannot hold strings or ragged rows, and
    refuses other positional values. The tokenizers and packers compute in
    TensorFlow (in `tf.data` and in exported SavedModels) on every backend,
    so their inputs stay TensorFlow tensors.

    Args:
        layer: a `keras.layers.Layer`, after `super().__init__`.

    Example:
    >>> import keras
    >>> layer = keep_tensorflow_inputs(keras.layers.Identity())
    >>> layer._convert_input_args
    False
    """
    layer._convert_input_args = False
    layer._allow_non_tensor_positional_args = True
    return layer
