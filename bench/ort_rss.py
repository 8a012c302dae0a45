#!/usr/bin/env python3
"""Runs the ORT peer (ort_run.py) in this process and adds its peak RSS to its JSON report.

  ort_rss.py PATH/TO/ort_run.py [ort_run.py arguments...]

Prints ort_run.py's JSON object with two more keys:
  peak_rss_mb             getrusage(RUSAGE_SELF).ru_maxrss of this process, MiB (as dlrt bench)
  python_baseline_rss_mb  resident memory after starting Python and importing numpy, before
                          onnxruntime is imported: what a C++ program would not carry.
"""
import contextlib
import io
import json
import resource
import runpy
import sys

import numpy  # noqa: F401  (part of the baseline: ort_run.py needs it anyway)


def rss_now_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    baseline = rss_now_mb()
    script = sys.argv[1]
    sys.argv = [script] + sys.argv[2:]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(script, run_name="__main__")
    rep = json.loads(out.getvalue())
    rep["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    rep["python_baseline_rss_mb"] = baseline
    print(json.dumps(rep))


if __name__ == "__main__":
    main()
