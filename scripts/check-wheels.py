"""Check the release artefacts in a directory (`make wheel-check`; `make wheels` runs it).

usage: python scripts/check-wheels.py [--subset] [--build-sdist] DIR

For every wheel: its tags are cp310-abi3 and one of the four release platforms;
`auditwheel show` finds it consistent with its platform tag; `abi3audit --strict` finds no
abi3 violation; the extension module is an ELF of the tag's architecture that needs only
the C library of the tag (glibc <= the tag's version, or musl and no glibc), does not
link SQLite (the native writer reaches the interpreter's own SQLite at run time) nor
libpython; the wheel holds py.typed, _core.pyi and the license. The sdist holds the Rust
workspace, the Python package and the license, and no build output. `twine check
--strict` passes on all of them, SHA256SUMS matches them. Sizes are reported.

Without --subset all four platforms must be there. --build-sdist also installs the sdist
into a fresh venv with pip (a Rust toolchain is needed) and runs `python -m warpgraph
--version` there. Exits 1 listing every failed check.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile
from pathlib import Path

from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

PLATFORMS = {
    # platform tag in the file name -> (auditwheel's tag, ELF machine, C library)
    "manylinux_2_17_x86_64": ("manylinux_2_17_x86_64", "EM_X86_64", "glibc"),
    "manylinux_2_17_aarch64": ("manylinux_2_17_aarch64", "EM_AARCH64", "glibc"),
    "musllinux_1_2_x86_64": ("musllinux_1_2_x86_64", "EM_X86_64", "musl"),
    "musllinux_1_2_aarch64": ("musllinux_1_2_aarch64", "EM_AARCH64", "musl"),
}
GLIBC_MAX = (2, 17)
GLIBC_LIBS = {
    "libc.so.6",
    "libpthread.so.0",
    "libdl.so.2",
    "libm.so.6",
    "librt.so.1",
    "libgcc_s.so.1",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
}
MUSL_LIBS = {"libc.so", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"}
WHEEL_MEMBERS = ("warpgraph/py.typed", "warpgraph/_core.pyi", "warpgraph/__init__.py")
SDIST_MEMBERS = (
    "PKG-INFO",
    "pyproject.toml",
    "LICENSE",
    "README.md",
    "Cargo.toml",
    "Cargo.lock",
    "rust/core/Cargo.toml",
    "rust/core/src/lib.rs",
    "rust/py/Cargo.toml",
    "rust/py/src/lib.rs",
    "python/warpgraph/__init__.py",
    "python/warpgraph/py.typed",
    "python/warpgraph/_core.pyi",
)
NAME = re.compile(r"^warpgraph-(?P<ver>[^-]+)-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")


class Report:
    def __init__(self) -> None:
        self.failures: list[str] = []
        self.rows: list[tuple[str, int, str]] = []

    def check(self, ok: bool, artefact: str, what: str) -> bool:
        if not ok:
            self.failures.append(f"{artefact}: {what}")
        return ok


# auditwheel, abi3audit and twine: next to this interpreter (the wheel tools' venv)
TOOLS = Path(sys.executable).parent


def tool(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(list(map(str, args)), check=False, capture_output=True, text=True)


def elf_facts(data: bytes) -> dict:
    elf = ELFFile(io.BytesIO(data))
    needed: list[str] = []
    glibc: list[tuple[int, ...]] = []
    undefined: set[str] = set()
    exported: set[str] = set()
    for section in elf.iter_sections():
        if isinstance(section, DynamicSection):
            needed += [t.needed for t in section.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
        elif isinstance(section, GNUVerNeedSection):
            for _, aux in section.iter_versions():
                for a in aux:
                    m = re.fullmatch(r"GLIBC_(\d+(?:\.\d+)*)", a.name)
                    if m:
                        glibc.append(tuple(int(x) for x in m.group(1).split(".")))
    dynsym = elf.get_section_by_name(".dynsym")
    for sym in dynsym.iter_symbols() if dynsym else ():
        if sym.entry.st_shndx == "SHN_UNDEF":
            undefined.add(sym.name)
        elif sym.entry.st_info.bind == "STB_GLOBAL":
            exported.add(sym.name)
    return {
        "machine": elf["e_machine"],
        "needed": needed,
        "glibc_max": max(glibc, default=None),
        "undefined": undefined,
        "exported": exported,
    }


def check_auditwheel(path: Path, tag: str, libc: str, rep: Report) -> None:
    """`auditwheel show` must put the wheel at its tag. For musl wheels one difference is
    accepted: the module needs `libc.so` (zig's name for musl's libc), which auditwheel's
    musl allowlist spells `libc.musl-<arch>.so.1` (Alpine's file name); musl's loader
    answers both names with itself. Run with an empty library path (auditwheel would
    otherwise read this glibc machine's own `libc.so` linker script)."""
    with tempfile.TemporaryDirectory() as empty:
        ldpaths = ("--ldpaths", empty) if libc == "musl" else ()
        out = tool(TOOLS / "auditwheel", "show", "--json", *ldpaths, str(path))
    try:
        info = json.loads(out.stdout)
    except ValueError:
        rep.check(False, path.name, f"auditwheel show: {(out.stdout + out.stderr).strip()[-400:]}")
        return
    external = sorted(info.get("external_libs", {}))
    if libc == "glibc":
        ok = info.get("overall_tag") == tag and not external
    else:
        upgrade = info.get("policy_upgrades", {}).get(tag, {}).get("libs_to_eliminate")
        ok = info.get("sym_tag") == tag and external == ["libc.so"] and upgrade == ["libc.so"]
    rep.check(
        ok,
        path.name,
        f"auditwheel show: want {tag}, got overall {info.get('overall_tag')} symbols "
        f"{info.get('sym_tag')} external libraries {external}",
    )


def check_wheel(path: Path, rep: Report) -> str | None:
    name = path.name
    m = NAME.match(name)
    if not rep.check(m is not None, name, "file name is not warpgraph-VER-PY-ABI-PLAT.whl"):
        return None
    rep.check(
        (m["py"], m["abi"]) == ("cp310", "abi3"),
        name,
        f"tags {m['py']}-{m['abi']}, want cp310-abi3",
    )
    plats = m["plat"].split(".")
    known = [p for p in plats if p in PLATFORMS]
    if not rep.check(len(known) == 1, name, f"platform {m['plat']} is none of {sorted(PLATFORMS)}"):
        return None
    plat = known[0]
    audit_tag, machine, libc = PLATFORMS[plat]

    check_auditwheel(path, audit_tag, libc, rep)
    out = tool(TOOLS / "abi3audit", "--strict", "--summary", str(path))
    rep.check(out.returncode == 0, name, f"abi3audit: {(out.stdout + out.stderr).strip()[-500:]}")

    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        for member in WHEEL_MEMBERS:
            rep.check(member in names, name, f"missing {member}")
        licenses = [
            n for n in names if re.fullmatch(r"warpgraph-[^/]+\.dist-info/licenses/LICENSE", n)
        ]
        rep.check(len(licenses) == 1, name, "missing dist-info/licenses/LICENSE")
        meta = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        text = zf.read(meta).decode() if meta else ""
        rep.check(
            "License-Expression: MIT" in text, name, "METADATA has no License-Expression: MIT"
        )
        rep.check(
            "Requires-Python: >=3.10" in text, name, "METADATA has no Requires-Python: >=3.10"
        )
        sos = [n for n in names if n.endswith(".so")]
        if not rep.check(sos == ["warpgraph/_core.abi3.so"], name, f"extension modules {sos}"):
            return plat
        so = zf.read(sos[0])
    facts = elf_facts(so)
    rep.check(facts["machine"] == machine, name, f"ELF machine {facts['machine']}, want {machine}")
    needed = set(facts["needed"])
    allowed = GLIBC_LIBS if libc == "glibc" else MUSL_LIBS
    rep.check(
        needed <= allowed, name, f"needs libraries outside {libc}: {sorted(needed - allowed)}"
    )
    if libc == "glibc":
        rep.check(
            facts["glibc_max"] is not None and facts["glibc_max"] <= GLIBC_MAX,
            name,
            f"needs GLIBC_{'.'.join(map(str, facts['glibc_max'] or ()))} > 2.17",
        )
    else:
        rep.check(
            facts["glibc_max"] is None, name, "a musl wheel references GLIBC_ symbol versions"
        )
    sqlite = sorted(s for s in facts["undefined"] if s.startswith("sqlite3_"))
    rep.check(
        not sqlite, name, f"links SQLite symbols {sqlite[:5]} (they must be looked up at run time)"
    )
    rep.check(not any("python" in n for n in needed), name, f"links libpython: {sorted(needed)}")
    rep.check("PyInit__core" in facts["exported"], name, "does not export PyInit__core")
    rep.rows.append(
        (name, path.stat().st_size, f"{libc} {plat}; _core.abi3.so {len(so) // 1024} KiB")
    )
    return plat


def check_sdist(path: Path, rep: Report) -> None:
    name = path.name
    with tarfile.open(path) as tf:
        members = tf.getnames()
    prefix = members[0].split("/")[0] if members else ""
    rel = {m[len(prefix) + 1 :] for m in members}
    for member in SDIST_MEMBERS:
        rep.check(member in rel, name, f"missing {member}")
    built = sorted(
        m for m in rel if m.endswith((".so", ".whl")) or m.startswith(("target/", "dist/"))
    )
    rep.check(not built, name, f"holds build output: {built[:5]}")
    rep.rows.append((name, path.stat().st_size, f"sdist, {len(members)} entries"))


def build_sdist(path: Path, rep: Report) -> None:
    with tempfile.TemporaryDirectory(prefix="warpgraph-sdist-") as tmp:
        env_dir = Path(tmp) / "venv"
        venv.create(env_dir, with_pip=True)
        py = str(env_dir / "bin" / "python")
        out = tool(py, "-m", "pip", "install", "-q", str(path))
        if not rep.check(
            out.returncode == 0, path.name, f"pip install: {out.stderr.strip()[-800:]}"
        ):
            return
        out = tool(py, "-m", "warpgraph", "--version")
        rep.check(
            out.returncode == 0 and out.stdout.startswith("warpgraph "),
            path.name,
            f"installed from the sdist, `python -m warpgraph --version` said {out.stdout!r} {out.stderr!r}",
        )


def check_sums(directory: Path, artefacts: list[Path], rep: Report) -> None:
    sums = directory / "SHA256SUMS"
    if not rep.check(sums.is_file(), "SHA256SUMS", "missing"):
        return
    listed = {}
    for line in sums.read_text().splitlines():
        digest, _, file = line.partition("  ")
        listed[file] = digest
    rep.check(
        set(listed) == {a.name for a in artefacts},
        "SHA256SUMS",
        f"lists {sorted(listed)}, the artefacts are {sorted(a.name for a in artefacts)}",
    )
    for a in artefacts:
        digest = hashlib.sha256(a.read_bytes()).hexdigest()
        rep.check(listed.get(a.name) == digest, "SHA256SUMS", f"wrong digest for {a.name}")
    rep.rows.append(("SHA256SUMS", sums.stat().st_size, f"{len(listed)} digests"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--subset", action="store_true", help="not all four platforms needed")
    parser.add_argument("--build-sdist", action="store_true", help="also pip-install the sdist")
    args = parser.parse_args(argv)
    rep = Report()
    wheels = sorted(args.dir.glob("*.whl"))
    sdists = sorted(args.dir.glob("*.tar.gz"))
    rep.check(bool(wheels), str(args.dir), "holds no wheel")
    plats = [check_wheel(w, rep) for w in wheels]
    if not args.subset:
        rep.check(
            sorted(p for p in plats if p) == sorted(PLATFORMS),
            str(args.dir),
            f"wheels for {sorted(p for p in plats if p)}, want one for each of {sorted(PLATFORMS)}",
        )
        rep.check(len(sdists) == 1, str(args.dir), f"{len(sdists)} sdists, want 1")
    for s in sdists:
        check_sdist(s, rep)
        if args.build_sdist:
            build_sdist(s, rep)
    artefacts = wheels + sdists
    if artefacts:
        out = tool(TOOLS / "twine", "check", "--strict", *map(str, artefacts))
        rep.check(out.returncode == 0, "twine check", (out.stdout + out.stderr).strip()[-800:])
    check_sums(args.dir, artefacts, rep)

    width = max((len(r[0]) for r in rep.rows), default=0)
    print(f"{'artefact':<{width}}  {'bytes':>9}  notes")
    for artefact, size, notes in rep.rows:
        print(f"{artefact:<{width}}  {size:>9}  {notes}")
    if rep.failures:
        print(f"\n{len(rep.failures)} check(s) failed:", file=sys.stderr)
        for f in rep.failures:
            print(f"  - {f}", file=sys.stderr)
        return 1
    checks = "auditwheel, abi3audit, ELF needs, contents, twine, SHA256SUMS"
    print(f"\nall checks passed ({len(wheels)} wheels, {len(sdists)} sdist: {checks})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
