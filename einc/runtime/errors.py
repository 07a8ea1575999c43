"""Errors a user can cause when running a module; each message is a single line."""


class RunError(Exception):
    """Bad inputs, a bad module file, a failed assert or shape check, an unavailable device."""
