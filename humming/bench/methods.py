"""The methods a workload is run with: humming itself and what a user would
pick instead (cuBLAS fp16/bf16, ``torch._scaled_mm`` fp8, torch's int4
tinygemm; a per-expert torch loop for MoE).

Every method starts from the same random weights and activations
(:class:`WorkloadData`), stores them in its own format, and says how to compute
the exact result of its own operands with ``humming.reference``, so a wrong
kernel is caught before it is timed.

A method has ``unavailable(wl, device) -> reason | None``, ``copy_bytes(data)``
(the bytes one call reads at the least, which sets the number of weight copies),
and ``prepare(data, copies) -> Prepared``; ``Prepared.instance(m)`` gives an
:class:`Instance`: one call per weight copy, and the reference of any rows.
"""
from __future__ import annotations

import importlib
import types
from dataclasses import dataclass
from typing import Callable

import torch

from .. import reference as ref
from ..scheme import ActivationScheme, WeightScheme
from .workloads import Workload

__all__ = ["WorkloadData", "Instance", "Prepared", "Method", "HummingMethod", "CublasMethod",
           "ScaledMMMethod", "TinyGemmMethod", "TorchLoopMoEMethod", "default_methods", "baseline_methods",
           "METHOD_NAMES"]

_TORCH_DTYPE = {"fp16": torch.float16, "bf16": torch.bfloat16}


