"""The benchmark harness: ``humming bench`` (see README.md in this folder).

Workloads (dense and MoE, model presets) x methods (humming and the baselines
a user would pick instead, plus external libraries in their own process) x M,
each checked against ``humming.reference`` and then timed from CUDA-graph
replays over rotating weight copies; reported as a table, JSON and plots.
"""
from __future__ import annotations

from .cli import add_arguments, cli_main, run
from .schema import finalize, validate_report
from .timing import CudaGraphTimer, Measurement, copies_for, host_overhead_us, time_calls
from .workloads import PRESETS, Workload, preset_workloads

__all__ = ["add_arguments", "cli_main", "run", "finalize", "validate_report", "CudaGraphTimer", "Measurement",
           "copies_for", "host_overhead_us", "time_calls", "PRESETS", "Workload", "preset_workloads"]
