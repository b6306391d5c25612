"""The tuning database and `humming tune`: entries stored atomically and read back, the planner taking a
measured entry (and setting aside one the family refuses), the mma_sync family's check and candidates,
the autotuner's choice, the CLI's dry run; on the GPU, a real tuning run whose plan then computes the
reference's GEMM."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

from humming.cli import main
from humming.errors import FormatError
from humming.planner import plan
from humming.planner.family import MRange
from humming.planner.planner import resolve_device
from humming.scheme import ActivationScheme, LayerSpec, WeightScheme
from humming.tune import database
from humming.tune.autotune import candidate_plans, choose, range_token_counts
from humming_nvidia import gemm_mma_sync as G

INT4 = LayerSpec(8192, 8192, WeightScheme("int4", "group", 128), ActivationScheme("fp16"))


@pytest.fixture
def db(tmp_path, monkeypatch):
    path = tmp_path / "tuning.json"
    monkeypatch.setenv("HUMMING_TUNING_DB", str(path))
    return path


def _entry(p, tuning):
    return {"device": p.device, "family": f"{p.backend}:{p.family}", "layer": p.layer.to_dict(),
            "compute": p.compute.to_dict(), "tuning": [r.to_dict() for r in tuning],
            "measured": {"humming": "test", "when": "2026-12-04 00:00 UTC", "kernels": G.tuning_version()}}


def _with(p, index, cfg):
    return p.tuning[:index] + (MRange(p.tuning[index].lo, p.tuning[index].hi, cfg),) + p.tuning[index + 1:]


def _index(p, m):
    return next(i for i, r in enumerate(p.tuning) if r.contains(m))


# ---------------------------------------------------------------------------
# the database file
# ---------------------------------------------------------------------------


def test_entries_are_stored_atomically_and_replaced_by_key(db):
    base = plan(INT4, "H200", tuning_db=False)
    e1 = _entry(base, base.tuning)
    other = plan(LayerSpec(4096, 4096, WeightScheme("int4", "group", 128)), "H200", tuning_db=False)
    assert database.store(e1) == db and database.store(_entry(other, other.tuning)) == db
    doc = json.loads(db.read_text())
    assert doc["humming_tuning"] == database.SCHEMA and len(doc["entries"]) == 2
    e1b = dict(e1, measured={"humming": "again"})
    database.store(e1b)
    table = database.entries()
    assert len(table) == 2
    assert database.lookup("H200", "nvidia:mma_sync", INT4, base.compute)["measured"] == {"humming": "again"}
    assert database.lookup("A100", "nvidia:mma_sync", INT4, base.compute) is None
    assert not [p for p in db.parent.iterdir() if p.name.startswith(".tuning-")]  # (no temporary file left)


def _store_many(path, worker):
    from humming.tune import database as D

    for j in range(6):
        D.store({"device": f"d{worker}", "family": "f", "layer": {"j": j}, "compute": {}, "tuning": []}, path)


def test_writers_in_several_processes_keep_every_entry(tmp_path):
    import multiprocessing

    path = tmp_path / "shared.json"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_store_many, args=(path, w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert all(p.exitcode == 0 for p in procs)
    assert len(database.entries(path)) == 24


@pytest.mark.parametrize("text,match", [
    ("{", r"not JSON"),
    ('{"humming_tuning": 7, "entries": []}', r"expected an object with \"humming_tuning\": 1 .* found schema 7"),
    ('{"humming_tuning": 1, "entries": [{"device": "H200"}]}', r"entry 0 lacks one of device, family"),
])
def test_a_corrupt_database_is_named(db, text, match):
    db.write_text(text)
    with pytest.raises(FormatError, match=re.escape(str(db)) + ".*" + match):
        plan(INT4, "H200")


def test_off_means_off(tmp_path, monkeypatch):
    monkeypatch.setenv("HUMMING_TUNING_DB", "off")
    assert database.database_path() is None and database.token() == ("off",)
    with pytest.raises(FormatError, match=r"HUMMING_TUNING_DB turns it off"):
        database.store({"device": "x", "family": "y", "layer": {}, "compute": {}, "tuning": []})
    monkeypatch.delenv("HUMMING_TUNING_DB")
    monkeypatch.setenv("HUMMING_CACHE_DIR", str(tmp_path / "cache"))
    assert database.database_path() == tmp_path / "cache" / "tuning.json"


# ---------------------------------------------------------------------------
# the planner takes a measured entry
# ---------------------------------------------------------------------------


def test_the_planner_takes_a_measured_entry_for_this_layer_and_device(db):
    base = plan(INT4, "H200", tuning_db=False)
    i = _index(base, 16)
    _, caps, _ = resolve_device("H200")
    cands = G.tuning_candidates(INT4, caps, base.compute, base.tuning, i)
    cfg = next(c for c in cands[1:] if c.get("split_k") == 4)
    database.store(_entry(base, _with(base, i, cfg)))
    p = plan(INT4, "H200")
    assert dict(p.tuning[i].config) == cfg and p.tuning[:i] == base.tuning[:i]
    assert p.fingerprint() != base.fingerprint()
    note = [n for n in p.notes if "tuning database" in n]
    assert len(note) == 1 and f"differs from the heuristics' in {base.tuning[i].label()}" in note[0]
    assert str(db) in note[0] and "measured on H200 by humming test" in note[0]
    # (a K-slice cap is the launcher's, not the kernel's: the same kernels, the range's launches split less)
    from humming.device import get_device

    hw = get_device("H200")
    rec = G.recipe_from_plan(p, hw)
    caps_of = [r[3] for r in G.launch_ranges(p, rec, hw.max_smem_per_block, G.plan_kp(p, rec))]
    assert caps_of[i] == 4 and caps_of[:i] + caps_of[i + 1:] == [
        r[3] for j, r in enumerate(G.launch_ranges(base, rec, hw.max_smem_per_block, G.plan_kp(base, rec))) if j != i]
    assert all(p.kernel(m) == base.kernel(m) for m in (1, 9, 16, 64, 300))
    # other devices and layers, and plans that ask for the heuristics, are untouched
    assert plan(INT4, "H100", tuning_db=False) == plan(INT4, "H100")
    assert plan(INT4, "H200", tuning_db=False) == base
    # a changed file is read again (the plan cache keys on it)
    database.store(_entry(base, base.tuning))
    p2 = plan(INT4, "H200")
    assert p2.tuning == base.tuning and any("the heuristics' configs measured best" in n for n in p2.notes)


@pytest.mark.parametrize("device,cfg,match", [
    ("H200", {"bm": 16, "bn": 48, "bk": 256, "wm": 1, "wn": 3, "wk": 1, "stages": 4}, r"BN 48 .* does not divide"),
    ("A100", {"bm": 64, "bn": 64, "bk": 128, "wm": 1, "wn": 4, "wk": 1, "stages": 3, "wgmma": 1},
     r"a warpgroup-MMA tile, and this chip or layer has none"),
    ("H200", {"bm": 16, "bn": 64, "bk": 256, "wm": 1, "wn": 4, "wk": 1, "stages": 4, "split_k": 17},
     r"split_k must be 1 to 16, found 17"),
    ("H200", {"tile": "big"}, r"not a tile config \(keys tile\)"),
    ("T4", {"bm": 64, "bn": 64, "bk": 128, "wm": 1, "wn": 4, "wk": 1, "stages": 3, "tma": 1},
     r"a TMA tile, and this chip has no TMA"),
])
def test_an_entry_the_family_refuses_is_set_aside_with_the_reason(db, device, cfg, match):
    base = plan(INT4, device, tuning_db=False)
    i = _index(base, 16)
    database.store(_entry(base, _with(base, i, cfg)))
    p = plan(INT4, device)
    assert p.tuning == base.tuning
    note = next(n for n in p.notes if "tuning database" in n)
    assert "set aside" in note and re.search(match, note), note


def test_an_entry_measured_with_other_kernel_sources_is_set_aside(db):
    base = plan(INT4, "H200", tuning_db=False)
    i = _index(base, 16)
    e = _entry(base, _with(base, i, dict(base.tuning[i].config, split_k=4)))
    e["measured"]["kernels"] = "0123456789abcdef"
    database.store(e)
    p = plan(INT4, "H200")
    assert p.tuning == base.tuning
    note = next(n for n in p.notes if "tuning database" in n)
    assert f"other kernel sources (kernels '0123456789abcdef', now '{G.tuning_version()}')" in note


def test_an_entry_with_a_gap_is_set_aside(db):
    base = plan(INT4, "H200", tuning_db=False)
    database.store(_entry(base, base.tuning[1:]))
    p = plan(INT4, "H200")
    assert p.tuning == base.tuning and any("set aside" in n and "must cover every M" in n for n in p.notes)


def test_a_ring_cannot_be_stretched_past_its_tokens():
    _, caps, _ = resolve_device("H200")
    base = plan(INT4, "H200", tuning_db=False)
    ring = dict(base.tuning[0].config)
    bad = G.check_tuning(INT4, caps, base.compute, [MRange(9, 16, ring)])
    assert bad and "a register ring of 8 tokens cannot serve 16" in bad[0]


# ---------------------------------------------------------------------------
# the family's check and candidates
# ---------------------------------------------------------------------------

LAYERS = [INT4, LayerSpec(4096, 14336, WeightScheme("uint4", "group", 64, zero_point="int"), ActivationScheme("bf16"),
                          out_dtype="bf16"),
          LayerSpec(7392, 3696, WeightScheme("int3", "group", 48), ActivationScheme("fp16")),
          LayerSpec(28672, 8192, WeightScheme("e4m3", "channel", scale_fmt="fp32"), ActivationScheme("bf16"),
                    out_dtype="bf16"),
          LayerSpec(4096, 4096, WeightScheme("int4", "group", 128), ActivationScheme("int8", "dynamic_token")),
          LayerSpec(4096, 4800, WeightScheme("int4", "group", 8), ActivationScheme("fp16"))]


@pytest.mark.parametrize("device", ["H200", "A100", "L40S", "T4"])
@pytest.mark.parametrize("li", range(len(LAYERS)))
def test_the_heuristics_pass_their_own_check_and_lead_the_candidates(device, li):
    layer = LAYERS[li]
    p = plan(layer, device, tuning_db=False)
    _, caps, _ = resolve_device(device)
    assert G.check_tuning(layer, caps, p.compute, p.tuning) == []
    for i, r in enumerate(p.tuning):
        cands = candidate_plans(p, caps, i)
        assert cands[0][0] == dict(r.config) and cands[0][1] == p
        assert len({json.dumps(c, sort_keys=True) for c, _ in cands}) == len(cands)
        for cfg, q in cands:
            assert q.tuning[i].config == cfg and q.tuning[:i] == p.tuning[:i] and q.tuning[i + 1:] == p.tuning[i + 1:]
            assert G.check_tuning(layer, caps, p.compute, q.tuning) == []
            if r.hi == 1:  # (one-token tiles stay with one token)
                assert G.tile_from_config(cfg).bm == G.tile_from_config(r.config).bm


def test_split_caps_and_neighbours_are_offered():
    p = plan(INT4, "H200", tuning_db=False)
    _, caps, _ = resolve_device("H200")
    i = _index(p, 64)
    cands = [c for c, _ in candidate_plans(p, caps, i)]
    assert {c.get("split_k", 1) for c in cands if c["bm"] == p.tuning[i].config["bm"]} >= {1, 2, 4, 8, 16}
    assert dict(p.tuning[i - 1].config) in cands and dict(p.tuning[i + 1].config) in cands


def test_groups_along_k_are_offered_to_the_16_token_tile_where_its_ctas_fit_a_wave():
    """`humming tune` times the H200's 9-16 token warpgroup tile with the other counts of groups along K (Tile.kg: one,
    two, three) where its CTAs fit one wave (8192x8192: 128 of 64 rows, three by default; 2048x8192: 32, one), not
    where they do not (28672x8192: 224 of 128), nor on the register rings; the plan with such a range compiles to a
    kernel of 128 kg threads. A tuning with groups along K on a TMA tile is refused with the reason."""
    _, caps, _ = resolve_device("H200")
    g128 = WeightScheme("int4", "group", 128)
    for layer, own, offered in ((INT4, 3, [1, 2]), (LayerSpec(2048, 8192, g128), 1, [2, 3]),
                                (LayerSpec(28672, 8192, g128), 1, [])):
        p = plan(layer, "H200", tuning_db=False)
        i = _index(p, 16)
        assert p.kernel(16).threads == 128 * own, layer
        cands = [c for c, _ in candidate_plans(p, caps, i)]
        kgs = sorted(c["kg"] for c in cands if "kg" in c and c["kg"] != own)
        assert kgs == offered, (layer, cands)
        for g in offered:
            q = next(q for c, q in candidate_plans(p, caps, i) if c.get("kg") == g)
            assert q.kernel(16).threads == 128 * g == q.kernel(9).threads and q.kernel(17) == p.kernel(17)
        assert all("kg" not in c for c, _ in candidate_plans(p, caps, 0))  # (the one-token ring)
    p = plan(INT4, "H200", tuning_db=False)
    tma = {**G.WG_64_TMA.to_dict(), "kg": 2}
    bad = G.check_tuning(INT4, caps, p.compute, [MRange(17, None, tma)])
    assert bad and "groups along K" in bad[0], bad


# ---------------------------------------------------------------------------
# the autotuner's choice, token counts and the CLI
# ---------------------------------------------------------------------------


def test_choose_keeps_the_heuristics_unless_beaten_by_the_margin():
    assert choose([[10.0, 20.0], [9.9, 19.9], None], 0.03) == 0       # 0.7 % faster: within the margin
    assert choose([[10.0, 20.0], [9.0, 19.0], [8.0, 25.0]], 0.03) == 1  # the sum decides
    assert choose([[10.0], None, [5.0]], 0.03) == 2
    assert choose([None, [1.0]], 0.03) == 0                          # (no baseline: keep the heuristics)
    assert choose([], 0.03) == 0


def test_ranges_are_timed_at_their_ends():
    assert range_token_counts(1, 1, 4096) == (1,)
    assert range_token_counts(9, 16, 4096) == (9, 16)
    assert range_token_counts(257, None, 4096) == (257, 4096)
    assert range_token_counts(257, None, 64) == (257,)
    assert range_token_counts(65, 128, 100) == (65, 100)


def test_cli_dry_run_lists_the_candidates(capsys):
    rc = main(["tune", "--dry-run", "--device", "H200", "--n", "8192", "--k", "8192", "--weight", "int4",
               "--group-size", "128", "--act", "fp16", "--max-m", "64"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "M 9-16 at M 9, 16" in out and "M 33-64 at M 33, 64" in out and "M 65-128" not in out
    assert out.count("split_k=1\n") >= 3


def test_cli_takes_several_layers(capsys):
    rc = main(["tune", "--dry-run", "--device", "A100", "--preset", "llama3-8b", "--weight", "int4",
               "--group-size", "128", "--max-m", "16"])
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if "candidates per M range" in line]
    assert rc == 0 and len(heads) == 4 and "N=28672 K=4096" in heads[2] and "on A100" in heads[0]
    rc = main(["tune", "--dry-run", "--device", "A100", "--shapes", "4096x4096,7392x3696,4096x4096", "--weight",
               "int4", "--group-size", "16", "--max-m", "1"])
    heads = [line for line in capsys.readouterr().out.splitlines() if "candidates per M range" in line]
    assert rc == 0 and [h.split(":")[0] for h in heads] == ["dense N=4096 K=4096", "dense N=7392 K=3696"]
    assert main(["tune", "--dry-run", "--device", "A100", "--shapes", "4096by4096"]) == 2
    assert "--shapes: expected N x K pairs such as '4096x4096,14336x4096', found '4096by4096'" in capsys.readouterr().err
    assert main(["tune", "--dry-run", "--device", "A100", "--preset", "llama9"]) == 2
    assert "--preset: expected one of deepseek-v3" in capsys.readouterr().err


def test_cli_tunes_only_this_machine(capsys):
    rc = main(["tune", "--device", "H200", "--n", "1024", "--k", "1024", "--weight", "int4"])
    assert rc == 2 and "a named device only with --dry-run" in capsys.readouterr().out
    if not torch.cuda.is_available():
        rc = main(["tune", "--n", "1024", "--k", "1024", "--weight", "int4"])
        assert rc == 2 and "humming tune: no CUDA GPU is available" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# on the GPU
# ---------------------------------------------------------------------------


@pytest.mark.gpu
def test_a_tuning_run_stores_an_entry_whose_plan_computes_the_gemm(db, poison_cuda):
    from humming import reference as R
    from humming.ops import gemm, prepare_weight
    from humming.tune.autotune import tune

    layer = LayerSpec(3072, 2048, WeightScheme("uint4", "group", 64, zero_point="int"), ActivationScheme("fp16"),
                      bias=True)
    lines = []
    entry = tune(layer, max_m=64, repeats=3, rounds=1, out=lines.append)
    found = database.lookup(entry["device"], entry["family"], layer, plan(layer, tuning_db=False).compute)
    assert json.dumps(found, sort_keys=True) == json.dumps(entry, sort_keys=True)
    ranges = entry["measured"]["ranges"]
    assert ranges and all(r["errors"][0] is None or r["errors"][0] <= 1e-2 for r in ranges)
    assert any(len(r["configs"]) > 1 and r["times_us"][0] for r in ranges)  # (something was timed)
    p = plan(layer)
    assert any("tuning database" in n for n in p.notes)
    qw = R.quantize(torch.randn(3072, 2048, device="cuda") * 0.02, layer.weight, bias=torch.randn(3072, device="cuda"))
    pw = prepare_weight(qw, layer=layer, plan=p)
    for m in (1, 7, 9, 16, 33, 64):
        poison_cuda()
        x = torch.randn(m, 2048, device="cuda", dtype=torch.float16)
        ref = R.gemm(x.float(), qw)
        y = gemm(x, pw)
        assert torch.allclose(y.float(), ref, rtol=3e-3, atol=3e-3 * float(ref.abs().max())), m


@pytest.mark.gpu
def test_an_moe_tuning_run_stores_an_entry_whose_plan_computes_the_moe_gemm(db):
    from humming import reference as R
    from humming.ops import moe_gemm, prepare_weight
    from humming.tune.autotune import tune

    layer = LayerSpec(768, 1024, WeightScheme("int4", "group", 128), ActivationScheme("bf16"), num_experts=16,
                      out_dtype="bf16")
    entry = tune(layer, max_m=256, repeats=3, rounds=1, topk=4, out=lambda s: None)
    ranges = entry["measured"]["ranges"]
    assert ranges and all(r["errors"][0] is None or r["errors"][0] <= 1e-2 for r in ranges)
    assert any(len(r["configs"]) > 1 and r["times_us"][0] for r in ranges)  # (something was timed)
    p = plan(layer)
    assert any("tuning database" in n for n in p.notes)
    g = torch.Generator().manual_seed(1)
    qw = R.QuantizedWeight.stack([R.quantize(torch.randn(768, 1024, generator=g) * 0.02, layer.weight)
                                  for _ in range(16)]).to("cuda")
    pw = prepare_weight(qw, layer=layer, plan=p)
    for m in (1, 9, 40, 200):
        x = torch.randn(m, 1024, generator=g).to("cuda", torch.bfloat16)
        ids = torch.rand(m, 16, generator=g).argsort(1)[:, :4].to("cuda", torch.int32)
        ref = R.moe_gemm(x.float(), qw, ids)
        y = moe_gemm(x, pw, ids)
        assert torch.allclose(y.float(), ref, rtol=2e-2, atol=2e-2 * float(ref.abs().max())), m


def _simulated_gpu(monkeypatch, fake_prepare, fake_time_calls) -> None:
    """tune()'s GPU stand-ins: this CPU named an H200 ("simulated"), weights prepared by ``fake_prepare``, calls
    timed by ``fake_time_calls``, nothing compiled, an L2 of 4 MiB (four copies of 1 MiB beat it)."""
    import humming.bench.ceilings as ceilings
    import humming.bench.timing as timing
    import importlib

    import humming.jit as jit
    from humming.tune import autotune

    class FakeTimer:
        def __init__(self, dev):
            pass

        def release(self):
            pass

    monkeypatch.setattr(autotune, "_target", lambda device: (torch.device("cpu"), "H200", "simulated"))
    monkeypatch.setattr(importlib.import_module("humming.ops.gemm"), "prepare_weight", fake_prepare)
    monkeypatch.setattr(jit, "warmup", lambda specs: list(specs))
    monkeypatch.setattr(timing, "CudaGraphTimer", FakeTimer)
    monkeypatch.setattr(timing, "time_calls", fake_time_calls)
    monkeypatch.setattr(ceilings, "device_l2_bytes", lambda dev: 4 << 20)


def test_the_tuning_loop_on_a_simulated_gpu(db, monkeypatch):
    """tune()'s control flow on the CPU: the ops, the JIT and the timer replaced by stand-ins that compute
    the reference GEMM and report set times per config. It must time every candidate that computes
    right at each range's token counts, reject one that computes wrong, keep a candidate only past the
    margin, and store an entry the planner then takes."""
    import humming.bench.timing as timing
    import importlib

    from humming import reference as R
    from humming.tune import autotune

    ops = importlib.import_module("humming.ops.gemm")  # (the module: humming.ops.gemm is also the function)
    layer = LayerSpec(2048, 1024, WeightScheme("int4", "group", 128), ActivationScheme("fp16"))
    base = plan(layer, "H200", tuning_db=False)
    i16, i64 = _index(base, 16), _index(base, 64)
    fast = dict(base.tuning[i16].config, split_k=4)   # 20 % faster at 9-16 tokens: kept
    close = dict(base.tuning[i64].config, split_k=2)  # 1 % faster at 33-64: within the margin
    wrong = dict(base.tuning[i64].config, split_k=1)  # fastest at 33-64, but computes garbage
    timed, last = [], {}

    class Prepared:
        def __init__(self, qw, plan):
            self.qw, self.plan, self.nbytes, self.out_dtype = qw, plan, 1 << 20, torch.float32
            self.launcher = type("L", (), {"spec_for": lambda _, m: (plan.fingerprint(), m)})()

        def config(self, m):
            return dict(self.plan.tuning_for(m).config)

    def fake_prepare(qw, layer=None, device=None, plan=None):
        assert device.type == "cpu" and plan.layer == layer
        return Prepared(qw, plan)

    def fake_gemm(x, pw, act_scale=None, out=None):
        m = x.shape[0]
        last["pw"], last["m"] = pw, m
        y = R.gemm(x.float(), pw.qw)
        if pw.config(m) == wrong:
            y = y + 1.0
        if out is None:
            return y
        out.copy_(y)
        return out

    def fake_time_calls(calls, timer, repeats=5):
        calls[0]()
        pw, m = last["pw"], last["m"]
        cfg = pw.config(m)
        t = 10.0 * m ** 0.5
        t *= 0.8 if cfg == fast else 0.99 if cfg == close else 0.5 if cfg == wrong else 1.0
        timed.append((json.dumps(cfg, sort_keys=True), m, len(calls)))
        return timing.Measurement((t,) * repeats, len(calls), 1)

    _simulated_gpu(monkeypatch, fake_prepare, fake_time_calls)
    monkeypatch.setattr(ops, "gemm", fake_gemm)
    _, caps, _ = resolve_device("H200")
    for i, want in ((i16, fast), (i64, close), (i64, wrong)):
        assert want in G.tuning_candidates(layer, caps, base.compute, base.tuning, i)

    lines = []
    entry = autotune.tune(layer, max_m=64, repeats=3, rounds=2, out=lines.append)
    assert entry["measured"]["kernels"] == G.tuning_version() and entry["measured"]["gpu"] == "simulated"
    ranges = {(r["m_min"], r["m_max"]): r for r in entry["measured"]["ranges"]}
    assert max(hi or 0 for _, hi in ranges) <= 64 and (1, 1) in ranges
    r16 = ranges[(base.tuning[i16].lo, base.tuning[i16].hi)]
    assert r16["configs"][r16["chosen"]] == fast and r16["speedup"] == pytest.approx(1.25)
    r64 = ranges[(base.tuning[i64].lo, base.tuning[i64].hi)]
    assert r64["chosen"] == 0 and r64["speedup"] == pytest.approx(1.0)  # (close: within 3 %; wrong: rejected)
    bad = r64["configs"].index(wrong)
    assert r64["times_us"][bad] is None and r64["errors"][bad].startswith("error ")
    assert all(e <= 1e-2 for e in r64["errors"] if not isinstance(e, str))
    # every candidate that computes right was timed at both ends of its range once per round (a token count
    # belongs to one range), over 13 weight copies; the rejected one never
    for r in ranges.values():
        if len(r["configs"]) == 1:
            assert r["times_us"] == [None]  # (nothing to choose from: nothing timed)
            continue
        for c, t in zip(r["configs"], r["times_us"]):
            key = json.dumps(c, sort_keys=True)
            for m in r["ms"]:
                assert sum(1 for cc, mm, _ in timed if (cc, mm) == (key, m)) == (2 if t is not None else 0)
    assert {n for _, _, n in timed} == {13}  # (copies_for: more than 3 x 4 MiB of L2 in 1 MiB copies)
    assert any(line.startswith(base.tuning[i16].label()) for line in lines) and lines[-1] == f"stored in {db}"
    # the planner takes it
    p = plan(layer, "H200")
    assert dict(p.tuning[i16].config) == fast and p.tuning[i64] == base.tuning[i64]
    assert any(f"differs from the heuristics' in {base.tuning[i16].label()}" in n for n in p.notes)


def test_the_family_modules_behind_one_name(tmp_path, monkeypatch):
    """The mma_sync family is four modules; gemm_mma_sync re-exports the public names of the other three (the
    same objects), and a measured tuning's digest covers all four: a change to any of them sets entries aside."""
    import importlib
    import inspect
    import shutil

    from humming_nvidia import gemm_mma_sync as G

    for name in ("mma_sync_kernel", "mma_sync_pack", "mma_sync_launch"):
        mod = importlib.import_module(f"humming_nvidia.{name}")
        own = [n for n, v in vars(mod).items() if not n.startswith("_") and getattr(v, "__module__", mod.__name__)
               == mod.__name__ and (inspect.isfunction(v) or inspect.isclass(v))]
        assert len(own) >= 2, name
        for n in own:
            assert getattr(G, n) is getattr(mod, n) and n in G.__all__, (name, n)
    here = Path(G.__file__).parent
    assert sorted(G.FAMILY_MODULES) == sorted(p.name for p in here.glob("*.py") if p.name.startswith(
        ("mma_sync_", "gemm_mma_sync")))
    base = G.tuning_version()
    copy = tmp_path / "fam"
    shutil.copytree(here, copy)
    (copy / "mma_sync_launch.py").write_text((copy / "mma_sync_launch.py").read_text() + "\n# changed\n")
    monkeypatch.setattr(G, "__file__", str(copy / "gemm_mma_sync.py"))
    monkeypatch.setattr(G, "_TUNING_VERSION", [])
    assert G.tuning_version() != base


