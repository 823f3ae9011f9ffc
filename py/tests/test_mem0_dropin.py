"""``memorybench.mem0`` against mem0 itself: mem0ai 2.2.1 runs in its own venv
(``.cache/mem0-venv``, made by scripts/setup.sh) and the drop-in in this one, each driving
the same calls through ``scripts/mem0/driver.py`` with its own loopback stub LLM/embedder
(``scripts/mem0/stub.py``) and seeded memory ids. The outputs are compared call by call:
results (key order included), errors (class, code, message) and the requests each call sent
to the stub (embedding inputs, the extraction prompt's sections, request parameters).

Covered: the fixed cases of ``scripts/mem0/fixed.py`` (every behaviour the plan measured:
shapes, errors, scoping, the filter language, update/delete/history, infer=True with each
reply kind, procedural memories, the message window, reset, AsyncMemory), the methods'
signatures, and SEEDS x CALLS random calls (``scripts/mem0/gen.py``). The normalisations
are listed in ``scripts/mem0/normalise.py`` and docs/parity.md.
"""

import json
import os
import subprocess
import sys

from conftest import ROOT, needs

DRIVER = ROOT / "scripts/mem0/driver.py"
SEEDS = (1, 2, 3, 4, 5, 6)
CALLS = 150
TOLERANCE = 1e-5


def differences(a, b, path=""):
    """Where two normalised outputs differ (floats within TOLERANCE are equal)."""
    numbers = (int, float)
    if (isinstance(a, float) or isinstance(b, float)) and isinstance(a, numbers) \
            and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return [] if abs(a - b) <= TOLERANCE else [f"{path}: {a!r} != {b!r}"]
    if type(a) is not type(b):
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        if list(a) != list(b):
            return [f"{path}: keys {list(a)} != {list(b)}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}: {a!r:.800} != {b!r:.800}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def env_for_drivers(tmp_path):
    env = dict(os.environ)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENROUTER_API_KEY"):
        env.pop(name, None)
    env["MEM0_TELEMETRY"] = "False"
    env["MEM0_DIR"] = str(tmp_path / "mem0dir")
    env["HOME"] = str(tmp_path / "mb-home")
    return env


def start(python, impl, args, env, out_dir):
    """A driver running in the background, writing to files (pipes would fill and stall it)."""
    if impl == "mem0":  # mem0's venv must not see this interpreter's paths
        env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    name = f"{impl}-{'-'.join(a.strip('-') for a in args)}"
    out, err = out_dir / f"{name}.jsonl", out_dir / f"{name}.err"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        process = subprocess.Popen(
            [str(python), str(DRIVER), "--impl", impl, *args], cwd=str(DRIVER.parent), env=env,
            stdout=stdout, stderr=stderr,
        )
    return process, out, err


def finish(started, what):
    process, out, err = started
    process.wait(timeout=300)
    assert process.returncode == 0, f"{what} failed:\n{err.read_text()[-3000:]}"
    return [json.loads(line) for line in out.read_text().splitlines()]


def compare(name, ours, theirs):
    assert len(ours) == len(theirs), f"{name}: {len(ours)} lines != mem0's {len(theirs)}"
    for mine, reference in zip(ours, theirs):
        diff = differences(reference, mine)
        assert not diff, (
            f"{name}, call {reference.get('i')}: {json.dumps(reference.get('call'))[:600]}\n"
            + "\n".join(diff[:10])
            + f"\nmem0:        {json.dumps(reference.get('result'))[:1500]}"
            + f"\nmemorybench: {json.dumps(mine.get('result'))[:1500]}"
        )
    for side, lines in (("mem0", theirs), ("memorybench", ours)):
        assert lines[-1] == {"connections_outside_loopback": []}, f"{name}: {side} {lines[-1]}"


def test_mem0_dropin_matches_mem0(tmp_path):
    mem0_python = needs(ROOT / ".cache/mem0-venv/bin/python",
                        "mem0ai 2.2.1's venv (bash scripts/setup.sh)")
    env = env_for_drivers(tmp_path)
    runs = {"fixed cases": ["--fixed"], "signatures": ["--signatures"]}
    runs.update({f"seed {s}": ["--seed", str(s), "--calls", str(CALLS)] for s in SEEDS})
    theirs = {name: start(mem0_python, "mem0", args, env, tmp_path) for name, args in runs.items()}
    ours = {name: start(sys.executable, "memorybench", args, env, tmp_path)
            for name, args in runs.items()}
    results = {name: (finish(ours[name], f"memorybench, {name}"),
                      finish(theirs[name], f"mem0, {name}")) for name in runs}
    mine, reference = results.pop("signatures")
    assert mine == reference, differences(reference[0], mine[0])
    skipped = 0
    for name, (mine, reference) in results.items():
        compare(name, mine, reference)
        skipped += sum("skipped" in line for line in reference)
    compared = sum(len(r) - 1 for _, r in results.values()) - skipped
    print(f"mem0 differential: {compared} calls equal ({len(SEEDS)} seeds x {CALLS} random "
          f"calls and the fixed cases), {skipped} adds not run (tie-dependent dedup)")
