"""Print gpu_sweep.py JSON reports as one line per (shape, M): each candidate's median time and K split,
fastest first (`python scripts/sweep_table.py out/*.json`)."""
import json
import os
import sys


def name(t: dict) -> str:
    if t.get("wgmma"):
        return f"WG{t['bm']}.{t['bn']}x{t['bk']}"
    return f"R{t['bm']}.{t['bn']}x{t['bk']}/{t['wk']}s{t['stages']}"


for f in sys.argv[1:]:
    d = json.load(open(f))
    for r in d["rows"] if isinstance(d, dict) else d:
        cands = sorted(r["cands"], key=lambda c: c["us"])
        print(os.path.basename(f)[:-5], f"{r['n']}x{r['k']}", "M=%s" % r["m"], "stream %.2f" % r["stream_us"], "  ".join(
            f"{name(c['tile'])}{'+' + '+'.join(v[0] for v in c['defines']) if c.get('defines') else ''}:"
            f"{c['us']:.2f}/s{c['split']}{'' if c['err'] < 5e-3 else ' BAD'}" for c in cands))
