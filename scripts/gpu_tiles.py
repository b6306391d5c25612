"""Explore mma_sync tiles on a GPU: for each shape and M, time candidate tiles,
the stream-read floor of the same weight bytes and cuBLAS fp16 (graph replays over
rotating weight copies), and print the best tile per (shape, M).

    python scripts/gpu_tiles.py [--bits 4] [--quick] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import math
import time

import torch

from humming import reference as R
from humming.bench.stream import StreamReader
from humming.bench.timing import CudaGraphTimer, host_overhead_us
from humming.scheme import WeightScheme
from humming_nvidia import gemm_mma_sync as G

T = G.Tile
CANDIDATES = {
    "small": [T(8, 64, 256, 1, 4, 1, 4), T(8, 64, 256, 1, 4, 1, 4, 256), T(8, 64, 512, 1, 4, 4, 3),
              T(8, 64, 512, 1, 4, 4, 3, 256), T(8, 64, 256, 1, 4, 2, 6, 256), T(8, 128, 256, 1, 4, 2, 4, 128)],
    "mid": [T(16, 64, 256, 1, 4, 1, 4), T(16, 64, 256, 1, 4, 2, 4), T(16, 128, 256, 1, 4, 2, 3),
            T(32, 64, 256, 1, 4, 2, 4), T(32, 128, 128, 1, 4, 1, 4), T(64, 128, 128, 1, 4, 1, 4),
            T(64, 64, 128, 2, 2, 2, 4), T(32, 64, 128, 1, 2, 2, 4)],
    "stream": [T(8, 32, 256, 1, 2, 4, 4, stream=1, occupancy=3), T(8, 16, 512, 1, 1, 8, 4, stream=1, occupancy=3),
               T(8, 64, 128, 1, 4, 2, 4, stream=1, occupancy=3), T(8, 16, 256, 1, 1, 4, 4, stream=1, occupancy=6),
               T(8, 32, 256, 1, 2, 4, 8, stream=1, occupancy=2), T(8, 32, 512, 1, 2, 8, 4, stream=1),
               T(8, 32, 256, 1, 2, 4, 8, stream=3, occupancy=3), T(8, 16, 256, 1, 1, 4, 8, stream=3, occupancy=6)],
    "stream16": [T(16, 128, 128, 1, 8, 2, 8, stream=3), T(16, 64, 256, 1, 4, 4, 8, stream=3),
                 T(16, 32, 256, 1, 2, 4, 8, stream=3, occupancy=2), T(16, 32, 256, 1, 2, 4, 4, stream=1, occupancy=2),
                 T(16, 64, 256, 1, 4, 4, 4, stream=1), T(16, 32, 512, 1, 2, 8, 4, stream=1),
                 T(16, 16, 512, 1, 1, 8, 4, stream=1)],
    # deeper rings (more weight bytes in flight per SM), meant with --ctas
    "deep": [T(8, 32, 256, 1, 2, 4, 4, stream=1, occupancy=3), T(8, 32, 256, 1, 2, 4, 5, stream=1, occupancy=2),
             T(8, 32, 256, 1, 2, 4, 8, stream=3, occupancy=2), T(8, 32, 256, 1, 2, 4, 12, stream=3, occupancy=2),
             T(8, 16, 256, 1, 1, 4, 12, stream=3, occupancy=4), T(8, 16, 256, 1, 1, 4, 16, stream=3, occupancy=3)],
    # the lean shared-memory ring (run_ring): warps x ring depth x CTAs per SM
    "ring": [T(8, 16, 512, 1, 1, 8, 8, stream=3, occupancy=4), T(8, 16, 512, 1, 1, 8, 4, stream=3, occupancy=4),
             T(8, 32, 256, 1, 2, 4, 8, stream=3, occupancy=4), T(8, 32, 512, 1, 2, 8, 8, stream=3, occupancy=2),
             T(8, 64, 256, 1, 4, 4, 8, stream=3, occupancy=2), T(8, 16, 256, 1, 1, 4, 8, stream=3, occupancy=8),
             T(8, 16, 1024, 1, 1, 16, 8, stream=3, occupancy=2), T(8, 64, 128, 1, 4, 2, 8, stream=3, occupancy=4)],
    "ring16": [T(16, 128, 64, 1, 8, 1, 8, stream=3, occupancy=2), T(16, 128, 128, 1, 8, 2, 8, stream=3, occupancy=1),
               T(16, 64, 128, 1, 4, 2, 8, stream=3, occupancy=2), T(16, 256, 64, 1, 16, 1, 8, stream=3, occupancy=1),
               T(16, 32, 256, 1, 2, 4, 8, stream=3, occupancy=3), T(16, 64, 64, 1, 4, 1, 8, stream=3, occupancy=4)],
    "large": [T(64, 128, 128, 1, 4, 1, 4), T(128, 128, 64, 2, 4, 1, 4), T(128, 256, 64, 2, 4, 1, 3),
              T(128, 128, 64, 1, 4, 1, 4), T(64, 128, 64, 2, 4, 1, 4), T(64, 64, 128, 2, 2, 2, 4),
              T(128, 64, 64, 4, 2, 1, 4)],
}


def time_calls(timer, calls, iters=20, repeats=3):
    replay = timer.build(calls)
    replay()
    torch.cuda.synchronize()
    best = []
    for _ in range(repeats):
        best.append(timer.time(replay, iters) / iters / len(calls) * 1e6)
    timer.release()
    best.sort()
    return best[len(best) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bits", type=int, default=4)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--shapes", help="e.g. 8192x8192,4096x4096")
    ap.add_argument("--m", help="token counts, e.g. 1,16,64")
    ap.add_argument("--no-host", action="store_true")
    ap.add_argument("--channel", action="store_true", help="per-channel scales instead of group 128")
    ap.add_argument("--groups", help="candidate groups to try, e.g. stream,small (default: by M)")
    ap.add_argument("--ctas", help="time every candidate at each of these CTAs per SM (split-K target), e.g. 1,2,3")
    ap.add_argument("--weight", default=None, help="weight format instead of int{bits} (e.g. e4m3)")
    ap.add_argument("--group", type=int, default=128, help="group size (0: per channel)")
    args = ap.parse_args()
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    sm = props.multi_processor_count
    target = f"sm_{props.major}{props.minor}" + ("a" if props.major >= 9 else "")
    smem = props.shared_memory_per_block_optin
    timer = CudaGraphTimer(dev)
    stream = StreamReader(dev)
    shapes = [(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192)]
    ms = [1, 16, 64, 256, 1024] if not args.quick else [1, 16, 256]
    if args.m:
        ms = [int(v) for v in args.m.split(",")]
    if args.shapes:
        shapes = [tuple(map(int, s.split("x"))) for s in args.shapes.split(",")]
    rows = []
    wfmt = args.weight or f"int{args.bits}"
    scheme = (WeightScheme(wfmt, "channel", scale_fmt="fp32") if args.channel or args.group == 0 else
              WeightScheme(wfmt, "group", args.group))
    from humming.jit import warmup

    t0 = time.time()
    specs = []
    for n, k in shapes:
        rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target=target)
        kp = -(-k // G.PAD_K) * G.PAD_K
        for name, group in CANDIDATES.items():
            if args.groups and name not in args.groups.split(","):
                continue
            specs += [G.kernel_spec(rec, G.fit_tile(t, rec, smem, kp)) for t in group]
    warmup(list(dict.fromkeys(specs)))
    print(f"compiled in {time.time() - t0:.1f}s", flush=True)
    for n, k in shapes:
        rec = G.recipe_for(scheme, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target=target)
        qw = R.quantize(torch.randn(n, k, device=dev) * 0.02, scheme)
        pw0 = G.pack_weight(qw, rec, dev)
        nbytes = pw0.nbytes
        copies = max(2, math.ceil(3 * props.L2_cache_size / nbytes))
        pws = [pw0] + [G.PackedWeight(**{**pw0.__dict__, "w": pw0.w.clone(),
                                          "sz": pw0.sz.clone() if pw0.sz is not None else None})
                       for _ in range(copies - 1)]
        t_stream = time_calls(timer, stream.calls(nbytes, copies))
        stream.release()
        wf = [torch.randn(n, k, device=dev, dtype=torch.float16) for _ in range(max(2, math.ceil(3 * props.L2_cache_size / (n * k * 2))))]
        for m in ms:
            x = torch.randn(m, k, device=dev, dtype=torch.float16)
            y = torch.empty(m, n, device=dev, dtype=torch.float16)
            t_cub = time_calls(timer, [lambda W=W: torch.matmul(x, W.T) for W in wf])
            groups = (["stream", "small", "deep", "ring"] if m <= 8 else ["stream16", "mid", "ring16"] if m <= 16 else
                      ["mid"] if m <= 64 else ["large"])
            if args.groups:
                groups = [g for g in args.groups.split(",") if g in groups or (g in ("stream16", "ring16") and m <= 16)]
            split_cap = 16 if m <= 64 else 1
            res = []
            for t in [t for g in groups for t in CANDIDATES[g]]:
                t = G.fit_tile(t, rec, smem, pw0.kp)
                for c in ([int(v) for v in args.ctas.split(",")] if args.ctas else [0]):
                    Ls = [G.Launcher(pw, [(1, None, t)], sm, max_split=split_cap,
                                     smem_per_sm=props.shared_memory_per_multiprocessor) for pw in pws]
                    if c:
                        for L in Ls:
                            L.ctas_per_sm = L.stream_ctas_per_sm = c
                    y.fill_(float("nan"))
                    Ls[0](x, y)
                    torch.cuda.synchronize()
                    ref = R.gemm(x.float(), qw)
                    err = float((y.float() - ref).abs().max() / ref.abs().max())
                    tt = time_calls(timer, [lambda L=L: L(x, y) for L in Ls])
                    res.append((tt, t, err))
                    if c:
                        print(f"      {tt:8.2f}us  ctas/SM {c}  err {err:.1e}  {t.to_dict()}", flush=True)
            res.sort(key=lambda r: r[0])
            if m <= 16 and not args.ctas:  # how far to split K: CTAs per SM targeted by the launcher
                t = res[0][1]
                for c in ((1, 4) if not t.stream else (2, 3, 4)):
                    Ls = [G.Launcher(pw, [(1, None, t)], sm, smem_per_sm=props.shared_memory_per_multiprocessor)
                          for pw in pws]
                    for L in Ls:
                        L.ctas_per_sm = c
                        L.stream_ctas_per_sm = c
                    tt = time_calls(timer, [lambda L=L: L(x, y) for L in Ls])
                    res.append((tt, t, res[0][2]))
                    print(f"      ctas/SM {c}: {tt:.1f}us", flush=True)
                res.sort(key=lambda r: r[0])
            tt, t, err = res[0]
            row = {"n": n, "k": k, "m": m, "us": tt, "stream_us": t_stream, "cublas_us": t_cub,
                   "x_stream": tt / t_stream, "x_cublas": t_cub / tt, "tile": t.to_dict(), "err": err,
                   "all": [(r[0], r[1].to_dict()) for r in res],
                   "tflops": 2 * m * n * k / tt / 1e6}
            rows.append(row)
            for r in res:
                flag = "  BAD" if not r[2] < 5e-3 else ""
                print(f"      {r[0]:8.2f}us  err {r[2]:.1e}{flag}  {r[1].to_dict()}", flush=True)
            print(f"{n:>6}x{k:<6} M={m:<5} {tt:8.1f}us  stream {t_stream:6.1f} (x{tt / t_stream:4.2f})  "
                  f"cuBLAS {t_cub:7.1f} (x{t_cub / tt:4.2f})  {row['tflops']:6.1f} TFLOP/s  err {err:.1e}  "
                  f"{t.bm}x{t.bn}x{t.bk} w{t.wm}{t.wn}{t.wk} s{t.stages}{' stream' if t.stream else ''}", flush=True)
        del pws, wf
        torch.cuda.empty_cache()
    if args.no_host:
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"rows": rows, "device": props.name}, f, indent=1)
        return
    # eager host overhead of one call at M=1 (4096x4096), the GPU kept busy meanwhile
    from humming.ops import gemm, prepare_weight

    qw = R.quantize(torch.randn(4096, 4096, device=dev) * 0.02, scheme)
    pw = prepare_weight(qw)
    x = torch.randn(1, 4096, device=dev, dtype=torch.float16)
    hold = lambda: torch.cuda._sleep(100_000_000)  # noqa: E731
    host = host_overhead_us(lambda: gemm(x, pw), n=1000, hold=hold, sync=torch.cuda.synchronize)
    print(f"eager host overhead per gemm call (M=1): {host:.1f} us")
    y = torch.empty(1, 4096, device=dev, dtype=torch.float16)
    parts = {
        "gemm(x, w, out=y)": lambda: gemm(x, pw, out=y),
        "launcher(x, y)": lambda: pw.launcher(x, y),
        "LaunchPlan.launch": lambda: pw.launcher._plans[pw.launcher.tile_for(1)].launch(),
        "torch.empty(1, N)": lambda: torch.empty(1, 4096, device=dev, dtype=torch.float16),
        "current_stream": lambda: torch.cuda.current_stream().cuda_stream,
    }
    for name, fn in parts.items():
        print(f"   host {name:22s} {host_overhead_us(fn, n=1000, hold=hold, sync=torch.cuda.synchronize):6.2f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "host_us": host, "device": props.name}, f, indent=1)


if __name__ == "__main__":
    main()
