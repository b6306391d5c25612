"""The kernel families of the NVIDIA backend.

* ``mma_sync`` -- warp-level ``mma.sync`` kernels (every chip with tensor cores,
  from Turing): implemented for fp16/bf16 operands (``limits()`` says what is
  not yet, from :func:`humming_nvidia.gemm_mma_sync.check_layer`).
* ``wgmma`` -- Hopper warpgroup MMA with TMA: declared, not implemented yet.
* ``tcgen05`` -- Blackwell datacenter UMMA (tensor memory): declared.
* ``mma_block_scaled`` -- block-scaled ``mma.sync`` of consumer Blackwell
  (``kind::mxf8f6f4/mxf4/mxf4nvf4``): declared.

A declared family lets the planner answer "what would the hardware do"
(``plan(..., families="hardware")``); only implemented ones run. Each family
names its components with the variant names the kernel headers implement.
"""
from __future__ import annotations


from humming.capabilities import parse_shape
from humming.planner import FamilyBase, WeightLayout
from humming.planner.family import mma_type_tag

from . import layout

__all__ = ["MmaSyncFamily", "WgmmaFamily", "Tcgen05Family", "BlockScaledMmaFamily", "FAMILIES",
           "dequantizer_for", "best_shape", "mma_shape"]

def _k(shape: str) -> int:
    return parse_shape(shape)[2]


def best_shape(shapes, divides: int | None = None) -> str | None:
    """The shape with the largest K (then M 16, then N 8): fewest instructions per K step.

    With ``divides``, only shapes whose K divides it (scales applied per K group
    on partial sums need every instruction inside one group).
    """
    cands = [s for s in shapes if divides is None or divides % _k(s) == 0]
    if not cands:
        return None
    return max(cands, key=lambda s: (_k(s), parse_shape(s)[0] == 16, 8 in parse_shape(s)[1]))


def scales_on_partial_sums(layer, compute) -> bool:
    return layer.weight.scale in ("group", "block") and not compute.is_16bit and not compute.block_scaled


def mma_shape(layer, compute) -> str | None:
    """The instruction shape a family issues for this layer."""
    if scales_on_partial_sums(layer, compute):
        return best_shape(compute.shapes, divides=layer.weight.group_size)
    return best_shape(compute.shapes)


def dequantizer_for(layer, caps, compute) -> str:
    """How stored weight codes become the weight operand ``compute.b``."""
    w = layer.weight
    if compute.b == w.fmt and w.zero_point == "none" and w.implicit_offset == 0:
        return "passthrough"
    if not w.is_float:
        return "int_bittrick"
    if w.fmt == "e2m1" and compute.b == "e4m3" and w.scale == "group" and w.scale_fmt == "e8m0":
        return "fused_e2m1_to_e4m3"
    if caps.can_convert(w.fmt, compute.b):
        return "native_cvt"
    return "float_rebias"


def _types(compute) -> str:
    a, b = mma_type_tag(compute.a), mma_type_tag(compute.b)
    return a if a == b else f"{a}x{b}"


def _scheduler(layer) -> str:
    return "moe_grouped" if layer.is_moe else "data_parallel"


def _epilogue(layer) -> str:
    return "moe_topk" if layer.is_moe else "scale_bias"


class _NvidiaFamily(FamilyBase):
    backend = "nvidia"

    def accepts(self, op) -> bool:
        return not op.sass_patch  # e0m3 / e3m4 need cubin patching, which no component does

    def _loader(self, caps) -> str:
        return "cp_async" if caps.has("cp_async") else "ldg"

    def _dequantizer(self, layer, caps, compute) -> str:
        return dequantizer_for(layer, caps, compute)

    def _mma(self, layer, compute) -> str:
        """``<family>.<kind>`` or ``<family>.<a>[x<b>]``, e.g. ``tcgen05.mxf4nvf4``, ``wgmma.e4m3``."""
        return f"{self.name}.{compute.kind or _types(compute)}"

    def components(self, layer, caps, compute) -> dict:
        return {
            "loader": self._loader(caps),
            "dequantizer": self._dequantizer(layer, caps, compute),
            "mma": self._mma(layer, compute),
            "scheduler": _scheduler(layer),
            "epilogue": _epilogue(layer),
        }

    def check(self, layer, caps, compute) -> list[str]:
        if mma_shape(layer, compute) is None:
            ks = sorted({_k(s) for s in compute.shapes})
            return [f"group scales on partial sums need WeightScheme.group_size to be a multiple of "
                    f"an MMA K ({', '.join(map(str, ks))} for {compute.a} x {compute.b}); "
                    f"found {layer.weight.group_size}"]
        return []


