"""Run every check of the compatibility matrix: rows (functions) x sources x dtypes x cases.

Each case's inputs are drawn from a generator seeded by (seed, function, dtype, case number), so a
cell's result does not depend on which worker ran it or in which order: `--check` is stable.
A cell holds only what the machine cannot change (status, reason, signature, configuration);
what it can change (the worst relative error, the figures behind a failure, seconds) goes into a
`Measured` record beside it, which `rulebridge matrix` writes to a file that is not committed:
NumPy picks its libm and BLAS kernels by CPU, and finite differences magnify their last-bit
differences (two Xeon hosts gave error figures up to 17x apart, every status the same).
Work is spread over processes by function (JAX compiles a pullback per signature, the expensive
part); each worker resolves names to functions itself, so nothing unpicklable crosses.
"""

from __future__ import annotations

import dataclasses
import gc
import multiprocessing
import os
import re
import sys
import time
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from ..errors import AdapterError, NoRuleError
from ..rules.registry import REGISTRY
from ..rules.keys import format_key, format_settings, normalise
from ..rules.signature import format_signature, signature_of
from . import conventions
from .catalogue import cases_for, exports, rows
from ..rules.arguments import with_traced
from .check import check_call
from .modes import (GRADGRAD, JVP, NO_GRADIENT, SecondOrder, gradgrad_verdict,
                    has_second_order, pushforward_verdict)
from .versions import LIBRARIES, versions  # noqa: F401 (matrix.LIBRARIES: the command's)
from .domains import build_args


# `importer(source) -> functions`: the functions a layer above this one gave rules with
# `import_rule` from that source (`rulebridge.scipy.imported`, the SciPy drop-ins). The caller
# that may import that layer (the `rulebridge` command, a test module) passes it in; each of
# those functions gets a row. A module-level function, so that it reaches workers by name.
Importer = Callable[[str], Iterable[Callable]]


DTYPES = ("float32", "float64", "complex128")
FULL_DTYPE = "float64"  # the column checked at every case of the catalogue
SEED = 0


@dataclass(frozen=True)
class Plan:
    sources: tuple[str, ...]
    dtypes: tuple[str, ...] = DTYPES
    seed: int = SEED
    importers: tuple[Importer, ...] = ()
    # the gradgrad column's check, from a layer above (modes.py); None: no such column
    second_order: SecondOrder | None = None


def offered(sources: Iterable[str], importers: Iterable[Importer] = ()) -> dict[str,
                                                                              list[Callable]]:
    """Each source's functions: its adapter's, and what `importers` imported from it."""
    importers = tuple(importers)
    found = {}
    for name in sources:
        try:
            found[name] = list(REGISTRY.adapter(name).functions())
            found[name] += [f for importer in importers for f in importer(name)]
        except AdapterError as exc:
            print(f"rulebridge matrix: skipping {name}: {exc}", file=sys.stderr)
    return found


def made_by(sources: Iterable[str]) -> dict[str, dict]:
    """For each source, the distribution whose entry point registers it, its version and the
    installed versions of what it requires: what a shipped status is bound to ("" for an
    adapter registered in-process)."""
    infos = REGISTRY.infos()
    return {name: {"distribution": infos[name].distribution, "version": infos[name].version,
                   "requires": dict(sorted(infos[name].requires.items()))}
            for name in sources if name in infos}


# -- one function, in a worker ---------------------------------------------------------------

_WORKERS: dict[tuple, dict] = {}  # per source selection: what is offered, and the rows
_WORKER: dict = {}


def use_cache(folder: str | Path | None, sources: Iterable[str]) -> None:
    """Let each adapter keep what does not change between runs under `folder`/<its name>
    (`Adapter.use_cache`); None: keep nothing."""
    if folder is None:
        return
    for name in sources:
        try:
            REGISTRY.adapter(name).use_cache(Path(folder) / name)
        except AdapterError:
            pass  # reported where the matrix skips it


