"""Rank mma_sync tiles robustly on a GPU: every candidate's CUDA graph is built once,
then timed in several rounds, in a new random order each round, so clock and
temperature drift during the sweep spread over all candidates instead of
favouring the first ones (seen on the H200: the same tile read 15.7 us early in
a sweep and 19.5-20.6 us at its end). Reports the median time and the median
ratio to the baseline (the first candidate, timed in the same rounds).

    python scripts/gpu_sweep.py --shapes 8192x8192 --m 1 --groups decode [--json out.json]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import statistics

import torch

from humming import reference as R
from humming.bench.stream import StreamReader
from humming.bench.timing import CudaGraphTimer
from humming.scheme import ActivationScheme, WeightScheme
from humming_nvidia import gemm_mma_sync as G, mma_sync_launch

T = G.Tile
R16 = T(16, 32, 256, 1, 2, 4, 4, stream=4, occupancy=1, xwin=3)  # (a 16-token ring, one CTA per SM: s16, s16b)
GROUPS = {
    # the current default first (the baseline), then the variants
    "decode": [T(8, 32, 256, 1, 2, 4, 4, stream=1, occupancy=3), T(8, 16, 512, 1, 1, 8, 4, stream=1, occupancy=3),
               T(8, 64, 256, 1, 4, 4, 4, stream=1, occupancy=2), T(8, 32, 512, 1, 2, 8, 4, stream=1, occupancy=2),
               T(8, 32, 512, 1, 2, 8, 8, stream=3, occupancy=2), T(8, 16, 1024, 1, 1, 16, 8, stream=3, occupancy=2),
               T(8, 64, 256, 1, 4, 4, 8, stream=3, occupancy=2), T(16, 128, 128, 1, 8, 2, 8, stream=3, occupancy=1),
               T(8, 16, 512, 1, 1, 8, 8, stream=3, occupancy=4),
               T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=3), T(8, 16, 512, 1, 1, 8, 4, stream=4, occupancy=3),
               T(8, 64, 256, 1, 4, 4, 4, stream=4, occupancy=2), T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2),
               T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2), T(8, 16, 256, 1, 1, 4, 4, stream=4, occupancy=6)],
    "m16": [T(16, 128, 256, 1, 4, 2, 3), T(16, 128, 128, 1, 8, 2, 8, stream=3, occupancy=1),
            T(16, 128, 64, 1, 8, 1, 8, stream=3, occupancy=2), T(16, 256, 64, 1, 16, 1, 8, stream=3, occupancy=1),
            T(16, 64, 256, 1, 4, 2, 4), T(16, 128, 128, 1, 8, 1, 4), T(16, 256, 128, 1, 8, 2, 3),
            T(16, 128, 256, 1, 8, 1, 3), T(16, 128, 128, 1, 8, 2, 4, stream=4, occupancy=1),
            T(16, 64, 256, 1, 4, 4, 4, stream=4, occupancy=1)],
    "m64": [T(16, 128, 256, 1, 4, 2, 3), T(32, 128, 128, 1, 4, 1, 4), T(64, 128, 128, 1, 4, 1, 4),
            T(64, 128, 128, 1, 4, 2, 4), T(64, 64, 128, 1, 4, 2, 4), T(64, 128, 256, 1, 4, 2, 3),
            T(64, 256, 64, 1, 8, 1, 4), T(32, 128, 128, 1, 4, 2, 4), T(64, 64, 128, 1, 2, 2, 4),
            T(32, 256, 64, 1, 8, 1, 4)],
    "m256": [T(64, 128, 128, 1, 4, 1, 4), T(64, 128, 64, 1, 4, 1, 4), T(64, 128, 64, 1, 4, 1, 6),
             T(64, 128, 128, 1, 4, 1, 3), T(64, 256, 64, 1, 8, 1, 4), T(64, 128, 256, 1, 4, 2, 3),
             T(128, 128, 64, 1, 4, 1, 3), T(64, 64, 64, 1, 2, 1, 6), T(64, 256, 128, 1, 8, 1, 3),
             T(128, 256, 64, 1, 8, 1, 3)],
    # more than 128 tokens: 32-token warps (twice the warps per SM) against the 64-token ones
    "m256w": [T(64, 256, 128, 1, 8, 1, 3), T(64, 128, 128, 1, 4, 1, 4), T(128, 256, 64, 2, 8, 1, 3),
              T(64, 256, 64, 2, 8, 1, 4), T(64, 256, 64, 2, 8, 1, 3), T(64, 128, 128, 2, 4, 1, 4, occupancy=2),
              T(64, 128, 64, 2, 4, 1, 4, occupancy=2), T(128, 128, 64, 2, 4, 1, 4)],
    # deeper cp.async pipelines (more weight bytes in flight per SM) for the prefill tiles
    "m16deep": [T(16, 128, 256, 1, 4, 2, 3), T(16, 128, 256, 1, 4, 2, 5), T(16, 128, 256, 1, 4, 2, 6),
                T(16, 128, 128, 1, 4, 2, 8), T(16, 128, 128, 1, 4, 2, 12), T(16, 256, 128, 1, 8, 2, 6),
                T(16, 128, 256, 1, 8, 1, 6), T(16, 64, 256, 1, 2, 4, 8), T(16, 128, 64, 1, 4, 1, 16)],
    "m64deep": [T(32, 128, 128, 1, 4, 2, 4), T(32, 128, 128, 1, 4, 2, 6), T(32, 128, 128, 1, 4, 2, 8),
                T(64, 128, 128, 1, 4, 2, 6), T(64, 128, 128, 1, 4, 1, 6), T(32, 256, 128, 1, 8, 2, 4),
                T(16, 128, 256, 1, 4, 2, 6), T(32, 128, 64, 1, 4, 1, 12)],
    "m256deep": [T(64, 256, 128, 1, 8, 1, 3), T(64, 256, 128, 1, 8, 1, 4), T(64, 256, 64, 1, 8, 1, 6),
                 T(64, 128, 128, 1, 4, 1, 6), T(64, 256, 128, 1, 8, 1, 5), T(64, 128, 128, 1, 4, 1, 4)],
    # warpgroup MMA tiles (sm_90a) against the planner's mma.sync tiles
    "wg64": [T(32, 128, 128, 1, 4, 2, 4), T(64, 64, 128, 1, 4, 1, 4, wgmma=1), T(64, 128, 128, 1, 8, 1, 4, wgmma=1),
             T(64, 128, 128, 1, 8, 1, 6, wgmma=1), T(64, 256, 128, 1, 16, 1, 4, wgmma=1),
             T(64, 64, 128, 1, 4, 1, 6, wgmma=1)],
    "wg256": [T(64, 256, 128, 1, 8, 1, 3), T(128, 128, 128, 1, 8, 1, 4, wgmma=1), T(128, 64, 128, 1, 4, 1, 5, wgmma=1),
              T(256, 64, 128, 1, 4, 1, 3, wgmma=1), T(256, 128, 128, 1, 8, 1, 3, wgmma=1),
              T(128, 256, 128, 1, 16, 1, 3, wgmma=1), T(128, 128, 128, 1, 8, 1, 5, wgmma=1)],
    # more than 128 tokens on layers of few row blocks (4096 rows): the planner's 64-token warpgroup tile against
    # 128- and 256-token ones (with --ctas 0,2: K split as far as one wave of resident CTAs allows)
    "wgbig": [G.WG_64, G.WG_128, G.WG_256],
    # 65-128 tokens: the planner's 64-token tiles against the 128-token one (with --ctas 0,2: K split within a wave)
    "wgmid": [G.WG_64_NARROW, G.WG_64, G.WG_128],
    # 65-128 tokens on small layers (at most 4096 rows over a short K): 32-token tiles too (three or four M tiles,
    # the weights re-read from L2), as the planner takes them at 33-64 tokens there
    "wgsmall65": [G.WG_64_NARROW, G.WG_32_NARROW, G.WG_64, G.WG_128],
    "wgsel": [T(64, 128, 128, 1, 4, 1, 4), T(32, 128, 128, 1, 4, 1, 4), T(64, 64, 128, 1, 4, 1, 4, wgmma=1),
              T(64, 128, 128, 1, 8, 1, 4, wgmma=1), T(128, 128, 128, 1, 8, 1, 4, wgmma=1),
              T(128, 64, 128, 1, 4, 1, 5, wgmma=1), T(256, 128, 128, 1, 8, 1, 3, wgmma=1)],
    "wg16": [T(16, 128, 256, 1, 4, 2, 3), T(16, 128, 128, 1, 8, 1, 4, wgmma=1), T(16, 64, 128, 1, 4, 1, 6, wgmma=1),
             T(16, 256, 128, 1, 16, 1, 4, wgmma=1), T(16, 128, 128, 1, 8, 1, 6, wgmma=1),
             T(32, 128, 128, 1, 8, 1, 4, wgmma=1)],
    # warpgroup tiles for 16-64 tokens with fewer stages (more CTAs per SM), for --ctas sweeps
    "wgocc16": [T(16, 64, 128, 1, 4, 1, 6, wgmma=1), T(16, 64, 128, 1, 4, 1, 4, wgmma=1),
                T(16, 128, 128, 1, 8, 1, 6, wgmma=1)],
    "wgocc32": [T(32, 128, 128, 1, 8, 1, 4, wgmma=1), T(32, 64, 128, 1, 4, 1, 4, wgmma=1),
                T(32, 64, 128, 1, 4, 1, 6, wgmma=1)],
    "wgocc64": [T(64, 64, 128, 1, 4, 1, 4, wgmma=1), T(64, 64, 128, 1, 4, 1, 3, wgmma=1),
                T(64, 128, 128, 1, 8, 1, 4, wgmma=1), T(64, 128, 128, 1, 8, 1, 3, wgmma=1)],
    # the warpgroup tiles with cp.async stages (every thread copies) against TMA stages (one thread's
    # bulk copies on mbarriers), 16, 32 and 64 tokens
    "tma16": [T(16, 64, 128, 1, 4, 1, 6, wgmma=1), T(16, 64, 128, 1, 4, 1, 6, wgmma=1, tma=1),
              T(16, 64, 128, 1, 4, 1, 6, wgmma=1, chains=2), T(16, 64, 128, 1, 4, 1, 6, wgmma=1, chains=4),
              T(16, 64, 128, 1, 4, 1, 6, wgmma=1, tma=1, chains=2), T(16, 64, 128, 1, 4, 1, 6, wgmma=1, tma=1, chains=4),
              T(16, 128, 128, 1, 8, 1, 6, wgmma=1), T(16, 128, 128, 1, 8, 1, 6, wgmma=1, chains=4)],
    "tma32": [T(32, 64, 128, 1, 4, 1, 4, wgmma=1), T(32, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1),
              T(32, 64, 128, 1, 4, 1, 4, wgmma=1, chains=2), T(32, 64, 128, 1, 4, 1, 4, wgmma=1, chains=4),
              T(32, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1, chains=2), T(32, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1, chains=4),
              T(32, 128, 128, 1, 8, 1, 4, wgmma=1), T(32, 128, 128, 1, 8, 1, 4, wgmma=1, chains=2)],
    "tma64": [T(64, 64, 128, 1, 4, 1, 4, wgmma=1), T(64, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1),
              T(64, 64, 128, 1, 4, 1, 4, wgmma=1, chains=2), T(64, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1, chains=2),
              T(64, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1, chains=4), T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2),
              T(64, 128, 128, 1, 8, 1, 4, wgmma=1), T(64, 128, 128, 1, 8, 1, 4, wgmma=1, chains=2)],
    # TMA tiles with fewer stages, for --ctas sweeps (more CTAs per SM: their registers allow 4-5)
    "tmaocc16": [T(16, 64, 128, 1, 4, 1, 6, wgmma=1), T(16, 64, 128, 1, 4, 1, 6, wgmma=1, tma=1),
                 T(16, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1)],
    "tmaocc32": [T(32, 64, 128, 1, 4, 1, 4, wgmma=1), T(32, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1),
                 T(32, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1)],
    "tmaocc64": [T(64, 64, 128, 1, 4, 1, 4, wgmma=1), T(64, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1, chains=2),
                 T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2)],
    # two 64-row wgmmas per warpgroup (BN = 32 * WN: 128 rows on four warps, twice the independent
    # work per activation byte) against the planner's tiles of 16, 32 and 64 tokens
    "wide16": [T(16, 64, 128, 1, 4, 1, 6, wgmma=1), T(16, 128, 128, 1, 4, 1, 6, wgmma=1),
               T(16, 128, 128, 1, 4, 1, 6, wgmma=1, tma=1), T(16, 128, 128, 1, 4, 1, 8, wgmma=1, tma=1)],
    "wide32": [T(32, 64, 128, 1, 4, 1, 4, wgmma=1), T(32, 128, 128, 1, 4, 1, 4, wgmma=1),
               T(32, 128, 128, 1, 4, 1, 4, wgmma=1, tma=1), T(32, 128, 128, 1, 4, 1, 6, wgmma=1, tma=1)],
    "wide64": [T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2), T(64, 128, 128, 1, 4, 1, 4, wgmma=1),
               T(64, 128, 128, 1, 4, 1, 3, wgmma=1, tma=1), T(64, 128, 128, 1, 4, 1, 4, wgmma=1, tma=1),
               T(64, 256, 128, 1, 8, 1, 3, wgmma=1, tma=1), T(64, 128, 128, 1, 8, 1, 4, wgmma=1)],
    # ... cp.async ones against both of the planner's tiles (four and eight warps)
    "wide16p": [T(16, 64, 128, 1, 4, 1, 6, wgmma=1), T(16, 128, 128, 1, 8, 1, 6, wgmma=1),
                T(16, 128, 128, 1, 4, 1, 6, wgmma=1), T(16, 128, 128, 1, 4, 1, 8, wgmma=1)],
    "wide32p": [T(32, 64, 128, 1, 4, 1, 4, wgmma=1), T(32, 128, 128, 1, 8, 1, 4, wgmma=1),
                T(32, 128, 128, 1, 4, 1, 4, wgmma=1), T(32, 128, 128, 1, 4, 1, 6, wgmma=1)],
    "wide64p": [T(64, 128, 128, 1, 8, 1, 4, wgmma=1), T(64, 128, 128, 1, 4, 1, 4, wgmma=1),
                T(64, 128, 128, 1, 4, 1, 3, wgmma=1)],
    # eight-warp TMA tiles (two warpgroups on one activation stage, "empty" barriers instead of a
    # barrier per step) against the planner's tiles, for --ctas 0,2
    "tma8_16": [T(16, 64, 128, 1, 4, 1, 6, wgmma=1), T(16, 128, 128, 1, 4, 1, 6, wgmma=1),
                T(16, 128, 128, 1, 8, 1, 6, wgmma=1, tma=1), T(16, 128, 128, 1, 8, 1, 8, wgmma=1, tma=1)],
    "tma8_32": [T(32, 64, 128, 1, 4, 1, 4, wgmma=1), T(32, 128, 128, 1, 8, 1, 4, wgmma=1),
                T(32, 128, 128, 1, 8, 1, 4, wgmma=1, tma=1), T(32, 128, 128, 1, 8, 1, 6, wgmma=1, tma=1)],
    "tma8_64": [T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2), T(64, 128, 128, 1, 8, 1, 4, wgmma=1),
                T(64, 128, 128, 1, 8, 1, 4, wgmma=1, tma=1), T(64, 128, 128, 1, 8, 1, 4, wgmma=1, tma=1, chains=2),
                T(64, 128, 128, 1, 8, 1, 3, wgmma=1, tma=1)],
    # layers of at most 4096 rows, 33-64 tokens: two 32-token tiles against the 64-token TMA tile
    "tmasmall": [T(32, 64, 128, 1, 4, 1, 4, wgmma=1), T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2),
                 T(32, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1, chains=2)],
    # layers of at most 4096 rows, 9-64 tokens: the mma.sync tile against the four-warp warpgroup tiles
    "wgsmall": [T(16, 128, 256, 1, 4, 2, 3), T(16, 64, 128, 1, 4, 1, 6, wgmma=1), T(32, 64, 128, 1, 4, 1, 4, wgmma=1),
                T(64, 64, 128, 1, 4, 1, 4, wgmma=1)],
    # byte operands (--act int8): warp tiles of at most 32 tokens (int32 partials beside fp32 accumulators)
    "b256": [T(64, 256, 128, 2, 8, 1, 3), T(64, 128, 128, 2, 4, 1, 4), T(128, 128, 64, 2, 4, 1, 4),
             T(128, 128, 128, 2, 4, 1, 3), T(128, 256, 64, 4, 4, 1, 3), T(64, 128, 64, 2, 4, 1, 6),
             T(128, 128, 64, 4, 2, 1, 4), T(64, 64, 128, 2, 2, 1, 4), T(32, 128, 128, 1, 4, 1, 4),
             T(128, 64, 128, 4, 1, 1, 4), T(64, 256, 64, 2, 8, 1, 4), T(128, 256, 64, 4, 8, 1, 3)],
    "b16": [T(16, 128, 256, 1, 4, 2, 3), T(16, 128, 128, 1, 4, 2, 4), T(16, 128, 128, 1, 8, 1, 4),
            T(32, 128, 128, 1, 4, 1, 4), T(32, 128, 128, 1, 4, 2, 4), T(16, 64, 256, 1, 4, 2, 4),
            T(64, 128, 128, 2, 4, 1, 4), T(16, 256, 128, 1, 8, 2, 3)],
    # byte operands on warpgroup MMAs (--act int8): the mma.sync byte tile the planner took first
    "bwg16": [T(16, 64, 256, 1, 4, 2, 4), T(16, 64, 128, 1, 4, 1, 6, wgmma=1), T(16, 128, 128, 1, 4, 1, 6, wgmma=1),
              T(32, 64, 128, 1, 4, 1, 4, wgmma=1)],
    "bwg64": [T(16, 128, 256, 1, 4, 2, 3), T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2),
              T(64, 128, 128, 1, 8, 1, 4, wgmma=1), T(64, 64, 128, 1, 4, 1, 4, wgmma=1), T(32, 64, 128, 1, 4, 1, 4, wgmma=1)],
    "bwg256": [T(128, 128, 64, 2, 4, 1, 4), T(64, 128, 128, 1, 8, 1, 4, wgmma=1), T(64, 64, 128, 1, 4, 1, 4, wgmma=1),
               T(128, 128, 128, 1, 8, 1, 4, wgmma=1), T(64, 256, 128, 1, 8, 1, 3, wgmma=1)],
    # decode on byte operands: the stream tile (fp8: the emulated mma.sync), or the int4-on-int8 ring, against
    # warpgroup tiles of 8 and 16 tokens
    "bdec8": [T(8, 32, 256, 1, 2, 4, 4, stream=1, occupancy=3), T(8, 64, 128, 1, 4, 1, 6, wgmma=1),
              T(8, 64, 128, 1, 4, 1, 8, wgmma=1), T(16, 64, 128, 1, 4, 1, 6, wgmma=1), T(8, 128, 128, 1, 4, 1, 6, wgmma=1),
              T(8, 64, 128, 1, 4, 1, 6, wgmma=1, tma=1)],
    "bdec4": [T(8, 32, 512, 1, 2, 8, 8, stream=3, occupancy=2), T(8, 64, 128, 1, 4, 1, 6, wgmma=1),
              T(8, 64, 128, 1, 4, 1, 8, wgmma=1), T(16, 64, 128, 1, 4, 1, 6, wgmma=1), T(8, 128, 128, 1, 4, 1, 6, wgmma=1)],
    # the 16-bit tiles the planner takes for fp8 weights with 16-bit activations, to set against the above
    "fdec": [T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2), T(8, 32, 256, 1, 2, 4, 4, stream=1, occupancy=3)],
    "f16": [T(16, 64, 128, 1, 4, 1, 6, wgmma=1)],
    "f64": [T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2), T(64, 128, 128, 1, 8, 1, 4, wgmma=1)],
    "f256": [T(128, 128, 128, 1, 8, 1, 4, wgmma=1), T(256, 128, 128, 1, 8, 1, 3, wgmma=1)],
    # (seventy-fourth session) short K at many tokens (deepseek-v3's kv_b, 32768x512): the planner's 256-token tile
    # (one CTA per SM), tiles of two CTAs per SM (one's epilogue under the other's loop), and 256-row tiles (half
    # the activations' re-reads from L2)
    "kvb": [T(256, 128, 128, 1, 8, 1, 3, wgmma=1), T(128, 128, 128, 1, 8, 1, 4, wgmma=1),
            T(128, 64, 128, 1, 4, 1, 3, wgmma=1), T(64, 128, 128, 1, 8, 1, 4, wgmma=1),
            T(128, 256, 128, 1, 8, 1, 3, wgmma=1), T(128, 256, 128, 1, 16, 1, 3, wgmma=1),
            T(64, 256, 128, 1, 8, 1, 3, wgmma=1), T(192, 128, 128, 1, 8, 1, 3, wgmma=1)],
    # above 256 tokens: the planner's 256-token tile against 128 tokens x 256 rows on sixteen warps (G.WG_256_WIDE, one
    # CTA per SM at 128 registers) at three and four stages
    "wide256": [G.WG_256, G.WG_256_WIDE, G.replace(G.WG_256_WIDE, stages=4)],
    # 8-bit weights above 128 tokens: three stages fit, so TMA (refilled one behind) keeps two in flight
    "b8tma": [T(128, 128, 128, 1, 8, 1, 3, wgmma=1), T(128, 128, 128, 1, 8, 1, 3, wgmma=1, tma=1),
              T(64, 128, 128, 1, 8, 1, 4, wgmma=1, tma=1), T(128, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1),
              T(64, 256, 128, 1, 16, 1, 3, wgmma=1, tma=1)],
    # 16-bit decode (1-8 tokens) on Hopper: the lean rings the planner takes (per shape: long K, short K,
    # wide) against 8-token warpgroup tiles (m64n8k16): cp.async and TMA stages, one and two 64-row wgmmas
    # per warpgroup, group scales on the weights or folded per block into fp32 (fold=1)
    "dec16": [T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2), T(8, 16, 1024, 1, 1, 16, 8, stream=3, occupancy=2),
              T(8, 64, 256, 1, 4, 4, 4, stream=4, occupancy=2),
              T(8, 64, 128, 1, 4, 1, 8, wgmma=1), T(8, 64, 128, 1, 4, 1, 8, wgmma=1, fold=1),
              T(8, 64, 128, 1, 4, 1, 8, wgmma=1, tma=1, fold=1), T(8, 64, 128, 1, 4, 1, 12, wgmma=1, fold=1),
              T(8, 128, 128, 1, 4, 1, 8, wgmma=1, fold=1), T(8, 128, 128, 1, 4, 1, 8, wgmma=1, tma=1, fold=1),
              T(8, 128, 128, 1, 8, 1, 8, wgmma=1, fold=1)],
    # ... for the other formats (the planner's ring for them first; per channel nothing to fold)
    "dec16o": [T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2), T(8, 64, 128, 1, 4, 1, 8, wgmma=1),
               T(8, 64, 128, 1, 4, 1, 8, wgmma=1, tma=1), T(8, 128, 128, 1, 4, 1, 8, wgmma=1, tma=1),
               T(8, 64, 128, 1, 4, 1, 8, wgmma=1, fold=1), T(8, 64, 128, 1, 4, 1, 8, wgmma=1, tma=1, fold=1),
               T(8, 128, 128, 1, 4, 1, 8, wgmma=1, tma=1, fold=1)],
    # 8-bit codes on 16-bit operands, 1-8 tokens: the planner's 8-token warpgroup tile against deeper stages,
    # eight warps, two 64-row wgmmas per warpgroup (with --ctas: K split for more CTAs per SM)
    "dec8": [T(8, 64, 128, 1, 4, 1, 8, wgmma=1), T(8, 64, 128, 1, 4, 1, 12, wgmma=1), T(8, 64, 128, 1, 4, 1, 5, wgmma=1),
             T(8, 128, 128, 1, 8, 1, 8, wgmma=1), T(8, 128, 128, 1, 4, 1, 8, wgmma=1)],
    "dec4f": [T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2), T(8, 64, 128, 1, 4, 1, 8, wgmma=1, fold=1),
              T(8, 64, 128, 1, 4, 1, 5, wgmma=1, fold=1)],
    # the planner's 16-bit warpgroup tiles of 16, 32 and 64 tokens with their group scales folded per block
    "fold16": [T(16, 64, 128, 1, 4, 1, 6, wgmma=1), T(16, 64, 128, 1, 4, 1, 6, wgmma=1, fold=1),
               T(16, 128, 128, 1, 4, 1, 6, wgmma=1), T(16, 128, 128, 1, 4, 1, 6, wgmma=1, fold=1),
               T(16, 64, 128, 1, 4, 1, 6, wgmma=1, tma=1, fold=1), T(16, 128, 128, 1, 4, 1, 8, wgmma=1, tma=1, fold=1)],
    "fold32": [T(32, 64, 128, 1, 4, 1, 4, wgmma=1), T(32, 64, 128, 1, 4, 1, 4, wgmma=1, fold=1),
               T(32, 128, 128, 1, 8, 1, 4, wgmma=1), T(32, 128, 128, 1, 8, 1, 4, wgmma=1, fold=1)],
    "fold64": [T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2), T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, fold=1),
               T(64, 128, 128, 1, 8, 1, 4, wgmma=1), T(64, 128, 128, 1, 8, 1, 4, wgmma=1, fold=1)],
    # four 64-column blocks per stage (BK = 256: half the per-stage bookkeeping per byte) against the
    # planner's tiles: decode (int4 with folded group scales), 16 and 64 tokens
    "bk256": [T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2), T(8, 64, 256, 1, 4, 4, 4, stream=4, occupancy=2),
              T(8, 64, 128, 1, 4, 1, 8, wgmma=1, fold=1), T(8, 64, 256, 1, 4, 1, 4, wgmma=1, fold=1),
              T(8, 64, 256, 1, 4, 1, 6, wgmma=1, fold=1), T(8, 64, 256, 1, 4, 1, 8, wgmma=1, fold=1),
              T(8, 64, 256, 1, 4, 1, 6, wgmma=1, tma=1, fold=1), T(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1),
              T(8, 128, 256, 1, 8, 1, 4, wgmma=1, fold=1)],
    "bk256o": [T(8, 64, 128, 1, 4, 1, 8, wgmma=1), T(8, 64, 256, 1, 4, 1, 4, wgmma=1),
               T(8, 64, 256, 1, 4, 1, 6, wgmma=1), T(8, 64, 256, 1, 4, 1, 6, wgmma=1, tma=1)],
    "bk256m16": [T(16, 64, 128, 1, 4, 1, 6, wgmma=1, fold=1), T(16, 128, 128, 1, 4, 1, 6, wgmma=1, fold=1),
                 T(16, 64, 256, 1, 4, 1, 4, wgmma=1, fold=1), T(16, 64, 256, 1, 4, 1, 6, wgmma=1, fold=1),
                 T(16, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1), T(16, 64, 256, 1, 4, 1, 4, wgmma=1, tma=1, fold=1)],
    "bk256m64": [T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2), T(64, 128, 128, 1, 8, 1, 4, wgmma=1),
                 T(64, 64, 256, 1, 4, 1, 3, wgmma=1, tma=1, chains=2), T(64, 128, 256, 1, 8, 1, 3, wgmma=1),
                 T(64, 128, 256, 1, 8, 1, 3, wgmma=1, tma=1)],
    "bk256m32": [T(32, 64, 128, 1, 4, 1, 4, wgmma=1, fold=1), T(32, 128, 128, 1, 8, 1, 4, wgmma=1, fold=1),
                 T(32, 64, 256, 1, 4, 1, 3, wgmma=1, fold=1), T(32, 64, 256, 1, 4, 1, 4, wgmma=1, fold=1),
                 T(32, 128, 256, 1, 8, 1, 3, wgmma=1, fold=1)],
    # 64 tokens: 256-row CTAs (two warpgroups of two 64-row wgmmas) read the activations a quarter as often
    # as WG_64_TMA's 64-row ones (at M=64 those reads, through L2, are 4x the weight bytes)
    "m64w": [T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2), T(64, 128, 128, 1, 8, 1, 4, wgmma=1),
             T(64, 256, 128, 1, 8, 1, 3, wgmma=1, tma=1), T(64, 256, 128, 1, 8, 1, 4, wgmma=1),
             T(64, 256, 128, 1, 8, 1, 3, wgmma=1, tma=1, chains=2), T(64, 128, 128, 1, 4, 1, 4, wgmma=1, tma=1, chains=2)],
    # decode of 2-8 tokens: the planner's rings (long K, wide, short K) against the warpgroup tiles of four
    # blocks per stage (folded where the group scales allow, else not)
    # split K with the slices summed in clusters (--clusters 0,8) against the workspace, at the launcher's
    # split and one CTA per SM's (--ctas 0,1): the planner's 2-64 token tiles of 4097-8192 rows
    "csplit": [G.replace(G.WG_DECODE, fold=1), G.replace(G.WG_16_DEEP, fold=1), G.WG_64_TMA],
    "decm": [T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2), T(8, 64, 256, 1, 4, 4, 4, stream=4, occupancy=2),
             T(8, 16, 1024, 1, 1, 16, 8, stream=3, occupancy=2), T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2),
             T(8, 64, 256, 1, 4, 1, 4, wgmma=1, fold=1), T(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1),
             T(8, 64, 256, 1, 4, 1, 6, wgmma=1, tma=1, fold=1),
             T(8, 64, 256, 1, 4, 1, 4, wgmma=1), T(8, 128, 256, 1, 4, 1, 4, wgmma=1)],
    # 3-bit codes after the in-place gather (a shift and two LOP3s per pair): the planner's long-K ring, the
    # same with one CTA per SM (its 64-register floor spills 16 bytes), the wide ring, the four-block tiles
    "dec3": [T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2), T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=1),
             T(8, 64, 256, 1, 4, 4, 4, stream=4, occupancy=2), T(8, 64, 256, 1, 4, 1, 4, wgmma=1, fold=1),
             T(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1), T(8, 64, 256, 1, 4, 1, 6, wgmma=1, fold=1)],
    # 64 tokens, the timing probes of gpu_run.sh s65p: WG_64_TMA, the eight-warp TMA tile of 128 rows (activations
    # shared by two warpgroups), WG_64 (eight warps, cp.async: no tensor copies to remove)
    "p64": [T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2), T(64, 128, 128, 1, 8, 1, 3, wgmma=1, tma=1, chains=2),
            T(64, 128, 128, 1, 8, 1, 4, wgmma=1)],
    # WG_64_TMA with 3-6 stages: more weight bytes in flight per CTA (4 KB a stage beside 16 KB of activations)
    "p64s": [T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2), T(64, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1, chains=2),
             T(64, 64, 128, 1, 4, 1, 5, wgmma=1, tma=1, chains=2), T(64, 64, 128, 1, 4, 1, 6, wgmma=1, tma=1, chains=2)],
    # 64 tokens in clusters along N that multicast each stage's activations (the activation re-reads through
    # L2 were thought to hold WG_64_TMA at M=64): the planner's tiles first (WG_64_TMA, WG_64), then clusters
    # of 2 and 4, whose stages are refilled two behind (4 or 5 stages)
    "m64c": [T(64, 64, 128, 1, 4, 1, 3, wgmma=1, tma=1, chains=2), T(64, 128, 128, 1, 8, 1, 4, wgmma=1),
             T(64, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1, chains=2, cluster=2),
             T(64, 64, 128, 1, 4, 1, 5, wgmma=1, tma=1, chains=2, cluster=2),
             T(64, 64, 128, 1, 4, 1, 4, wgmma=1, tma=1, chains=2, cluster=4),
             T(64, 64, 128, 1, 4, 1, 5, wgmma=1, tma=1, chains=2, cluster=4),
             T(64, 128, 128, 1, 8, 1, 4, wgmma=1, tma=1, cluster=2),
             T(64, 128, 128, 1, 8, 1, 5, wgmma=1, tma=1, cluster=2)],
    # one token after the register rings load their activations turn by turn (XTURN): the planner's decode
    # tiles (short K: the shared-memory ring; long K; wide; 8-bit long K), the short-K tile as a register
    # ring, more register rings, and the warpgroup tile the planner takes on 28672x8192
    "xturn": [T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2), T(8, 16, 1024, 1, 1, 16, 8, stream=3, occupancy=2),
              T(8, 64, 256, 1, 4, 4, 4, stream=4, occupancy=2), T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2),
              T(8, 16, 1024, 1, 1, 16, 8, stream=4, occupancy=2), T(8, 16, 512, 1, 1, 8, 8, stream=4, occupancy=2),
              T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2), T(8, 16, 256, 1, 1, 4, 8, stream=4, occupancy=4),
              T(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1)],
    # 2-bit codes at one token: the long-K ring without a register floor (107 registers: one CTA per SM, two
    # waves of 256 CTAs on the H200), with the floor min_blocks now budgets (64: two per SM), eight-warp rings
    # of two and four CTAs per SM, the wide ring, four-warp rings, and the warpgroup tile of four blocks
    "dec2": [T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=1), T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2),
             T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2), T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=4),
             T(8, 64, 256, 1, 4, 4, 4, stream=4, occupancy=2), T(8, 16, 256, 1, 1, 4, 4, stream=4, occupancy=8),
             T(8, 32, 512, 1, 2, 8, 8, stream=4, occupancy=2), T(8, 64, 256, 1, 4, 1, 4, wgmma=1, fold=1)],
    # 3-bit codes at one token: the planner's warpgroup tile against rings of eight and four warps at three and
    # six CTAs per SM (a floor of 85 registers: 79 used, no spill) and the long-K ring of one CTA per SM
    "dec3r": [T(8, 64, 256, 1, 4, 1, 4, wgmma=1, fold=1), T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=3),
              T(8, 16, 256, 1, 1, 4, 4, stream=4, occupancy=6), T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=1),
              T(8, 32, 256, 1, 2, 4, 8, stream=3, occupancy=3), T(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1)],
    # one token on the register rings that load their activations turn by turn: the planner's long-K and wide
    # int4 tiles and the 2-bit long-K tile (with --defines ',HUMMING_X_SHARED_ONE': a copy per warp against the
    # one copy the WN warps of a K run share behind a named barrier)
    "one": [T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2), T(8, 64, 128, 1, 4, 2, 4, stream=4, occupancy=2)],
    "one2": [T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2)],
    # one token over a long K on rings of one warp per K run (WN == 1: no named barrier per turn, now that their
    # one-token copy stages row 0 in straight-line code) against the planner's ring of two warps per run
    "s58w": [G.DECODE_INT2_LONG_K, T(8, 16, 512, 1, 1, 8, 4, stream=4, occupancy=2),
             T(8, 16, 512, 1, 1, 8, 4, stream=4, occupancy=3)],
    # 2-bit codes at one token after the straight-line activation copies: the planner's long-K ring (64-register
    # floor, two CTAs per SM) against eight-warp rings of two (no floor needed) and four CTAs per SM, the wide ring
    "dec2b": [T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2), T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2),
              T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=4), T(8, 64, 256, 1, 4, 4, 4, stream=4, occupancy=2),
              T(8, 16, 512, 1, 1, 8, 4, stream=4, occupancy=4)],
    # 28672x8192 at one token after the straight-line activation copies: the planner's warpgroup tile against
    # register rings of 112 (7 warps), 128 (8 warps) and 64 rows (the wide ring)
    "w28": [T(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1), T(8, 112, 64, 1, 7, 1, 4, stream=4, occupancy=2),
            T(8, 128, 64, 1, 8, 1, 4, stream=4, occupancy=2), T(8, 64, 128, 1, 4, 2, 4, stream=4, occupancy=2)],
    # 9-16 tokens: the planner's warpgroup tiles against register rings of 16 tokens per warp (two MMA columns),
    # whose activations come turn by turn (XTURN) since the sixteenth session (before, every CTA staged its whole
    # K slice of 16 rows first: 24-29 us on 8192x8192)
    "r16": [G.replace(G.WG_16_DEEP, fold=1), G.replace(G.WG_16_DEEP_TWO, fold=1),
            T(16, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2), T(16, 64, 128, 1, 4, 2, 4, stream=4, occupancy=2),
            T(16, 64, 256, 1, 4, 4, 4, stream=4, occupancy=1), T(16, 32, 512, 1, 2, 8, 4, stream=4, occupancy=1),
            T(16, 16, 512, 1, 1, 8, 8, stream=4, occupancy=2)],
    # 2-8 tokens: the same question for the eight-token warpgroup tiles
    "r8": [G.replace(G.WG_DECODE, fold=1), G.replace(G.WG_DECODE_TWO, fold=1), T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2),
           T(8, 64, 128, 1, 4, 2, 4, stream=4, occupancy=2), T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2)],
    # 2-6 tokens: the eight-token warpgroup tiles against the one-token register rings of each shape
    "r4": [G.replace(G.WG_DECODE, fold=1), G.replace(G.WG_DECODE_TWO, fold=1), G.DECODE_INT4_WIDE,
           G.DECODE_INT4_LONG_K, G.DECODE_INT4_SHORT_K],
    # the same for layers whose group scales do not fold (per channel): the unfolded warpgroup tiles
    "r4u": [G.WG_DECODE, G.WG_DECODE_TWO, G.DECODE_INT4_WIDE, G.DECODE_INT4_LONG_K, G.DECODE_INT4_SHORT_K],
    # one token on the long-K register ring at 4, 6 and 8 blocks per turn (more bytes in flight per warp, the
    # turn's fixed work over more blocks), against the 64-column-run ring of eight warps along K
    "turn8": [T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2), T(8, 32, 256, 1, 2, 4, 6, stream=4, occupancy=2),
              T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2), T(8, 32, 512, 1, 2, 8, 8, stream=4, occupancy=2),
              T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=2)],
    # one token of 2-bit codes over a short K (at most 4096 columns): the register-streaming tiles the planner took
    # (stream=1) against the register rings (the int4 wide and short-K rings, the 2-bit long-K ring, the 3-bit one)
    "i2short": [T(8, 64, 128, 1, 4, 2, 4, stream=1, occupancy=3), T(8, 16, 512, 1, 1, 8, 4, stream=1, occupancy=3),
                T(8, 32, 256, 1, 2, 4, 4, stream=1, occupancy=3), G.DECODE_INT4_WIDE, G.DECODE_INT4_SHORT_K,
                G.DECODE_INT2_LONG_K, T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=1)],
    # one token of e2m1 codes (MXFP4 g32 e8m0, NVFP4 g16 e4m3): the register-streaming tiles the planner takes (eight
    # warps, 199-231 registers: one CTA per SM) against 16-warp tiles of 128 registers, register streaming or rings
    "fp4": [T(8, 32, 256, 1, 2, 4, 4, stream=1, occupancy=3), T(8, 16, 512, 1, 1, 8, 4, stream=1, occupancy=3),
            T(8, 64, 128, 1, 4, 2, 4, stream=1, occupancy=3), T(8, 64, 256, 1, 4, 4, 4, stream=1, occupancy=1),
            T(8, 64, 256, 1, 4, 4, 4, stream=4, occupancy=1), T(8, 32, 512, 1, 2, 8, 4, stream=1, occupancy=1),
            T(8, 32, 512, 1, 2, 8, 4, stream=4, occupancy=1), T(8, 128, 128, 1, 8, 2, 4, stream=1, occupancy=1)],
    # one token of e2m1 codes (MXFP4 / NVFP4) on the wide layers: the planner's tiles (the register-streaming tile of
    # three CTAs per SM above 16384 rows, the 32- and 64-row rings below) against rings of 112, 128 and 224 rows
    "fp4w": [T(8, 32, 256, 1, 2, 4, 4, stream=1, occupancy=3), G.DECODE_INT3, G.DECODE_INT3_WIDE, G.DECODE_INT3_112,
             G.DECODE_INT3_128, G.DECODE_INT3_224],
    # one token of 3-bit codes on the register-streaming tiles Ampere and Ada take (three CTAs per SM: 80 registers,
    # where sm_80 and sm_89 spill in the loop) against two CTAs per SM
    "i3occ": [T(8, 16, 512, 1, 1, 8, 4, stream=1, occupancy=3), T(8, 16, 512, 1, 1, 8, 4, stream=1, occupancy=2),
              T(8, 32, 256, 1, 2, 4, 4, stream=1, occupancy=3), T(8, 32, 256, 1, 2, 4, 4, stream=1, occupancy=2),
              T(8, 64, 128, 1, 4, 2, 4, stream=1, occupancy=3), T(8, 64, 128, 1, 4, 2, 4, stream=1, occupancy=2)],
    # one token of int4 per channel over a short K: the rings of eight slots the planner took (they spill 8-32 bytes
    # in their loops) against the same rings of four slots, and the wide ring
    "i4ch": [G.DECODE_INT4_SHORT_K, T(8, 16, 512, 1, 1, 8, 4, stream=4, occupancy=2),
             T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2), T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2),
             G.DECODE_INT4_WIDE],
    # 3-bit raw codes with the k-half factor (Dequant::RAW_KH) at 1-4 tokens: the long-K ring the planner takes at
    # one token (one CTA per SM), 64-row rings of one CTA per SM (one wave on 8192 rows), a deeper ring, the
    # short-K ring shapes, and the warpgroup decode tiles
    "dec3k": [G.replace(G.DECODE_LONG_K, occupancy=1), T(8, 64, 256, 1, 4, 4, 4, stream=4, occupancy=1),
              T(8, 64, 256, 1, 4, 4, 8, stream=4, occupancy=1), T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=1),
              T(8, 16, 512, 1, 1, 8, 4, stream=4, occupancy=2), T(8, 64, 256, 1, 4, 1, 4, wgmma=1, fold=1),
              T(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1)],
    # deeper rings at one token (more blocks per turn: the turn's activation copies, barrier and ring rotation
    # shared by more blocks): 2-bit codes (the planner's DECODE_INT2_LONG_K first), then 3-bit raw codes
    "deep2": [G.DECODE_INT2_LONG_K, T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2),
              T(8, 32, 256, 1, 2, 4, 6, stream=4, occupancy=2), T(8, 64, 256, 1, 4, 4, 8, stream=4, occupancy=1),
              T(8, 32, 128, 1, 2, 2, 8, stream=4, occupancy=4), T(8, 16, 256, 1, 1, 4, 8, stream=4, occupancy=4)],
    "deep3": [G.DECODE_INT3, G.DECODE_INT3_WIDE, T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2),
              T(8, 64, 256, 1, 4, 4, 6, stream=4, occupancy=1), T(8, 32, 256, 1, 2, 4, 6, stream=4, occupancy=2),
              T(8, 64, 128, 1, 4, 2, 8, stream=4, occupancy=2)],
    # 3-bit raw codes at one token on layers of more than 8192 rows: the warpgroup tile the planner keeps there
    # against rings of 112-256 rows (one CTA of 14-16 warps per SM, about one wave on 132 SMs)
    "wide3": [T(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1), G.DECODE_INT3_WIDE,
              T(8, 128, 128, 1, 8, 2, 4, stream=4, occupancy=1), T(8, 112, 128, 1, 7, 2, 4, stream=4, occupancy=1),
              T(8, 224, 64, 1, 14, 1, 4, stream=4, occupancy=1), T(8, 256, 64, 1, 16, 1, 4, stream=4, occupancy=1)],
    # 3-bit raw codes after layout v4 (one LOP3 per pair, no k-half factor) at 1-2 tokens: the planner's rings, deeper
    # ones, the 112-row ring and the warpgroup tile
    "dec3v4": [G.DECODE_INT3, G.DECODE_INT3_WIDE, G.DECODE_INT3_128, T(8, 64, 256, 1, 4, 4, 8, stream=4, occupancy=1),
               T(8, 128, 128, 1, 8, 2, 8, stream=4, occupancy=1), T(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1)],
    # the planner's one-token rings of raw codes on 8192x8192 (int3 g128: 64 rows; int4 g128: 32 rows)
    "corr": [T(8, 64, 256, 1, 4, 4, 4, stream=4), T(8, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2)],
    # 3-bit one-token rings after one_corr (a correction MMA per 128 columns): the planner's against rings of two
    # CTAs per SM (the int4 tiles)
    "one3": [G.DECODE_INT3_WIDE, G.DECODE_INT3, G.DECODE_INT3_128, G.DECODE_INT4_LONG_K,
             G.DECODE_LONG_K, G.DECODE_INT4_WIDE, G.DECODE_INT4_SHORT_K, T(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2)],
    # ... on layers of 14336 and 28672 rows: the 224- and 112-row rings too
    "wide3v4": [G.DECODE_INT3_WIDE, G.DECODE_INT3_128, G.DECODE_INT3_224, G.DECODE_INT3_112,
                T(8, 128, 128, 1, 8, 2, 8, stream=4, occupancy=1), T(8, 128, 256, 1, 4, 1, 4, wgmma=1, fold=1)],
    # ... at 5-8 tokens, where the planner keeps the warpgroup tiles (first): the rings against them
    "dec3m8": [G.replace(G.WG_DECODE, fold=1), G.replace(G.WG_DECODE_TWO, fold=1), G.DECODE_INT3, G.DECODE_INT3_WIDE,
               G.DECODE_INT3_128],
    "wide3m8": [G.replace(G.WG_DECODE_TWO, fold=1), G.DECODE_INT3_128, G.DECODE_INT3_112, G.DECODE_INT3_224],
    # 9-16 tokens: the planner's warpgroup tiles against register rings of two 8-token columns per warp whose K runs
    # keep a window of turns of activations (xwin) instead of the whole run, so that 16 rows over a long K need no
    # K split for their shared memory (without the window: r16, 19-20 us on 8192x8192)
    "x16": [G.replace(G.WG_16_DEEP, fold=1), G.replace(G.WG_16_DEEP_TWO, fold=1),
            T(16, 64, 256, 1, 4, 4, 4, stream=4, occupancy=1, xwin=2), T(16, 64, 256, 1, 4, 4, 4, stream=4, occupancy=1, xwin=3),
            T(16, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2, xwin=2), T(16, 64, 128, 1, 4, 2, 4, stream=4, occupancy=2, xwin=2),
            T(16, 32, 512, 1, 2, 8, 4, stream=4, occupancy=1, xwin=2), T(16, 128, 128, 1, 8, 2, 4, stream=4, occupancy=1, xwin=2),
            T(16, 64, 256, 1, 4, 4, 4, stream=4, occupancy=1)],
    # 9-16 tokens on small layers (K <= 5120, at most 6144 rows; r16 / x16 ran only the larger ones): the
    # planner's warpgroup tile against register rings of two 8-token columns per warp, with and without a window
    "s16": [G.replace(G.WG_16_DEEP, fold=1), T(16, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2),
            T(16, 32, 256, 1, 2, 4, 4, stream=4, occupancy=2, xwin=2), T(16, 16, 512, 1, 1, 8, 4, stream=4, occupancy=2),
            T(16, 16, 512, 1, 1, 8, 4, stream=4, occupancy=2, xwin=2), T(16, 64, 128, 1, 4, 2, 4, stream=4, occupancy=2),
            T(16, 16, 256, 1, 1, 4, 4, stream=4, occupancy=4), T(16, 32, 256, 1, 2, 4, 4, stream=4, occupancy=1, xwin=3),
            G.replace(G.WG_16_NARROW, fold=1)],
    # s16's winner on layers of at most one 32-row CTA per SM (kernel alone; through the bench it lost to the
    # warpgroup tile launched programmatically: perf notes, sixty-first session) against its neighbours
    "s16b": [G.replace(G.WG_16_DEEP, fold=1), R16, G.replace(R16, xwin=2), G.replace(R16, xwin=4),
             T(16, 64, 128, 1, 4, 2, 4, stream=4, occupancy=1, xwin=3), T(16, 16, 512, 1, 1, 8, 4, stream=4, occupancy=1, xwin=3),
             G.replace(R16, stages=6, xwin=2), G.replace(G.WG_16_DEEP_TWO, fold=1)],
    # 1-8 tokens: the planner's register rings with and without an activation window (xwin: no K split for the
    # activations' shared memory), and the eight-token warpgroup tile
    "xw8": [G.DECODE_INT4_LONG_K, G.replace(G.DECODE_INT4_LONG_K, xwin=2), G.DECODE_INT4_WIDE,
            G.replace(G.DECODE_INT4_WIDE, xwin=2), G.replace(G.WG_DECODE, fold=1)],
    # the same at 7-8 tokens for the formats the planner keeps off the window (int4 per channel, int2): the wide ring,
    # the windowed long-K ring, the eight-token warpgroup tile unfolded and folded
    "xw8b": [G.DECODE_INT4_WIDE, G.DECODE_INT4_LONG_K_WINDOW, G.WG_DECODE, G.replace(G.WG_DECODE, fold=1)],
    # 3-bit codes at 4-8 tokens: the warpgroup decode tiles the planner takes from 5 tokens against the 3-bit rings
    # with and without a window of activations
    "w3x": [G.replace(G.WG_DECODE, fold=1), G.replace(G.WG_DECODE_TWO, fold=1), G.DECODE_INT3,
            G.replace(G.DECODE_INT3, xwin=2), G.DECODE_INT3_WIDE, G.replace(G.DECODE_INT3_WIDE, xwin=2),
            G.replace(G.DECODE_INT3_128, xwin=2)],
    # one tile each, for layers of 1, 1.7 and 2 CTAs per SM (gpu_run.sh bal): whether the SMs that hold two CTAs of a
    # one-wave launch set its time
    "bal1": [G.replace(G.WG_DECODE_TWO, fold=1)], "bal16": [G.replace(G.WG_16_DEEP_TWO, fold=1)], "bal64": [G.WG_64],
    # 9-16 tokens: the 16-token warpgroup tile with one and two 64-row wgmmas per warpgroup
    "w16": [G.replace(G.WG_16_DEEP, fold=1), G.replace(G.WG_16_DEEP_TWO, fold=1)],
    # int4 at one token on 28672x8192: the warpgroup tile against one-wave rings of one CTA of 14-16 warps per SM
    # (the 3-bit codes' DECODE_INT3_224 shape)
    "w28b": [G.replace(G.WG_DECODE_TWO, fold=1), T(8, 224, 64, 1, 14, 1, 4, stream=4, occupancy=1),
             T(8, 256, 64, 1, 16, 1, 4, stream=4, occupancy=1), T(8, 128, 128, 1, 8, 2, 4, stream=4, occupancy=1)],
    # stream-K (Tile.sk: equal runs of the (tile, K step) space per CTA) against the planner's warpgroup tiles at 1, 16
    # and 64 tokens (gpu_run.sh sk)
    # one token of 2- and 3-bit codes: the planner's register rings (4 blocks in flight per warp) against deeper
    # ones (6, 8): a 2-bit block is half an int4 one, so the same ring keeps half the bytes in flight per SM
    # one token of 2-bit codes on 4097-8192 rows over a long K (W2A16's 8192x8192): the planner's eight-warp ring of two
    # CTAs per SM (two K slices) against 16-warp rings of one CTA per SM, the whole K each (no split-K sum)
    "s53g": [G.DECODE_INT2_LONG_K, G.DECODE_INT3_WIDE, G.replace(G.DECODE_INT3_WIDE, stages=8), G.DECODE_INT3_128,
             G.DECODE_INT3],
    "s44r": [G.DECODE_INT4_LONG_K, G.replace(G.DECODE_INT4_LONG_K, stages=6), G.replace(G.DECODE_INT4_LONG_K, stages=8),
             G.DECODE_INT4_WIDE, G.replace(G.DECODE_INT4_WIDE, stages=8), G.DECODE_INT3, G.replace(G.DECODE_INT3, stages=8)],
    # one token of 2-bit codes at three CTAs per SM (79-80 registers, no spills: the one-token loop's instructions
    # as at two) against the planner's two
    "s44o": [G.DECODE_INT4_LONG_K, G.replace(G.DECODE_INT4_LONG_K, occupancy=3), G.DECODE_INT4_WIDE,
             G.replace(G.DECODE_INT4_WIDE, occupancy=3), T(8, 112, 64, 1, 7, 1, 4, stream=4, occupancy=3)],
    "sk1": [G.replace(G.WG_DECODE_TWO, fold=1), G.replace(G.WG_DECODE_TWO, fold=1, sk=1), G.replace(G.WG_DECODE, fold=1, sk=1)],
    "sk16": [G.replace(G.WG_16_DEEP_TWO, fold=1), G.replace(G.WG_16_DEEP, fold=1), G.replace(G.WG_16_DEEP_TWO, fold=1, sk=1),
             G.replace(G.WG_16_DEEP, fold=1, sk=1)],
    # byte operands with zero points above 128 tokens (mma.sync): BYTE_TILE_LARGE (255 registers and 32 bytes
    # of stack for uint4 with integer zero points on sm_90a) against tiles that keep their registers
    "bytezp": [G.BYTE_TILE_LARGE, T(64, 128, 64, 2, 4, 1, 4), T(128, 64, 64, 4, 2, 1, 4), T(64, 128, 128, 2, 4, 1, 3),
               T(128, 128, 64, 4, 4, 1, 3)],
    # byte operands in groups of 64 values above 128 tokens (warpgroup tiles folding two partial sets per block):
    # the mma.sync tile they ran before, the 128-token tiles (which spill 48-176 bytes), the 64-token ones (which do not)
    "bg64": [G.BYTE_TILE_LARGE, G.WG_128, G.replace(G.WG_128, tma=1), G.WG_64, G.replace(G.WG_64, tma=1)],
    # (with --defines ',HUMMING_WAIT_FIRST=0': the 128-token TMA tile of bg64 retiring each block's group before the
    # next block's dequantization against after it)
    "bg128": [G.replace(G.WG_128, tma=1)],
    # (with --defines ',HUMMING_WAIT_FIRST=2': the byte tiles of one partial set per block, retiring before the next
    # block's dequantization against after it)
    "bwf128": [G.WG_128], "bwf8": [G.BYTE_WG_8BIT], "bwf64": [G.WG_64], "bwf64t": [G.WG_64_TMA],
    "sk64": [G.WG_64, G.WG_64_TMA, G.replace(G.WG_64, occupancy=2, sk=1), G.replace(G.WG_64_NARROW, sk=1)],
    # 8-bit weight codes on 16-bit operands (twice the weight bytes per stage of the 4-bit codes the warpgroup tiles
    # were sized on): the planner's tile, then the same with fewer stages (more CTAs per SM: WG_16_TWO holds one
    # per SM at 6 stages, two at 4, three at 3; WG_32 two at 4, three at 3; WG_64 one at 4, two at 3), then the
    # 64-row tile of the range
    "occ8_16": [G.WG_16_TWO, G.replace(G.WG_16_TWO, stages=4), G.replace(G.WG_16_TWO, stages=3), G.WG_16_NARROW],
    "occ8_16b": [G.WG_16_TWO, G.replace(G.WG_16_TWO, stages=5), G.replace(G.WG_16_TWO, stages=4)],
    "occ8_32": [G.WG_32, G.replace(G.WG_32, stages=3), G.WG_32_NARROW],
    "occ8_64": [G.WG_64, G.replace(G.WG_64, stages=3), G.WG_64_TMA],
    "bwg256c": [T(256, 128, 128, 1, 8, 1, 3, wgmma=1), T(128, 256, 128, 1, 16, 1, 3, wgmma=1)],
    # the folded four-block warpgroup tiles (with --defines ',HUMMING_FOLD_SPAN=1': a fold per block against one per
    # group of two blocks): 9-16 tokens with one and two 64-row wgmmas per warpgroup, and the decode tiles
    "span16": [G.replace(G.WG_16_DEEP, fold=1), G.replace(G.WG_16_DEEP_TWO, fold=1),
               G.replace(G.WG_16_DEEP, fold=1, stages=5), G.replace(G.WG_16_DEEP, fold=1, stages=3)],
    # 17-64 tokens with the group scales folded per two blocks: the planner's tiles against the folded BK = 256 ones
    "span32": [G.replace(G.WG_32_NARROW, fold=1), G.replace(G.WG_32_DEEP, fold=1)],
    "span64": [G.WG_64_TMA, G.replace(G.WG_64_TMA, fold=1), T(64, 64, 256, 1, 4, 1, 3, wgmma=1, tma=1, fold=1)],
    "span1": [G.replace(G.WG_DECODE_TWO, fold=1), G.replace(G.WG_DECODE, fold=1), G.replace(G.WG_DECODE_TWO, fold=1, stages=5)],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4096x4096,14336x4096,4096x14336,8192x8192,28672x8192")
    ap.add_argument("--m", default="1")
    ap.add_argument("--groups", default="decode", help="comma list of " + ",".join(GROUPS))
    ap.add_argument("--weight", default="int4")
    ap.add_argument("--group", type=int, default=128, help="group size (0: per channel)")
    ap.add_argument("--scale-fmt", default=None, help="the group scales' format (e8m0 for MXFP4, e4m3 for NVFP4)")
    ap.add_argument("--zero-point", default="none", help="none, int or float (unsigned codes: uint4, ...)")
    ap.add_argument("--act", default="fp16", help="fp16, or int8 / e4m3 (dynamic per token: the byte-operand kernels)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--target-ms", type=float, default=4.0, help="replay time per sample")
    ap.add_argument("--ctas", default="0",
                    help="comma list: each prefill tile also with K split for this many CTAs per SM "
                         "(0: the launcher's choice)")
    ap.add_argument("--clusters", default="0",
                    help="comma list: each candidate also with its K slices summed in clusters of up to this many "
                         "CTAs (Launcher.cluster_split; 0: the workspace)")
    ap.add_argument("--defines", default="",
                    help="comma list of kernel build variants, each a '+'-joined list of NAME[=VALUE] macros "
                         "(empty: the plain build), e.g. ',HUMMING_X_SHARED_ONE': every candidate both ways")
    ap.add_argument("--json")
    ap.add_argument("--bf16", action="store_true", help="bf16 activations and outputs (fp16 otherwise)")
    args = ap.parse_args()
    variants = [tuple(tuple((d.split("=", 1) + ["1"])[:2]) for d in v.split("+") if d) for v in args.defines.split(",")]
    ctas_list = [int(v) for v in args.ctas.split(",")]
    cl_list = [int(v) for v in args.clusters.split(",")]
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    sm, smem, smem_sm = (props.multi_processor_count, props.shared_memory_per_block_optin,
                         props.shared_memory_per_multiprocessor)
    target = f"sm_{props.major}{props.minor}" + ("a" if props.major >= 9 else "")
    scheme = (WeightScheme(args.weight, "channel", scale_fmt="fp32") if args.group == 0 else
              WeightScheme(args.weight, "group", args.group, zero_point=args.zero_point,
                           **({"scale_fmt": args.scale_fmt} if args.scale_fmt else {})))
    op8 = {"int8": 1, "e4m3": 2}.get(args.act, 0)
    rec = G.recipe_for(scheme, bf16=args.bf16, out_bf16=args.bf16, caps_cp_async=True, k8mma=False, target=target,
                       act_scale=1 if op8 else 0, op8=op8)
    act = ActivationScheme(args.act, "dynamic_token") if op8 else None
    shapes = [tuple(map(int, s.split("x"))) for s in args.shapes.split(",")]
    ms = [int(v) for v in args.m.split(",")]
    groups = args.groups.split(",")
    from humming.jit import warmup

    recs = [dataclasses.replace(rec, defines=tuple(rec.defines) + v) for v in variants]
    warmup(list(dict.fromkeys(G.kernel_spec(r, G.fit_tile(t, rec, smem, G.padded_k(k, rec) // rec.ku))
                              for n, k in shapes for g in groups for t in GROUPS[g] if not t.fold or G.can_fold(rec)
                              for r in recs)))
    timer, stream = CudaGraphTimer(dev), StreamReader(dev)
    rows = []
    for n, k in shapes:
        qw = R.quantize(torch.randn(n, k, device=dev) * 0.02, scheme)
        pw0 = G.pack_weight(qw, rec, dev)
        copies = max(2, math.ceil(3 * props.L2_cache_size / pw0.nbytes))
        pws = [pw0] + [G.PackedWeight(**{**pw0.__dict__, "w": pw0.w.clone(),
                                          "sz": pw0.sz.clone() if pw0.sz is not None else None})
                       for _ in range(copies - 1)]
        t_stream = sample(timer, timer.build(stream.calls(pw0.nbytes, copies)), copies, args, rounds=3)
        timer.release()
        stream.release()
        for m in ms:
            xdt = torch.bfloat16 if args.bf16 else torch.float16
            x = torch.randn(m, k, device=dev, dtype=xdt)
            y = torch.empty(m, n, device=dev, dtype=xdt)
            ref = R.gemm(x.float(), qw, act)
            xs = None
            if op8:  # the int8 codes and per-token scales the kernel takes (quantized once, outside the timing)
                from humming.ops import quantize_activation

                x, xs = quantize_activation(x, args.act, "dynamic_token")
                xs = xs.reshape(-1).contiguous()
            cands = []
            for g in groups:
                for t in GROUPS[g]:
                    if t.fold and not G.can_fold(rec):
                        continue  # (no group scales over whole blocks: nothing to fold)
                    t = G.fit_tile(t, rec, smem, pw0.kp // rec.ku)
                    for c_sm, cl, vi in [(c_sm, cl, vi) for c_sm in (ctas_list if not t.stream else [1]) for cl in cl_list
                                         for vi in range(len(recs))]:
                        if any(c["tile"] == t and c["ctas"] == c_sm and c["cl"] == cl and c["vi"] == vi for c in cands):
                            continue
                        Ls = [G.Launcher(G.PackedWeight(**{**pw.__dict__, "recipe": recs[vi]}) if vi else pw,
                                         [(1, None, t)], sm, max_split=16 if m <= 64 or c_sm > 1 else 1,
                                         smem_per_sm=smem_sm, cluster_split=cl) for pw in pws]
                        for L in Ls:  # (0: the launcher's own choice, Launcher.ctas_for)
                            L.ctas_per_sm = c_sm or None
                        y.fill_(float("nan"))
                        Ls[0](x, y, xs)
                        torch.cuda.synchronize()
                        err = float((y.float() - ref).abs().max() / ref.abs().max())
                        cz = Ls[0]._by_m[m][7]
                        cands.append({"tile": t, "ctas": c_sm, "cl": cl, "cz": cz, "vi": vi, "split": Ls[0]._by_m[m][1][2], "Ls": Ls,
                                      "err": err, "samples": [], "ratios": []})
            # (a graph per candidate and round, released after its sample: the split-K
            # workspace a graph captured must not be reallocated under it)
            for _ in range(args.rounds):
                order = list(range(len(cands)))
                random.shuffle(order)
                times = {}
                for i in order:
                    replay = timer.build([lambda L=L: L(x, y, xs) for L in cands[i]["Ls"]])
                    times[i] = sample(timer, replay, copies, args)
                    timer.release()
                    mma_sync_launch._workspaces.clear()  # (each build's side stream got one of its own)
                for i in order:
                    cands[i]["samples"].append(times[i])
                    cands[i]["ratios"].append(times[i] / times[0])
            for c in cands:
                c["us"] = statistics.median(c["samples"])
                c["ratio"] = statistics.median(c["ratios"])
            cands.sort(key=lambda c: c["ratio"])
            print(f"{n:>6}x{k:<6} M={m:<4} stream {t_stream:6.2f} us  (baseline {cands and GROUPS[groups[0]][0].to_dict()})")
            for c in cands:
                flag = "  BAD" if not c["err"] < 5e-3 else ""
                print(f"    {c['us']:8.2f} us  x{c['us'] / t_stream:5.2f} stream  {c['ratio']:5.3f} x base  "
                      f"spread {(max(c['samples']) - min(c['samples'])) / c['us']:4.2f}  err {c['err']:.1e}{flag}  "
                      f"ctas/SM {c['ctas']}  split {c['split']} cluster {c['cz']}  {c['tile'].to_dict()}"
                      + (f"  defines {variants[c['vi']]}" if variants[c['vi']] else ""), flush=True)
            rows.append({"n": n, "k": k, "m": m, "stream_us": t_stream,
                         "cands": [{"tile": c["tile"].to_dict(), "ctas": c["ctas"], "split": c["split"], "cluster": c["cz"],
                                    "defines": variants[c["vi"]],
                                    "us": c["us"], "ratio": c["ratio"],
                                    "samples": c["samples"], "err": c["err"]} for c in cands]})
        del pws
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": props.name, "rows": rows}, f, indent=1)


def sample(timer, replay, copies, args, rounds=1):
    """Median over `rounds` of the time per launch of `replay` (``copies`` launches), us."""
    replay()
    torch.cuda.synchronize()
    one = timer.time(replay, 1)
    iters = max(3, math.ceil(args.target_ms * 1e-3 / max(one, 1e-6)))
    return statistics.median(timer.time(replay, iters) / iters / copies * 1e6 for _ in range(rounds))


if __name__ == "__main__":
    main()
