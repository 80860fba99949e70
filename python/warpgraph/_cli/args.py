"""Argument parsing shared by the commands: bad input is one line on stderr and exit 2."""

from __future__ import annotations

import argparse
import os
from typing import NoReturn


class CliError(Exception):
    """A user error: printed as `warpgraph <command>: <message>`, exit `code` (2)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


class Parser(argparse.ArgumentParser):
    """argparse, but an error is a CliError (one line, no usage dump)."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see --help)")


def check_writable(path: str) -> None:
    """The file can be created or overwritten (checked before a long run, writes nothing)."""
    if os.path.isdir(path):
        raise CliError(f"cannot write {path}: it is a directory")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise CliError(f"cannot write {path}: no such directory {parent}")
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            raise CliError(f"cannot write {path}: permission denied")
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(f"cannot write {path}: directory {parent} is not writable")