def _init_worker(sources: tuple[str, ...], cache: str | None = None,
                 importers: tuple[Importer, ...] = ()) -> None:
    use_cache(cache, sources)
    if (sources, importers) not in _WORKERS:
        by_source = offered(sources, importers)
        _WORKERS[sources, importers] = {
            "offered": {name: set(fs) for name, fs in by_source.items()},
            "rows": rows(by_source)}
    _WORKER.clear()
    _WORKER.update(_WORKERS[sources, importers])


def row_names(sources: tuple[str, ...], importers: tuple[Importer, ...] = ()) -> list[str]:
    _init_worker(sources, importers=importers)
    return list(_WORKER["rows"])


def check_function(name: str, plan: Plan) -> list[dict]:
    """Every cell of one row, as JSON-ready dicts (the committed facts only)."""
    return check_row(name, plan)[0]


def check_row(name: str, plan: Plan) -> tuple[list[dict], list[dict]]:
    """Every cell of one row, and what was measured at each checked cell (error figures, which
    depend on the machine): two lists of JSON-ready dicts."""
    measured: list[dict] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ComplexWarning and friends from NumPy's own calls
        return _check_row(name, plan, measured), measured


def _check_row(name: str, plan: Plan, measured: list[dict]) -> list[dict]:
    _init_worker(plan.sources, importers=plan.importers)
    function = _WORKER["rows"][name]
    sources = [s for s in plan.sources if s in _WORKER["offered"]]
    cells: list[dict] = []
    cases = cases_for(name)
    for source in sources:
        if function not in _WORKER["offered"][source]:
            cells.append(_cell(name, source, "", "", "not offered",
                               reason=f"{source} has no rule for {name}"))
        elif not cases:
            cells.append(_cell(name, source, "", "", "unchecked",
                               reason="no input domain in the catalogue yet"))
    if not cases:
        return cells
    second_order = plan.second_order if has_second_order(name) else None
    for dtype in plan.dtypes:
        # Every case in float64, the first in the other columns: a JAX pullback compiles once
        # per signature, and that is what bounds a full run's time. A decomposition's cases
        # that name their gauge-invariant outputs (`complex_outputs`) are all checked in the
        # complex column too: its batched and UPLO keys have no other check than the user's.
        for number, case in enumerate(cases):
            if not (dtype == FULL_DTYPE or number == 0 or dtype.startswith("complex")
                    and case.complex_outputs is not None):
                continue
            key = case_key(plan.seed, name, dtype, number)
            cells += _check_case(name, function, case, dtype, key, sources, plan.seed,
                                 measured, second_order if number == 0 else None)
    return cells


def example_args(case, dtype: str, key: str) -> tuple:
    """The inputs of one case in one column, the same in every process."""
    return example_call(case, dtype, key)[0]


def example_call(case, dtype: str, key: str) -> tuple[tuple, dict]:
    """The positional and keyword arguments of one case in one column (a keyword may be a
    descriptor too: `where=Bools(MATRIX)`), the same in every process."""
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    args = build_args(case.args, rng, np.dtype(dtype))
    names = list(case.kwargs)
    values = build_args(tuple(case.kwargs.values()), rng, np.dtype(dtype))
    return args, dict(zip(names, values))


def case_key(seed: int, name: str, dtype: str, number: int) -> str:
    return f"{seed}|{name}|{dtype}|{number}"


