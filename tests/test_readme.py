"""The README's CPU quick start runs exactly as written."""
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_cpu_quick_start_runs_as_written(tmp_path):
    text = README.read_text()
    block = re.search(r"<!-- quickstart-cpu -->\s*```python\n(.*?)```", text, re.S)
    assert block, "README lost its marked CPU quick start"
    script = tmp_path / "quickstart.py"
    script.write_text(block.group(1))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    err = float(re.search(r"relative error against fp32: ([0-9.e+-]+)", out.stdout).group(1))
    assert 0.01 < err < 0.2  # 4-bit round-to-nearest: a real, small error


def test_readme_leads_with_two_commands():
    lines = [l for l in README.read_text().splitlines() if l.strip()]
    first_block = README.read_text().split("```bash", 1)[1].split("```", 1)[0]
    assert "pip install -e" in first_block and "humming demo" in first_block and "pytest" in first_block


def test_engine_example_runs_as_written(tmp_path):
    block = re.search(r"<!-- engine-cpu -->\s*```python\n(.*?)```", README.read_text(), re.S)
    assert block, "README lost its marked serving-engine example"
    script = tmp_path / "engine.py"
    script.write_text(block.group(1))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    first, second, third = out.stdout.strip().splitlines()
    assert first == third == "(True, None)"
    assert second.startswith("(False, \"group_size: 128 does not divide this partition's K = 3696"), second


def test_the_engine_adapter_page_runs_as_written(tmp_path):
    page = Path(__file__).resolve().parents[1] / "docs" / "engines.md"
    block = re.search(r"<!-- engine-adapter -->\s*```python\n(.*?)```", page.read_text(), re.S)
    assert block, "docs/engines.md lost its marked adapter"
    script = tmp_path / "adapter.py"
    script.write_text(block.group(1))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert [line.split()[0] for line in lines] == ["H200", "A100", "L40S", "T4"]
    assert all(line.split(" ", 1)[1] == "{(True, None)}" for line in lines), lines
