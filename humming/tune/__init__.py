"""Tuning: the heuristics per family (:mod:`.heuristics`), the persisted tuning database of measured
configs (:mod:`.database`) and the autotuner that fills it on a GPU (:mod:`.autotune`, ``humming tune``)."""
