"""Probe: the worst error against the GPU tests' bound for one layer through the planner, over fresh random data.

python3 scripts/gpu_bound_probe.py --weight int2 --group 0 --n 8232 --k 4096 --m 1,2,5 --trials 8
Prints, per trial and M, the worst ratio to tests/test_gemm_gpu.py's bound (with its raw-code term where the plan's
tile at that M is a stream tile, as the tests take it, and without), where it falls (token, row) and the error and
bound there, so a rare failure can be told apart from a systematic one (the same rows each time).
"""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_gemm_gpu import bound  # noqa: E402

import humming.reference as R  # noqa: E402
from humming.ops import gemm, prepare_weight  # noqa: E402
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weight", default="int2")
    ap.add_argument("--group", type=int, default=0)
    ap.add_argument("--n", type=int, default=8232)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--m", default="1,2,5")
    ap.add_argument("--act", default="fp16")
    ap.add_argument("--trials", type=int, default=8)
    a = ap.parse_args()
    scheme = (WeightScheme(a.weight, "channel", scale_fmt="fp32") if a.group == 0 else WeightScheme(a.weight, "group", a.group))
    act = ActivationScheme(a.act)
    dev = torch.device("cuda")
    xdt = torch.bfloat16 if a.act == "bf16" else torch.float16
    for trial in range(a.trials):
        w = torch.randn(a.n, a.k, device=dev) * 0.02
        qw = R.quantize(w, scheme, bias=torch.randn(a.n, device=dev))
        pw = prepare_weight(qw, layer=LayerSpec(a.n, a.k, scheme, act, out_dtype=a.act, bias=True), device=dev)
        eps = 2.0 ** (-8 if xdt == torch.bfloat16 else -11)
        for m in map(int, a.m.split(",")):
            x = (torch.randn(m, a.k, device=dev) * 2).to(xdt)
            y = torch.full((m, a.n), float("nan"), device=dev, dtype=xdt)
            gemm(x, pw, out=y)
            torch.cuda.synchronize()
            ref = R.gemm(x.float(), qw, act)
            stream = bool(pw.plan.tuning_for(m).config.get("stream"))
            b = bound(x.float(), qw, ref, eps, pw.packed.out_mul,
                      raw=(128.0 if xdt == torch.bfloat16 else 1024.0) if stream else 0.0)
            err = (y.double() - ref.double()).abs()
            r = err / b
            plain = float((err / bound(x.float(), qw, ref, eps, pw.packed.out_mul)).max())
            i = int(r.argmax())
            row, col = divmod(i, a.n)
            top = torch.topk(r.flatten(), 5)
            print(f"trial {trial} M={m}: worst {float(r.max()):.3f} at token {row} row {col} (err {float(err.flatten()[i]):.4g}, "
                  f"bound {float(b.flatten()[i]):.4g}, ref {float(ref.flatten()[i]):.4g}); next rows "
                  f"{[(int(j) % a.n, round(float(v), 3)) for v, j in zip(top.values[1:], top.indices[1:])]}; "
                  f"median ratio {float(r.median()):.3g}; without the raw-code term {plain:.3f}", flush=True)


if __name__ == "__main__":
    main()