class MmaSyncFamily(_NvidiaFamily):
    name = "mma_sync"
    mma_family = "mma_sync"
    implemented = True
    priority = 10

    def accepts(self, op) -> bool:
        # plain mma.sync; the kind:: forms belong to mma_block_scaled
        return op.kind is None and super().accepts(op)

    def _mma(self, layer, compute) -> str:
        return f"mma_sync.{mma_shape(layer, compute)}.{_types(compute)}"

    def tuned(self, layer, caps, compute, tuning, components, scales):
        """Per M range of the final tuning (the planner's, or a plugin's override): group scales of 16-bit
        layers go to the fp32 partial sums on the small-M tiles and to the dequantized weights above
        (gemm_mma_sync.scale_places); on sm_90a the ranges whose tiles run the warpgroup scheduler
        (GemmMmaSync::run_wg) say so in the MMA slot, and those whose stages TMA bulk copies fill in the
        loader's; on chips with programmatic dependent launch the decode (stream) tiles' launches overlap
        the previous kernel (Launcher.pdl), and on chips with thread-block clusters split-K launches of up
        to the portable cluster size of slices sum them in a cluster (Launcher.cluster_split), which the
        scheduler slot says."""
        from .gemm_mma_sync import (cluster_split_limit, group_padding_note, moe_gathers_rows, moe_pdl_enabled,
                                     scale_places, wave_step_labels)

        out = {"scales": scale_places(layer, caps, compute, tuning, scales)}
        note = group_padding_note(layer, compute)  # (scale groups the kernels pad: gemm_mma_sync.kernel_group)
        if note:
            out["notes"] = [note]
        if components.get("dequantizer") == "int_bittrick_split":
            from .gemm_mma_sync import FP8_SPLIT_MAX_BM

            out.setdefault("notes", []).append(
                f"the int4 codes become two {compute.a} operands per register on the warpgroup tiles of at most "
                f"{FP8_SPLIT_MAX_BM} tokens (8 + the low three bits, and -16 or -8 by the top bit: one LOP3 each, "
                f"two wgmmas per k32 step); larger tiles convert them by F2FP after a PRMT per word (H100: 2-8 % "
                f"faster at 1-16 tokens, 1-4 % slower from 64; HUMMING_INT_FP8_SPLIT=1, off by default)")
        if components.get("dequantizer") == "int_bittrick_cvt":
            # (DequantBytes::INT_FP8; gpu_run.sh s55a on the H200, int4 g128 x e4m3 per token, the bench)
            out.setdefault("notes", []).append(
                f"the integer weight codes become {compute.a} operands in the kernels (an fp16 pair and a "
                f"conversion per two codes): {'dense layers ran ' if layer.is_moe else ''}faster than 16-bit "
                f"operands from 64 tokens (H200: 1.05-1.32x), slower at 1-16 tokens on large layers (0.70-0.86x on "
                f"28672x8192 and at M=1 on 8192x8192){'; MoE layers measured mixed on Hopper (H100, gpu_run.sh s56b)' if layer.is_moe else ''}; "
                f"HUMMING_INT_FP8=0 keeps 16-bit operands")
        comps = {}
        wg = [r for r in tuning if r.config.get("wgmma")]
        if wg:
            tail = all(r.config.get("wgmma") for r in tuning if r.lo >= wg[0].lo)
            where = f"M >= {wg[0].lo}" if tail else ", ".join(r.label() for r in wg)
            comps["mma"] = f"{components['mma']} + wgmma.m64nNk{16 if compute.is_16bit else 32}.{_types(compute)} ({where})"
            tma = [r for r in wg if r.config.get("tma")]
            if tma:
                comps["loader"] = (f"{components['loader']} + tma_bulk (M "
                                   + ", ".join(f"{r.lo}-{r.hi}" if r.hi else f">= {r.lo}" for r in tma) + ")")
        sched = components["scheduler"]
        if layer.is_moe:  # (humming.ops.moe: one launch per call, its K slices summed in the workspace)
            out.setdefault("notes", []).append(
                "MoE: the M ranges count the rows one expert gets, ceil(M x topk / experts), at least 2 (a block "
                "runs the tile's BM rows); each call routes the (token, expert) pairs into blocks of the range "
                "tile's BM rows, one expert per block, and launches one kernel over them. A call of at most "
                "experts / 4 pairs routes directly (no routing kernel; HUMMING_MOE_DIRECT=0 turns it off): one pair "
                "per block, on the tile for one row (M 1-1 where the plan has a tile of its own for it, else the "
                "first range's; or the next range's wider ring where its CTAs fill the SMs three times over)")
            if moe_gathers_rows(layer, compute):  # (HUMMING_MOE_XGATHER: no gather kernel)
                comps["loader"] = (f"{comps.get('loader', components['loader'])} + token_rows (each routed row "
                                   "read from its token's row of x: no gather kernel)")
            if moe_pdl_enabled(caps):  # (the routing, gather, GEMM and combine launches: each waits first)
                comps["scheduler"] = f"{sched} + programmatic_launch (every launch of a call)"
            if comps:
                out["components"] = comps
            return out
        most = cluster_split_limit(caps)
        if most > 1 and any(int(r.config.get("split_k", 1)) > 1 for r in tuning):
            sched += f" + cluster_sum (<= {most} slices)"
        sk = [r.label() for r in tuning if r.config.get("sk")]
        if sk:
            sched += f" + stream_k ({', '.join(sk)})"
        ranges = [r.label() for r in tuning if r.config.get("stream")] if caps.has("pdl") else []
        if caps.has("pdl") and any(r.config.get("wgmma") and not r.config.get("tma") for r in tuning):
            ranges.append("warpgroup tiles whose CTAs spread evenly")  # (decided per launch: Launcher.crowded)
        if ranges:
            sched += f" + programmatic_launch ({', '.join(ranges)})"
        steps = wave_step_labels(layer, caps, compute, tuning)
        if steps:  # (gemm_mma_sync.wave_steps)
            sched += (" + tile_by_waves (fewer tokens per M tile where the 256-token grid would end in a short wave "
                      "or a part-empty M tile: " + "; ".join(steps) + ")")
        if sched != components["scheduler"]:
            comps["scheduler"] = sched
        if comps:
            out["components"] = comps
        return out

    def native_form(self, layer, caps, compute):
        """On sm_90a the warpgroup scheduler issues wgmma: from 2 tokens (16-bit operands; from one
        on layers of more than 16384 rows whose group scales fold) or at every M (int8 and fp8
        operands, 8-bit weight codes), where the layer suits it (gemm_mma_sync.wgmma_from)."""
        from .gemm_mma_sync import wgmma_from

        m0 = wgmma_from(layer, caps, compute)
        return ("wgmma", m0) if m0 is not None else None

    def _dequantizer(self, layer, caps, compute) -> str:
        from .gemm_mma_sync import cvt_dequant

        d = dequantizer_for(layer, caps, compute)
        # gemm/dequant.cuh converts the pairs of CVT_DEQUANT (e4m3 into fp16) with the chip's cvt; it
        # re-biases other float codes into fp16/bf16
        if d == "native_cvt" and compute.is_16bit and not cvt_dequant(layer.weight.fmt, compute.b):
            return "float_rebias"
        # integer codes made fp8 operands: the bit trick into fp16 pairs, then the chip's cvt (DequantBytes::INT_FP8);
        # or (HUMMING_INT_FP8_SPLIT=1) int4 codes as two e4m3 operands per register, one LOP3 each
        if d == "int_bittrick" and compute.b in ("e4m3", "e5m2"):
            from .gemm_mma_sync import int_fp8_split

            return "int_bittrick_split" if int_fp8_split(layer, caps, compute) else "int_bittrick_cvt"
        return d

    def limits(self, layer, caps, compute) -> list[str]:
        """What this version's kernels (``gemm_mma_sync``) cannot do yet: 8-bit and 4-bit
        operands, MoE, per-group activation scales..."""
        from .gemm_mma_sync import check_layer

        return check_layer(layer, caps, compute)

    def tuning(self, layer, caps, compute):
        from .gemm_mma_sync import tuning

        return tuning(layer, caps, compute)

    def check_tuning(self, layer, caps, compute, tuning) -> list[str]:
        """Why a measured tuning (a tuning database entry) cannot run: gemm_mma_sync.check_tuning."""
        from .gemm_mma_sync import check_tuning

        return check_tuning(layer, caps, compute, tuning)

    def tuning_version(self) -> str:
        """What a measured tuning was measured with: gemm_mma_sync.tuning_version."""
        from .gemm_mma_sync import tuning_version

        return tuning_version()

    def tuning_candidates(self, layer, caps, compute, tuning, index: int) -> list[dict]:
        """The configs `humming tune` times for ``tuning[index]``: gemm_mma_sync.tuning_candidates."""
        from .gemm_mma_sync import tuning_candidates

        return tuning_candidates(layer, caps, compute, tuning, index)

    # the kernels themselves live in gemm_mma_sync (imported on first use: planning needs none of it)
    def kernel_spec(self, plan, m: int):
        from .gemm_mma_sync import spec_for_plan

        return spec_for_plan(plan, m)

    def prepare(self, plan, qw, device, hw):
        from .gemm_mma_sync import prepare

        return prepare(plan, qw, device, hw)

    def weight_layout(self, layer, caps, compute) -> WeightLayout:
        from .gemm_mma_sync import kernel_layer

        params = {
            "bits": layer.weight.bits,
            "block": f"{layout.BLOCK_ROWS}x{layout.BLOCK_COLS if compute.is_16bit else layout.BYTE_BLOCK_COLS}",
            "operand": compute.b,
            "mma_shape": mma_shape(layer, compute),
            "dequantizer": self._dequantizer(layer, caps, compute),
        }
        kl = kernel_layer(layer, compute)
        if kl is not layer and kl.weight.group_size != layer.weight.group_size:
            params["group_padding"] = f"{layer.weight.group_size} -> {kl.weight.group_size}"
        if layer.weight.group_offset is not None:  # (a K-shard placed in whole groups: kernel_layer)
            params["group_offset"] = layer.weight.group_offset
        return WeightLayout(layout.LAYOUT_NAME, layout.LAYOUT_VERSION, params)