def test_moe_ranges_are_timed_at_the_token_counts_of_their_share():
    """An MoE layer's ranges count the rows one expert gets: each is timed at the token counts whose share,
    ceil(M x topk / E) (at least 2), is its first and last; the one-row range (run only by calls routed
    directly: none here, test_one_helper_gives_a_layers_token_counts has them) and ranges past max_m tokens'
    share are not timed."""
    from humming.ops.moe import tokens_per_expert
    from humming.tune.autotune import moe_range_token_counts

    assert moe_range_token_counts(2, 8, 4096, 8, 128) == (1, 128)  # (decode: one token, two rows per expert)
    assert moe_range_token_counts(1, 1, 4096, 8, 128) == ()
    assert moe_range_token_counts(65, 128, 512, 8, 128) == ()  # (512 tokens: 32 rows per expert)
    assert moe_range_token_counts(17, 64, 512, 8, 128) == (257, 512)
    for (lo, hi, e, topk) in ((2, 8, 8, 2), (9, 16, 64, 6), (129, None, 16, 4), (33, 64, 60, 4), (9, 16, 8, 8)):
        ms = moe_range_token_counts(lo, hi, 4096, topk, e)
        assert ms and lo <= tokens_per_expert(ms[0], topk, e) and (ms[0] == 1 or tokens_per_expert(ms[0] - 1, topk,
                                                                                                  e) < lo)
        assert lo <= tokens_per_expert(ms[-1], topk, e) <= (hi or 10**9) and max(ms) <= 4096
        assert ms[-1] == 4096 or tokens_per_expert(ms[-1] + 1, topk, e) > (hi or 10**9)


