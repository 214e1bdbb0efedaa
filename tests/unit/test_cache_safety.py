"""Nothing on disk outside the package can change a number, run code, hang or fail a run.

mlsys keeps no start-up cache (the guide, "When entries are checked, and why nothing is
cached"). Each test plants what an attacker or an accident could leave in every folder a
cache could live in (``$MLSYS_CACHE_DIR/mlsys``, ``$XDG_CACHE_HOME/mlsys``,
``~/.cache/mlsys``, ``<tmp>/mlsys-cache-<uid>``): a pickle whose loading runs code, an
edited catalog table or entry, a NaN or a wrong unit, a FIFO, a link to another folder.
Then a fresh interpreter computes numbers, and the test checks that they are the shipped
catalog's, that no planted file was opened, that nothing was written or deleted, and
that the run ended. The same runs are repeated as a second user where the platform
allows it (root can drop to ``nobody``).

A fresh interpreter, because in-process the registries may already be built: the
question is what a new process reads.
"""

from __future__ import annotations

import ast
import errno
import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from mlsys.core import units
from mlsys.core.catalog import _tables

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534
SHIPPED = tomllib.loads((_tables.DATA_DIR / "accelerators.toml").read_text("utf-8"))
H100_TB_S = float(SHIPPED["H100"]["memory_bandwidth"].split()[0])  # "3.35 TB/s" -> 3.35

# What a fresh interpreter runs: a first number, conversions, pint's tables built on
# read, a context, every catalog entry validated. It prints one JSON line.
WORKLOAD = textwrap.dedent(
    """
    import json, sys
    from mlsys import Hardware, Nodes, Fabrics, Models, Grids, Datacenters, Q_
    from mlsys.core.units import cache_dir, get_registry
    from mlsys.formatting import fmt

    out = {"fmt": str(fmt(Hardware.H100.memory_bandwidth)),
           "tb_s": Hardware.H100.memory_bandwidth.m_as("TB/s"),
           "gb_s": Q_(3.35, "TB/s").m_as("GB/s"),
           "compatible": len(get_registry().get_compatible_units("hour")),
           "cache_dir": cache_dir()}
    with get_registry().context("sp"):
        out["thz"] = Q_(500.0, "nm").m_as("THz")
    out["entries"] = sum(len(list(r)) for r in (Hardware, Nodes, Fabrics, Models, Grids,
                                                 Datacenters))
    print(json.dumps(out))
    """
)

# Installed first in the child: records every file opened under the watched folders,
# every unpickling, and refuses every write anywhere (a full, read-only disk).
AUDIT = textwrap.dedent(
    """
    import errno, os, sys
    _WATCH = tuple(p for p in os.environ["SAFETY_WATCH"].split(os.pathsep) if p)
    _SEEN = []
    _WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    _CHANGES = {"os.mkdir", "os.rename", "os.remove", "os.rmdir", "shutil.rmtree",
                "os.symlink", "os.link", "os.chmod", "os.truncate"}

    def _hook(event, args):
        if event == "open":
            path, mode, flags = args
            path = os.fsdecode(path) if isinstance(path, (str, bytes)) else str(path)
            if any(path.startswith(w) for w in _WATCH):
                _SEEN.append(path)
            writing = any(c in mode for c in "wax+") if isinstance(mode, str) else bool(
                (flags or 0) & _WRITE_FLAGS)
            if writing and path != os.devnull:
                _SEEN.append("write:" + path)
                raise OSError(errno.ENOSPC, "No space left on device (simulated)", path)
        elif event in _CHANGES:
            _SEEN.append(f"{event}:{args[0]!r}")
            raise OSError(errno.ENOSPC, "No space left on device (simulated)")
        elif event.startswith("pickle."):
            _SEEN.append(f"{event}:{args!r}")

    sys.addaudithook(_hook)
    """
)
REPORT = "\nprint(json.dumps(_SEEN))\n"


