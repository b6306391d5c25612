"""Run one mma_sync GEMM case on the GPU, synchronously (for compute-sanitizer)."""
import sys

import torch

from humming import reference as R
from humming.scheme import WeightScheme
from humming_nvidia import gemm_mma_sync as G


def main():
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    target = f"sm_{props.major}{props.minor}" + ("a" if props.major >= 9 else "")
    smem = props.shared_memory_per_block_optin
    m = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    # e.g. "uint2,group,32,zero_point=int"
    sch = WeightScheme("int4", "group", 128)
    if len(sys.argv) > 2:
        a = sys.argv[2].split(",")
        kw = dict(x.split("=") for x in a[3:])
        sch = WeightScheme(a[0], a[1], int(a[2]) if a[2] != "-" else None, **kw)
    for cp in (True, False):
        rec = G.recipe_for(sch, bf16=False, out_bf16=False, caps_cp_async=cp, k8mma=False, target=target)
        qw = R.quantize(torch.randn(256, 640, device=dev) * 0.02, sch)
        pw = G.pack_weight(qw, rec, dev)
        for lo, hi, t in G.DEFAULT_RANGES:
            t = G.fit_tile(t, rec, smem, pw.kp)
            L = G.Launcher(pw, [(1, None, t)], props.multi_processor_count)
            x = torch.randn(m, 640, device=dev).half()
            y = torch.full((m, 256), float("nan"), device=dev, dtype=torch.float16)
            try:
                L(x, y)
                torch.cuda.synchronize()
                err = float(((y.float() - R.gemm(x.float(), qw)).abs()).max())
                print(f"cp_async={cp} tile={t}: ok, max err {err:.3g}", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"cp_async={cp} tile={t}: {type(e).__name__}: {str(e)[:200]}", flush=True)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
