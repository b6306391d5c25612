"""The README's CPU quick start, its serving-engine and MoE examples and docs/engines.md's adapter run exactly
as written."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _run_marked(page: Path, marker: str, tmp_path) -> str:
    """Run the python block marked ``<!-- marker -->`` in ``page`` as a script; its stdout."""
    block = re.search(rf"<!-- {marker} -->\s*```python\n(.*?)```", page.read_text(), re.S)
    assert block, f"{page.name} lost its marked block {marker!r}"
    script = tmp_path / f"{marker}.py"
    script.write_text(block.group(1))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_cpu_quick_start_runs_as_written(tmp_path):
    out = _run_marked(README, "quickstart-cpu", tmp_path)
    err = float(re.search(r"relative error against fp32: ([0-9.e+-]+)", out).group(1))
    assert 0.01 < err < 0.2  # 4-bit round-to-nearest: a real, small error


def test_readme_leads_with_two_commands():
    first_block = README.read_text().split("```bash", 1)[1].split("```", 1)[0]
    assert "pip install -e" in first_block and "humming demo" in first_block and "pytest" in first_block


def test_engine_example_runs_as_written(tmp_path):
    first, second, third = _run_marked(README, "engine-cpu", tmp_path).strip().splitlines()
    assert first == third == "(True, None)"
    assert second.startswith("(False, \"group_size: 128 does not divide this partition's K = 3696"), second


def test_the_engine_adapter_page_runs_as_written(tmp_path):
    lines = _run_marked(ROOT / "docs" / "engines.md", "engine-adapter", tmp_path).strip().splitlines()
    assert [line.split()[0] for line in lines] == ["H200", "A100", "L40S", "T4"]
    assert all(line.split(" ", 1)[1] == "{(True, None)}" for line in lines), lines


def test_moe_example_runs_as_written(tmp_path):
    want = "torch.Size([4, 256]) moe_grouped + programmatic_launch (every launch of a call)"
    assert _run_marked(README, "moe-cpu", tmp_path).strip() == want
