"""Capability tables: every file validates, spot facts hold, broken files are reported precisely,
and the instruction facts match what NVRTC + ptxas really emit for each architecture (test_probe)."""
from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from humming import capabilities as C
from humming.errors import FormatError

ALL = C.names()
ARCHS = C.names("architecture")


@pytest.fixture
def registry():
    """Let a test register directories; restore the registry afterwards."""
    saved = list(C._REGISTRY.dirs)
    yield C
    C._REGISTRY.dirs[:] = saved
    C._REGISTRY.clear()


# ------------------------------------------------------------------------------------------
# every file
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_every_file_resolves(name):
    caps = C.load(name)
    assert caps.name == name and caps.chain[-1] == name
    assert caps.kind in C.FILE_KINDS
    assert caps.targets["nvcc"] or caps.targets["nvrtc"], "every table can be compiled for somehow"
    for key in C.REQUIRED_LIMITS:
        if caps.kind != "device":
            assert isinstance(caps.limit(key), int), key
    for feature in C.MEMORY_FEATURES:
        assert isinstance(caps.has(feature), bool)
    for op in caps.mma_ops():
        assert op.family in C.FAMILIES and op.acc and op.shapes
        assert op.dims  # every shape parses
    if caps.provisional:
        assert caps.sources, f"{name} is provisional but cites no sources"
    table = caps.to_dict()
    assert json.loads(json.dumps(table)) == table
    assert table["name"] == name and table["chain"] == list(caps.chain)
    text = caps.explain()
    assert name in text and "tensor cores" in text


def test_kinds_are_disjoint_and_cover_all():
    parts = [set(C.names(k)) for k in C.FILE_KINDS]
    assert set().union(*parts) == set(ALL)
    assert sum(map(len, parts)) == len(ALL)
    with pytest.raises(C.CapabilityError, match="unknown kind"):
        C.names("gpu")


def test_products_name_a_match_pattern_and_figures():
    for name in C.names("product") + C.names("device"):
        p = C.load(name).product
        assert p is not None and p.match, name
        assert p.memory_gb, name


def test_type_names_agree_with_dtypes():
    dtypes = pytest.importorskip("humming.dtypes")
    for name in sorted(C.TYPE_NAMES - {"int32"}):
        assert dtypes.get_format(name).name == name


# ------------------------------------------------------------------------------------------
# spot facts
# ------------------------------------------------------------------------------------------

def test_fp8_mma_sync_is_native_on_ada_and_blackwell_geforce_only():
    for name in ("sm_89", "sm_120", "sm_121", "L40S", "RTX-5090"):
        assert C.load(name).supports_mma("e4m3", acc="fp32", family="mma_sync"), name
    for name in ("sm_80", "sm_90", "sm_100", "sm_103", "H200"):
        assert not C.load(name).supports_mma("e4m3", acc="fp32", family="mma_sync"), name
    sm90 = C.load("sm_90")
    assert sm90.supports_mma("e4m3", acc="fp32", family="mma_sync", native_only=False)
    assert sm90.supports_mma("e4m3", "e5m2", acc="fp16", family="wgmma")
    assert [op.family for op in sm90.find_mma("e4m3")] == ["wgmma"]


def test_int4_tensor_cores_only_before_hopper():
    for name in ("sm_75", "sm_80", "sm_86", "sm_89", "A100"):
        assert C.load(name).supports_mma("int4", acc="int32"), name
    for name in ("sm_90", "sm_100", "sm_120", "H20"):
        caps = C.load(name)
        assert not caps.supports_mma("int4"), name
        assert caps.supports_mma("int4", native_only=False), name
    assert not C.load("zhenwu-810e").supports_mma("int4", native_only=False)


def test_tcgen05_int8_on_b200_not_b300():
    kinds = lambda n: {op.kind for op in C.load(n).mma_ops("tcgen05")}
    assert "i8" in kinds("sm_100") and "i8" in kinds("B200") and "i8" in kinds("sm_110")
    assert "i8" not in kinds("sm_103") and "i8" not in kinds("B300")
    assert {"f16", "tf32", "f8f6f4", "mxf8f6f4", "mxf4", "mxf4nvf4"} <= kinds("sm_103")
    assert C.load("B200").supports_mma("int8", "uint8", acc="int32", family="tcgen05")
    assert not C.load("B300").supports_mma("int8", acc="int32", family="tcgen05")
    assert not C.load("sm_120").has("tcgen05") and not C.load("sm_90").has("tcgen05")


def test_block_scaled_mma_sync_on_sm120():
    ops = [op for op in C.load("sm_120").find_mma("e2m1", families=("mma_sync",)) if op.kind == "mxf4nvf4"]
    by_vec = {op.scale_vec: op for op in ops if not op.sass_patch}
    assert by_vec[(2,)].scale_types == ("e8m0",) and by_vec[(2,)].scale_blocks == (32,)
    assert by_vec[(4,)].scale_types == ("e4m3",) and by_vec[(4,)].scale_blocks == (16,)
    assert all(op.block_scaled and op.shapes == ("m16n8k64",) for op in by_vec.values())
    mx8 = [op for op in C.load("sm_121").find_mma("e4m3", "e2m1") if op.kind == "mxf8f6f4"]
    assert mx8 and mx8[0].scale_blocks == (32,)
    assert not any(op.block_scaled for op in C.load("sm_90").mma_ops())


