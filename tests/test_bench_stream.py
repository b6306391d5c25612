"""The stream-read kernel: compiles for every target on CPU (NVRTC), holds
16-byte read-only loads with all UNROLL of them in flight and no local
memory; on a GPU it reads the buffer."""
from __future__ import annotations

import re

import pytest
import torch

from humming.bench.stream import CONFIGS, StreamReadParams, stream_spec
from humming.jit import Runtime
from humming.jit.inspect import disassemble, instructions, resource_usage

TARGETS = ("sm_75", "sm_89", "sm_90", "sm_100a", "sm_120")


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return Runtime(cache_dir=tmp_path_factory.mktemp("jit"))


@pytest.mark.parametrize("target, unroll, threads",
                         [(t, *CONFIGS[0]) for t in TARGETS] + [("sm_90", *c) for c in CONFIGS[1:]])
def test_stream_read_compiles_with_wide_loads_in_flight(runtime, target, unroll, threads):
    kernel = runtime.kernel(stream_spec(target, unroll, threads))
    ins = instructions(disassemble(kernel.cubin))
    loads = [i for i, line in enumerate(ins) if re.match(r"LDG\.E(\.NA)?\.128\.CONSTANT", line)]
    assert len(loads) == unroll + 1  # the unrolled body and the tail
    first_use = next(i for i, line in enumerate(ins) if line.startswith("LOP3"))
    in_flight = sum(1 for i in loads if i < first_use)
    assert in_flight >= min(unroll, 4), f"only {in_flight} loads issued before the first use"
    assert not any(re.match(r"(STG|ST\.|STL|LDL)", line) for line in ins[:loads[-1]])
    usage = resource_usage(kernel.cubin)["humming_entry"]
    assert usage["LOCAL"] == 0 and usage["STACK"] == 0


def test_stream_read_runs_keep_their_loads_in_flight(runtime):
    """The per-warp-run variant (RUN > 0, scripts/gpu_inflight.py --runs): its 4 512-byte
    blocks per warp all issued before the first is used (in flight together), no local memory.
    (With 8, ptxas issues 5, then interleaves loads and uses: the in-order issue then keeps
    only those in flight, as in the grid-stride loop.)"""
    kernel = runtime.kernel(stream_spec("sm_90", 4, 256, run=32))
    ins = instructions(disassemble(kernel.cubin))
    loads = [i for i, line in enumerate(ins) if re.match(r"LDG\.E(\.NA)?\.128\.CONSTANT", line)]
    uses = [i for i, line in enumerate(ins) if line.startswith("LOP3") and i > loads[0]]
    assert len(loads) == 4 and all(i < uses[0] for i in loads)
    usage = resource_usage(kernel.cubin)["humming_entry"]
    assert usage["LOCAL"] == 0 and usage["STACK"] == 0


def test_stream_params_match_the_device_struct(runtime):
    spec = stream_spec("sm_90")
    assert spec.params_size == 40
    assert "static_assert(sizeof(humming::StreamReadParams) == 40" in runtime.describe(spec)["source"]
    assert [f[0] for f in StreamReadParams._fields_] == ["src", "num_vecs", "sink", "never", "pad_", "trace"]


def test_stream_read_traced_build_stamps_the_timer_only_when_asked(runtime):
    """HUMMING_TRACE builds (scripts/gpu_trace.py) read the global timer at entry and exit, and the
    SM id; the benchmark's build holds neither."""
    plain = disassemble(runtime.kernel(stream_spec("sm_90")).cubin)
    traced = disassemble(runtime.kernel(stream_spec("sm_90", defines={"HUMMING_TRACE": 1})).cubin)
    assert "GLOBALTIMER" not in plain and "SMID" not in plain
    assert traced.count("SR_GLOBALTIMER") >= 2 and "SMID" in traced


requires_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.gpu
@requires_gpu
def test_stream_read_reads_every_vector_on_gpu():
    from humming.bench.stream import StreamReader

    reader = StreamReader("cuda")
    reader.sink.fill_(7)
    calls = reader.calls(1 << 20, 2)
    bufs = reader._keep
    for b in bufs:
        b.zero_()
    bufs[1].view(torch.int32)[123457] = 5  # one thread's xor of buffer 1 becomes 5 (!= the 'never' value)
    calls[0]()
    torch.cuda.synchronize()
    assert int(reader.sink.item()) == 7  # xor 0 never equals 0xFFFFFFFF: nothing written
    bufs[0].view(torch.int32)[99] = -1  # xor 0xFFFFFFFF in exactly one thread: it must have read it
    calls[0]()
    torch.cuda.synchronize()
    assert int(reader.sink.item()) == -1