def test_one_helper_gives_a_layers_token_counts():
    """layer_range_token_counts: a dense layer's ranges at their first and last token counts, an MoE layer's at
    those of its experts' share, with 8 experts per token unless told (at most the experts)."""
    from humming.tune.autotune import (default_topk, layer_range_token_counts, moe_range_token_counts,
                                       range_token_counts)

    w4 = WeightScheme("int4", "group", 128)
    dense = LayerSpec(4096, 4096, w4, ActivationScheme("fp16"))
    moe, few = (LayerSpec(1536, 2048, w4, ActivationScheme("fp16"), num_experts=e) for e in (128, 4))
    assert layer_range_token_counts(dense, 9, 16, 64) == range_token_counts(9, 16, 64) == (9, 16)
    assert default_topk(moe) == 8 and default_topk(few) == 4
    # (128 experts top-8: calls of up to 4 tokens route directly, one row per block, and run the one-row range's
    # tile; routed calls from 5 tokens; 4 experts: none routes directly)
    assert layer_range_token_counts(moe, 2, 8, 4096) == moe_range_token_counts(2, 8, 4096, 8, 128, 4) == (5, 128)
    assert layer_range_token_counts(moe, 1, 1, 4096) == moe_range_token_counts(1, 1, 4096, 8, 128, 4) == (1, 4)
    assert moe_range_token_counts(1, 8, 4096, 8, 128, 4) == (1, 128)  # (a range from one row: direct calls too)
    assert moe_range_token_counts(2, 8, 4096, 8, 128) == (1, 128) and moe_range_token_counts(1, 1, 64, 8, 128) == ()
    assert layer_range_token_counts(moe, 2, 8, 4096, topk=2) == moe_range_token_counts(2, 8, 4096, 2, 128, 16)
    assert layer_range_token_counts(few, 2, 8, 64) == moe_range_token_counts(2, 8, 64, 4, 4)
    assert layer_range_token_counts(few, 1, 1, 64) == ()