def _check_case(name, function, case, dtype, key, sources, seed, measured,
                second_order=None) -> list[dict]:
    def fresh_call():
        return example_call(case, dtype, key)

    # Cells are keyed as the engine keys a call: the one spelling, its configuration.
    args, kwargs, config = normalise(function, *fresh_call())
    signature = format_signature(signature_of(args))
    label = format_settings(config)
    # a case holding some arguments constant verifies the others only: a key of its own
    argnums = case.checked_argnums(args)
    trust_key = with_traced(format_key(signature_of(args), config), argnums)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            function(*args, **kwargs)
    except Exception as exc:
        reason = f"NumPy's {name} rejects these inputs: {type(exc).__name__}: {exc}"
        return [_cell(name, s, dtype, signature, "undefined", label, reason=_line(reason),
                      key=trust_key)
                for s in sources if function in _WORKER["offered"][s]]
    cells = []
    for source in sources:
        if function not in _WORKER["offered"][source]:
            continue
        try:
            # the source's own rule, whatever the shipped status says of it
            result = check_call(function, *fresh_call(), source=source, seed=seed,
                                outputs=case.seeded_outputs(dtype), argnums=argnums)
        except NoRuleError as exc:
            cells.append(_cell(name, source, dtype, signature, "not offered", label,
                               reason=_refusal(exc.message, source), key=trust_key))
            continue
        except Exception as exc:  # the adapter broke while building: that is its cell's error
            cells.append(_cell(name, source, dtype, signature, "error", label,
                               reason=_line(f"{type(exc).__name__}: {exc}"), key=trust_key))
            continue
        status = result.status
        if status == "pass" and result.max_rel_error is None:
            status = NO_GRADIENT  # the primal and the contract were checked; nothing to compare
        cell = _cell(name, source, dtype, signature, status, label,
                     _line(result.reason) if result.status != "pass" else "", key=trust_key)
        cells.append(cell)
        measured.append({**{k: cell[k] for k in CELL_KEY}, "status": status,
                         "max_rel_error": result.max_rel_error, "measured": result.measured})
        if dtype == FULL_DTYPE:  # the other modes' columns (modes.py)
            verdicts = [(JVP, pushforward_verdict(function, source, args, kwargs, argnums,
                                                  seed))]
            if second_order is not None and result.status == "pass":
                verdicts.append((GRADGRAD, gradgrad_verdict(second_order, function, source,
                                                            args, kwargs, argnums, seed)))
            cells += [_cell(name, source, mode, signature, verdict[0], label, _line(verdict[1]),
                            key=f"{trust_key} {mode}")
                      for mode, verdict in verdicts if verdict is not None]
    return cells


CELL_KEY = ("function", "source", "dtype", "signature", "kwargs", "key")


def changed_cells(committed: list[dict],
                  fresh: list[dict]) -> list[tuple[dict | None, dict | None]]:
    """The (committed, regenerated) pairs that differ, in order; None where a side has no cell."""
    if len(committed) != len(fresh):
        longer = max(len(committed), len(fresh))
        committed = committed + [None] * (longer - len(committed))
        fresh = fresh + [None] * (longer - len(fresh))
    return [(old, new) for old, new in zip(committed, fresh) if old != new]


def _cell(function, source, dtype, signature, status, kwargs="", reason="", key="") -> dict:
    """One checked case. `key` is the text of the key the shipped status records it under
    (rulebridge/rules/keys.py: the signature with the call's configuration)."""
    return {"function": function, "source": source, "dtype": dtype, "signature": signature,
            "kwargs": kwargs, "key": key or signature, "status": status, "reason": reason}


def _line(text: str) -> str:
    """A reason on one line, whole (the footnotes and `rulebridge lookup` quote it), without
    the memory addresses that differ from run to run."""
    return re.sub(r" at 0x[0-9a-f]+", "", " ".join(text.split()))


def _refusal(message: str, source: str) -> str:
    for line in message.splitlines():
        if line.strip().startswith(f"{source}:"):
            return _line(line.strip()[len(source) + 1:].strip())
    return _line(message.splitlines()[0])


# -- the whole matrix ------------------------------------------------------------------------


@dataclass
class Outcome:
    """A run of the matrix: `matrix` holds the facts (committed as compat_matrix.json);
    `measured` the error figures per checked cell and `seconds` the CPU seconds per row, which
    depend on the machine (written beside it, not committed)."""

    matrix: dict
    measured: list[dict]
    seconds: dict[str, float]


