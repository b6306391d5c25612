"""compressed-tensors checkpoints (llm-compressor's output).

Config: ``quant_method: compressed-tensors`` with ``config_groups`` (each with
``targets``, ``weights``, ``input_activations`` and an optional ``format``),
``ignore``, a top-level ``format`` and ``version``.

Formats and their tensors for a linear ``prefix`` (``W [N, K]``):

``pack-quantized``   ``weight_packed`` int32 ``[N, ceil(K*b/32)]`` (dense little-endian bit
                     stream along K; releases before the dense packing put ``32 // b`` values
                     in each word -- both are read, told apart by the packed width),
                     ``weight_shape`` ``[2]``, ``weight_scale`` ``[N, K/g]``/``[N, 1]``,
                     ``weight_zero_point`` int32 packed along N (asymmetric), ``weight_g_idx``
                     (old ``actorder: group`` checkpoints). Values are stored plus
                     ``2**(b-1)``; zero points too.
``int-quantized`` / ``naive-quantized``  ``weight`` int8, ``weight_scale``, ``weight_zero_point``.
``float-quantized``  ``weight`` float8_e4m3fn, ``weight_scale`` (tensor, channel, group, or
                     block ``[ceil(N/bn), ceil(K/bk)]``).
``mxfp8-quantized``  ``weight`` float8_e4m3fn, ``weight_scale`` uint8 E8M0 ``[N, K/32]``.
``nvfp4-pack-quantized``  ``weight_packed`` uint8 ``[N, K/2]`` (low nibble = even k),
                     ``weight_scale`` e4m3 ``[N, K/16]``, ``weight_global_scale`` fp32 -- a
                     **divisor**: ``W = e2m1 * s / global``. The loader stores the fp32
                     reciprocal as the (multiplying) global scale, as vLLM does.
``mxfp4-pack-quantized``  ``weight_packed`` uint8 ``[N, K/2]``, ``weight_scale`` uint8 ``[N, K/32]``.

Dequantization (compressed-tensors ``dequantize``): ``(q - zp) * scale`` with
``scale / global_scale`` first when a global scale exists.
"""
from __future__ import annotations

import math
import re
from typing import Iterable, Mapping, Optional

import torch

from ..dtypes import get_format
from ..errors import FormatError
from ..reference import QuantizedWeight
from ..scheme import ActivationScheme, WeightScheme
from ._common import (attach_input_scale, check_finite, codes_from_float8, get_tensor, grid_kwargs,
                      model_act_dtype, perm_from_g_idx, refine_blocks, scale_to_f32, unpack_bits,
                      unquantized_activation, weight_scheme)

NAME = "compressed-tensors"
TENSORS = ("weight", "weight_packed", "weight_shape", "weight_scale", "weight_zero_point", "weight_g_idx",
           "weight_global_scale", "input_scale", "input_global_scale", "input_zero_point", "bias")
FORMATS = ("pack-quantized", "int-quantized", "naive-quantized", "float-quantized", "mxfp8-quantized",
           "nvfp4-pack-quantized", "mxfp4-pack-quantized")
_E2M1 = get_format("e2m1")


def detect(qc: Mapping) -> bool:
    return str(qc.get("quant_method", "")).lower() in ("compressed-tensors", "compressed_tensors")


# ---------------------------------------------------------------------------
# config
# ---------------------------------------------------------------------------


def _matches(target: str, name: Optional[str]) -> bool:
    if target.startswith("re:"):
        return name is not None and re.match(target[3:], name) is not None
    if name is not None and (name == target or name.endswith("." + target)):
        return True
    # a module class name ("Linear", "QuantLinear") targets every linear layer
    return "." not in target and target[:1].isupper()


def is_ignored(qc: Mapping, layer_name: str) -> bool:
    return any(_matches(t, layer_name) and (t.startswith("re:") or not t[:1].isupper())
               for t in qc.get("ignore") or ())


