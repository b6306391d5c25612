"""The JIT runtime on the CPU: specs, codegen, cache keys, the disk cache, compile
errors, warm-up, launch plans, and what happens without a GPU."""
from __future__ import annotations

import ctypes
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from humming.errors import CompileError, DeviceError
from humming.jit import (DiskCache, KernelSpec, LaunchPlan, Runtime, cache_key, default_cache_dir,
                         get_compiler, header_digests, include_roots, render)
from humming.jit.compilers import NvccCompiler, NvrtcCompiler

from conftest import HAS_GPU

# A tiny kernel family of our own, in a private include root: kern.cuh includes
# util.cuh, which includes detail.cuh relative to itself.
HEADERS = {
    "t/kern.cuh": """
        #pragma once
        #include "t/util.cuh"
        namespace t {
        struct P { int* out; int n; };
        template <class C> __device__ void kern(const P& p) {
          if (threadIdx.x < p.n) p.out[threadIdx.x] = C::VALUE + helper();
        }
        }  // namespace t
        """,
    "t/util.cuh": """
        #pragma once
        #include "detail.cuh"
        """,
    "t/detail.cuh": """
        #pragma once
        namespace t { __device__ inline int helper() { return 1; } }
        """,
}


class P(ctypes.Structure):
    _fields_ = [("out", ctypes.c_void_p), ("n", ctypes.c_int)]


def write_headers(root, headers=HEADERS):
    for rel, text in headers.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def tspec(value=1, target="sm_80", params_size=ctypes.sizeof(P)) -> KernelSpec:
    return KernelSpec(family="tkern", header="t/kern.cuh", entry="t::kern", params="t::P",
                      config={"VALUE": value}, target=target, threads=64, params_size=params_size)


@pytest.fixture
def troot(tmp_path):
    return write_headers(tmp_path / "inc")


@pytest.fixture
def trt(tmp_path, troot):
    return Runtime(cache_dir=tmp_path / "cache", roots=[troot])


# ---------------------------------------------------------------- spec + codegen

def test_spec_is_a_normalized_hashable_value():
    a = KernelSpec("f", "h/x.cuh", "ns::f", "ns::P", config={"B": 1, "A": 2.5}, defines={"X": 1})
    b = KernelSpec("f", "h/x.cuh", "ns::f", "ns::P", config=(("A", 2.5), ("B", 1)), defines=(("X", "1"),))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a.config == (("A", 2.5), ("B", 1)) and a.get("B") == 1 and a.get("C", 7) == 7
    assert KernelSpec("f", "h/x.cuh", "ns::f", "ns::P", target="sm_100a").arch == 100
    assert a != KernelSpec("f", "h/x.cuh", "ns::f", "ns::P", config={"B": 2, "A": 2.5}, defines={"X": 1})
    out = subprocess.run([sys.executable, "-c", "import pickle, sys; s = pickle.load(sys.stdin.buffer); "
                          "import dataclasses; print(hash(s) == hash(dataclasses.replace(s)))"],
                         input=pickle.dumps(a), capture_output=True, check=True)
    assert out.stdout.strip() == b"True"  # the hash is rebuilt in the other process


@pytest.mark.parametrize("kwargs, words", [
    ({"target": "compute_90a"}, ["target", "compute_90a"]),
    ({"config": {"THREADS": 1}}, ["config", "reserved", "THREADS"]),
    ({"config": {"X": float("nan")}}, ["config['X']", "finite"]),
    ({"config": {"X": "text"}}, ["config['X']", "int, bool or float"]),
    ({"config": {"1X": 1}}, ["config", "identifier"]),
    ({"header": "../x.cuh"}, ["header", "relative"]),
    ({"threads": 0}, ["threads", ">= 1"]),
    ({"threads": 2048}, ["threads", "1024"]),
    ({"entry": "not a name"}, ["entry", "qualified"]),
    ({"defines": {"X": "a\nb"}}, ["defines['X']", "one-line"]),
])
def test_spec_rejects_bad_fields_naming_them(kwargs, words):
    base = dict(family="f", header="h/x.cuh", entry="ns::f", params="ns::P")
    with pytest.raises(ValueError) as e:
        KernelSpec(**{**base, **kwargs})
    for w in words:
        assert w in str(e.value)