class Planted:
    """What someone else left in every folder a cache could be looked for in."""

    def __init__(self, base: Path, uid: int) -> None:
        self.base = base
        self.home = base / "home"
        self.xdg = base / "xdg"
        self.mlsys_cache = base / "mlsys-cache-dir"
        self.tmp = base / "tmp"
        self.marker = base / "pickle-code-ran"
        self.folders = [
            self.mlsys_cache / "mlsys",
            self.xdg / "mlsys",
            self.home / ".cache" / "mlsys",
            self.tmp / f"mlsys-cache-{uid}",
        ]
        for folder in (self.home, self.xdg, self.mlsys_cache, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("MLSYS_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPYCACHEPREFIX")
        }
        env.update(
            HOME=str(self.home),
            XDG_CACHE_HOME=str(self.xdg),
            MLSYS_CACHE_DIR=str(self.mlsys_cache),
            TMPDIR=str(self.tmp),
            PYTHONPATH=str(ROOT),
            PYTHONDONTWRITEBYTECODE="1",
            SAFETY_WATCH=os.pathsep.join(str(p) for p in (self.base, *self.folders)),
        )
        env.update(extra)
        return env

    def plant_pickles(self) -> None:
        """A pickle whose loading writes the marker, under every name mlsys ever used."""
        payload = pickle.dumps(_RunsCode(str(self.marker)))
        for folder in self.folders:
            (folder / "catalog" / "entries" / "accelerators").mkdir(parents=True, exist_ok=True)
            for name in ("units.pickle", "units-0.25-0000000000000000.pickle", "registry.pkl"):
                (folder / name).write_bytes(payload)
            (folder / "catalog" / "accelerators.pickle").write_bytes(payload)

    def plant_tables(self, bandwidth: object) -> None:
        """The catalog tables, as the older cache named them, with an edited H100."""
        raw = (_tables.DATA_DIR / "accelerators.toml").read_bytes()
        edited = json.loads(json.dumps(SHIPPED))
        edited["H100"]["memory_bandwidth"] = bandwidth
        digest = hashlib.sha1(raw).hexdigest()[:16]
        entry = {"key": "H100", "cls": "Accelerator", "set": [], "fields": {}}
        for folder in self.folders:
            (folder / "catalog" / "entries" / "accelerators").mkdir(parents=True, exist_ok=True)
            text = json.dumps(edited, allow_nan=True)
            (folder / "catalog" / f"accelerators-{digest}.json").write_text(text)
            (folder / "catalog" / "entries" / "accelerators" / "H100-0.json").write_text(
                json.dumps(entry)
            )

    def plant_fifos(self) -> None:
        raw = (_tables.DATA_DIR / "accelerators.toml").read_bytes()
        digest = hashlib.sha1(raw).hexdigest()[:16]
        for folder in self.folders:
            (folder / "catalog").mkdir(parents=True, exist_ok=True)
            os.mkfifo(folder / "catalog" / f"accelerators-{digest}.json")
            os.mkfifo(folder / "units.pickle")

    def tree(self) -> dict[str, tuple[int, int, bytes]]:
        """Every path under the planted folders: mode, owner, and a file's bytes."""
        out = {}
        for path in sorted(self.base.rglob("*")):
            st = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            out[str(path.relative_to(self.base))] = (st.st_mode, st.st_uid, data)
        return out


class _RunsCode:
    """Unpickling this writes a file: the proof that a pickle ran code."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path(self.marker).write_text, ("the planted pickle ran",))


def run_fresh(
    planted: Planted,
    *,
    as_uid: int | None = None,
    umask: int | None = None,
    python: str = sys.executable,
    **env: str,
) -> tuple[dict, list[str]]:
    """Run :data:`WORKLOAD` in a fresh interpreter; its numbers, and what it touched."""

    def before() -> None:
        if umask is not None:
            os.umask(umask)
        if as_uid is not None:
            os.setgid(as_uid)
            os.setuid(as_uid)

    out = subprocess.run(
        [python, "-c", AUDIT + WORKLOAD + REPORT],
        env=planted.env(**env),
        cwd=str(planted.base),
        capture_output=True,
        text=True,
        timeout=120,  # a FIFO that blocked an open would hang here, not forever
        preexec_fn=before,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    numbers, seen = out.stdout.strip().splitlines()[-2:]
    return json.loads(numbers), json.loads(seen)


def assert_shipped_numbers(numbers: dict) -> None:
    assert numbers["tb_s"] == H100_TB_S == 3.35  # accelerators.toml: "3.35 TB/s"
    assert numbers["fmt"] == "3.35 TB/s"
    assert numbers["gb_s"] == pytest.approx(3350.0, rel=1e-12)  # 1 TB = 1000 GB
    assert numbers["thz"] == pytest.approx(299792.458 / 500, rel=1e-12)  # c / 500 nm
    assert numbers["compatible"] > 5  # second, minute, hour, day, week, year ...
    assert numbers["cache_dir"] is None
    total = sum(len(tomllib.loads(p.read_text("utf-8"))) for p in _CATALOG_FILES)
    assert numbers["entries"] == total  # every shipped row served


_CATALOG_FILES = [
    _tables.DATA_DIR / f"{name}.toml"
    for name in ("accelerators", "nodes", "fabrics", "models", "grids", "datacenters")
]


@pytest.fixture
def planted():
    # Not under pytest's tmp_path: a second user must be able to enter it.
    base = Path(tempfile.mkdtemp(prefix="mlsys-safety-"))
    base.chmod(0o755)
    try:
        yield Planted(base, os.getuid())
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_planted_pickle_is_never_opened_and_runs_no_code(planted):
    planted.plant_pickles()
    before = planted.tree()
    numbers, seen = run_fresh(planted)
    assert_shipped_numbers(numbers)
    assert not planted.marker.exists()
    assert seen == []  # no file under the planted folders opened, nothing unpickled
    assert planted.tree() == before


def _unsafe_loads(tree: ast.AST) -> list[str]:
    """Imports of modules that deserialise code, and YAML loads without a safe loader."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            loader = " ".join(ast.unparse(k.value) for k in node.keywords if k.arg == "Loader")
            if node.func.attr in ("unsafe_load", "full_load", "load_all") or (
                node.func.attr == "load"
                and ast.unparse(node.func.value) == "yaml"
                and "SafeLoader" not in loader
            ):
                found.append(ast.unparse(node))
            continue
        else:
            continue
        found += [n for n in names if n.split(".")[0] in _CODE_FORMATS]
    return found


