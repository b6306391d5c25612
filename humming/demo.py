"""``humming demo``: the whole path on one small checkpoint.

1. writes a small GPTQ (v1, 4-bit, group 128, symmetric) checkpoint -- real
   safetensors files and a ``config.json`` -- quantized from random fp16 weights;
2. loads it back with :func:`humming.formats.load_checkpoint`;
3. prints the plan for this machine's GPU (for an H200 when there is none);
4. compiles the kernels the plan needs (NVRTC, no GPU needed);
5. runs them on the GPU when there is one (the reference GEMM otherwise) and
   prints the error against fp16 and the speed against cuBLAS.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import torch

__all__ = ["write_gptq_checkpoint", "demo", "add_arguments", "run"]

LAYERS = {"model.layers.0.self_attn.o_proj": (4096, 4096), "model.layers.0.mlp.gate_proj": (14336, 4096)}


def _pack_along(codes: torch.Tensor, dim: int) -> torch.Tensor:
    """Pack 4-bit values eight to an int32 along ``dim``, lowest nibble first (GPTQ)."""
    x = codes.to(torch.int64).movedim(dim, -1)
    x = x.reshape(*x.shape[:-1], -1, 8) << (torch.arange(8) * 4)
    w = x.sum(-1)
    return ((w + 2 ** 31) % 2 ** 32 - 2 ** 31).to(torch.int32).movedim(-1, dim).contiguous()


def write_gptq_checkpoint(folder: str, layers=LAYERS, seed: int = 0) -> dict:
    """Quantize random fp16 weights as GPTQ v1 would store them; returns the fp16 originals."""
    from safetensors.torch import save_file

    from .reference import quantize
    from .scheme import WeightScheme

    scheme = WeightScheme("uint4", "group", 128)  # GPTQ symmetric: code - 8
    g = torch.Generator().manual_seed(seed)
    tensors, originals = {}, {}
    for name, (n, k) in layers.items():
        w = (torch.randn(n, k, generator=g) * 0.02).half()
        originals[name] = w
        qw = quantize(w.float(), scheme)
        tensors[f"{name}.qweight"] = _pack_along(qw.codes.t(), 0)                          # [K/8, N]
        tensors[f"{name}.qzeros"] = _pack_along(torch.full((k // 128, n), 7), 1)           # v1 stores z - 1
        tensors[f"{name}.scales"] = qw.scales.t().contiguous().half()                      # [K/g, N]
        tensors[f"{name}.g_idx"] = (torch.arange(k) // 128).to(torch.int32)
    os.makedirs(folder, exist_ok=True)
    save_file(tensors, os.path.join(folder, "model.safetensors"))
    config = {"architectures": ["DemoForCausalLM"], "torch_dtype": "float16",
              "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True,
                                      "desc_act": False}}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    return originals


def _time_us(fn, iters: int = 50) -> float:
    """Median time per call of a CUDA-graph replay of ``fn`` (after warm-up)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(10):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters // 10 + 3):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        graph.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 100)  # ms per 10 calls -> us per call
    times.sort()
    return times[len(times) // 2]


def demo(folder: str | None = None, device: str | None = None, ms=(1, 16, 256), out=print) -> int:
    import humming
    from . import reference as R
    from .formats import load_checkpoint
    from .jit import warmup
    from .scheme import LayerSpec

    has_gpu = torch.cuda.is_available()
    folder = folder or os.path.join(tempfile.gettempdir(), "humming-demo-gptq")
    t0 = time.perf_counter()
    originals = write_gptq_checkpoint(folder)
    out(f"[1/5] wrote a GPTQ 4-bit g128 checkpoint to {folder} ({time.perf_counter() - t0:.1f} s)")

    ckpt = load_checkpoint(folder)
    out(f"[2/5] loaded it: format {ckpt.format}, weights {ckpt.weight_scheme.describe()}, "
        f"activations {ckpt.activation_scheme.describe()}")

    dev = device or (None if has_gpu else "H200")
    name, (n, k) = next(iter(LAYERS.items()))
    qw = ckpt.layers[name]
    layer = LayerSpec(n, k, qw.scheme, ckpt.activation_scheme, out_dtype="fp16")
    plan = humming.plan(layer, dev)
    out(f"[3/5] plan for {name} on {plan.device}" + ("" if has_gpu else " (no GPU here: planned for an H200)"))
    out("\n".join("      " + line for line in plan.explain().splitlines()))

    t0 = time.perf_counter()
    specs = list(dict.fromkeys(plan.kernel(m) for m in ms))
    res = warmup(specs)
    out(f"[4/5] compiled {len(specs)} kernels for {specs[0].target} in {time.perf_counter() - t0:.2f} s "
        f"({', '.join(f'{r.seconds:.2f}s {r.origin}' for r in res)})")

    torch.manual_seed(1)
    if not has_gpu:
        out("[5/5] no GPU here: running the reference GEMM (humming.reference) instead of the kernels")
        for m in ms:
            x = torch.randn(m, k).half()
            y = R.gemm(x.float(), qw)
            y16 = x.float() @ originals[name].float().T
            err = float((y - y16).norm() / y16.norm())
            out(f"      M={m:<4d} error against fp16 weights {err:.2e} (4-bit quantization error)")
        return 0
    from .ops import gemm, prepare_weight

    out("[5/5] running on " + torch.cuda.get_device_name())
    for lname, (n, k) in LAYERS.items():
        qw = ckpt.layers[lname]
        pw = prepare_weight(qw, layer=LayerSpec(n, k, qw.scheme, ckpt.activation_scheme, out_dtype="fp16"))
        w16 = originals[lname].cuda()
        for m in ms:
            x = torch.randn(m, k, device="cuda", dtype=torch.float16)
            y = gemm(x, pw)
            y16 = x @ w16.T
            ref = R.gemm(x.float(), qw.to("cuda"))
            err16 = float((y.float() - y16.float()).norm() / y16.float().norm())
            errref = float((y.float() - ref).norm() / ref.norm())
            t_h = _time_us(lambda: gemm(x, pw))
            t_c = _time_us(lambda: torch.matmul(x, w16.T))
            out(f"      {lname.split('.')[-1]:<10s} {n}x{k} M={m:<4d} humming {t_h:7.1f} us  cuBLAS fp16 "
                f"{t_c:7.1f} us  ({t_c / t_h:4.2f}x)   error vs fp16 {err16:.2e}, vs reference {errref:.2e}")
    out("      (warm L2: the weights fit in it here; `humming bench` times cold weights against the floor)")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dir", help="where to write the demo checkpoint (default: a temp folder)")
    p.add_argument("--device", help="plan for this device instead of the detected GPU (e.g. H20, sm_89)")
    p.add_argument("--m", default="1,16,256", help="token counts to run (comma-separated)")


def run(args) -> int:
    return demo(args.dir, args.device, tuple(int(v) for v in args.m.split(",")))
