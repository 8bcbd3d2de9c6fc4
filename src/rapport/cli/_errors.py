"""Errors the CLI turns into one line on stderr and exit code 2."""


class UsageError(Exception):
    """Bad input: unknown name, bad file, impossible numbers. Nothing has been written."""
