"""Smoke test of the mma_sync GEMM kernel on a GPU, without the planner.

Runs a matrix of weight schemes x activation dtypes x M against humming.reference
and times a few decode shapes against torch.matmul. Prints a short table.
"""
import math
import sys
import time

import torch

from humming import reference as R
from humming.scheme import WeightScheme
from humming_nvidia import gemm_mma_sync as G



def main():
    torch.manual_seed(0)
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    SM = props.multi_processor_count
    TARGET = f"sm_{props.major}{props.minor}" + ("a" if props.major >= 9 else "")
    SMEM = props.shared_memory_per_block_optin


    def bound(x16, qw, ref, bf16):
        eps = 2.0 ** (-8 if bf16 else -11)
        W = R.dequantize(qw).to(dev).double()
        mag = W.abs()
        if qw.zeros is not None and qw.scheme.zero_point == "float":
            zs = (R.expand_scales(qw.zeros, qw.scheme, qw.n, qw.k) * R.expand_scales(qw.scales, qw.scheme, qw.n, qw.k))
            if qw.perm is not None:
                zs = torch.empty_like(zs).scatter_(-1, qw.perm[None, :].expand_as(zs), zs)
            mag = mag + zs.to(dev).double().abs()
        xa = x16.double().abs()
        return 4 * eps * (xa @ mag.T) + eps * ref.double().abs() + 1e-5 * (xa.sum(-1, keepdim=True) + 1)


    def run_case(scheme, n, k, ms, bf16, tiles=None):
        w = torch.randn(n, k, device=dev) * 0.02
        perm = torch.randperm(k, device=dev) if scheme.act_order else None
        qw = R.quantize(w, scheme, perm=perm, bias=torch.randn(n, device=dev) * 0.1)
        cp = props.major >= 8
        rec = G.recipe_for(scheme, bf16=bf16, out_bf16=bf16, caps_cp_async=cp, k8mma=False, target=TARGET,
                           has_bias=True)
        pw = G.pack_weight(qw, rec, dev)
        ranges = tiles or [(lo, hi, G.fit_tile(t, rec, SMEM, pw.kp)) for lo, hi, t in G.default_ranges(rec.bits, SMEM)]
        L = G.Launcher(pw, ranges, SM)
        dt = torch.bfloat16 if bf16 else torch.float16
        worst = 0.0
        for m in ms:
            x = torch.randn(m, k, device=dev).to(dt)
            xin = x[:, perm] if perm is not None else x
            y = torch.full((m, n), float("nan"), device=dev, dtype=dt)
            L(xin.contiguous(), y)
            torch.cuda.synchronize()
            ref = R.gemm(x.float(), qw)
            b = bound(x.float(), qw, ref, bf16)
            err = (y.double() - ref.double()).abs()
            ratio = float((err / b).max())
            bad = bool(torch.isnan(y).any()) or ratio > 1.0
            worst = max(worst, ratio if not torch.isnan(y).any() else float("inf"))
            if bad:
                rel = float((y.double() - ref).norm() / ref.norm())
                print(f"  FAIL {scheme.describe()} N={n} K={k} M={m} bf16={bf16}: err/bound={ratio:.3g} rel={rel:.3g} "
                      f"nan={bool(torch.isnan(y).any())}")
        return worst


    SCHEMES = [
        WeightScheme("int4", "group", 128),
        WeightScheme("uint4", "group", 128),
        WeightScheme("uint4", "group", 64, zero_point="int"),
        WeightScheme("int8", "channel"),
        WeightScheme("uint8", "group", 128, zero_point="int"),
        WeightScheme("int3", "group", 64),
        WeightScheme("uint2", "group", 32, zero_point="int"),
        WeightScheme("uint1", "group", 64, zero_point="int"),
        WeightScheme("int5", "group", 128),
        WeightScheme("uint6", "group", 64, zero_point="float"),
        WeightScheme("int7", "channel", scale_fmt="fp32"),
        WeightScheme("e2m1", "group", 32, scale_fmt="e8m0"),
        WeightScheme("e2m1", "group", 16, scale_fmt="e4m3", global_scale="tensor"),
        WeightScheme("e4m3", "channel", scale_fmt="fp32"),
        WeightScheme("e4m3", "block", 128, block_n=128, scale_fmt="fp32"),
        WeightScheme("e5m2", "tensor", scale_fmt="fp32"),
        WeightScheme("e3m2", "group", 32, scale_fmt="bf16"),
        WeightScheme("e2m3", "group", 32, scale_fmt="e8m0"),
        WeightScheme("int4", "group", 128, act_order=True),
        WeightScheme("uint4", "tensor", zero_point="int"),
    ]
    MS = [1, 5, 16, 33, 128, 300]
    fails = 0
    t0 = time.time()
    ONLY_TIMING = "--timing" in sys.argv
    if not ONLY_TIMING:  # compile everything first, in parallel
        from humming.jit import warmup
        specs = []
        for sch in SCHEMES:
            for bf16 in (False, True):
                rec = G.recipe_for(sch, bf16=bf16, out_bf16=bf16, caps_cp_async=True, k8mma=False, target=TARGET,
                                   has_bias=True)
                kp = -(-(640 if (sch.group_size or 16) in (128,) or sch.scale == "block" else 576) // G.PAD_K) * G.PAD_K
                specs += [G.kernel_spec(rec, G.fit_tile(t, rec, SMEM, kp)) for _, _, t in G.default_ranges(rec.bits, SMEM)]
        res = warmup(specs)
        print(f"compiled {len(res)} kernels in {time.time() - t0:.1f}s "
              f"(median {sorted(r.seconds for r in res)[len(res) // 2]:.2f}s each)")
    for sch in ([] if ONLY_TIMING else SCHEMES):
        k = 640 if (sch.group_size or 16) in (128,) or sch.scale == "block" else 576
        n = 256 if sch.scale == "block" else 200
        for bf16 in (False, True):
            try:
                r = run_case(sch, n, k, MS, bf16)
            except Exception as e:  # noqa: BLE001
                print(f"  ERROR {sch.describe()} bf16={bf16}: {type(e).__name__}: {str(e)[:500]}")
                r = float("inf")
            fails += r > 1.0
            print(f"{sch.describe():55s} {'bf16' if bf16 else 'fp16'}  worst err/bound {r:.3f}")
    # the plain-load (sm_75) loader and the 2 x m16n8k8 MMA run here too
    sch = WeightScheme("int4", "group", 128)
    rec = G.recipe_for(sch, bf16=False, out_bf16=False, caps_cp_async=False, k8mma=True, target=TARGET)
    for m in (1, 16, 100):
        w = torch.randn(200, 640, device=dev) * 0.02
        qw = R.quantize(w, sch)
        pw = G.pack_weight(qw, rec, dev)
        L = G.Launcher(pw, [(lo, hi, G.fit_tile(t, rec, 65536, pw.kp)) for lo, hi, t in G.default_ranges(4, 65536)], SM)
        x = torch.randn(m, 640, device=dev).half()
        y = torch.full((m, 200), float("nan"), device=dev, dtype=torch.float16)
        L(x, y)
        ref = R.gemm(x.float(), qw)
        ratio = float(((y.double() - ref).abs() / bound(x.float(), qw, ref, False)).max())
        print(f"sm75-path (ldg loader, m16n8k8) M={m}: worst err/bound {ratio:.3f}")
        fails += not (ratio <= 1.0)
    print(f"correctness: {fails} failing configs, {time.time() - t0:.1f}s")

    # ---- timing: graph replay over rotating weight copies
    def bench(fn_list, iters=20):
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for f in fn_list:
                f()
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            for f in fn_list:
                f()
        g.replay()
        torch.cuda.synchronize()
        ts = []
        for _ in range(iters):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); g.replay(); b.record(); torch.cuda.synchronize()
            ts.append(a.elapsed_time(b) * 1000 / len(fn_list))
        ts.sort()
        return ts[len(ts) // 2]


    print(f"{'shape':>12} {'M':>4} {'humming us':>10} {'cuBLAS us':>9} {'x cuBLAS':>8} {'GB/s':>7}")
    for (n, k) in [(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192)]:
        sch = WeightScheme("int4", "group", 128)
        rec = G.recipe_for(sch, bf16=False, out_bf16=False, caps_cp_async=True, k8mma=False, target=TARGET)
        qw = R.quantize(torch.randn(n, k, device=dev) * 0.02, sch)
        pw0 = G.pack_weight(qw, rec, dev)
        nbytes = pw0.nbytes
        copies = max(2, int(math.ceil(200e6 / nbytes)))
        launchers = []
        for c in range(copies):
            pw = G.PackedWeight(**{**pw0.__dict__, "w": pw0.w.clone(), "sz": pw0.sz.clone()})
            launchers.append(G.Launcher(pw, [(lo, hi, G.fit_tile(t, rec, SMEM, pw.kp)) for lo, hi, t in G.default_ranges(4, SMEM)], SM))
        wf = [torch.randn(n, k, device=dev, dtype=torch.float16) for _ in range(max(2, int(math.ceil(200e6 / (n * k * 2)))))]
        for m in (1, 16, 64, 256):
            x = torch.randn(m, k, device=dev, dtype=torch.float16)
            y = torch.empty(m, n, device=dev, dtype=torch.float16)
            t_h = bench([lambda L=L: L(x, y) for L in launchers])
            t_c = bench([lambda W=W: torch.matmul(x, W.T) for W in wf])
            print(f"{n:>6}x{k:<6} {m:>4} {t_h:>10.1f} {t_c:>9.1f} {t_c / t_h:>8.2f} {nbytes / t_h / 1e3:>7.0f}")
        del launchers, wf
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