def test_render_emits_one_c_entry_with_typed_constants():
    spec = KernelSpec("f", "h/x.cuh", "ns::f", "ns::P", target="sm_90a", threads=256, min_blocks=2,
                      smem_bytes=1024, params_size=48, defines={"USE_PPU": 1},
                      config={"FLAG": True, "N": 7, "BIG": 1 << 40, "F": 448.0, "D": 0.1})
    src = render(spec)
    assert src == render(spec)
    lines = src.splitlines()
    assert lines.index("#define USE_PPU 1") < lines.index('#include "h/x.cuh"')
    for decl in ("static constexpr bool FLAG = true;", "static constexpr int N = 7;",
                 "static constexpr long long BIG = 1099511627776LL;", "static constexpr float F = 448.0f;",
                 "static constexpr double D = 0.1;", "static constexpr int THREADS = 256;",
                 "static constexpr int SMEM_BYTES = 1024;", "static constexpr int MIN_BLOCKS = 2;"):
        assert "  " + decl in lines
    assert 'static_assert(sizeof(ns::P) == 48, "ns::P: the host declares 48 bytes");' in lines
    assert 'extern "C" __global__ void __launch_bounds__(256, 2)' in lines
    assert "humming_entry(const __grid_constant__ ns::P p) {" in lines
    assert "  ns::f<HummingConfig>(p);" in lines


def test_header_digests_follow_includes_transitively(troot):
    digests = dict(header_digests(render(tspec()), [troot]))
    assert sorted(digests) == ["t/detail.cuh", "t/kern.cuh", "t/util.cuh"]
    assert all(len(d) == 64 for d in digests.values())
    # the backend's own headers are found through the default roots
    names = [n for n, _ in header_digests('#include "humming/kernels/act_quant.cuh"\n')]
    assert names == ["humming/common.cuh", "humming/gemm/ptx.cuh", "humming/kernels/act_quant.cuh"]
    assert include_roots()[-1].joinpath("humming", "common.cuh").is_file()


def test_key_follows_header_content_not_times_or_paths(tmp_path, troot):
    rt = Runtime(cache_dir=tmp_path / "c", roots=[troot])
    key = rt.describe(tspec())["key"]
    os.utime(troot / "t" / "detail.cuh", (1, 1))  # only the time changes
    assert Runtime(cache_dir=tmp_path / "c", roots=[troot]).describe(tspec())["key"] == key
    moved = shutil.copytree(troot, tmp_path / "elsewhere" / "inc")  # same content, other path
    assert Runtime(cache_dir=tmp_path / "d", roots=[moved]).describe(tspec())["key"] == key
    (moved / "t" / "detail.cuh").write_text(HEADERS["t/detail.cuh"].replace("return 1", "return 2"))
    assert Runtime(cache_dir=tmp_path / "d", roots=[moved]).describe(tspec())["key"] != key
    assert rt.describe(tspec(value=2))["key"] != key
    assert rt.describe(tspec(target="sm_86"))["key"] != key
    assert cache_key("s", [], "c", ["-x"], "sm_80") != cache_key("s", [], "c", ["-y"], "sm_80")