_CODE_FORMATS = {
    "pickle",
    "_pickle",
    "cPickle",
    "marshal",
    "shelve",
    "dill",
    "cloudpickle",
    "joblib",
}


def test_no_module_of_mlsys_can_deserialise_code():
    # pickle, marshal, shelve and their kin run code while they load; so does YAML's
    # full loader. mlsys imports none of them and reads YAML with the safe loader only.
    for path in sorted((ROOT / "mlsys").rglob("*.py")):
        found = _unsafe_loads(ast.parse(path.read_text("utf-8")))
        assert not found, f"{path.relative_to(ROOT)}: {found}"
    assert _unsafe_loads(ast.parse("import pickle\nfrom dill import loads\nyaml.load(t)"))


@pytest.mark.parametrize("bandwidth", ["33.5 TB/s", "nan TB/s", float("nan"), "3.35 W", None])
def test_an_edited_catalog_table_or_entry_is_not_served_and_not_fatal(planted, bandwidth):
    # An edited H100 once served 33.5 TB/s; a NaN or a wrong unit made every later run
    # raise until the cache was deleted by hand.
    planted.plant_tables(bandwidth)
    numbers, seen = run_fresh(planted)
    assert_shipped_numbers(numbers)
    assert seen == []


@pytest.mark.parametrize("mode", [0o775, 0o777, 0o700])
def test_a_group_or_world_writable_folder_is_not_read(planted, mode):
    planted.plant_pickles()
    planted.plant_tables("33.5 TB/s")
    for folder in planted.folders:
        folder.chmod(mode)
    numbers, seen = run_fresh(planted)
    assert_shipped_numbers(numbers)
    assert not planted.marker.exists() and seen == []


def test_umask_000_writes_nothing_at_all(planted):
    # A umask of 000 once left a 0666 pickle another user could replace: now no file is
    # made, whatever the umask (the audit hook refuses and records every write).
    numbers, seen = run_fresh(planted, umask=0)
    assert_shipped_numbers(numbers)
    assert seen == []
    # the four empty folders the test made, and nothing in them
    assert set(planted.tree()) == {"home", "xdg", "mlsys-cache-dir", "tmp"}


def test_a_symlinked_cache_folder_is_not_followed_and_nothing_is_deleted(planted):
    # A link <cache>/mlsys -> another folder once made mlsys delete pint/ and units-*
    # files in the folder it pointed at.
    target = planted.base / "victim"
    (target / "pint").mkdir(parents=True)
    (target / "pint" / "keep.txt").write_text("keep")
    for name in ("units-1.pickle", "units-2.txt", "keep.json"):
        (target / name).write_text(name)
    for folder in planted.folders:
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.symlink_to(target, target_is_directory=True)
    link_file = planted.base / "linked.pickle"
    link_file.write_bytes(pickle.dumps(_RunsCode(str(planted.marker))))
    before = planted.tree()
    numbers, seen = run_fresh(planted)
    assert_shipped_numbers(numbers)
    assert seen == [] and not planted.marker.exists()
    assert planted.tree() == before  # every file in the target is still there, unchanged


def test_a_fifo_in_place_of_a_cache_file_does_not_hang(planted):
    planted.plant_fifos()
    numbers, seen = run_fresh(planted)  # run_fresh's timeout fails the test on a hang
    assert_shipped_numbers(numbers)
    assert seen == []


