"""Published and local MemoryBench results, with upstream's ``MemoryBenchResults`` interface.

A results root holds run directories (``summary.json``, ``predict.json``,
``evaluate_details.json``, ``run_config.json``), each found by five keys: experiment
(``off-policy``, ...), model, dataset type, set name and memory system (``baseline``).

- Upstream's staged layout (the Hugging Face dataset of published results, or a local copy of
  it) lists its runs in ``manifest.jsonl``: :meth:`MemoryBenchResults.from_local` reads it,
  :meth:`MemoryBenchResults.from_hf` downloads it (with ``huggingface_hub``).
- A directory of this project's runs (``mb-harness ... --output-dir runs``) has no manifest:
  :meth:`MemoryBenchResults.from_local` finds its runs instead, the experiment from the path
  (``off-policy``, ``step_off-policy``, ``on-policy``, ``train_performance``,
  ``action_feedback`` with its action) and the model from ``run_config.json``.

As upstream's: when several runs share the five keys the last listed wins (for found runs,
the newest), ``list_*`` return sorted distinct values, and :meth:`summary_table` has one row
per model, dataset type and set, one column per memory system.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .errors import DataError

__all__ = ["DEFAULT_RESULTS_REPO", "MemoryBenchResults", "ResultEntry", "load_result_summary_table"]

#: The Hugging Face dataset upstream publishes its results in.
DEFAULT_RESULTS_REPO = "THUIR/MemoryBench-Results"

#: The experiments a manifest's legacy ``setting`` ("<exp>-<model>") can start with.
_SETTING_EXPS = ("off-policy",)

#: The run files the API reads.
_RUN_FILES = ("summary.json", "predict.json", "evaluate_details.json", "run_config.json")

#: The experiments this project's runs are written under (the first path part that is one).
_REGIMES = ("off-policy", "step_off-policy", "on-policy", "train_performance", "action_feedback")


@dataclass(frozen=True)
class ResultEntry:
    """One run: its five keys, its id, its directory relative to the root and its files."""

    exp: str
    model: str
    dataset_type: str
    set_name: str
    baseline: str
    run_id: str
    relative_dir: str
    files: List[str]

    @property
    def key(self) -> Tuple[str, str, str, str, str]:
        """The five keys a run is found by."""
        return (self.exp, self.model, self.dataset_type, self.set_name, self.baseline)


class MemoryBenchResults:
    """A set of runs, loaded from a local root or from the Hugging Face hub."""

    def __init__(self, repo_id: str, entries: List[ResultEntry], repo_type: str = "dataset"):
        self.repo_id = repo_id
        self.repo_type = repo_type
        self.entries = list(entries)
        self.local_root: Optional[Path] = None
        self.revision: Optional[str] = None
        self.cache_dir: Optional[str] = None
        self._index = {entry.key: entry for entry in self.entries}

    # ---------------------------------------------------------------- loading

    @classmethod
    def from_local(cls, root_dir, repo_id: str = "local", repo_type: str = "dataset"):
        """The runs under ``root_dir``: those its ``manifest.jsonl`` lists (upstream's staged
        layout), else every run directory found below it (this project's ``runs/``)."""
        root = Path(root_dir)
        if not root.is_dir():
            raise FileNotFoundError(f"{root}: no such results directory")
        manifest = root / "manifest.jsonl"
        if manifest.is_file():
            entries = _read_manifest(manifest)
        else:
            entries = _find_runs(root)
            if not entries:
                raise DataError(
                    f"{root}: no manifest.jsonl and no run directory (summary.json with its "
                    "run_config.json) below it"
                )
        results = cls(repo_id, entries, repo_type)
        results.local_root = root
        return results

    @classmethod
    def from_hf(
        cls,
        repo_id: str = DEFAULT_RESULTS_REPO,
        repo_type: str = "dataset",
        revision: Optional[str] = None,
        cache_dir: Optional[str] = None,
    ):
        """The runs of the Hugging Face dataset ``repo_id``: its manifest is downloaded now,
        each run file when first loaded (cached by ``huggingface_hub``)."""
        download = _hf_download()
        try:
            path = download(
                repo_id=repo_id,
                filename="manifest.jsonl",
                repo_type=repo_type,
                revision=revision,
                cache_dir=cache_dir,
            )
        except Exception as error:  # the hub's errors have no common base class
            raise DataError(
                f"cannot download manifest.jsonl of {repo_type} {repo_id} from the Hugging Face "
                f"hub ({type(error).__name__}: {_first_line(error)}); with a local copy, use "
                "MemoryBenchResults.from_local(DIR)"
            ) from None
        results = cls(repo_id, _read_manifest(Path(path)), repo_type)
        results.revision = revision
        results.cache_dir = cache_dir
        return results

    # ---------------------------------------------------------------- listing

    def _iter_entries(self, exp=None, models=None, dataset_type=None, set_name=None, model=None):
        wanted = None if models is None else set(models)
        for entry in self.entries:
            if exp is not None and entry.exp != exp:
                continue
            if wanted is not None and entry.model not in wanted:
                continue
            if model is not None and entry.model != model:
                continue
            if dataset_type is not None and entry.dataset_type != dataset_type:
                continue
            if set_name is not None and entry.set_name != set_name:
                continue
            yield entry

    def list_exps(self) -> List[str]:
        """Every experiment, sorted."""
        return sorted({e.exp for e in self.entries})

    def list_models(self, exp: Optional[str] = None) -> List[str]:
        """Every model (of experiment ``exp``), sorted."""
        return sorted({e.model for e in self._iter_entries(exp=exp)})

    def list_set_names(self, exp=None, model=None, dataset_type=None) -> List[str]:
        """Every set name matching the filters given, sorted."""
        return sorted(
            {e.set_name for e in self._iter_entries(exp=exp, model=model, dataset_type=dataset_type)}
        )

    def list_baselines(self, exp=None, model=None, dataset_type=None, set_name=None) -> List[str]:
        """Every memory system matching the filters given, sorted."""
        entries = self._iter_entries(
            exp=exp, model=model, dataset_type=dataset_type, set_name=set_name
        )
        return sorted({e.baseline for e in entries})

    # ---------------------------------------------------------------- loading one run's files

    def get_entry(self, exp, model, dataset_type, set_name, baseline) -> ResultEntry:
        """The run with these five keys; ``KeyError`` naming them when there is none."""
        key = (exp, model, dataset_type, set_name, baseline)
        try:
            return self._index[key]
        except KeyError:
            raise KeyError(
                f"Result not found for exp={exp!r}, model={model!r}, "
                f"dataset_type={dataset_type!r}, set_name={set_name!r}, baseline={baseline!r}"
            ) from None

    def load_json(self, exp, model, dataset_type, set_name, baseline, filename: str) -> Any:
        """The parsed file ``filename`` of a run; ``FileNotFoundError`` when the run does not
        list it."""
        entry = self.get_entry(exp, model, dataset_type, set_name, baseline)
        if filename not in entry.files:
            raise FileNotFoundError(f"{filename} is not available for {entry.relative_dir}")
        path = self._resolve_file(entry, filename)
        with open(path, encoding="utf-8") as file:
            return json.load(file)

    def load_summary(self, exp, model, dataset_type, set_name, baseline) -> Dict:
        """A run's ``summary.json``."""
        return self.load_json(exp, model, dataset_type, set_name, baseline, "summary.json")

    def load_predict(self, exp, model, dataset_type, set_name, baseline) -> List[Dict]:
        """A run's ``predict.json``."""
        return self.load_json(exp, model, dataset_type, set_name, baseline, "predict.json")

    def load_evaluate_details(self, exp, model, dataset_type, set_name, baseline) -> List[Dict]:
        """A run's ``evaluate_details.json``."""
        return self.load_json(
            exp, model, dataset_type, set_name, baseline, "evaluate_details.json"
        )

    def load_run_config(self, exp, model, dataset_type, set_name, baseline) -> Dict:
        """A run's ``run_config.json``."""
        return self.load_json(exp, model, dataset_type, set_name, baseline, "run_config.json")

    def _resolve_file(self, entry: ResultEntry, filename: str) -> str:
        if self.local_root is not None:
            return str(self.local_root / entry.relative_dir / filename)
        download = _hf_download()
        return download(
            repo_id=self.repo_id,
            filename=f"{entry.relative_dir}/{filename}",
            repo_type=self.repo_type,
            revision=self.revision,
            cache_dir=self.cache_dir,
        )

    # ---------------------------------------------------------------- tables

    def summary_table(
        self,
        metric: str,
        exp: str = "off-policy",
        dataset_type: Optional[str] = None,
        set_name: Optional[str] = None,
        baselines: Optional[Sequence[str]] = None,
        models: Optional[Sequence[str]] = None,
        missing_value=None,
        as_pandas: bool = True,
    ):
        """One metric of every matching run's ``summary.json["summary"]``: a row per model,
        dataset type and set (sorted; the last two columns only when not both fixed), a column
        per memory system; a run that does not exist is ``missing_value``. A pandas DataFrame
        (``pip install memorybench[benchmark]``), or a list of row dicts with
        ``as_pandas=False``."""
        models = list(models) if models is not None else self.list_models(exp=exp)
        if baselines is None:
            baselines = self.list_baselines(exp=exp, dataset_type=dataset_type, set_name=set_name)
        baselines = list(baselines)
        keys = sorted(
            {
                (e.model, e.dataset_type, e.set_name)
                for e in self._iter_entries(exp, models, dataset_type, set_name)
            }
        )
        with_sets = set_name is None or dataset_type is None
        rows = []
        for model, kind, name in keys:
            row: Dict[str, Any] = {"model": model}
            if with_sets:
                row.update({"dataset_type": kind, "set_name": name})
            for baseline in baselines:
                try:
                    summary = self.load_summary(exp, model, kind, name, baseline)
                except KeyError:
                    row[baseline] = missing_value
                    continue
                row[baseline] = summary.get("summary", {}).get(metric, missing_value)
            rows.append(row)
        if not as_pandas:
            return rows
        pandas = _pandas()
        columns = ["model"] + (["dataset_type", "set_name"] if with_sets else []) + baselines
        return pandas.DataFrame(rows, columns=columns)

    def __repr__(self) -> str:
        where = self.local_root if self.local_root is not None else self.repo_id
        return f"MemoryBenchResults({str(where)!r}, runs={len(self.entries)})"


def load_result_summary_table(
    metric: str = "z_score",
    exp: str = "off-policy",
    models: Optional[Sequence[str]] = None,
    dataset_type: Optional[str] = None,
    set_name: Optional[str] = None,
    baselines: Optional[Sequence[str]] = None,
    *,
    results_dir=None,
    repo_id: str = DEFAULT_RESULTS_REPO,
    revision: Optional[str] = None,
    missing_value=None,
    as_pandas: bool = True,
):
    """:meth:`MemoryBenchResults.summary_table` of the published results (``from_hf``), or of
    ``results_dir`` (``from_local``) when given. ``dataset_type=None`` and ``set_name=None``
    mean every domain and task."""
    if results_dir is not None:
        results = MemoryBenchResults.from_local(results_dir)
    else:
        results = MemoryBenchResults.from_hf(repo_id, revision=revision)
    return results.summary_table(
        metric,
        exp=exp,
        dataset_type=dataset_type,
        set_name=set_name,
        baselines=baselines,
        models=models,
        missing_value=missing_value,
        as_pandas=as_pandas,
    )


# -------------------------------------------------------------------- manifests and run folders


def _read_manifest(path: Path) -> List[ResultEntry]:
    entries = []
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                exp, model = _exp_and_model(item)
                entries.append(
                    ResultEntry(
                        exp=exp,
                        model=model,
                        dataset_type=item["dataset_type"],
                        set_name=item["set_name"],
                        baseline=item["baseline"],
                        run_id=item["run_id"],
                        relative_dir=item["relative_dir"],
                        files=list(item["files"]),
                    )
                )
            except (ValueError, KeyError, TypeError) as error:
                detail = f"no {error}" if isinstance(error, KeyError) else str(error)
                raise DataError(f"{path}, line {number}: {detail}") from None
    return entries


def _exp_and_model(item: Dict[str, Any]) -> Tuple[str, str]:
    if "exp" in item and "model" in item:
        return item["exp"], item["model"]
    setting = item["setting"]
    for exp in _SETTING_EXPS:
        if setting.startswith(exp + "-"):
            return exp, setting[len(exp) + 1 :]
    raise ValueError(f"Cannot parse exp/model from setting: {setting!r}")


def _find_runs(root: Path) -> List[ResultEntry]:
    found = []
    for directory, subdirs, files in os.walk(root):
        subdirs.sort()
        if "summary.json" not in files:
            continue
        here = Path(directory)
        config_dir = here if (here / "run_config.json").is_file() else here.parent
        config_path = config_dir / "run_config.json"
        if not config_path.is_file():
            continue
        with open(config_path, encoding="utf-8") as file:
            config = json.load(file)
        relative = here.relative_to(root)
        exp = _regime(relative, config, step=here.name if config_dir != here else None)
        present = [name for name in _RUN_FILES if (here / name).is_file()]
        if config_dir != here and "run_config.json" not in present:
            present.append("run_config.json")  # a step reads its run's configuration
        found.append(
            ResultEntry(
                exp=exp,
                model=_run_model(config),
                dataset_type=str(config.get("dataset_type", "?")),
                set_name=str(config.get("set_name", "?")),
                baseline=_run_system(config),
                run_id=config_dir.name,
                relative_dir=relative.as_posix(),
                files=present,
            )
        )
    # Run folders are named by their start time: the newest of equal keys comes last and wins.
    found.sort(key=lambda e: (e.key, e.relative_dir))
    return found


def _regime(relative: Path, config: Dict[str, Any], step: Optional[str]) -> str:
    regime = next((part for part in relative.parts if part in _REGIMES), "off-policy")
    if isinstance(config.get("action_feedback"), str):
        regime = f"{regime} {config['action_feedback']}"
    return f"{regime} {step}" if step else regime


def _run_system(config: Dict[str, Any]) -> str:
    sft = config.get("sft")
    if isinstance(sft, dict) and sft.get("epoch") is not None:
        return f"sft epoch {sft['epoch']}"
    return str(config.get("memory_system", "?"))


def _run_model(config: Dict[str, Any]) -> str:
    llm = config.get("llm")
    if isinstance(llm, dict):
        answer = llm.get("answer") or {}
        if isinstance(answer, dict) and answer.get("model"):
            return str(answer["model"])
    if isinstance(llm, str):
        return llm
    return str(config.get("model", "offline"))


# -------------------------------------------------------------------- optional packages


def _hf_download():
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise ImportError(
            "MemoryBenchResults.from_hf needs huggingface_hub (pip install huggingface_hub); "
            "with a local copy of the results, use MemoryBenchResults.from_local(DIR)"
        ) from None
    return hf_hub_download


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError(
            "summary tables as DataFrames need pandas (pip install 'memorybench[benchmark]'); "
            "as_pandas=False returns a list of dicts"
        ) from None
    return pandas


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else "no message"