def pick_group(qc: Mapping, layer_name: Optional[str] = None) -> tuple[str, dict]:
    """The ``config_groups`` entry for ``layer_name`` (or the first one targeting linears)."""
    groups = qc.get("config_groups")
    if not isinstance(groups, Mapping) or not groups:
        raise FormatError("quantization_config.config_groups: expected a non-empty dict of quantization schemes, "
                          f"got {groups!r}")
    items = [(k, dict(v)) for k, v in groups.items()]
    if layer_name is not None:
        # exact names and regexes win over class-name targets
        for specific in (True, False):
            for key, g in items:
                for t in g.get("targets") or ():
                    if _matches(t, layer_name) and (specific == (t.startswith("re:") or not t[:1].isupper())):
                        return key, g
        raise FormatError(f"quantization_config.config_groups: no group targets layer {layer_name!r} "
                          f"(targets: {[g.get('targets') for _, g in items]})")
    for key, g in items:
        if any(t == "Linear" or t.endswith("Linear") for t in g.get("targets") or ()):
            return key, g
    return items[0]


def _args(group: Mapping, key: str) -> Optional[dict]:
    a = group.get(key)
    return None if a is None else dict(a)


def group_format(qc: Mapping, group: Mapping) -> str:
    fmt = group.get("format") or qc.get("format")
    if fmt in (None, "mixed-precision", "dense"):
        fmt = _infer_format(group)
    if fmt not in FORMATS:
        raise FormatError(f"quantization_config.format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    return fmt


def _infer_format(group: Mapping) -> str:
    w = _args(group, "weights") or {}
    act = _args(group, "input_activations")
    bits, typ = int(w.get("num_bits", 8)), str(w.get("type", "int"))
    if typ == "float":
        if bits == 4:
            return "mxfp4-pack-quantized" if w.get("group_size") == 32 else "nvfp4-pack-quantized"
        if w.get("group_size") == 32 and "uint8" in str(w.get("scale_dtype")):
            return "mxfp8-quantized"
        return "float-quantized"
    if act is not None and str(act.get("type", "int")) == "int" and bits == 8:
        return "int-quantized"
    return "pack-quantized"


def _act_scheme(act: Optional[Mapping], config: Mapping) -> ActivationScheme:
    if act is None:
        return unquantized_activation(config)
    bits, typ = int(act.get("num_bits", 8)), str(act.get("type", "int"))
    fmt = {("int", 8): "int8", ("int", 4): "int4", ("float", 8): "e4m3", ("float", 4): "e2m1"}.get((typ, bits))
    if fmt is None:
        raise FormatError(f"input_activations: expected int8, int4, fp8 or fp4, got type={typ!r} num_bits={bits}")
    if act.get("symmetric", True) is False:
        raise FormatError("input_activations.symmetric: expected true (asymmetric activations have no "
                          "ActivationScheme), got false")
    strategy, dynamic = str(act.get("strategy", "tensor")), act.get("dynamic", False)
    sdt = str(act.get("scale_dtype") or "")
    sfmt = "e8m0" if "uint8" in sdt else "e4m3" if "float8" in sdt else "fp32"
    if strategy == "token" and dynamic:
        return ActivationScheme(fmt=fmt, quant="dynamic_token", scale_fmt=sfmt)
    if strategy in ("group", "tensor_group") and dynamic:
        return ActivationScheme(fmt=fmt, quant="dynamic_group", group_size=int(act["group_size"]), scale_fmt=sfmt)
    if strategy == "tensor" and not dynamic:
        return ActivationScheme(fmt=fmt, quant="static_tensor", scale_fmt=sfmt)
    raise FormatError(f"input_activations: expected dynamic token/group or static tensor quantization, got "
                      f"strategy={strategy!r} dynamic={dynamic!r}")


def schemes(qc: Mapping, config: Mapping, layer_name: Optional[str] = None
            ) -> tuple[WeightScheme, ActivationScheme]:
    _, group = pick_group(qc, layer_name)
    act = _act_scheme(_args(group, "input_activations"), config)
    w = _args(group, "weights")
    if w is None:
        return weight_scheme(fmt=act.fmt if act.fmt in ("fp16", "bf16") else "bf16", scale="tensor",
                             scale_fmt="fp32"), act
    fmt = group_format(qc, group)
    bits, strategy = int(w.get("num_bits", 8)), str(w.get("strategy", "tensor"))
    gs = w.get("group_size")
    kw: dict = {"channel": dict(scale="channel"), "tensor": dict(scale="tensor")}.get(strategy, {})
    if strategy in ("group", "tensor_group"):
        kw = dict(scale="group", group_size=int(gs))
    elif strategy == "block":
        bn, bk = w.get("block_structure") or (128, 128)
        kw = dict(scale="block", block_n=int(bn), group_size=int(bk))
    dt = model_act_dtype(config, "bf16")
    if fmt == "nvfp4-pack-quantized":
        ws = weight_scheme(fmt="e2m1", scale_fmt="e4m3", global_scale="tensor", **kw)
    elif fmt in ("mxfp4-pack-quantized", "mxfp8-quantized"):
        ws = weight_scheme(fmt="e2m1" if bits == 4 else "e4m3", scale_fmt="e8m0", **kw)
    elif fmt == "float-quantized":
        ws = weight_scheme(fmt="e4m3", scale_fmt="fp32" if strategy != "block" else dt, **kw)
    else:
        sym = w.get("symmetric", True)
        ws = weight_scheme(fmt=f"{'int' if sym else 'uint'}{bits}", scale_fmt=dt,
                           zero_point="none" if sym else "int", **kw)
    return ws, act


def layer_prefixes(names: Iterable[str], qc: Mapping) -> list[str]:
    names = set(names)
    out = set()
    for n in names:
        if n.endswith(".weight_packed"):
            out.add(n[: -len(".weight_packed")])
        elif n.endswith(".weight_scale") and n[: -len("_scale")] in names:
            out.add(n[: -len(".weight_scale")])
    return sorted(out)


# ---------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------


def load(qc: Mapping, tensors: Mapping[str, torch.Tensor], prefix: str) -> QuantizedWeight:
    if is_ignored(qc, prefix):
        raise FormatError(f"layer {prefix}: listed in quantization_config.ignore (not quantized)")
    _, group = pick_group(qc, prefix)
    fmt = group_format(qc, group)
    w = _args(group, "weights")
    if w is None:
        raise FormatError(f"layer {prefix}: its config group has no weight quantization")
    p = prefix + "."
    if fmt == "pack-quantized":
        qw = _load_pack(w, tensors, p)
    elif fmt in ("nvfp4-pack-quantized", "mxfp4-pack-quantized"):
        qw = _load_fp4(fmt, w, tensors, p)
    else:
        qw = _load_unpacked(fmt, w, tensors, p)
    qw.meta.update(format=NAME, ct_format=fmt, prefix=prefix)
    attach_input_scale(qw.meta, tensors, p, ("input_scale", "input_global_scale"))
    return qw


def _scales_and_kw(name: str, t: torch.Tensor, w: Mapping, n: int, k: int,
                   allow=("fp16", "bf16", "fp32")) -> tuple[torch.Tensor, str, dict]:
    s, sfmt = scale_to_f32(name, t, allow=allow)
    strategy = str(w.get("strategy", "tensor"))
    if strategy == "block":
        bn, bk = w.get("block_structure") or (None, None)
        want = (math.ceil(n / bn), math.ceil(k / bk))
        if s.dim() != 2 or tuple(s.shape) != want:
            raise FormatError(f"tensor {name}: expected shape {list(want)} for {bn}x{bk} blocks over a weight "
                              f"[{n}, {k}], got {list(s.shape)}")
        s, kw = refine_blocks(s, n, k, int(bn), int(bk))
        return s, sfmt, kw
    if s.dim() < 2:
        s = s.reshape(1, 1) if s.numel() == 1 else s.reshape(-1, 1)
    kw = grid_kwargs(name, s, n, k)
    gs = w.get("group_size")
    if strategy in ("group", "tensor_group") and kw.get("group_size") != gs:
        raise FormatError(f"tensor {name}: shape {list(s.shape)} gives groups of {kw.get('group_size')} over "
                          f"K={k}, quantization_config weights.group_size is {gs}")
    if strategy == "channel" and kw["scale"] != "channel":
        raise FormatError(f"tensor {name}: expected [{n}, 1] for channel scales, got {list(s.shape)}")
    return s.contiguous(), sfmt, kw


def _unpack_legacy(name: str, packed: torch.Tensor, bits: int, count: int, dim: int) -> torch.Tensor:
    """Pre-dense compressed-tensors packing: ``32 // bits`` values per int32 word, low bits first."""
    pf = 32 // bits
    x = packed.movedim(dim, -1).to(torch.int64) & 0xFFFFFFFF
    shifts = torch.arange(pf, dtype=torch.int64, device=packed.device) * bits
    v = ((x[..., None] >> shifts) & ((1 << bits) - 1)).reshape(*x.shape[:-1], -1)[..., :count]
    return v.to(torch.uint8).movedim(-1, dim)


def _unpack_ct(name: str, packed: torch.Tensor, bits: int, count: int, dim: int) -> torch.Tensor:
    width = packed.shape[dim]
    dense, legacy = math.ceil(count * bits / 32), math.ceil(count / (32 // bits))
    if width == dense:
        return unpack_bits(name, packed, bits, count, dim)
    if width == legacy:
        return _unpack_legacy(name, packed, bits, count, dim)
    raise FormatError(f"tensor {name}: expected {dense} packed int32 words along dim {dim} for {count} values of "
                      f"{bits} bits (or {legacy} in the older per-word packing), got {width}")


def _load_pack(w: Mapping, tensors, p: str) -> QuantizedWeight:
    bits = int(w.get("num_bits", 4))
    if str(w.get("type", "int")) != "int" or not 1 <= bits <= 8:
        raise FormatError(f"{p}weights: pack-quantized expects int weights of 1..8 bits, got "
                          f"type={w.get('type')!r} num_bits={bits}")
    packed = get_tensor(tensors, p + "weight_packed", (torch.int32,), ndim=2)
    shape_t = get_tensor(tensors, p + "weight_shape", ndim=1, shape=(2,))
    n, k = (int(v) for v in shape_t.tolist())
    if packed.shape[0] != n:
        raise FormatError(f"tensor {p}weight_packed: expected {n} rows (weight_shape {[n, k]}), got "
                          f"{packed.shape[0]}")
    u = _unpack_ct(p + "weight_packed", packed, bits, k, dim=1)
    scales, sfmt, kw = _scales_and_kw(p + "weight_scale", get_tensor(tensors, p + "weight_scale"), w, n, k)
    half = 1 << (bits - 1)
    zeros = None
    if not w.get("symmetric", True):
        zt = get_tensor(tensors, p + "weight_zero_point")
        sn, sk = scales.shape
        if zt.dtype == torch.int32 and str(w.get("strategy")) in ("group", "channel"):
            zeros = _unpack_ct(p + "weight_zero_point", zt, bits, sn, dim=0)
            if tuple(zeros.shape) != (sn, sk):
                raise FormatError(f"tensor {p}weight_zero_point: unpacks to {list(zeros.shape)}, expected "
                                  f"{[sn, sk]} (the scale shape)")
            zeros = zeros.to(torch.float32)
        else:
            zeros = (zt.to(torch.int32).reshape(sn, sk) + half).to(torch.float32)
        codes, fmt = u, f"uint{bits}"
    else:
        codes, fmt = u ^ half, f"int{bits}"  # stored value q + 2**(b-1) -> two's complement of q
    perm = None
    g_idx = get_tensor(tensors, p + "weight_g_idx", ndim=1, optional=True)
    if g_idx is not None:
        if kw["scale"] != "group":
            raise FormatError(f"tensor {p}weight_g_idx: act order needs group scales, the scales are "
                              f"{kw['scale']}")
        perm, _ = perm_from_g_idx(p + "weight_g_idx", g_idx, k, scales.shape[1])
        if perm is not None:
            codes = codes[:, perm].contiguous()
    scheme = weight_scheme(fmt=fmt, scale_fmt=sfmt, zero_point="none" if zeros is None else "int",
                           act_order=perm is not None, **kw)
    return QuantizedWeight(scheme, codes.contiguous(), scales, zeros, None, perm, _bias(tensors, p, n))


def _bias(tensors, p: str, n: int) -> Optional[torch.Tensor]:
    b = get_tensor(tensors, p + "bias", ndim=1, shape=(n,), optional=True)
    return None if b is None else b.to(torch.float32)


def _load_unpacked(fmt: str, w: Mapping, tensors, p: str) -> QuantizedWeight:
    typ, bits = str(w.get("type", "int")), int(w.get("num_bits", 8))
    if typ == "float":
        wt = get_tensor(tensors, p + "weight", ndim=2)
        if bits != 8:
            raise FormatError(f"{p}weights: {fmt} expects 8-bit floats, got num_bits={bits}")
        codes, efmt = codes_from_float8(p + "weight", wt), "e4m3"
    else:
        wt = get_tensor(tensors, p + "weight", (torch.int8,), ndim=2)
        if bits != 8:
            raise FormatError(f"{p}weights: {fmt} stores int8 weights, num_bits={bits}")
        codes, efmt = wt.view(torch.uint8).contiguous(), "int8"
    n, k = wt.shape
    allow = ("e8m0",) if fmt == "mxfp8-quantized" else ("fp16", "bf16", "fp32")
    scales, sfmt, kw = _scales_and_kw(p + "weight_scale", get_tensor(tensors, p + "weight_scale"), w, n, k, allow)
    zeros = None
    if typ == "int" and not w.get("symmetric", True):
        zt = get_tensor(tensors, p + "weight_zero_point", (torch.int8, torch.int32))
        zeros = (zt.to(torch.float32).reshape(scales.shape) + 128).contiguous()
        codes, efmt = codes ^ 0x80, "uint8"  # q + 128
    scheme = weight_scheme(fmt=efmt, scale_fmt=sfmt, zero_point="none" if zeros is None else "int", **kw)
    return QuantizedWeight(scheme, codes, scales, zeros, None, None, _bias(tensors, p, n))


def _load_fp4(fmt: str, w: Mapping, tensors, p: str) -> QuantizedWeight:
    packed = get_tensor(tensors, p + "weight_packed", (torch.uint8,), ndim=2)
    n, k = packed.shape[0], packed.shape[1] * 2
    codes = unpack_bits(p + "weight_packed", packed, 4, k, dim=1)
    gs = 16 if fmt.startswith("nvfp4") else 32
    if w.get("group_size") not in (None, gs):
        raise FormatError(f"{p}weights.group_size: expected {gs} for {fmt}, got {w.get('group_size')}")
    st = get_tensor(tensors, p + "weight_scale", shape=(n, k // gs))
    scales, sfmt = scale_to_f32(p + "weight_scale", st, allow=("e4m3",) if gs == 16 else ("e8m0",))
    glob = None
    if gs == 16:
        gt = get_tensor(tensors, p + "weight_global_scale", (torch.float32, torch.bfloat16, torch.float16))
        if gt.numel() != 1:
            raise FormatError(f"tensor {p}weight_global_scale: expected one value, got shape {list(gt.shape)}")
        g = gt.to(torch.float32).reshape(1)
        check_finite(p + "weight_global_scale", g)
        if float(g) == 0.0:
            raise FormatError(f"tensor {p}weight_global_scale: expected a non-zero divisor, got 0")
        glob = (1.0 / g).to(torch.float32)  # stored as a divisor; the canonical global scale multiplies
    scheme = weight_scheme(fmt="e2m1", scale="group", group_size=gs, scale_fmt=sfmt,
                           global_scale="none" if glob is None else "tensor")
    qw = QuantizedWeight(scheme, codes, scales, None, glob, None, _bias(tensors, p, n))
    if glob is not None:
        qw.meta["global_scale_divisor"] = float(gt.to(torch.float32).reshape(()))
    return qw
