"""The package as a user installs it: a wheel built by hatchling, installed into a fresh venv."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

SDK_DIR = Path(__file__).resolve().parents[1]

# Run by the venv's interpreter: imports the package and lists every module the import loaded that
# is neither stdlib nor part of a distribution the package depends on (directly or not).
CHECK_IMPORTS = r"""
import importlib.metadata as md, json, sys
from packaging.requirements import Requirement

before = set(sys.modules)
import relay_hub_agent
loaded = {name.split(".")[0] for name in set(sys.modules) - before}

# What these distributions require upstream: Debian's packaged metadata leaves most of it out (its
# python3-socketio and python3-aiohttp list no install requirements), apt having resolved them.
UPSTREAM = {
    "python-socketio": ["python-engineio>=4.3", "bidict>=0.21"],
    "aiohttp": ["attrs", "charset-normalizer", "multidict", "async-timeout", "yarl", "frozenlist", "aiosignal"],
    "yarl": ["multidict", "idna"],
    "aiosignal": ["frozenlist"],
}

def closure(dist, extras=()):
    seen, todo = set(), [(dist, tuple(extras))]
    while todo:
        name, extras = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        for spec in (md.requires(name) or []) + UPSTREAM.get(key, []):
            req = Requirement(spec)
            envs = [{"extra": e} for e in extras] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((req.name, tuple(req.extras)))
    return seen

allowed_dists = closure("relay-hub-agent")
modules_of = md.packages_distributions()
allowed = set(sys.stdlib_module_names) | {"relay_hub_agent"} | {
    module for module, dists in modules_of.items() if any(d.lower().replace("_", "-") in allowed_dists for d in dists)
}
print(json.dumps({
    "file": relay_hub_agent.__file__,
    "loaded": sorted(loaded),
    "dists": sorted(allowed_dists),
    # Cython's runtime modules (compiled extensions of multidict, yarl, frozenlist) are not packages.
    "outside": sorted(m for m in loaded if m not in allowed and not m.startswith("_") and m != "cython_runtime"),
    "requires": md.requires("relay-hub-agent"),
}))
"""


def test_the_wheel_installs_in_a_fresh_venv_and_imports_only_stdlib_and_its_dependencies(tmp_path: Path) -> None:
    out = tmp_path / "wheels"
    # hatchling's PEP 517 backend, called as a build frontend would (no `build` package needed).
    built = subprocess.run(
        [sys.executable, "-c", "import sys; from hatchling.build import build_wheel; print(build_wheel(sys.argv[1]))", str(out)],
        cwd=SDK_DIR,
        capture_output=True,
        text=True,
        check=True,
    )
    wheel = out / built.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert {"relay_hub_agent/__init__.py", "relay_hub_agent/_protocol.py", "relay_hub_agent/py.typed"} <= names
    assert not [n for n in names if n.startswith("tests/")]
    assert "Name: relay-hub-agent" in metadata
    # Plain requirements, not the `asyncio_client` extra: python-socketio's older metadata (Debian's
    # 5.7) spells the extra unnormalized and pip then warns that it "does not provide the extra".
    assert "Requires-Dist: python-socketio>=5.7" in metadata
    assert "Requires-Dist: aiohttp>=3.4" in metadata

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    # Dependencies resolved (from the system site packages: no index), as a user's install does.
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-index", "--quiet", str(wheel)],
        check=True,
        capture_output=True,
        text=True,
    )
    assert "WARNING" not in installed.stderr, installed.stderr
    # From an empty directory, so the source tree cannot be imported instead of the installed package.
    checked = subprocess.run(
        [str(python), "-c", CHECK_IMPORTS], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    report = json.loads(checked.stdout)
    assert report["file"].startswith(str(venv)), report["file"]
    assert {"python-socketio", "python-engineio", "aiohttp"} <= set(report["dists"]), report["dists"]
    assert {"socketio", "engineio", "aiohttp"} <= set(report["loaded"])
    assert report["outside"] == [], report