def test_default_cache_dir_reads_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("HUMMING_CACHE_DIR", str(tmp_path / "a"))
    assert default_cache_dir() == tmp_path / "a"
    monkeypatch.delenv("HUMMING_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "humming"


def test_compiler_choice(monkeypatch):
    monkeypatch.setenv("HUMMING_COMPILER", "nvcc")
    assert isinstance(get_compiler(), NvccCompiler)
    monkeypatch.delenv("HUMMING_COMPILER")
    assert isinstance(get_compiler(), NvrtcCompiler)
    with pytest.raises(ValueError, match="'clang'"):
        get_compiler("clang")
    flags = get_compiler("nvcc").flags(tspec(target="sm_90a"))
    assert "-gencode=arch=compute_90a,code=sm_90a" in flags and "-cubin" in flags
    assert "--gpu-architecture=sm_90a" in get_compiler("nvrtc").flags(tspec(target="sm_90a"))


# ---------------------------------------------------------------- cache

def test_cache_hits_return_the_identical_binary(tmp_path, trt, troot):
    spec = tspec()
    k1 = trt.kernel(spec)
    assert k1.origin == "compiled" and k1.cubin[:4] == b"\x7fELF"
    assert trt.kernel(spec) is k1  # memory
    k2 = Runtime(cache_dir=tmp_path / "cache", roots=[troot]).kernel(spec)  # disk
    assert k2.origin == "disk" and k2.cubin == k1.cubin and k2.key == k1.key
    entry = trt.disk.entry_dir("tkern", k1.key)
    assert sorted(p.name for p in entry.iterdir()) == ["kernel.cubin", "meta.json"]
    meta = json.loads((entry / "meta.json").read_text())
    assert meta["key"] == k1.key and meta["target"] == "sm_80" and meta["source"] == render(spec)
    assert meta["compiler"] == trt.compiler.identity and "--gpu-architecture=sm_80" in meta["flags"]
    assert str(tmp_path) not in json.dumps(meta["flags"]) + meta["compiler"]


def _corrupt_cubin(d):
    data = bytearray((d / "kernel.cubin").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (d / "kernel.cubin").write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [
    _corrupt_cubin,
    lambda d: (d / "kernel.cubin").write_bytes((d / "kernel.cubin").read_bytes()[:100]),
    lambda d: (d / "meta.json").write_text("{not json"),
    lambda d: (d / "meta.json").unlink(),
], ids=["flipped-byte", "truncated", "bad-json", "no-metadata"])
def test_a_corrupt_entry_is_rebuilt_not_loaded(tmp_path, trt, troot, damage):
    good = trt.kernel(tspec())
    entry = trt.disk.entry_dir("tkern", good.key)
    damage(entry)
    again = Runtime(cache_dir=tmp_path / "cache", roots=[troot]).kernel(tspec())
    assert again.origin == "compiled" and again.cubin == good.cubin
    assert trt.disk.get("tkern", good.key).cubin == good.cubin
    assert not [p for p in entry.parent.iterdir() if p.name.startswith(".")]


def test_concurrent_puts_leave_one_valid_entry(tmp_path):
    cache = DiskCache(tmp_path)
    blob = os.urandom(4096)
    barrier = threading.Barrier(8)
    got = []

    def put():
        barrier.wait()
        got.append(cache.put("fam", "k" * 64, blob, {"note": "x"}))

    threads = [threading.Thread(target=put) for _ in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert len(got) == 8 and all(e.cubin == blob for e in got)
    assert [p.name for p in (tmp_path / "kernels").iterdir()] == ["fam-" + "k" * 64]
    assert cache.get("fam", "k" * 64).cubin == blob


_RACE_SCRIPT = """
import hashlib, time
from humming.jit import KernelSpec, Runtime
spec = KernelSpec(family="tkern", header="t/kern.cuh", entry="t::kern", params="t::P",
                  config={{"VALUE": 1}}, target="sm_80", threads=64, params_size=16)
rt = Runtime(cache_dir={cache!r}, roots=[{root!r}])
rt.describe(spec)
time.sleep(max(0.0, {start!r} - time.time()))
k = rt.kernel(spec)
print(k.origin, hashlib.sha256(k.cubin).hexdigest())
"""


def test_two_processes_compiling_one_key_leave_one_valid_entry(tmp_path, troot):
    cache = tmp_path / "shared-cache"
    assert tspec().params_size == 16
    script = _RACE_SCRIPT.format(cache=str(cache), root=str(troot), start=time.time() + 1.5)
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert len({o[0].split()[1] for o in outs}) == 1
    entries = list((cache / "kernels").iterdir())
    assert [e.name for e in entries] == [f"tkern-{Runtime(cache_dir=cache, roots=[troot]).describe(tspec())['key']}"]
    k = Runtime(cache_dir=cache, roots=[troot]).kernel(tspec())
    assert k.origin == "disk"


# ---------------------------------------------------------------- compile errors

def test_compile_error_carries_the_log_and_the_kept_source(tmp_path):
    root = write_headers(tmp_path / "inc", {**HEADERS, "t/detail.cuh": "namespace t { int helper( }\n"})
    rt = Runtime(cache_dir=tmp_path / "cache", roots=[root])
    with pytest.raises(CompileError) as e:
        rt.kernel(tspec())
    err = e.value
    assert "error" in err.log and "detail.cuh" in err.log and "\x00" not in err.log
    assert err.source_path and os.path.dirname(err.source_path) == str(tmp_path / "cache" / "failed")
    with open(err.source_path) as f:
        assert f.read() == render(tspec())
    assert os.path.exists(err.source_path[:-3] + ".log")
    assert "tkern" in str(err) and err.source_path in str(err)
    assert not (tmp_path / "cache" / "kernels").exists() or not any((tmp_path / "cache" / "kernels").iterdir())


def test_a_target_the_compiler_lacks_is_a_compile_error(trt):
    with pytest.raises(CompileError, match="cannot target sm_72"):
        trt.kernel(tspec(target="sm_72"))


def test_the_params_size_is_checked_at_compile_time(trt):
    with pytest.raises(CompileError, match="host declares 24 bytes"):
        trt.kernel(tspec(params_size=24))


# ---------------------------------------------------------------- warm-up

def test_warmup_compiles_then_hits_memory_then_disk(tmp_path, trt, troot):
    specs = [tspec(v) for v in (1, 2, 3)]
    first = trt.warmup(specs + specs[:1], executor="serial")
    assert [r.origin for r in first] == ["compiled"] * 3 and [r.spec for r in first] == specs
    assert all(r.seconds > 0 for r in first)
    assert [r.origin for r in trt.warmup(specs)] == ["memory"] * 3
    other = Runtime(cache_dir=tmp_path / "cache", roots=[troot])
    assert [r.origin for r in other.warmup(specs)] == ["disk"] * 3
    assert [other.kernel(s).cubin for s in specs] == [trt.kernel(s).cubin for s in specs]


@pytest.mark.parametrize("executor", ["process", "thread"])
def test_parallel_warmup_matches_serial(tmp_path, troot, executor):
    specs = [tspec(v) for v in (4, 5)]
    serial = Runtime(cache_dir=tmp_path / "s", roots=[troot])
    par = Runtime(cache_dir=tmp_path / "p", roots=[troot])
    res = par.warmup(specs, max_workers=2, executor=executor)
    assert [r.origin for r in res] == ["compiled", "compiled"]
    assert [par.kernel(s).cubin for s in specs] == [serial.kernel(s).cubin for s in specs]
    assert Runtime(cache_dir=tmp_path / "p", roots=[troot]).kernel(specs[0]).origin == "disk"


def test_warmup_raises_compile_errors_after_the_rest(tmp_path, troot):
    rt = Runtime(cache_dir=tmp_path / "c", roots=[troot])
    with pytest.raises(CompileError, match="host declares 24 bytes"):
        rt.warmup([tspec(1, params_size=24), tspec(1)], executor="serial")
    assert rt.kernel(tspec(1)).origin == "compiled"


# ---------------------------------------------------------------- launch

def test_launch_plan_checks_its_params(trt):
    k = trt.kernel(tspec())
    with pytest.raises(ValueError, match="16 bytes in the spec"):
        k.plan(type("Small", (ctypes.Structure,), {"_fields_": [("a", ctypes.c_int)]})())
    with pytest.raises(TypeError, match="ctypes.Structure"):
        LaunchPlan(k, object())
    with pytest.raises(ValueError, match="grid"):
        k.plan(P(), grid=(0, 1))
    plan = k.plan(P(), grid=5)
    assert plan.grid == (5, 1, 1) and plan.block == (64, 1, 1) and plan.smem_bytes == 0


def test_launch_path_benchmark_runs_with_the_driver_stubbed(trt):
    """``bench_jit``'s launch-path figure goes through the real LaunchPlan.launch
    with only the driver calls replaced; afterwards the driver module is as before."""
    from humming.jit import bench_jit, driver

    before = (driver.launch_raw, driver.current_device_index, driver.current_context)
    r = bench_jit.bench_launch_path(trt.kernel(tspec()), P(), {"out": 1 << 32, "n": 5}, number=200)
    assert r["fields"] == 2 and 0 < r["launch_only_us"] <= r["write_and_launch_us"] * 10
    assert (driver.launch_raw, driver.current_device_index, driver.current_context) == before


def _pdl_launches(trt, monkeypatch, pdl_code: int, launch):
    """Run ``launch(plan)`` on a 3-CTA plan with ``pdl`` set, the driver stubbed: programmatic launches
    return ``pdl_code``, plain ones succeed. Returns (plan, the launches made: ("pdl" | "plain", grid))."""
    from humming.jit import bench_jit, driver

    k = trt.kernel(tspec())
    plan = k.plan(P(), grid=3)
    plan.pdl = True
    calls = []
    with bench_jit._no_driver():
        k._functions.setdefault(1, 1)
        monkeypatch.setattr(driver, "launch_raw_pdl", lambda *a: calls.append(("pdl", a[1])) or pdl_code)
        monkeypatch.setattr(driver, "launch_raw", lambda *a: calls.append(("plain", a[1])) or 0)
        try:
            launch(plan)
        finally:
            k._functions.pop(1, None)
    return plan, calls


def test_a_refused_programmatic_launch_falls_back_to_plain_launches(trt, monkeypatch):
    """A LaunchPlan with ``pdl`` set launches through launch_raw_pdl; where the driver refuses that
    launch (an error code), the plan launches plainly and keeps doing so."""
    plan, calls = _pdl_launches(trt, monkeypatch, 801, lambda plan: (plan.launch(), plan.launch()))
    assert calls == [("pdl", 3), ("pdl", 3), ("plain", 3), ("plain", 3)] and not plan.pdl


def test_a_launch_the_caller_keeps_plain_leaves_the_plan_programmatic(trt, monkeypatch):
    """``launch(pdl=False)`` (a split warpgroup launch: Launcher._shape) goes plainly without changing
    the plan: its next launch is programmatic again."""
    plan, calls = _pdl_launches(trt, monkeypatch, 0, lambda plan: (plan.launch(pdl=False), plan.launch()))
    assert [c[0] for c in calls] == ["plain", "pdl"] and plan.pdl


def test_cluster_launches_keep_their_clusters_when_programmatic_launch_is_refused(trt, monkeypatch):
    """A LaunchPlan with ``cluster_z`` > 1 launches through launch_raw_ex with its cluster size (and
    programmatic launch if set); a refused programmatic launch is retried with the clusters kept (the
    kernel counts on them), and a refused cluster launch raises a DeviceError that names the clusters."""
    from humming.jit import bench_jit, driver

    k = trt.kernel(tspec())
    plan = k.plan(P(), grid=(4, 1, 3))
    plan.pdl, plan.cluster_z = True, 3
    calls = []

    def ex(fn, gx, gy, gz, bx, by, bz, smem, stream, args, pdl, cz):
        calls.append((gz, pdl, cz))
        return 801 if pdl or refuse else 0

    refuse = False
    with bench_jit._no_driver():
        k._functions.setdefault(1, 1)
        monkeypatch.setattr(driver, "launch_raw_ex", ex)
        monkeypatch.setattr(driver, "launch_raw", lambda *a: calls.append("plain") or 0)
        try:
            plan.launch()
            plan.launch()
            refuse = True
            with pytest.raises(DeviceError, match="clusters of 1 x 1 x 3"):
                plan.launch()
        finally:
            k._functions.pop(1, None)
    assert calls[:4] == [(3, 1, 3), (3, 1, 3), (3, 0, 3), (3, 0, 3)] and not plan.pdl and "plain" not in calls


@pytest.mark.skipif(HAS_GPU, reason="checks the behaviour without a GPU")
def test_launching_without_a_gpu_raises_device_error(trt):
    k = trt.kernel(tspec())
    plan = k.plan(P(0, 1), grid=1)
    with pytest.raises(DeviceError, match="no CUDA driver"):
        plan.launch()
    with pytest.raises(DeviceError):
        k.function()


# ---------------------------------------------------------------- the native launch entry

_LAUNCH_T = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *([ctypes.c_uint] * 7), ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_void_p)


def _native(monkeypatch, tmp_path):
    from humming.jit import native

    monkeypatch.setenv("HUMMING_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(native, "_tried", False)
    monkeypatch.setattr(native, "_module", None)
    return native


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_native_launch_entry_passes_every_argument_to_cuLaunchKernel(monkeypatch, tmp_path):
    """The C entry calls the function it was given with the launch's eleven
    arguments, unchanged (a recording stand-in for cuLaunchKernel), returns its
    CUresult, and refuses malformed calls with a Python error, not a crash."""
    native = _native(monkeypatch, tmp_path)
    mod = native.load()
    if mod is None and "Python headers" in (native.reason or ""):
        pytest.skip(native.reason)
    assert mod is not None, native.reason
    assert list((tmp_path / "native").glob("_hm_fastlaunch_*"))  # built into the cache
    seen = []

    def fake(*args):
        seen.append(args)
        return 719  # CUDA_ERROR_LAUNCH_FAILED

    cb = _LAUNCH_T(fake)
    mod.set_entry(ctypes.cast(cb, ctypes.c_void_p).value)
    assert mod.launch(0xF00D, 7, 2, 3, 256, 1, 1, 65536, 0x5EED, 0xA0A0) == 719
    assert seen[-1] == (0xF00D, 7, 2, 3, 256, 1, 1, 65536, 0x5EED, 0xA0A0, None)
    assert mod.launch(0xF00D, 1, 1, 1, 32, 1, 1, 0, None, 0xA0A0) == 719 and seen[-1][8] is None
    with pytest.raises(TypeError, match="10 arguments"):
        mod.launch(1, 2, 3)
    with pytest.raises(ValueError, match="null"):
        mod.launch(0, 1, 1, 1, 32, 1, 1, 0, None, 0xA0A0)
    with pytest.raises(TypeError):
        mod.launch("fn", 1, 1, 1, 32, 1, 1, 0, None, 0xA0A0)
    assert len(seen) == 2
    # a second process-level load reuses the built file
    monkeypatch.setattr(native, "_tried", False)
    assert native.build().exists()


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
class _LaunchAttr(ctypes.Structure):  # (72 bytes, as cuda.h's CUlaunchAttribute)
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint * 3),
                ("rest", ctypes.c_char * 52)]


