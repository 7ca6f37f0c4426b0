"""The one exception of dist.torch."""


class TorchImportError(Exception):
    """A step dist.torch cannot import or compile: `what` names the ATen op
    or the parameter, `location` is (file, line) in the user's code where
    one is known. str() is "file:line: message"."""

    def __init__(self, message, what=None, location=None):
        self.message = message
        self.what = what
        self.location = location
        where = f"{location[0]}:{location[1]}: " if location else ""
        super().__init__(where + message)
