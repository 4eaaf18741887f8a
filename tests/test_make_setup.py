"""The README's two commands set up what each needs: `make start` installs agtail alone (what
the daemon runs on), `make test` adds the dev extras (pytest, mypy, ruff, …); and the editable
install of this checkout is one plain path entry, so setuptools prints no BuildBackendWarning
box on a fresh set-up."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def make_dry_run(target: str, venv: Path) -> list[str]:
    """The commands `make TARGET` would run on a fresh clone (``-B``: as if nothing were built)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # Run from `make test` itself (as CI does), make would inherit MAKELEVEL/MAKEFLAGS and wrap
    # the commands in "Entering/Leaving directory" lines: this asks as a fresh shell would.
    env = {k: v for k, v in os.environ.items() if k not in {"MAKELEVEL", "MAKEFLAGS", "MFLAGS"}}
    done = subprocess.run(["make", "--no-print-directory", "-n", "-B", target, f"VENV={venv}"], cwd=REPO,
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line.strip()]


def pip_installs(commands: list[str]) -> list[str]:
    return [c for c in commands if " -m pip install " in c and "--upgrade pip" not in c]


def test_make_start_installs_the_package_alone(tmp_path: Path) -> None:
    commands = make_dry_run("start", tmp_path / "venv")
    installs = pip_installs(commands)
    assert installs, commands
    assert not any("[dev]" in c for c in installs), installs
    assert commands[-1].endswith("/agtaild")  # and then it runs the daemon


def test_make_test_adds_the_dev_extras(tmp_path: Path) -> None:
    commands = make_dry_run("test", tmp_path / "venv")
    assert any("'.[dev]'" in c for c in pip_installs(commands)), commands
    assert any(" -m pytest" in c for c in commands)


def test_ci_still_runs_make_test() -> None:
    assert (REPO / ".ci" / "run").read_text().rstrip().endswith("make test")


def test_editable_install_is_a_plain_path_without_warnings(tmp_path: Path) -> None:
    """setuptools' build_editable on a copy of this checkout: every warning it emits is what
    pip shows as a BuildBackendWarning box; a layout whose packages live in one folder gets a
    plain ``.pth`` path entry and none."""
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"setuptools {setuptools.__version__} is older than the build asks (>= 77)")
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    skip = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    shutil.copytree(REPO / "agtaild", src / "agtaild", ignore=skip)
    shutil.copytree(REPO / "clients" / "python", src / "clients" / "python", ignore=skip)
    os.symlink(os.readlink(REPO / "agtail_client"), src / "agtail_client")
    code = (
        "import json, sys, warnings, zipfile\n"
        "from setuptools import build_meta\n"
        "out = sys.argv[1]  # build_meta rewrites sys.argv\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    name = build_meta.build_editable(out)\n"
        "z = zipfile.ZipFile(out + '/' + name)\n"
        "pth = {n: z.read(n).decode() for n in z.namelist() if n.endswith('.pth')}\n"
        "print(json.dumps({'warnings': [f'{w.category.__name__}: {w.message}' for w in seen], 'pth': pth}))\n"
    )
    out = tmp_path / "wheel"
    out.mkdir()
    done = subprocess.run([sys.executable, "-c", code, str(out)], cwd=src, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(done.stdout.strip().splitlines()[-1])
    assert doc["warnings"] == []
    (pth,) = doc["pth"].values()
    assert pth.strip() == str(src.resolve())  # one folder on sys.path: agtaild and agtail_client both below it
