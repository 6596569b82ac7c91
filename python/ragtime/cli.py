"""The ``ragtime`` console script (``[project.scripts]``): the Rust command line (``ragtime --help``,
``ragtime conformance``, ``ragtime run``, ``ragtime bench``) run in this process, the GIL released."""

import signal
import sys
import threading

from ._ragtime import cli_main


def main(argv=None):
    """Runs ``ragtime`` with ``argv`` (default: ``sys.argv[1:]``); gives its exit status (0 success,
    1 a failed case or a file that cannot be run, 2 bad usage)."""
    args = sys.argv[1:] if argv is None else [str(a) for a in argv]
    sys.stdout.flush()
    sys.stderr.flush()
    if threading.current_thread() is not threading.main_thread():
        return cli_main(args)
    # Python's Ctrl-C handler would run only once the Rust command returns: while it runs, Ctrl-C
    # stops the process, as it stops the binary.
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        return cli_main(args)
    finally:
        signal.signal(signal.SIGINT, previous)


if __name__ == "__main__":
    sys.exit(main())
