"""A compile worker process for ``Runtime.warmup(executor="process")``.

``python -m humming.jit.worker`` reads one pickled job list from stdin --
``(compiler name, [(spec, source), ...], [include roots])`` -- compiles each and
writes the pickled list of CompileOutput to stdout. A plain subprocess (rather
than multiprocessing) so that the caller's ``__main__`` is never re-imported.
"""
from __future__ import annotations

import os
import pickle
import sys


def main() -> None:
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # nothing else may write into the result stream
    from pathlib import Path

    from .compilers import get_compiler

    compiler, jobs, roots = pickle.load(sys.stdin.buffer)
    comp = get_compiler(compiler)
    results = [comp.compile(source, spec, [Path(r) for r in roots]) for spec, source in jobs]
    pickle.dump(results, out)
    out.close()


if __name__ == "__main__":
    main()