class _LaunchConfig(ctypes.Structure):  # (cuda.h's CUlaunchConfig)
    _fields_ = [("dims", ctypes.c_uint * 7), ("stream", ctypes.c_void_p), ("attrs", ctypes.POINTER(_LaunchAttr)),
                ("nattrs", ctypes.c_uint)]


def _record_launch_ex():
    """A recording stand-in for cuLaunchKernelEx: (the calls seen, the C callback). Each call reads the
    config back as (grid + block + shared memory, stream, [(attribute id, value words)], function,
    argument array, extra)."""
    seen = []

    def fake(cfg, fn, params, extra):
        c = ctypes.cast(cfg, ctypes.POINTER(_LaunchConfig)).contents
        seen.append((tuple(c.dims), c.stream, [(c.attrs[i].id, tuple(c.attrs[i].value)) for i in range(c.nattrs)],
                     fn, params, extra))
        return 0

    return seen, ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(fake)


def test_native_pdl_entry_passes_the_launch_config_to_cuLaunchKernelEx(monkeypatch, tmp_path):
    """launch_pdl builds cuda.h's CUlaunchConfig (grid, block, shared memory, stream) with one
    attribute, programmatic stream serialization (id 6) set to 1, and calls cuLaunchKernelEx with
    the function and argument array (a recording stand-in reads the struct back)."""
    native = _native(monkeypatch, tmp_path)
    mod = native.load()
    if mod is None and "Python headers" in (native.reason or ""):
        pytest.skip(native.reason)
    assert mod is not None, native.reason
    assert ctypes.sizeof(_LaunchAttr) == 72
    seen, cb = _record_launch_ex()
    with pytest.raises(RuntimeError, match="set_entry_ex"):
        mod.launch_pdl(0xF00D, 7, 2, 3, 256, 1, 1, 65536, 0x5EED, 0xA0A0)
    mod.set_entry_ex(ctypes.cast(cb, ctypes.c_void_p).value)
    assert mod.launch_pdl(0xF00D, 7, 2, 3, 256, 1, 1, 65536, 0x5EED, 0xA0A0) == 0
    assert seen[-1] == ((7, 2, 3, 256, 1, 1, 65536), 0x5EED, [(6, (1, 0, 0))], 0xF00D, 0xA0A0, None)
    with pytest.raises(TypeError, match="10 arguments"):
        mod.launch_pdl(1, 2, 3)
    with pytest.raises(ValueError, match="null address"):
        mod.set_entry_ex(0)