class WorkloadData:
    """Random weights (normal x 0.02) and activations (normal) of one workload,
    made on ``device`` and shared by every method; deterministic in ``seed``."""

    def __init__(self, wl: Workload, device, seed: int = 0, chunk_elems: int = 1 << 28):
        self.wl = wl
        self.device = torch.device(device)
        self.seed = seed
        self.chunk_elems = chunk_elems
        self._w16 = None
        self._qw = {}
        self._x = {}
        self._ids = {}

    def _gen(self, salt: int) -> torch.Generator:
        g = torch.Generator(device=self.device)
        g.manual_seed(self.seed * 1000003 + salt)
        return g

    @property
    def w16(self) -> torch.Tensor:
        """The master weight, fp16 ``[(E,) N, K]``."""
        if self._w16 is None:
            wl = self.wl
            shape = ((wl.num_experts,) if wl.num_experts else ()) + (wl.n, wl.k)
            w = torch.empty(shape, dtype=torch.float16, device=self.device)
            flat = w.view(-1, wl.k)
            g = self._gen(1)
            rows = max(1, self.chunk_elems // wl.k)
            for r in range(0, flat.shape[0], rows):
                part = flat[r:r + rows]
                part.copy_(torch.randn(part.shape, generator=g, device=self.device) * 0.02)
            self._w16 = w
        return self._w16

    def drop_master(self) -> None:
        """Frees the fp16 master weight (the quantized weights made from it are kept); ``w16`` makes it again."""
        self._w16 = None

    def quantized(self, scheme: WeightScheme) -> ref.QuantizedWeight:
        """The master weight quantized in ``scheme`` (by expert chunks for MoE; act order: a random K permutation,
        each expert its own, as GPTQ's g_idx gives)."""
        if scheme not in self._qw:
            w = self.w16
            g = self._gen(3)

            def perm(experts):
                if not scheme.act_order:
                    return None
                k = w.shape[-1]
                p = [torch.randperm(k, generator=g, device=self.device) for _ in range(experts or 1)]
                return torch.stack(p) if experts else p[0]
            if w.dim() == 2:
                self._qw[scheme] = ref.quantize(w, scheme, perm=perm(0))
            else:
                per = max(1, self.chunk_elems // (w.shape[1] * w.shape[2]))
                parts = [ref.quantize(w[e:e + per], scheme, perm=perm(w[e:e + per].shape[0]))
                         for e in range(0, w.shape[0], per)]
                self._qw[scheme] = parts[0] if len(parts) == 1 else _cat_experts(parts)
        return self._qw[scheme]

    def x(self, m: int) -> torch.Tensor:
        """Activations ``[m, K]`` in fp32 (each method casts them to its own dtype)."""
        if m not in self._x:
            self._x[m] = torch.randn(m, self.wl.k, generator=self._gen(2 + m), device=self.device)
        return self._x[m]

    def topk_ids(self, m: int) -> torch.Tensor:
        """Routing ``[m, topk]`` int32: the top-k of random scores per token."""
        if m not in self._ids:
            wl = self.wl
            scores = torch.rand(m, wl.num_experts, generator=self._gen(7 + m), device=self.device)
            self._ids[m] = scores.topk(wl.topk, dim=1).indices.to(torch.int32)
        return self._ids[m]

    def touched_experts(self, m: int) -> int:
        return int(torch.unique(self.topk_ids(m)).numel())


def _cat_experts(parts: list[ref.QuantizedWeight]) -> ref.QuantizedWeight:
    def cat(name):
        ts = [getattr(p, name) for p in parts]
        return None if ts[0] is None else torch.cat(ts)

    p0 = parts[0]
    return ref.QuantizedWeight(p0.scheme, cat("codes"), cat("scales"), cat("zeros"), cat("global_scale"),
                               cat("perm"), cat("bias"), dict(p0.meta))


def moe_subset(qw: ref.QuantizedWeight, topk_ids: torch.Tensor):
    """(weight of only the experts in ``topk_ids``, ids renumbered into it): the
    reference then dequantizes a few experts, not all of them."""
    experts, local = torch.unique(topk_ids.to(torch.int64), return_inverse=True)
    sub = ref.QuantizedWeight.stack([qw.expert(int(e)) for e in experts.tolist()])
    return sub, local.reshape(topk_ids.shape)


@dataclass
class Instance:
    """One method at one M: ``calls[i]()`` runs with weight copy ``i``;
    ``reference(rows)`` is the exact fp32 result of those output rows (dim 0)."""

    calls: list[Callable[[], torch.Tensor]]
    reference: Callable[[torch.Tensor], torch.Tensor]
    weight_bytes: int
    io_bytes: int


class Prepared:
    """A method's weights in ``copies`` copies; ``instance(m)`` builds the calls."""

    def __init__(self, instance: Callable[[int], Instance], close: Callable[[], None] | None = None,
                 handle=None):
        self._instance = instance
        self._close = close
        self.handle = handle  # the method's own prepared object (humming: the first PreparedWeight)

    def instance(self, m: int) -> Instance:
        return self._instance(m)

    def close(self) -> None:
        if self._close is not None:
            self._close()


class Method:
    """Base: a named way to compute a workload."""

    name = "method"
    role = "baseline"
    kinds = ("dense",)
    tol = 1e-2  # relative Frobenius error allowed against the reference

    def unavailable(self, wl: Workload, device) -> str | None:
        """Why this method cannot run ``wl`` here (None: it can). Workloads of a
        kind not in ``kinds`` are not offered at all."""
        return None

    def copy_bytes(self, data: WorkloadData) -> int:
        raise NotImplementedError

    def prepare(self, data: WorkloadData, copies: int) -> Prepared:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def _dense_instance(data: WorkloadData, weights: list, x: torch.Tensor, fn, reference, weight_bytes: int,
                    out_bytes: int = 2) -> Instance:
    wl = data.wl
    m = x.shape[0]
    return Instance([lambda w=w: fn(x, w) for w in weights], reference, weight_bytes,
                    wl.io_bytes(m, weight_bytes, x.element_size(), out_bytes))


# ---------------------------------------------------------------------------
# humming
# ---------------------------------------------------------------------------


class HummingMethod(Method):
    """``humming.ops.prepare_weight`` once per copy, ``humming.ops.gemm`` /
    ``moe_gemm`` per call; the workload's own schemes."""

    name = "humming"
    role = "primary"
    kinds = ("dense", "moe")

    #: where the ops are looked up, in order (``humming.ops`` is the agreed home)
    OP_MODULES = ("humming.ops", "humming.ops.gemm", "humming.ops.moe")

    @classmethod
    def op(cls, name: str):
        """The callable ``name`` from the first of OP_MODULES that has it, else None."""
        for module in cls.OP_MODULES:
            try:
                found = getattr(importlib.import_module(module), name, None)
            except ImportError:
                continue
            if callable(found) and not isinstance(found, types.ModuleType):
                return found
        return None

    def unavailable(self, wl, device):
        need = ("prepare_weight", "moe_gemm" if wl.num_experts else "gemm")
        missing = [n for n in need if self.op(n) is None]
        if missing:
            return f"humming.ops.{', humming.ops.'.join(missing)} not available in this tree"
        if wl.activation.quant == "static_tensor":
            return "static activation scales need a calibrated scale; the bench runs dynamic ones"
        return None

    def copy_bytes(self, data):
        wl = data.wl
        per_expert = wl.weight.bytes_per_weight(wl.n, wl.k)
        return int(per_expert * (wl.topk if wl.num_experts else 1))

    def prepare(self, data, copies):
        prepare_weight, gemm, moe_gemm = self.op("prepare_weight"), self.op("gemm"), self.op("moe_gemm")
        wl = data.wl
        qw = data.quantized(wl.weight)
        preps = [prepare_weight(qw, layer=wl.layer, device=data.device) for _ in range(copies)]
        nbytes = getattr(preps[0], "nbytes", None)
        total = int(nbytes() if callable(nbytes) else nbytes) if nbytes is not None else int(qw.nbytes())
        act = wl.activation if wl.activation.is_quantized else None
        xdtype = torch.bfloat16 if wl.activation.fmt == "bf16" else torch.float16

        def instance(m):
            x = data.x(m).to(xdtype)
            if not wl.num_experts:
                return _dense_instance(data, preps, x, gemm, lambda rows: ref.gemm(x[rows], qw, act), total)
            ids = data.topk_ids(m)
            wbytes = total * data.touched_experts(m) // wl.num_experts

            def reference(rows):
                sub, local = moe_subset(qw, ids[rows])
                return ref.moe_gemm(x[rows], sub, local, activation=act)

            calls = [lambda p=p: moe_gemm(x, p, ids) for p in preps]
            return Instance(calls, reference, wbytes, wl.io_bytes(m, wbytes))

        return Prepared(instance, handle=preps[0])


# ---------------------------------------------------------------------------
# torch baselines
# ---------------------------------------------------------------------------


def _exact_ref(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return (x.double() @ w.double().T).float()


class CublasMethod(Method):
    """``F.linear`` with fp16 or bf16 weights (cuBLAS)."""

    def __init__(self, dtype: str = "fp16"):
        self.dtype = dtype
        self.name = f"cublas-{dtype}"

    def copy_bytes(self, data):
        return data.wl.n * data.wl.k * 2

    def prepare(self, data, copies):
        dt = _TORCH_DTYPE[self.dtype]
        w0 = data.w16.to(dt)
        weights = [w0] + [w0.clone() for _ in range(copies - 1)]
        nbytes = self.copy_bytes(data)

        def instance(m):
            x = data.x(m).to(dt)
            return _dense_instance(data, weights, x, torch.nn.functional.linear,
                                   lambda rows: _exact_ref(x[rows], w0), nbytes)

        return Prepared(instance)


class ScaledMMMethod(Method):
    """``torch._scaled_mm`` with e4m3 weights and activations (activations
    quantized before the call: GEMM only), bf16 output; ``mode`` "tensor"
    (one scale each) or "row" (per-token x per-channel scales)."""

    def __init__(self, mode: str = "tensor"):
        if mode not in ("tensor", "row"):
            raise ValueError(f"ScaledMMMethod.mode: expected 'tensor' or 'row', found {mode!r}")
        self.mode = mode
        self.name = f"scaled-mm-fp8-{mode}"
        self.scheme = WeightScheme("e4m3", "tensor" if mode == "tensor" else "channel", None, scale_fmt="fp32")

    def unavailable(self, wl, device):
        if wl.n % 16 or wl.k % 16:
            return f"torch._scaled_mm needs N and K divisible by 16, found {wl.n}x{wl.k}"
        return None

    def copy_bytes(self, data):
        return int(self.scheme.bytes_per_weight(data.wl.n, data.wl.k))

    def prepare(self, data, copies):
        qw = data.quantized(self.scheme)
        w0 = qw.codes.view(torch.float8_e4m3fn)
        weights = [w0] + [w0.clone() for _ in range(copies - 1)]
        sb = qw.scales.reshape(1, -1).contiguous() if self.mode == "row" else qw.scales.reshape(())
        nbytes = self.copy_bytes(data)

        def instance(m):
            x = data.x(m)
            static = None
            if self.mode == "tensor":  # a calibrated static scale: this batch's absmax
                act = ActivationScheme("e4m3", "static_tensor")
                static = (x.abs().amax() / 448.0).clamp(min=1e-12).reshape(1)
                q, _ = ref.quantize_activation(x, act, static)
                scale_a = static.reshape(())
            else:
                act = ActivationScheme("e4m3", "dynamic_token")
                q, scale_a = ref.quantize_activation(x, act)
            xq = q.to(torch.float8_e4m3fn)
            call = lambda xq_, w: torch._scaled_mm(xq_, w.t(), scale_a, sb, out_dtype=torch.bfloat16)  # noqa: E731
            return _dense_instance(data, weights, xq, call,
                                   lambda rows: ref.gemm(x[rows], qw, act, act_scale=static), nbytes)

        return Prepared(instance)


class TinyGemmMethod(Method):
    """torch's int4 tinygemm (``_weight_int4pack_mm``): uint4 codes with offset
    8, bf16 group scales (group 128 unless the workload's is 32/64/256),
    bf16 activations. On CPU it runs torch's CPU twin (``..._for_cpu``: the
    same arithmetic, another packing)."""

    name = "tinygemm-int4"
    inner_k_tiles = 8

    def _scheme(self, wl: Workload) -> WeightScheme:
        g = wl.weight.group_size if wl.weight.group_size in (32, 64, 128, 256) else 128
        return WeightScheme("uint4", "group", g, scale_fmt="bf16")

    def unavailable(self, wl, device):
        if wl.k % (self.inner_k_tiles * 16) or wl.n % 8 or wl.k % self._scheme(wl).group_size:
            return f"tinygemm needs K divisible by 128 and by the group size and N by 8, found {wl.n}x{wl.k}"
        return None

    def copy_bytes(self, data):
        return int(self._scheme(data.wl).bytes_per_weight(data.wl.n, data.wl.k))

    @staticmethod
    def pack_codes(codes: torch.Tensor) -> torch.Tensor:
        """uint8 codes ``[N, K]`` (0..15) -> ``[N, K/2]`` bytes, even column in the high nibble."""
        return ((codes[:, ::2] << 4) | codes[:, 1::2]).contiguous()

    @staticmethod
    def scales_and_zeros(scales: torch.Tensor) -> torch.Tensor:
        """``[N, K/g]`` scales -> tinygemm's ``[K/g, N, 2]`` (scale, zero = 0) in bf16."""
        sz = torch.stack([scales, torch.zeros_like(scales)], dim=-1)
        return sz.transpose(0, 1).contiguous().to(torch.bfloat16)

    def prepare(self, data, copies):
        scheme = self._scheme(data.wl)
        qw = data.quantized(scheme)
        if data.device.type == "cuda":
            packed = torch._convert_weight_to_int4pack(self.pack_codes(qw.codes), self.inner_k_tiles)
            mm = torch._weight_int4pack_mm
        else:
            packed = torch._convert_weight_to_int4pack_for_cpu(qw.codes.to(torch.int32), self.inner_k_tiles)
            mm = torch._weight_int4pack_mm_for_cpu
        sz = self.scales_and_zeros(qw.scales)
        weights = [(packed, sz)] + [(packed.clone(), sz.clone()) for _ in range(copies - 1)]
        nbytes = self.copy_bytes(data)
        g = scheme.group_size

        def instance(m):
            x = data.x(m).to(torch.bfloat16)
            call = lambda x_, w: mm(x_, w[0], g, w[1])  # noqa: E731
            return _dense_instance(data, weights, x, call, lambda rows: ref.gemm(x[rows], qw), nbytes)

        return Prepared(instance)


class TorchLoopMoEMethod(Method):
    """MoE as a user would write it in torch: one ``F.linear`` per routed
    expert (token lists built at setup, so it captures in a graph)."""

    kinds = ("moe",)

    def __init__(self, dtype: str = "fp16"):
        self.dtype = dtype
        self.name = f"torch-loop-{dtype}"

    def copy_bytes(self, data):
        wl = data.wl
        return wl.topk * wl.n * wl.k * 2

    def prepare(self, data, copies):
        wl = data.wl
        dt = _TORCH_DTYPE[self.dtype]
        w0 = data.w16.to(dt)
        weights = [w0] + [w0.clone() for _ in range(copies - 1)]

        def instance(m):
            x = data.x(m).to(dt)
            ids = data.topk_ids(m)
            flat = ids.reshape(-1).to(torch.int64)
            groups = []
            for e in torch.unique(flat).tolist():
                slots = torch.nonzero(flat == e).reshape(-1)
                groups.append((e, slots // wl.topk, slots))

            def call(w):
                out = torch.empty(m * wl.topk, wl.n, dtype=dt, device=x.device)
                for e, tokens, slots in groups:
                    out.index_copy_(0, slots, torch.nn.functional.linear(x.index_select(0, tokens), w[e]))
                return out.view(m, wl.topk, wl.n)

            def reference(rows):
                sel = ids[rows].to(torch.int64)
                out = torch.empty(sel.shape + (wl.n,), dtype=torch.float32, device=x.device)
                for e in torch.unique(sel).tolist():
                    hit = sel == e
                    tok = torch.nonzero(hit)[:, 0]
                    out[hit] = _exact_ref(x[rows][tok], w0[e])
                return out

            wbytes = len(groups) * wl.n * wl.k * 2
            return Instance([lambda w=w: call(w) for w in weights], reference, wbytes,
                            wl.io_bytes(m, wbytes, 2, 2))

        return Prepared(instance)


def baseline_methods() -> list[Method]:
    return [CublasMethod("fp16"), CublasMethod("bf16"), ScaledMMMethod("tensor"), ScaledMMMethod("row"),
            TinyGemmMethod(), TorchLoopMoEMethod("fp16")]


def default_methods() -> list[Method]:
    return [HummingMethod()] + baseline_methods()


METHOD_NAMES = tuple(m.name for m in default_methods())
