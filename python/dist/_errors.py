"""Diagnostics as Python data, and the exception that carries them."""

from dataclasses import dataclass, field
from typing import List


@dataclass(frozen=True)
class Location:
    """Where an operation came from: the first file/line/column position in
    its location (through names, call sites and fusions), and its full text."""

    file: str
    line: int
    column: int
    text: str

    def __str__(self):
        return self.text


@dataclass(frozen=True)
class Diagnostic:
    """One MLIR diagnostic: severity ('error', 'warning', 'note' or
    'remark'), position (empty file and 0 when it has none), message and the
    notes attached to it."""

    severity: str
    file: str
    line: int
    column: int
    message: str
    notes: List["Diagnostic"] = field(default_factory=list)

    def __str__(self):
        where = f"{self.file}:{self.line}:{self.column}: " if self.file else ""
        text = f"{where}{self.severity}: {self.message}"
        for note in self.notes:
            text += "\n  " + str(note).replace("\n", "\n  ")
        return text


class DiagnosticError(Exception):
    """A parse, verification or pass failure, with every diagnostic the
    failing step produced (`.diagnostics`), in order."""

    def __init__(self, what, diagnostics):
        self.diagnostics = list(diagnostics)
        lines = [what] + [str(d) for d in self.diagnostics]
        super().__init__("\n".join(lines))
