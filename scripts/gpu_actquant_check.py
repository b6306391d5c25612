"""Compare the GPU activation quantizer with humming.reference bit for bit (mismatch counts)."""
import torch

from humming import reference as R
from humming.ops.act_quant import quantize_activation
from humming.scheme import ActivationScheme


def main():
    for fmt in ("e4m3", "e5m2", "int8"):
        for m, k in ((1, 640), (33, 640), (300, 640), (300, 4096), (1000, 203)):
            for dt in (torch.float16, torch.bfloat16):
                x = (torch.randn(m, k, device="cuda") * 2).to(dt)
                q, s = quantize_activation(x, fmt, "dynamic_token")
                qr, sr = R.quantize_activation(x.float(), ActivationScheme(fmt, "dynamic_token"))
                qg = q.float() if fmt == "int8" else q.float()
                bad_q = int((qg != qr).sum())
                bad_s = int((s.reshape(-1) != sr.reshape(-1)).sum())
                msg = ""
                if bad_q:
                    i = torch.nonzero(qg != qr)[0]
                    r, c = int(i[0]), int(i[1])
                    msg = (f" e.g. row {r} col {c}: x={float(x[r, c])!r} s_gpu={float(s.reshape(-1)[r])!r} "
                           f"s_ref={float(sr.reshape(-1)[r])!r} q_gpu={float(qg[r, c])} q_ref={float(qr[r, c])}")
                print(f"{fmt} M={m} K={k} {dt}: q mismatches {bad_q}, scale mismatches {bad_s}{msg}")


if __name__ == "__main__":
    main()
