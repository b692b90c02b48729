"""``python -m ginkpy``: the command line of :mod:`ginkpy.cli`."""
import sys

from ginkpy.cli import main

if __name__ == "__main__":
    sys.exit(main())
