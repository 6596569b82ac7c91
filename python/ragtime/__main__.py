"""``python -m ragtime ...``: the same command line as the ``ragtime`` console script."""

import sys

from .cli import main

sys.exit(main())