def test_native_launch_entry_can_be_disabled_or_missing(monkeypatch, tmp_path):
    """HUMMING_NATIVE_LAUNCH=0, or no C compiler: load() returns None with the reason
    (the launch path then stays on ctypes)."""
    native = _native(monkeypatch, tmp_path)
    monkeypatch.setenv("HUMMING_NATIVE_LAUNCH", "0")
    assert native.load() is None and "HUMMING_NATIVE_LAUNCH" in native.reason
    native = _native(monkeypatch, tmp_path / "b")
    monkeypatch.delenv("HUMMING_NATIVE_LAUNCH")
    monkeypatch.setenv("CC", "no-such-compiler-here")
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on it
    assert native.load() is None and "no C compiler" in native.reason


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_native_ex_entry_passes_programmatic_launch_and_cluster_attributes(monkeypatch, tmp_path):
    """launch_ex builds cuda.h's CUlaunchConfig with programmatic stream serialization (id 6) when asked
    and the cluster dimension (id 4: 1 x 1 x cz) when cz > 1, in that order, none otherwise (a recording
    stand-in for cuLaunchKernelEx reads the struct back); a malformed call is a Python error."""
    native = _native(monkeypatch, tmp_path)
    mod = native.load()
    if mod is None and "Python headers" in (native.reason or ""):
        pytest.skip(native.reason)
    assert mod is not None, native.reason
    seen, cb = _record_launch_ex()
    mod.set_entry_ex(ctypes.cast(cb, ctypes.c_void_p).value)
    dims = (64, 1, 3, 128, 1, 1, 54272)
    assert mod.launch_ex(0xF00D, *dims, 0x5EED, 0xA0A0, 1, 3) == 0
    assert seen[-1][:5] == (dims, 0x5EED, [(6, (1, 0, 0)), (4, (1, 1, 3))], 0xF00D, 0xA0A0)
    assert mod.launch_ex(0xF00D, *dims, None, 0xA0A0, 0, 3) == 0
    assert seen[-1][1] is None and seen[-1][2] == [(4, (1, 1, 3))]
    assert mod.launch_ex(0xF00D, *dims, 0x5EED, 0xA0A0, 0, 1) == 0 and seen[-1][2] == []
    with pytest.raises(TypeError, match="12 arguments"):
        mod.launch_ex(0xF00D, *dims, 0x5EED, 0xA0A0)
    assert len(seen) == 3


