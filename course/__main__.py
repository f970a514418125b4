"""``python -m course``: the same as the ``course`` command."""

import sys

from course.cli import command

if __name__ == "__main__":
    sys.exit(command())