def test_blackwell_only_encodings_and_rubin_has_none():
    for name in ("sm_100", "sm_103", "sm_120", "sm_121"):
        caps = C.load(name)
        for t in ("e3m4", "e0m3"):
            ops = [op for op in caps.mma_ops() if t in (op.a, op.b)]
            assert ops and all(op.sass_patch and op.provisional for op in ops), (name, t)
    for name in ("sm_107", "Rubin", "sm_110", "sm_90", "sm_89"):
        assert not any({"e3m4", "e0m3"} & {op.a, op.b} for op in C.load(name).mma_ops()), name


def test_products_extend_their_architecture():
    h20, h200 = C.load("H20"), C.load("H200")
    assert h20.chain == ("sm_90", "H20") and h200.chain == ("sm_90", "H100", "H200")
    assert (h20.product.sm_count, h20.product.bandwidth_gbs) == (78, 4000)
    assert (h200.product.sm_count, h200.product.bandwidth_gbs) == (132, 4800)
    assert h20.product.peak_tflops["fp8"] < h200.product.peak_tflops["fp8"]
    assert h20.mma_ops() == C.load("sm_90").mma_ops()
    assert h20.limits == C.load("sm_90").limits and h20.targets["nvrtc"] == "sm_90a"
    assert C.load("H100-PCIe").product.match == (r"\bH100\b.*\bPCIe\b",)  # match lists are never inherited


def test_zhenwu_is_provisional_and_nvcc_only():
    z = C.load("zhenwu-810e")
    assert z.kind == "device" and z.provisional and len(z.sources) >= 2
    assert z.targets["nvrtc"] is None and z.targets["nvcc"] == "sm_80"
    assert "-DUSE_PPU=1" in z.compile_flags("nvcc")
    assert z.product.sm_count == 20 and z.limit("smem_per_sm") == 256 * 1024
    assert z.supports_mma("fp16", acc="fp32") and not z.supports_mma("e4m3", native_only=False)
    assert all(parse[1] == (16,) for op in z.mma_ops() for parse in op.dims)
    assert C.load("Rubin").provisional and C.load("sm_107").min_cuda == (13, 4)
    assert C.load("B300").provisional_fields == ("limits.max_cluster_size", "product.sm_count", "product.peak_tflops")
    assert not C.load("H100").provisional


def test_conversions_features_limits():
    assert C.load("sm_89").can_convert("e4m3", "fp16") and not C.load("sm_80").can_convert("e4m3", "fp16")
    assert C.load("sm_100").can_convert("e2m1", "fp16") and not C.load("sm_90").can_convert("e2m1", "fp16")
    assert C.load("sm_120").can_convert("fp32", "e8m0") and not C.load("sm_120").can_convert("e4m3", "bf16")
    assert C.load("sm_90").has("tma") and C.load("sm_90").has("tma_multicast") and C.load("sm_90").has("wgmma")
    assert C.load("sm_120").has("tma") and not C.load("sm_120").has("tma_multicast")
    assert C.load("sm_100").has("tmem") and C.load("sm_80").has("cp_async") and not C.load("sm_75").has("cp_async")
    assert C.load("sm_120").limit("smem_per_block_optin") == 99 * 1024
    assert C.load("sm_90").limit("smem_per_block_optin") == 227 * 1024
    assert C.load("sm_89").limit("blocks_per_sm") == 24 and C.load("sm_89").limit("threads_per_sm") == 1536
    assert C.load("sm_80").limit("tmem_columns") is None
    with pytest.raises(C.CapabilityError, match="unknown limit 'smem'"):
        C.load("sm_80").limit("smem")
    with pytest.raises(C.CapabilityError, match="unknown feature 'tmaa'"):
        C.load("sm_90").has("tmaa")
    with pytest.raises(C.CapabilityError, match="unknown type name 'fp8'"):
        C.load("sm_90").supports_mma("fp8")
    with pytest.raises(C.CapabilityError, match="unknown tensor-core family"):
        C.load("sm_90").mma_ops("hmma")


def test_parse_shape():
    assert C.parse_shape("m16n8k16") == (16, (8,), 16)
    m, ns, k = C.parse_shape("m64n32-256/16k32")
    assert (m, k, ns[0], ns[-1], len(ns)) == (64, 32, 32, 256, 15)
    for bad in ("m16n8", "m64n8-250/16k16"):
        with pytest.raises(C.CapabilityError):
            C.parse_shape(bad)