def test_ctypes_ex_launcher_passes_the_same_attributes(monkeypatch):
    """Without the native module, launch_raw_ex goes through ctypes with the same CUlaunchConfig as the
    native entry: programmatic serialization (id 6) and the cluster dimension (id 4), as asked (a recording
    stand-in for libcuda's cuLaunchKernelEx); without libcuda's symbol it reports CUDA_ERROR_NOT_SUPPORTED."""
    from humming.jit import driver, native

    seen, cb = _record_launch_ex()
    entry = ctypes.cast(cb, type(ctypes.CDLL(None).abs))  # (a foreign-function pointer, as a library symbol is)

    class Lib:
        cuLaunchKernelEx = entry

    monkeypatch.setattr(driver, "ensure_init", lambda: None)
    monkeypatch.setattr(native, "load", lambda: None)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: Lib())
    monkeypatch.setattr(driver, "_launch_ex_fn", None)
    dims = (64, 1, 3, 128, 1, 1, 54272)
    assert driver.launch_raw_ex(0xF00D, *dims, 0x5EED, 0xA0A0, 1, 3) == 0
    assert (seen[-1][0], seen[-1][2], seen[-1][3]) == (dims, [(6, (1, 0, 0)), (4, (1, 1, 3))], 0xF00D)
    assert driver.launch_any(0xF00D, *dims, 0x5EED, 0xA0A0, False, 2) == 0 and seen[-1][2] == [(4, (1, 1, 2))]

    class NoSymbol:
        pass

    monkeypatch.setattr(ctypes, "CDLL", lambda name: NoSymbol())
    monkeypatch.setattr(driver, "_launch_ex_fn", None)
    assert driver.launch_raw_ex(0xF00D, *dims, 0x5EED, 0xA0A0, 1, 3) == 801
