"""The header of a bench report: machine, OS, Python, database and package versions."""

from __future__ import annotations

import os
import platform
import sqlite3
import sys
from importlib import metadata
from typing import Any

PACKAGES = (
    "warpgraph",
    "langgraph",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "langgraph-checkpoint-postgres",
    "psycopg",
    "ormsgpack",
    "rich",
    "matplotlib",
)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def machine_info(postgres_version: str | None = None) -> dict[str, Any]:
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "postgres": postgres_version,
        "packages": package_versions(),
    }


def header_lines(info: dict[str, Any]) -> list[str]:
    pkgs = ", ".join(f"{k} {v}" for k, v in info["packages"].items() if v)
    lines = [
        f"machine: {info['cpu']} ({info['cores']} cores), {info['os']}",
        f"python {info['python']}, sqlite {info['sqlite']}"
        + (f", postgres {info['postgres']}" if info.get("postgres") else ""),
        f"packages: {pkgs}",
    ]
    return lines