def test_cli_dry_run_of_an_moe_layer(capsys):
    assert main(["tune", "--device", "H200", "--n", "1536", "--k", "2048", "--weight", "int4", "--group-size", "128",
                 "--experts", "128", "--topk", "8", "--max-m", "512", "--dry-run"]) == 0
    text = capsys.readouterr().out
    # (calls of up to 4 tokens route directly and run the one-row range's tile; routed ones from 5 tokens)
    assert "MoE x128" in text and "M 1-1 per expert at M 1, 4" in text and "M 2-8 per expert at M 5, 128" in text
    # (the decode rings: the heuristics' for many experts first (MOE_DECODE_INT4, 64 rows, for direct calls;
    # MOE_ROUTED_INT4, 128, for routed ones), and the rings dense layers of one expert's, eight and every expert's
    # rows would run: one expert's 32 rows among them)
    one, ring = text.split("M 1-1 per expert")[1].split("M 2-8")[0], text.split("M 2-8 per expert")[1].split("M 9-")[0]
    assert "bn=64, bk=128" in one.split("\n")[0] and "bn=128, bk=64" in one
    assert ring.count("stream=4") >= 2 and "bn=128, bk=64" in ring.split("\n")[0] and "bn=32" in ring


def test_the_moe_tuning_loop_on_a_simulated_gpu(db, monkeypatch):
    """tune() of an MoE layer on the CPU, the ops, the JIT and the timer replaced by stand-ins (as for the dense
    loop): the routed calls go through moe_gemm at each range's token counts, checked against the MoE reference
    on sampled tokens, a faster candidate is kept, one that computes wrong is rejected, and the planner takes the
    entry for this MoE layer."""
    import humming.bench.timing as timing
    import importlib

    from humming import reference as R
    from humming.tune import autotune

    moe_ops = importlib.import_module("humming.ops.moe")
    layer = LayerSpec(256, 512, WeightScheme("uint4", "group", 64, zero_point="int", act_order=True),
                      ActivationScheme("fp16"), num_experts=8, bias=True)
    base = plan(layer, "H200", tuning_db=False)
    i16 = _index(base, 16)
    fast = dict(base.tuning[i16].config, split_k=4)
    wrong = dict(base.tuning[i16].config, split_k=1)
    timed, last, poisoned = [], {}, []

    class Prepared:
        def __init__(self, qw, plan):
            self.qw, self.plan, self.nbytes, self.out_dtype = qw, plan, 1 << 20, torch.float32
            self.launcher = type("L", (), {"spec_for": lambda _, m: (plan.fingerprint(), m)})()

        def config(self, m):
            return dict(self.plan.tuning_for(moe_ops.tokens_per_expert(m, 2, 8)).config)

    def fake_prepare(qw, layer=None, device=None, plan=None):
        assert qw.is_moe and qw.perm.shape == (8, 512) and qw.bias.shape == (8, 256)
        return Prepared(qw, plan)

    def fake_moe_gemm(x, pw, ids, topk_weights=None, reduce=False, act_scale=None, check_ids=True):
        assert ids.shape == (x.shape[0], 2) and not check_ids
        last["pw"], last["m"] = pw, x.shape[0]
        poisoned.append(moe_ops.POISON)
        y = R.moe_gemm(x.float(), pw.qw, ids)
        return y + 1.0 if pw.config(x.shape[0]) == wrong else y

    def fake_time_calls(calls, timer, repeats=5):
        calls[0]()
        pw, m = last["pw"], last["m"]
        t = 10.0 * m ** 0.5 * (0.8 if pw.config(m) == fast else 0.5 if pw.config(m) == wrong else 1.0)
        timed.append((json.dumps(pw.config(m), sort_keys=True), m))
        return timing.Measurement((t,) * repeats, len(calls), 1)

    _simulated_gpu(monkeypatch, fake_prepare, fake_time_calls)
    monkeypatch.setattr(moe_ops, "moe_gemm", fake_moe_gemm)
    _, caps, _ = resolve_device("H200")
    assert fast in G.tuning_candidates(layer, caps, base.compute, base.tuning, i16)
    with pytest.raises(ValueError, match=r"topk must be an integer in 1\.\.8"):
        autotune.tune(layer, topk=9, out=lambda s: None)
    entry = autotune.tune(layer, max_m=64, repeats=3, rounds=2, topk=2, out=lambda s: None)
    assert entry["measured"]["topk"] == 2 and entry["layer"]["num_experts"] == 8
    ranges = {(r["m_min"], r["m_max"]): r for r in entry["measured"]["ranges"]}
    assert (1, 1) not in ranges  # (MoE calls never run the one-token range)
    r16 = ranges[(base.tuning[i16].lo, base.tuning[i16].hi)]
    assert r16["configs"][r16["chosen"]] == fast and r16["speedup"] == pytest.approx(1.25)
    assert r16["times_us"][r16["configs"].index(wrong)] is None
    assert r16["ms"] == list(autotune.moe_range_token_counts(base.tuning[i16].lo, base.tuning[i16].hi, 64, 2, 8))
    assert any(poisoned) and not moe_ops.POISON  # (the checks ran on poisoned rows; the flag is restored)
    p = plan(layer, "H200")
    assert dict(p.tuning[i16].config) == fast
