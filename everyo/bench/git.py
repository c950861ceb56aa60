"""The git commit record, under its older home: the code lives in :mod:`everyo.git_record`."""

from everyo.git_record import git_record

__all__ = ["git_record"]
