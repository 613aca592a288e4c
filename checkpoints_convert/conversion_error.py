"""`ConversionError`: a checkpoint, config or model the converter cannot map."""


class ConversionError(ValueError):
    """A user-facing conversion failure; the message names the variable and cause.

    A subclass of `ValueError`, so callers that catch `ValueError` keep working;
    `albert-convert` prints it without a traceback and exits with status 2.

    Example:
    >>> try:
    ...     raise ConversionError("missing variable 'bert/pooler/dense/kernel'")
    ... except ValueError as e:
    ...     print(e)
    missing variable 'bert/pooler/dense/kernel'
    """