def test_a_full_disk_leaves_no_temporary_file(planted):
    # Every write raises ENOSPC in the child (AUDIT): the numbers are still served and
    # no .tmp file is left anywhere under the folders a cache could be in.
    numbers, seen = run_fresh(planted)
    assert_shipped_numbers(numbers)
    assert not [p for p in planted.base.rglob("*") if ".tmp" in p.name]
    assert not [s for s in seen if s.startswith("write:")]


def test_a_write_refused_in_process_changes_nothing(monkeypatch):
    # The same refusal in this process: building a registry and parsing a table write
    # nothing, so an OSError(ENOSPC) from every write cannot reach them.
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    monkeypatch.setattr(os, "mkdir", full)
    monkeypatch.setattr(Path, "write_bytes", full)
    monkeypatch.setattr(Path, "write_text", full)
    registry = units._new_registry()
    assert registry.Quantity(3.35, "TB/s").m_as("GB/s") == pytest.approx(3350.0)
    assert _tables.load_table.__wrapped__("accelerators.toml") == SHIPPED


# -- a second user -----------------------------------------------------------------------
needs_root = pytest.mark.skipif(
    not hasattr(os, "getuid") or os.getuid() != 0, reason="changing user needs root"
)


def _as_nobody() -> None:
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def _python_for_nobody() -> tuple[str, str] | None:
    """An interpreter nobody may run that imports this mlsys, and its PYTHONPATH, or None.

    This Python may live under root's own 0700 home; the system's Python of the same
    version, given this one's installed packages, runs the same code.
    """
    import site
    import sysconfig

    paths = [str(ROOT), *site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    pythonpath = os.pathsep.join(dict.fromkeys(paths))
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for python in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        try:
            subprocess.run(
                [python, "-c", "import mlsys.core.units, pint, pydantic, numpy"],
                preexec_fn=_as_nobody,
                env={"PYTHONPATH": pythonpath, "PATH": os.environ.get("PATH", "")},
                cwd="/",
                capture_output=True,
                check=True,
                timeout=120,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        return python, pythonpath
    return None


@needs_root
def test_files_another_user_planted_are_not_read_by_nobody(planted):
    # The files belong to root; the run is nobody's, whose cache folders they fill.
    found = _python_for_nobody()
    if found is None:
        pytest.skip("no Python here can be run by a second user")
    python, pythonpath = found
    for path in (planted.base, planted.home, planted.xdg, planted.mlsys_cache, planted.tmp):
        os.chown(path, NOBODY, NOBODY)
    planted.folders[3] = planted.tmp / f"mlsys-cache-{NOBODY}"
    planted.plant_pickles()
    planted.plant_tables("33.5 TB/s")
    for folder in planted.folders:
        folder.chmod(0o777)
    numbers, seen = run_fresh(planted, as_uid=NOBODY, python=python, PYTHONPATH=pythonpath)
    assert_shipped_numbers(numbers)
    assert not planted.marker.exists() and seen == []


@needs_root
def test_what_nobody_plants_in_a_shared_folder_is_not_read_by_another_user(planted):
    # A second local user (nobody, with the system shell: no Python of ours needed)
    # writes a pickle, an edited table and a link to / into a shared, sticky,
    # world-writable folder; another user's run (root's here) reads none of it.
    for path in (planted.base, planted.tmp):
        path.chmod(0o1777)
    staged = planted.base / "staged"
    staged.mkdir(mode=0o755)
    (staged / "units.pickle").write_bytes(pickle.dumps(_RunsCode(str(planted.marker))))
    (staged / "accelerators.json").write_text('{"H100": {"memory_bandwidth": "33.5 TB/s"}}')
    for path in (staged, *staged.iterdir()):
        path.chmod(0o755 if path.is_dir() else 0o644)
    folder = planted.tmp / "mlsys-cache-0"
    script = (
        f"umask 000 && mkdir -p '{folder}/catalog' && cp '{staged}/units.pickle' '{folder}/' "
        f"&& cp '{staged}/accelerators.json' '{folder}/catalog/' && ln -s / '{folder}/root'"
    )
    subprocess.run(["/bin/sh", "-c", script], preexec_fn=_as_nobody, check=True, timeout=60)
    assert folder.stat().st_uid == NOBODY and (folder / "units.pickle").stat().st_uid == NOBODY
    numbers, seen = run_fresh(planted)
    assert_shipped_numbers(numbers)
    assert not planted.marker.exists() and seen == []