def default_jobs() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def run(plan: Plan, jobs: int = 1, progress: Callable[[int, int], None] | None = None,
        expected: dict[str, float] | None = None, cache: str | Path | None = None) -> Outcome:
    """Every cell of the matrix, with the versions it was computed with. `progress(done, total)`
    is called as rows finish; `expected` (CPU seconds per row, from an earlier run) only orders
    the work, slowest first, so that no long row starts last; `cache` is a folder the adapters
    may keep compiled code in (`use_cache`). Results depend on neither."""
    cache = None if cache is None else str(cache)
    pool = _pool(plan, jobs, cache) if jobs > 1 else None  # workers import while we do
    use_cache(cache, plan.sources)
    try:
        by_source = offered(plan.sources, plan.importers)
        plan = dataclasses.replace(plan, sources=tuple(s for s in plan.sources
                                                      if s in by_source))
        names = list(rows(by_source))
        expected = expected or {}
        todo = sorted(names, key=lambda n: -expected.get(n, float("inf")))
        if pool is None:
            found = map(_check_function_star, [(name, plan) for name in todo])
            conventions_rows = conventions.evaluate(plan.sources)
        else:
            pending = pool.apply_async(conventions.evaluate, (plan.sources,))
            found = pool.imap_unordered(_check_function_star, [(n, plan) for n in todo])
        results: dict[str, tuple[list[dict], list[dict], float]] = {}
        weights = _weights(names, expected)
        if progress:
            progress(0, len(names))
        done_work = 0.0
        for name, cells, measured, seconds in found:
            results[name] = (cells, measured, seconds)
            if progress and weights:
                done_work += weights[name]
                progress(len(results), len(names), (done_work, sum(weights.values())))
            elif progress:
                progress(len(results), len(names))
        if pool is not None:
            conventions_rows = pending.get()
    finally:
        if pool is not None:
            pool.terminate()
    matrix = {"versions": versions(plan.sources), "adapters": made_by(plan.sources),
              "seed": plan.seed,
              "sources": list(plan.sources), "dtypes": list(plan.dtypes),
              "exports": exports(names), "conventions": conventions_rows,
              "cells": [c for name in names for c in results[name][0]]}
    return Outcome(matrix, [m for name in names for m in results[name][1]],
                   {name: results[name][2] for name in names})


def _weights(names: list[str], expected: dict[str, float]) -> dict[str, float]:
    """Each row's expected CPU seconds (a row new since the earlier run: their median); {}
    when no earlier run measured any."""
    known = sorted(expected[n] for n in names if n in expected)
    if not known:
        return {}
    typical = known[len(known) // 2]
    return {n: max(expected.get(n, typical), 1e-3) for n in names}


# A worker is replaced after this many rows: what a run's libraries keep that `release` cannot
# drop (allocator arenas, JAX's own tables) stays bounded by what so many rows leave.
ROWS_PER_WORKER = 60


def _pool(plan: Plan, jobs: int, cache: str | None):
    # spawn: JAX must not be forked once initialised, and the parent imports the adapters.
    context = multiprocessing.get_context("spawn")
    return context.Pool(jobs, initializer=_init_worker,
                        initargs=(plan.sources, cache, plan.importers),
                        maxtasksperchild=ROWS_PER_WORKER)


def _check_function_star(item) -> tuple[str, list[dict], list[dict], float]:
    start = time.process_time()
    try:
        cells, measured = check_row(*item)
    finally:
        release()
    return item[0], cells, measured, time.process_time() - start


def release() -> None:
    """Between rows: drop the rules built for the last one and what the adapters compiled for
    them (`Adapter.release`), so that a worker's memory stays flat over a run (compiled JAX
    pullbacks grew each worker to 2.2-2.6 GB over a full run before)."""
    REGISTRY.release()
    gc.collect()
