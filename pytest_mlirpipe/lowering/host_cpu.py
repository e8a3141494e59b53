"""The CPU features a pipeline file's `[stage.cpu.FEATURE]` tables are chosen by."""

from __future__ import annotations

import functools
import os
import re

# Pretends the host has exactly these features (comma- or space-separated; empty: none).
CPU_FEATURES_ENV = "MLIRPIPE_CPU_FEATURES"
_FEATURE = re.compile(r"^[a-z0-9][a-z0-9_]*$")


def host_cpu_features() -> frozenset[str]:
    """$MLIRPIPE_CPU_FEATURES when set, else the host's flags as Linux's /proc/cpuinfo spells
    them (avx2, fma, avx512f, sse4_1, ...); none where they cannot be read."""
    text = os.environ.get(CPU_FEATURES_ENV)
    if text is not None:
        return parse_features(text)
    return _cpuinfo_flags()


def parse_features(text: str) -> frozenset[str]:
    return frozenset(f for f in re.split(r"[,\s]+", text.strip().lower()) if f)


def is_feature_name(name: str) -> bool:
    return bool(_FEATURE.match(name))


@functools.cache
def _cpuinfo_flags() -> frozenset[str]:
    fields = first_cpu_fields()
    return parse_features(fields.get("flags", fields.get("Features", "")))  # x86, Arm


@functools.cache
def first_cpu_fields() -> dict[str, str]:
    """The first processor's fields in /proc/cpuinfo, spaces folded ({} where unreadable)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip() and fields:
                    break
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), " ".join(value.split()))
    except OSError:
        pass
    return fields
