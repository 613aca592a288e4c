"""Several `official_oracle.py run` jobs in one Python (one TensorFlow start-up).

Usage: python oracle_runs.py JOBS.json

Used by test_oracle_selfcheck and the converter tests' `run_official`.

JOBS.json is a list of `official_oracle.py` argument lists. Each job runs in
a graph of its own (as `run` does), so one TensorFlow start-up serves them
all. Prints, as JSON, each job's exit status and stderr as if it had run
alone: a `sys.exit(message)` gives status 1 and the message on stderr.
"""

import contextlib
import io
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import official_oracle  # noqa: E402


def run_job(argv):
    stderr = io.StringIO()
    status = 0
    with contextlib.redirect_stderr(stderr):
        try:
            official_oracle.main(argv)
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 1
            if not isinstance(exit_.code, int | None):
                print(exit_.code, file=sys.stderr)
        except Exception:  # what an uncaught exception would print and return
            traceback.print_exc()
            status = 1
    return {"returncode": status or 0, "stderr": stderr.getvalue()}


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        jobs = json.load(f)
    print(json.dumps([run_job(argv) for argv in jobs]))