# ------------------------------------------------------------------------------------------
# names, aliases, caching, device-name matching
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("alias,name", [
    ("h200", "H200"), ("H200", "H200"), ("SM-90", "sm_90"), ("sm90", "sm_90"), ("sm_90a", "sm_90"),
    ("hopper", "sm_90"), ("Zhenwu-810E", "zhenwu-810e"), ("zw810e", "zhenwu-810e"), ("rtx 5090", "RTX-5090"),
    ("4090", "RTX-4090"), ("a800", "A100"), ("thor", "sm_110"), ("dgx spark", "GB10"),
])
def test_aliases(alias, name):
    assert C.load(alias) is C.load(name)


def test_unknown_name_suggests():
    with pytest.raises(C.CapabilityError, match=r"unknown device or architecture 'H2000'.*did you mean"):
        C.load("H2000")
    with pytest.raises(C.CapabilityError, match="expected a capability name"):
        C.load(90)


def test_load_is_cached():
    assert C.load("sm_120") is C.load("SM_120") is C.load(C.load("sm_120"))


@pytest.mark.parametrize("device_name,expected", [
    ("NVIDIA H200", "H200"), ("NVIDIA H20", "H20"), ("NVIDIA H100 80GB HBM3", "H100"),
    ("NVIDIA H100 PCIe", "H100-PCIe"), ("NVIDIA H800", "H800"), ("NVIDIA A100-SXM4-80GB", "A100"),
    ("NVIDIA A800 80GB PCIe", "A100"), ("NVIDIA A10", "A10"), ("NVIDIA A40", "A40"), ("NVIDIA L40S", "L40S"),
    ("Tesla T4", "T4"), ("NVIDIA GeForce RTX 4090", "RTX-4090"), ("NVIDIA GeForce RTX 5090", "RTX-5090"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000"), ("NVIDIA B200", "B200"),
    ("NVIDIA B300 SXM6 AC", "B300"), ("NVIDIA GB10", "GB10"), ("ZW810E", "zhenwu-810e"),
    ("NVIDIA GeForce RTX 3090", None), ("NVIDIA A10G", None),
])
def test_match_device_name(device_name, expected):
    found = C.match_device_name(device_name)
    assert (found.name if found else None) == expected


def test_by_compute_capability():
    assert C.by_compute_capability(9, 0).name == "sm_90"
    assert C.by_compute_capability(12, 1).name == "sm_121"
    assert C.by_compute_capability(7, 0) is None


# ------------------------------------------------------------------------------------------
# malformed files: the error names the file, the key path and the problem
# ------------------------------------------------------------------------------------------

BUILTIN = Path(str(C._REGISTRY.dirs[0]))


def _base() -> dict:
    return yaml.safe_load((BUILTIN / "sm_80.yaml").read_text())


def _edit(path: str, value):
    def apply(doc):
        node = doc
        parts = re.findall(r"[^.\[\]]+|\[\d+\]", path)
        for part in parts[:-1]:
            node = node[int(part[1:-1])] if part.startswith("[") else node[part]
        last = parts[-1]
        if value is _DELETE:
            del node[last]
        elif last.startswith("["):
            node[int(last[1:-1])] = value
        else:
            node[last] = value
        return doc
    return apply


_DELETE = object()

BROKEN = [
    ("unknown top key", _edit("colour", "green"), "colour", "unknown key"),
    ("misspelt key", _edit("limtis", {}), "limtis", "did you mean 'limits'"),
    ("wrong type", _edit("limits.smem_per_sm", "big"), "limits.smem_per_sm", "non-negative integer"),
    ("unknown limit", _edit("limits.smem_per_cta", 1), "limits.smem_per_cta", "unknown key"),
    ("unknown type name", _edit("tensor_core.mma_sync[3].acc", "int33"), "tensor_core.mma_sync[3].acc",
     "unknown type name 'int33' (did you mean"),
    ("unknown type in list", _edit("tensor_core.mma_sync[1].a", ["bf16", "bf17"]), "tensor_core.mma_sync[1].a[1]",
     "unknown type name 'bf17'"),
    ("missing shapes", _edit("tensor_core.mma_sync[0].shapes", _DELETE), "tensor_core.mma_sync[0].shapes",
     "missing required key"),
    ("bad shape", _edit("tensor_core.mma_sync[0].shapes", ["m16n8"]), "tensor_core.mma_sync[0].shapes[0]",
     "expected a shape"),
    ("unknown family", _edit("tensor_core.hmma", []), "tensor_core.hmma", "unknown key"),
    ("tcgen05 without kind", _edit("tensor_core.tcgen05", [{"a": "fp16", "acc": "fp32", "shapes": "m128n8k16"}]),
     "tensor_core.tcgen05[0].kind", "missing required key"),
    ("scale_vec on plain op", _edit("tensor_core.mma_sync[0].scale_vec", [2]), "tensor_core.mma_sync[0].scale_vec",
     "only block-scaled kinds"),
    ("e3m4 without sass_patch", _edit("tensor_core.mma_sync[0].a", ["fp16", "e3m4"]), "tensor_core.mma_sync[0].a",
     "sass_patch"),
    ("bad target", _edit("compile.nvrtc", "compute_80"), "compile.nvrtc", "target name"),
    ("bad compute capability", _edit("compute_capability", [8]), "compute_capability", "[major, minor]"),
    ("missing memory feature", _edit("memory.tma", _DELETE), "memory.tma", "missing required key"),
    ("missing root section", _edit("limits", _DELETE), "limits", "missing required key"),
    ("missing required limit", _edit("limits.warp_size", _DELETE), "limits.warp_size", "missing required key"),
    ("provisional without sources", lambda d: {**{k: v for k, v in d.items() if k != "sources"}, "provisional": True},
     "sources", "missing required key"),
    ("provisional names unset key", _edit("provisional", ["product.sm_count"]), "provisional[0]",
     "does not set"),
    ("product without extends", _edit("kind", "product"), "extends", "missing required key"),
    ("architecture with product", _edit("product", {"sm_count": 1}), "product", "architecture files"),
    ("bad regex", lambda d: {**_edit("kind", "device")(d), "product": {"match": ["(unclosed"]}},
     "product.match[0]", "invalid regular expression"),
    ("wrong schema", _edit("schema", 2), "schema", "expected one of 1"),
]


@pytest.mark.parametrize("mutate,key,problem", [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_broken_file_names_file_and_key(tmp_path, mutate, key, problem):
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(mutate(copy.deepcopy(_base())), sort_keys=False))
    with pytest.raises(C.CapabilityError) as info:
        C.load_file(path)
    err = info.value
    assert isinstance(err, FormatError)
    assert err.file == str(path) and err.key == key, str(err)
    assert str(err).startswith(f"{path}: {key}: ") and problem in str(err), str(err)


def test_invalid_yaml_syntax(tmp_path):
    path = tmp_path / "syntax.yaml"
    path.write_text("schema: 1\nname: [unclosed\n")
    with pytest.raises(C.CapabilityError, match="not valid YAML") as info:
        C.load_file(path)
    assert info.value.file == str(path)


def test_unknown_parent(tmp_path):
    path = tmp_path / "orphan.yaml"
    path.write_text("schema: 1\nname: Orphan\nkind: product\nextends: sm_999\n")
    with pytest.raises(C.CapabilityError, match="extends unknown parent 'sm_999'") as info:
        C.load_file(path)
    assert (info.value.file, info.value.key) == (str(path), "extends")


def test_extends_cycle_and_duplicate_names(tmp_path, registry):
    (tmp_path / "a.yaml").write_text("schema: 1\nname: LoopA\nkind: product\nextends: LoopB\n")
    (tmp_path / "b.yaml").write_text("schema: 1\nname: LoopB\nkind: product\nextends: LoopA\n")
    registry.register_directory(tmp_path)
    with pytest.raises(C.CapabilityError, match="extends cycle: LoopA -> LoopB -> LoopA") as info:
        C.load("loopa")
    assert info.value.key == "extends"
    (tmp_path / "c.yaml").write_text("schema: 1\nname: h200\nkind: product\nextends: sm_90\n")
    registry.register_directory(tmp_path)
    with pytest.raises(C.CapabilityError, match=r"name 'h200' is already used by .*h200.yaml"):
        C.load("sm_90")


def test_register_directory_adds_a_product(tmp_path, registry):
    (tmp_path / "lab.yaml").write_text(
        "schema: 1\nname: LabGPU\nkind: product\nextends: H100\naliases: [lab-1]\n"
        "product: {sm_count: 66, match: ['^Lab GPU']}\n")
    before = C.load("sm_90")
    registry.register_directory(tmp_path)
    lab = C.load("LAB-1")
    assert lab.chain == ("sm_90", "H100", "LabGPU") and lab.product.sm_count == 66
    assert lab.product.bandwidth_gbs == 3350  # inherited from H100
    assert C.match_device_name("Lab GPU rev 2").name == "LabGPU"
    assert C.load("sm_90") is not before  # the cache was cleared
    with pytest.raises(C.CapabilityError, match="does not exist"):
        registry.register_directory(tmp_path / "missing")


def test_load_file_of_builtin_matches_load():
    assert C.load_file(BUILTIN / "h20.yaml").to_dict() == C.load("H20").to_dict()


# ------------------------------------------------------------------------------------------
# compile targets: every name is accepted by this machine's NVRTC / nvcc
# ------------------------------------------------------------------------------------------

def _nvrtc():
    return pytest.importorskip("cuda.bindings.nvrtc")


def _nvrtc_version():
    _, major, minor = _nvrtc().nvrtcVersion()
    return major, minor


def _checkable(caps) -> bool:
    return caps.targets["nvrtc"] is not None and (caps.min_cuda is None or caps.min_cuda <= _nvrtc_version())


def _compile(source: str, arch: str, ptx: bool = False):
    """NVRTC-compile ``source``; returns (ok, log, cubin or PTX text)."""
    nvrtc = _nvrtc()
    _, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"probe.cu", 0, [], [])
    try:
        rc, = nvrtc.nvrtcCompileProgram(prog, 1, [f"--gpu-architecture={arch}".encode()])
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        log = log.decode(errors="replace").rstrip("\x00")
        if rc != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return False, log, None
        get_size, get = (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX) if ptx else (nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN)
        _, size = get_size(prog)
        out = b" " * size
        get(prog, out)
        return True, log, (out.decode().rstrip("\x00") if ptx else out)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


@pytest.mark.parametrize("name", ARCHS)
def test_targets_accepted_by_nvrtc(name):
    caps = C.load(name)
    if not _checkable(caps):
        pytest.skip(f"{name} needs CUDA {caps.min_cuda}; NVRTC here is {_nvrtc_version()}")
    for compiler in ("nvrtc", "plain"):
        ok, log, _ = _compile('extern "C" __global__ void k(int* p) { p[0] = 1; }', caps.targets[compiler])
        assert ok, f"{name}: compile.{compiler} {caps.targets[compiler]} rejected by NVRTC: {log}"


def test_targets_known_to_nvcc():
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    codes = set(subprocess.run([nvcc, "--list-gpu-code"], capture_output=True, text=True, check=True).stdout.split())
    version = re.search(r"release (\d+)\.(\d+)", subprocess.run([nvcc, "--version"], capture_output=True,
                                                                text=True).stdout)
    version = tuple(map(int, version.groups()))
    for name in ARCHS:
        caps = C.load(name)
        if caps.min_cuda and caps.min_cuda > version:
            continue
        assert caps.targets["nvcc"].rstrip("af") in codes, f"{name}: nvcc {version} lacks {caps.targets['nvcc']}"


# ------------------------------------------------------------------------------------------
# test_probe: the tables against the machine code NVRTC produces for each architecture
# ------------------------------------------------------------------------------------------
# A fixed catalogue of tiny inline-PTX kernels is compiled for each architecture's nvrtc target
# and classified from the SASS: rejected by ptxas, native (one MMA / one F2FP instruction) or
# emulated. The table must agree in both directions: nothing declared that the compiler rejects
# or emulates, and nothing the compiler does natively left undeclared.

PTX_TYPE = {"fp16": "f16", "bf16": "bf16", "tf32": "tf32", "int8": "s8", "uint8": "u8", "int4": "s4", "uint4": "u4",
            "e4m3": "e4m3", "e5m2": "e5m2", "e3m2": "e3m2", "e2m3": "e2m3", "e2m1": "e2m1", "fp32": "f32",
            "int32": "s32"}
SCALE_PTX_TYPE = {"e8m0": "ue8m0", "e4m3": "ue4m3"}  # scale factors are unsigned
BITS = {"fp16": 16, "bf16": 16, "tf32": 32, "int8": 8, "uint8": 8, "int4": 4, "uint4": 4, "e4m3": 8, "e5m2": 8}

# (kind, scale_vec, scale_type, a, b, acc, shape)
MMA_SYNC_CASES = [
    (None, None, None, "fp16", "fp16", "fp32", "m16n8k8"), (None, None, None, "fp16", "fp16", "fp16", "m16n8k8"),
    (None, None, None, "fp16", "fp16", "fp32", "m16n8k16"), (None, None, None, "fp16", "fp16", "fp16", "m16n8k16"),
    (None, None, None, "bf16", "bf16", "fp32", "m16n8k16"), (None, None, None, "tf32", "tf32", "fp32", "m16n8k8"),
    (None, None, None, "int8", "int8", "int32", "m8n8k16"), (None, None, None, "int8", "int8", "int32", "m16n8k32"),
    (None, None, None, "uint8", "int8", "int32", "m16n8k32"), (None, None, None, "int4", "int4", "int32", "m8n8k32"),
    (None, None, None, "int4", "int4", "int32", "m16n8k64"), (None, None, None, "uint4", "int4", "int32", "m16n8k64"),
    (None, None, None, "e4m3", "e4m3", "fp32", "m16n8k32"), (None, None, None, "e5m2", "e4m3", "fp16", "m16n8k32"),
    (None, None, None, "e4m3", "e4m3", "fp32", "m16n8k16"),
    ("f8f6f4", None, None, "e4m3", "e5m2", "fp32", "m16n8k32"), ("f8f6f4", None, None, "e2m1", "e3m2", "fp32", "m16n8k32"),
    ("f8f6f4", None, None, "e2m3", "e2m1", "fp16", "m16n8k32"),
    ("mxf8f6f4", 1, "e8m0", "e4m3", "e2m1", "fp32", "m16n8k32"), ("mxf8f6f4", 1, "e8m0", "e4m3", "e4m3", "fp16", "m16n8k32"),
    ("mxf4", 2, "e8m0", "e2m1", "e2m1", "fp32", "m16n8k64"), ("mxf4", 1, "e8m0", "e2m1", "e2m1", "fp32", "m16n8k64"),
    ("mxf4nvf4", 2, "e8m0", "e2m1", "e2m1", "fp32", "m16n8k64"), ("mxf4nvf4", 4, "e4m3", "e2m1", "e2m1", "fp32", "m16n8k64"),
    ("mxf4nvf4", 4, "e8m0", "e2m1", "e2m1", "fp32", "m16n8k64"),
]
WGMMA_CASES = [("fp16", "fp32", "m64n8k16"), ("bf16", "fp32", "m64n256k16"), ("tf32", "fp32", "m64n8k8"),
               ("e4m3", "fp16", "m64n8k32"), ("int8", "int32", "m64n48k32"), ("int8", "int32", "m64n40k32")]
TCGEN05_CASES = [("f16", None), ("tf32", None), ("f8f6f4", None), ("i8", None), ("mxf8f6f4", 1), ("mxf4", 2),
                 ("mxf4", 1), ("mxf4nvf4", 2), ("mxf4nvf4", 4)]
# (src, dst, PTX, output constraint, input constraints)
CVT_CASES = [
    ("fp32", "fp16", "cvt.rn.f16x2.f32 %0, %1, %2;", "r", "ff"),
    ("fp32", "bf16", "cvt.rn.bf16x2.f32 %0, %1, %2;", "r", "ff"),
    *[(t, "fp16", f"cvt.rn.f16x2.{t}x2 %0, %1;", "r", "h") for t in ("e4m3", "e5m2", "e3m2", "e2m3")],
    ("e2m1", "fp16", "{ .reg .b8 t; cvt.u8.u16 t, %1; cvt.rn.f16x2.e2m1x2 %0, t; }", "r", "h"),
    *[("fp32", t, f"cvt.rn.satfinite.{t}x2.f32 %0, %1, %2;", "h", "ff") for t in ("e4m3", "e5m2", "e3m2", "e2m3")],
    ("fp32", "e2m1", "{ .reg .b8 t; cvt.rn.satfinite.e2m1x2.f32 t, %1, %2; cvt.u16.u8 %0, t; }", "h", "ff"),
    ("fp32", "e8m0", "cvt.rz.satfinite.ue8m0x2.f32 %0, %1, %2;", "h", "ff"),
    ("fp16", "e4m3", "cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;", "h", "r"),
    ("fp16", "e5m2", "cvt.rn.satfinite.e5m2x2.f16x2 %0, %1;", "h", "r"),
    ("bf16", "e8m0", "cvt.rz.satfinite.ue8m0x2.bf16x2 %0, %1;", "h", "r"),
    ("e8m0", "bf16", "cvt.rn.bf16x2.ue8m0x2 %0, %1;", "r", "h"),
]
_SMEM = "__shared__ __align__(128) unsigned sm[1024]; unsigned s = (unsigned)__cvta_generic_to_shared(sm);"
MEMORY_CASES = {
    "cp_async": ('cp.async.cg.shared.global [%0], [%1], 16;\\ncp.async.wait_all;', '"r"(s), "l"(g)'),
    "ldmatrix": ('ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];', None),
    "ldmatrix_b8": ('ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b4x16_p64 {%0}, [%1];', None),
    "stmatrix": ('stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%1,%1,%1};', '"r"(s), "r"(u)'),
    "tma": ('cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %2}], [%3];',
            '"r"(s), "l"(g), "r"(u), "r"(s + 2048)'),
    "tma_multicast": ('cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster'
                      ' [%0], [%1, {%2, %2}], [%3], %4;', '"r"(s), "l"(g), "r"(u), "r"(s + 2048), "h"((unsigned short)u)'),
    "clusters": ('barrier.cluster.arrive;\\nbarrier.cluster.wait;', ''),
    "setmaxnreg": ('setmaxnreg.inc.sync.aligned.u32 232;', ''),
    "pdl": ('griddepcontrol.wait;\\ngriddepcontrol.launch_dependents;', ''),
    "tmem": ('tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;', '"r"(s)'),
}


def _regs(count: int, start: int) -> str:
    return "{" + ",".join(f"%{start + i}" for i in range(count)) + "}"


def _asm_kernel(name: str, asm: str, outs: str, ins: str) -> str:
    """A kernel running one asm statement; ``outs``/``ins`` are constraint letters ('r', 'f', 'h', 'l')."""
    ctype = {"r": "unsigned", "f": "float", "h": "unsigned short", "l": "unsigned long long"}
    body = [f"{ctype[c]} o{i};" for i, c in enumerate(outs)]
    body += [f"float i{i} = ((const float*)q)[{i}];" if c == "f" else f"{ctype[c]} i{i} = ({ctype[c]})q[{i}];"
             for i, c in enumerate(ins)]
    oc = ", ".join(f'"={c}"(o{i})' for i, c in enumerate(outs))
    ic = ", ".join(f'"{c}"(i{i})' for i, c in enumerate(ins))
    body.append(f'asm volatile("{asm}" : {oc} : {ic} : "memory");')
    body += [f"p[{i}] = (unsigned)o{i};" for i in range(len(outs))]
    return f'extern "C" __global__ void {name}(unsigned* p, const unsigned long long* q) {{ {" ".join(body)} }}\n'


def _mma_sync_kernel(name, kind, vec, stype, a, b, acc, shape):
    m, (n,), k = C.parse_shape(shape)
    elem = 4 if kind in ("mxf4", "mxf4nvf4") else 8 if kind else None
    na, nb = (m * k * (elem or BITS[a]) // 1024, n * k * (elem or BITS[b]) // 1024)
    nc = m * n // 32 // (2 if acc == "fp16" else 1)
    cc = "f" if acc == "fp32" else "r"
    qual = (f".kind::{kind}" if kind else "") + (f".block_scale.scale_vec::{vec}X" if vec else "")
    tail = f".{SCALE_PTX_TYPE[stype]}" if vec else ""
    op = f"mma.sync.aligned.{shape}.row.col{qual}.{PTX_TYPE[acc]}.{PTX_TYPE[a]}.{PTX_TYPE[b]}.{PTX_TYPE[acc]}{tail}"
    start = nc + na + nb + nc
    scales = f", %{start}, {{0, 0}}, %{start + 1}, {{0, 0}}" if vec else ""
    asm = f"{op} {_regs(nc, 0)}, {_regs(na, nc)}, {_regs(nb, nc + na)}, {_regs(nc, nc + na + nb)}{scales};"
    return _asm_kernel(name, asm, cc * nc, "r" * (na + nb) + cc * nc + ("rr" if vec else ""))


def _wgmma_kernel(name, a, acc, shape):
    m, (n,), k = C.parse_shape(shape)
    nd = m * n // 128 // (2 if acc == "fp16" else 1)
    cc = "f" if acc == "fp32" else "r"
    tail = ", p, 1, 1, 0, 0" if a in ("fp16", "bf16") else ", p" if a in ("int8", "uint8") else ", p, 1, 1"
    asm = ("{ .reg .pred p; setp.ne.b32 p, %" + str(nd + 2) + ", 0;\\nwgmma.fence.sync.aligned;\\n"
           f"wgmma.mma_async.sync.aligned.{shape}.{PTX_TYPE[acc]}.{PTX_TYPE[a]}.{PTX_TYPE[a]} "
           f"{_regs(nd, 0)}, %{nd}, %{nd + 1}{tail};\\nwgmma.commit_group.sync.aligned;\\n"
           "wgmma.wait_group.sync.aligned 0; }")
    return _asm_kernel(name, asm, cc * nd, "llr")


def _tcgen05_kernel(name, kind, vec):
    if vec:
        asm = ("{ .reg .pred p; setp.ne.b32 p, %4, 0;\\n"
               f"tcgen05.mma.cta_group::1.kind::{kind}.block_scale.scale_vec::{vec}X [%0], %1, %2, %3, [%5], [%6], p; }}")
        return _asm_kernel(name, asm, "", "rllrrrr")
    asm = f"{{ .reg .pred p; setp.ne.b32 p, %4, 0;\\ntcgen05.mma.cta_group::1.kind::{kind} [%0], %1, %2, %3, p; }}"
    return _asm_kernel(name, asm, "", "rllrr")


def _memory_kernel(name, asm, inputs):
    nout = asm.split("[")[0].count("%") if inputs is None else 0  # an ldmatrix: braced outputs come first
    outs = ", ".join(f'"=r"(o[{i}])' for i in range(nout))
    ins = '"r"(s)' if inputs is None else inputs
    return (f'extern "C" __global__ void {name}(unsigned* p, const unsigned long long* q) {{ {_SMEM} '
            f'unsigned long long g = q[0]; unsigned u = p[1]; unsigned o[4] = {{0, 0, 0, 0}}; '
            f'asm volatile("{asm}" : {outs} : {ins} : "memory"); '
            f'p[0] = o[0] + o[1] + o[2] + o[3] + sm[threadIdx.x] + u + (unsigned)g; }}\n')


def _catalogue(caps):
    """(kernel name, source, what the table declares: 'native' | 'emulated' | 'absent', check) per probe."""
    cases = []
    for i, (kind, vec, stype, a, b, acc, shape) in enumerate(MMA_SYNC_CASES):
        m, (n,), k = C.parse_shape(shape)
        ops = [op for op in caps.find_mma(a, b, acc, families=("mma_sync",), native_only=False)
               if op.kind == kind and (vec is None or (vec in op.scale_vec and stype in op.scale_types))
               and any(dm == m and n in dn and dk == k for dm, dn, dk in op.dims)]
        declared = "absent" if not ops else "native" if any(op.native for op in ops) else "emulated"
        label = f"mma.sync {shape} {kind or ''} {f'{vec}X {stype}' if vec else ''} {a}x{b}->{acc}"
        cases.append((f"mma{i}", _mma_sync_kernel(f"mma{i}", kind, vec, stype, a, b, acc, shape), declared, "mma", label))
    for i, (a, acc, shape) in enumerate(WGMMA_CASES):
        m, (n,), k = C.parse_shape(shape)
        ok = any(any(dm == m and n in dn and dk == k for dm, dn, dk in op.dims)
                 for op in caps.find_mma(a, acc=acc, families=("wgmma",)))
        cases.append((f"wg{i}", _wgmma_kernel(f"wg{i}", a, acc, shape), "native" if ok else "absent", "compiles",
                      f"wgmma {shape} {a}->{acc}"))
    for i, (kind, vec) in enumerate(TCGEN05_CASES):
        ok = any(op.kind == kind and (vec is None or vec in op.scale_vec) for op in caps.mma_ops("tcgen05"))
        cases.append((f"tc{i}", _tcgen05_kernel(f"tc{i}", kind, vec), "native" if ok else "absent", "compiles",
                      f"tcgen05 kind::{kind} {f'{vec}X' if vec else ''}"))
    for i, (src, dst, asm, out, ins) in enumerate(CVT_CASES):
        ok = caps.can_convert(src, dst)
        cases.append((f"cvt{i}", _asm_kernel(f"cvt{i}", asm, out, ins), "native" if ok else "absent", "cvt",
                      f"cvt {src}->{dst}"))
    for feature, (asm, operands) in MEMORY_CASES.items():
        check = "multicast" if feature == "tma_multicast" else "compiles"
        cases.append((f"mem_{feature}", _memory_kernel(f"mem_{feature}", asm, operands),
                      "native" if caps.has(feature) else "absent", check, f"memory feature {feature}"))
    return cases


def _ptxas_rejects(source: str, target: str) -> set[str]:
    """Names of the kernels ptxas rejects for ``target`` (mapped from the error lines of the PTX)."""
    ok, log, ptx = _compile(source, "compute_" + target[len("sm_"):], ptx=True)
    assert ok, f"the probe source does not parse: {log}"
    lines = ptx.splitlines()
    ok, log, _ = _compile(source, target)
    bad = set()
    for number in map(int, re.findall(r"ptx input, line (\d+);", log)):
        entry = next(lines[j] for j in range(number - 1, -1, -1) if ".entry" in lines[j])
        bad.add(re.search(r"\.entry\s+(\w+)", entry).group(1))
    assert ok or bad, f"compile failed without a mapped line: {log}"
    return bad


def _sass_by_kernel(cubin: bytes) -> dict[str, list[str]]:
    cuobjdump = pytest.importorskip("cuda.pathfinder").find_nvidia_binary_utility("cuobjdump")
    if cuobjdump is None:
        pytest.skip("cuobjdump not found")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([cuobjdump, "--dump-sass", f.name], capture_output=True, text=True, check=True).stdout
    kernels, current = {}, None
    for line in out.splitlines():
        if m := re.search(r"Function : (\w+)", line):
            current = kernels.setdefault(m.group(1), [])
        elif current is not None and (m := re.search(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_.]+)", line)):
            current.append(m.group(1))
    return kernels


def _observe(check: str, sass: list[str]) -> str:
    if check == "mma":
        mmas = [i for i in sass if re.match(r"[HIQO]MMA", i)]
        return "native" if len(mmas) == 1 and not any(i.startswith("F2FP") for i in sass) else "emulated"
    if check == "cvt":
        return "native" if sum(i.startswith("F2FP") for i in sass) == 1 else "emulated"
    if check == "multicast":
        return "native" if any("MULTICAST" in i for i in sass) else "emulated"
    return "native"


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in ARCHS if C.load(n).targets["nvrtc"]])
def test_probe(name):
    caps = C.load(name)
    if not _checkable(caps):
        pytest.skip(f"{name} needs CUDA {caps.min_cuda}; NVRTC here is {_nvrtc_version()}")
    target = caps.targets["nvrtc"]
    cases = _catalogue(caps)
    source = "".join(src for _, src, _, _, _ in cases)
    rejected = set()
    for _ in range(3):  # drop what ptxas rejects, then compile the rest for its SASS
        bad = _ptxas_rejects(source, target)
        if not bad:
            break
        rejected |= bad
        source = "".join(src for kname, src, _, _, _ in cases if kname not in rejected)
    ok, log, cubin = _compile(source, target)
    assert ok, log
    sass = _sass_by_kernel(cubin)
    wrong = []
    for kname, _, declared, check, label in cases:
        seen = "absent" if kname in rejected else _observe(check, sass[kname])
        if check != "mma" and seen == "emulated":  # only mma.sync distinguishes emulated from absent
            seen = "absent"
        if seen != declared:
            wrong.append(f"{label}: table says {declared}, {target} SASS says {seen}")
    assert not wrong, f"{name} ({target}):\n  " + "\n  ".join(wrong)
