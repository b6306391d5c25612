"""What is benchmarked: dense and MoE GEMM workloads, model presets, M lists.

A :class:`Workload` is one weight shape (``N x K``, per expert for MoE) with the
schemes humming runs it in; the baselines run the same shape in their own
formats. Presets list the linear layers of common models at tensor-parallel
size 1 (N = output features, K = input features).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..scheme import ActivationScheme, LayerSpec, WeightScheme

__all__ = ["Workload", "PRESETS", "DEFAULT_M", "QUICK_M", "preset_workloads", "parse_shapes",
           "parse_moe_shapes", "parse_m_list", "weight_scheme_from", "activation_scheme_from"]

DEFAULT_M = (1, 16, 64, 256, 1024, 4096)
QUICK_M = (1, 16, 256, 4096)


@dataclass(frozen=True)
class Workload:
    name: str
    model: str
    n: int
    k: int
    weight: WeightScheme = field(default_factory=WeightScheme)
    activation: ActivationScheme = field(default_factory=ActivationScheme)
    num_experts: int = 0
    topk: int = 0

    def __post_init__(self):
        if self.num_experts and not 0 < self.topk <= self.num_experts:
            raise ValueError(f"Workload {self.name}: topk must be in 1..num_experts={self.num_experts}, "
                             f"found {self.topk}")
        if not self.num_experts and self.topk:
            raise ValueError(f"Workload {self.name}: topk={self.topk} given for a dense workload")
        self.layer  # validates the schemes against the shape (ShapeError/FormatError name the field)

    @property
    def kind(self) -> str:
        return "moe" if self.num_experts else "dense"

    @property
    def out_dtype(self) -> str:
        return "bf16" if self.activation.fmt == "bf16" else "fp16"

    @property
    def layer(self) -> LayerSpec:
        return LayerSpec(self.n, self.k, self.weight, self.activation, num_experts=self.num_experts,
                         out_dtype=self.out_dtype)

    def rows(self, m: int) -> int:
        """GEMM rows at ``m`` tokens (one per token and chosen expert for MoE)."""
        return m * (self.topk or 1)

    def flops(self, m: int) -> float:
        return 2.0 * self.rows(m) * self.n * self.k

    def io_bytes(self, m: int, weight_bytes: int, act_bytes_per_elem: float = 2.0,
                 out_bytes_per_elem: float = 2.0) -> int:
        """Weight bytes plus activation (read once per token) and output bytes."""
        return int(weight_bytes + m * self.k * act_bytes_per_elem + self.rows(m) * self.n * out_bytes_per_elem)

    def to_dict(self) -> dict:
        return {"name": self.name, "model": self.model, "kind": self.kind, "n": self.n, "k": self.k,
                "num_experts": self.num_experts, "topk": self.topk, "weight": self.weight.describe(),
                "activation": self.activation.describe()}


# (layer, N, K, experts, topk); MLA/attention projections as in the checkpoints' configs.
PRESETS: dict[str, list[tuple[str, int, int, int, int]]] = {
    "llama3-8b": [("qkv", 6144, 4096, 0, 0), ("o", 4096, 4096, 0, 0),
                  ("gate_up", 28672, 4096, 0, 0), ("down", 4096, 14336, 0, 0)],
    "llama3-70b": [("qkv", 10240, 8192, 0, 0), ("o", 8192, 8192, 0, 0),
                   ("gate_up", 57344, 8192, 0, 0), ("down", 8192, 28672, 0, 0)],
    "qwen3-30b-a3b": [("qkv", 5120, 2048, 0, 0), ("o", 2048, 4096, 0, 0),
                      ("moe_gate_up", 1536, 2048, 128, 8), ("moe_down", 2048, 768, 128, 8)],
    "deepseek-v3": [("q_a", 1536, 7168, 0, 0), ("q_b", 24576, 1536, 0, 0), ("kv_b", 32768, 512, 0, 0),
                    ("o", 7168, 16384, 0, 0), ("dense_gate_up", 36864, 7168, 0, 0),
                    ("dense_down", 7168, 18432, 0, 0), ("shared_gate_up", 4096, 7168, 0, 0),
                    ("moe_gate_up", 4096, 7168, 256, 8), ("moe_down", 7168, 2048, 256, 8)],
}


def preset_workloads(name: str, weight: WeightScheme, activation: ActivationScheme,
                     kind: str = "all") -> list[Workload]:
    """The workloads of preset ``name``; ``kind``: "all", "dense" or "moe"."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; expected one of {', '.join(sorted(PRESETS))}")
    if kind not in ("all", "dense", "moe"):
        raise ValueError(f"kind: expected 'all', 'dense' or 'moe', found {kind!r}")
    out = []
    for layer, n, k, e, topk in PRESETS[name]:
        if kind != "all" and (kind == "moe") != bool(e):
            continue
        out.append(Workload(f"{name}/{layer}", name, n, k, weight, activation, e, topk))
    return out


def _ints(text: str, sep: str, count: int, what: str, example: str) -> tuple[int, ...]:
    parts = text.lower().split(sep)
    try:
        vals = tuple(int(p) for p in parts)
    except ValueError:
        vals = ()
    if len(vals) != count or min(vals) <= 0:
        raise ValueError(f"{what}: expected {example}, found {text!r}")
    return vals


def parse_shapes(text: str, weight: WeightScheme, activation: ActivationScheme) -> list[Workload]:
    """Dense workloads from ``"NxK,NxK,..."``."""
    out = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        n, k = _ints(item, "x", 2, "--shapes", "N x K pairs such as '4096x4096,14336x4096'")
        out.append(Workload(f"custom/{n}x{k}", "custom", n, k, weight, activation))
    return out


def parse_moe_shapes(text: str, weight: WeightScheme, activation: ActivationScheme) -> list[Workload]:
    """MoE workloads from ``"ExTOPKxNxK,..."`` (experts, top-k, N, K)."""
    out = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        e, topk, n, k = _ints(item, "x", 4, "--moe-shapes", "E x topk x N x K such as '128x8x1536x2048'")
        out.append(Workload(f"custom-moe/{e}x{topk}x{n}x{k}", "custom", n, k, weight, activation, e, topk))
    return out


def parse_m_list(text: str) -> tuple[int, ...]:
    vals = _ints(text.replace(" ", ""), ",", text.count(",") + 1, "--m", "positive integers such as '1,16,256'")
    return tuple(sorted(set(vals)))


def weight_scheme_from(fmt: str = "int4", group_size: int | None = 128, scale_fmt: str = "fp16",
                       zero_point: str = "none") -> WeightScheme:
    """A WeightScheme from CLI options: ``group_size`` 0/None means per channel."""
    if group_size:
        return WeightScheme(fmt, "group", group_size, scale_fmt=scale_fmt, zero_point=zero_point)
    return WeightScheme(fmt, "channel", None, scale_fmt=scale_fmt, zero_point=zero_point)


def activation_scheme_from(fmt: str = "fp16", quant: str | None = None,
                           group_size: int | None = None, scale_fmt: str = "fp32") -> ActivationScheme:
    """An ActivationScheme from CLI options: quantized formats default to
    per-token dynamic scales."""
    if fmt in ("fp16", "bf16"):
        return ActivationScheme(fmt)
    q = quant or ("dynamic_group" if group_size else "dynamic_token")
    return ActivationScheme(fmt, q, group_size, scale_fmt)