class WgmmaFamily(_NvidiaFamily):
    name = "wgmma"
    mma_family = "wgmma"
    implemented = False
    priority = 20
    layout_name = "wgmma_fragment"

    def _loader(self, caps) -> str:
        return "tma" if caps.has("tma") else super()._loader(caps)


class Tcgen05Family(WgmmaFamily):
    name = "tcgen05"
    mma_family = "tcgen05"
    priority = 30
    layout_name = "tcgen05_tiles"


class BlockScaledMmaFamily(_NvidiaFamily):
    name = "mma_block_scaled"
    mma_family = "mma_sync"
    implemented = False
    priority = 25
    layout_name = "mma_block_scaled_fragment"

    def accepts(self, op) -> bool:
        # mma.sync kind::f8f6f4 / mxf8f6f4 / mxf4 / mxf4nvf4
        return op.kind is not None and super().accepts(op)

    def check(self, layer, caps, compute) -> list[str]:
        reasons = super().check(layer, caps, compute)
        plain = [op for op in caps.find_mma(compute.a, compute.b, compute.acc, families="mma_sync")
                 if op.kind is None]
        if plain and not compute.block_scaled and compute.a == compute.b:
            reasons.append(f"plain mma.sync multiplies {compute.a} x {compute.b} alike; "
                           f"kind::{compute.kind} adds nothing without block scales or mixed types")
        return reasons


FAMILIES = (MmaSyncFamily(), WgmmaFamily(), Tcgen05Family(), BlockScaledMmaFamily())
