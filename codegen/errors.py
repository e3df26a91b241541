"""The one error type Kiln raises for bad input, printed by the CLI as a single line."""

from __future__ import annotations


class KilnError(Exception):
    """A problem with the user's model or options: shown as one line, exit status 2.

    `where` names the file, `node` the node or tensor involved, so that the message
    always tells the user where to look.
    """

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None, node: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where
        self.node = node

    def located(self, where: str) -> "KilnError":
        """Return this error with the file name filled in where it was missing."""
        if self.where is None:
            self.where = where
        return self

    def __str__(self) -> str:
        parts = [p for p in (self.where, f"node '{self.node}'" if self.node else None) if p]
        return ": ".join(parts + [self.message])


def os_error(err: OSError, path=None) -> KilnError:
    """An operating-system error (permissions, full disk, name too long, read-only media) as
    one user-facing line naming the path and the cause: the environment, not a Kiln bug."""
    where = path if path is not None else err.filename  # the caller's name over a temporary file's
    cause = err.strerror or type(err).__name__
    return KilnError(cause, where=None if where is None else str(where))


class UnsupportedOpsError(KilnError):
    """Every operator of the model that Kiln cannot compile, listed at once."""

    def __init__(self, unsupported: list[tuple[str, str]], *, where: str | None = None):
        self.unsupported = unsupported
        listing = ", ".join(f"{op} (node '{name}')" for op, name in unsupported)
        super().__init__(f"{len(unsupported)} unsupported operator(s): {listing}", where=where)


class VerificationError(Exception):
    """Generated code disagrees with the reference runtime (exit status 1)."""

    exit_code = 1
