"""MemoryBench itself, with upstream's names: load its datasets, score answers, summarize scores.

The same three calls as upstream's ``memorybench.py``, with the same arguments and return
shapes::

    from memorybench import load_memory_bench, evaluate, summary_results

    dataset = load_memory_bench("single", "Locomo-0")
    predicts = [{"test_idx": row["test_idx"], "response": my_system(row)}
                for row in dataset.dataset["test"]]
    details = evaluate("single", "Locomo-0", predicts)
    print(summary_results("single", "Locomo-0", predicts, details)["summary"])

Data is read where the harness reads it: ``data=`` (a local copy of the Hugging Face
repository THUIR/MemoryBench), else ``$MEMORY_BENCH_PATH``, else the built-in sample (the
``Sample`` domain). Loading and scoring run in Rust without the GIL. Metrics that need a
judge model use the models ``llm=`` chooses, as the harness's ``--llm``: ``"offline"`` (the
default: such a metric raises :class:`~memorybench.errors.ModelError`), ``"local"`` or a
role-settings file such as ``configs/llm/paper.toml``.

Where upstream asserts, these raise :class:`~memorybench.errors.InvalidInputError` (a
``ValueError``) with upstream's message.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from . import _native
from .errors import InvalidInputError

__all__ = [
    "MemoryBenchDataset",
    "NumpyFloat",
    "Split",
    "Splits",
    "evaluate",
    "load_memory_bench",
    "summary_results",
]

PathLike = Union[str, "os.PathLike[str]"]


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise InvalidInputError(message)


class NumpyFloat(float):
    """A score upstream's Python computes as a numpy number (``numpy.float64``, a ``float``
    subclass): LoCoMo's multi-hop (category 1) F1, a numpy mean. Upstream's
    ``summary_results`` counts a value whose type is not exactly ``int`` or ``float`` as 0, so
    in a summary of ``evaluate``'s own details (what every upstream regime writes) such a
    score counts 0, and read back from JSON it counts; :func:`summary_results` does the same
    with this type."""

    def __repr__(self) -> str:
        return f"NumpyFloat({float(self)!r})"


def _as_upstream_counts(details: List[Dict]) -> List[Dict]:
    """``details`` with every value upstream's summary counts as 0 (a number whose type is not
    exactly ``int`` or ``float``, as numpy's are) made 0."""
    counted = []
    for detail in details:
        metrics = {
            k: (0 if isinstance(v, (int, float)) and not isinstance(v, bool) and type(v) not in (int, float) else v)
            for k, v in detail.get("metrics", {}).items()
        }
        counted.append(dict(detail, metrics=metrics))
    return counted


class Split(Sequence):
    """One split's rows when Hugging Face ``datasets`` is not installed: indexable by position
    (a row dict) or by column name (that column's values), as a ``datasets.Dataset`` is."""

    def __init__(self, rows: List[Dict[str, Any]]):
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return iter(self._rows)

    def __getitem__(self, key):
        if isinstance(key, str):
            return [row.get(key) for row in self._rows]
        if isinstance(key, slice):
            return Split(self._rows[key])
        return self._rows[key]

    @property
    def num_rows(self) -> int:
        """The number of rows."""
        return len(self._rows)

    @property
    def column_names(self) -> List[str]:
        """Every column any row has, in first-seen order."""
        names: Dict[str, None] = {}
        for row in self._rows:
            names.update(dict.fromkeys(row))
        return list(names)

    def to_list(self) -> List[Dict[str, Any]]:
        """The rows as a list of dicts."""
        return list(self._rows)

    def __repr__(self) -> str:
        return f"Split(num_rows={len(self._rows)}, columns={self.column_names})"


class Splits(dict):
    """``{"train": Split, "test": Split}`` when Hugging Face ``datasets`` is not installed (it
    stands for a ``datasets.DatasetDict``)."""

    @property
    def num_rows(self) -> Dict[str, int]:
        """Rows per split."""
        return {name: len(split) for name, split in self.items()}


class MemoryBenchDataset:
    """One MemoryBench dataset, with upstream's dataset interface (``BaseDataset``).

    ``dataset`` holds the rows of both splits (a ``datasets.DatasetDict`` when Hugging Face
    ``datasets`` is installed, else :class:`Splits`), each row as upstream's loader decodes it;
    ``get_data`` finds a row in either split; ``evaluate`` scores answers to its rows.
    """

    def __init__(self, native: "_native.BenchDataset", eval_mode: bool = False):
        self._native = native
        self.eval_mode = eval_mode
        self._dataset = None
        self._corpus = None

    @property
    def dataset_name(self) -> str:
        """The dataset's name, e.g. ``Locomo-0``."""
        return self._native.dataset_name

    @property
    def test_metrics(self) -> List[str]:
        """The metrics its summary reports."""
        return self._native.test_metrics

    @property
    def max_output_len(self) -> int:
        """The answer length limit in tokens."""
        return self._native.max_output_len

    @property
    def has_corpus(self) -> bool:
        """Whether it has a conversation corpus to memorize first (LoCoMo, DialSim)."""
        return self._native.has_corpus

    @property
    def session_cnt(self) -> Optional[int]:
        """The number of sessions of its corpus, ``None`` without one."""
        return self._native.session_cnt

    @property
    def corpus(self) -> Optional[Dict[str, Any]]:
        """The corpus in LoCoMo's ``conversation`` form (``speaker_a``, ``speaker_b``,
        ``session_<n>_date_time``, ``session_<n>``), ``None`` without one."""
        if self._corpus is None and self.has_corpus:
            self._corpus = self._native.corpus()
        return self._corpus

    @property
    def dataset(self):
        """The rows of both splits: a ``datasets.DatasetDict`` when Hugging Face ``datasets``
        is installed (``pip install memorybench[benchmark]``), else :class:`Splits`."""
        if self._dataset is None:
            rows = {split: self._native.rows(split) for split in ("train", "test")}
            self._dataset = _as_dataset_dict(self.dataset_name, rows)
        return self._dataset

    def __len__(self) -> int:
        return len(self._native)

    def get_data(self, test_idx: int) -> Dict[str, Any]:
        """The row ``test_idx`` from either split, with its ``set_name``; raises
        :class:`~memorybench.errors.DataError` (a ``ValueError``) for an unknown one."""
        return self._native.get_data(test_idx)

    def get_initial_chat_messages(self, test_idx: int) -> List[Dict[str, str]]:
        """The messages that open a conversation about row ``test_idx``: its prompt as one
        user message, or its prepared chat."""
        return self._native.get_initial_chat_messages(test_idx)

    def evaluate(
        self, responses: List[Dict], *, llm: str = "offline", upstream: Optional[PathLike] = None
    ) -> List[Dict]:
        """Scores ``responses`` (``{"test_idx", "response"}`` dicts): one ``{"test_idx",
        "metrics"}`` dict each, by ``test_idx``, with every value the dataset's evaluation
        returns."""
        return self._native.evaluate(responses, llm=llm, upstream=_path(upstream))

    def evaluate_test(self, responses: List[Dict], **models) -> List[Dict]:
        """:meth:`evaluate`, keeping only the test metrics."""
        results = self.evaluate(responses, **models)
        if not self.test_metrics:
            return results
        return [
            {
                "test_idx": r["test_idx"],
                "metrics": {k: v for k, v in r["metrics"].items() if k in self.test_metrics},
            }
            for r in results
        ]

    def evaluate_and_summary(self, responses: List[Dict], **models):
        """The dataset's overall metrics and each answer's, as upstream's method: the mean of
        each test metric (for JuDGE's ``*_f1`` the F1 of the mean precision and recall; means
        of ``reasoning_meteor``, ``judge_meteor``, ``time_score`` and ``amount_score`` over
        the answers that have one)."""
        details = self.evaluate_test(responses, **models)
        if not self.test_metrics:
            return {}, details
        overall: Dict[str, Any] = {}
        n = len(details)
        for metric in self.test_metrics:
            if details and metric not in details[0]["metrics"]:
                _check(metric.endswith("_f1"), f"Metric {metric} not found in detailed results")
                recall = sum(d["metrics"].get(metric[:-3] + "_recall", 0) for d in details) / n
                precision = (
                    sum(d["metrics"].get(metric[:-3] + "_precision", 0) for d in details) / n
                )
                total = recall + precision
                overall[metric] = 2 * recall * precision / total if total > 0 else 0
            elif metric in ("reasoning_meteor", "judge_meteor", "time_score", "amount_score"):
                valid = [d for d in details if d["metrics"].get(metric) is not None]
                overall[metric] = (
                    sum(d["metrics"][metric] for d in valid) / len(valid) if valid else None
                )
            else:
                overall[metric] = sum(d["metrics"].get(metric, 0) for d in details) / n
        return overall, details

    def __repr__(self) -> str:
        return f"MemoryBenchDataset({self.dataset_name!r}, rows={len(self)})"


def _as_dataset_dict(name: str, rows: Dict[str, List[Dict[str, Any]]]):
    try:
        import datasets as hf
    except ImportError:
        return Splits({split: Split(r) for split, r in rows.items()})
    try:
        return hf.DatasetDict({split: hf.Dataset.from_list(r) for split, r in rows.items()})
    except (TypeError, ValueError, ArithmeticError) as error:  # pyarrow's ArrowInvalid is a ValueError
        warnings.warn(
            f"{name}: its rows do not fit one Arrow schema ({error}); "
            "dataset holds them as plain dicts (memorybench.benchmark.Splits)",
            stacklevel=3,
        )
        return Splits({split: Split(r) for split, r in rows.items()})


def _path(path: Optional[PathLike]) -> Optional[str]:
    return None if path is None else os.fspath(path)


def load_memory_bench(
    dataset_type: str,
    name: str,
    eval_mode: bool = False,
    *,
    data: Optional[PathLike] = None,
    upstream: Optional[PathLike] = None,
) -> Union[MemoryBenchDataset, List[MemoryBenchDataset]]:
    """The dataset ``name`` (``dataset_type="single"``), or the datasets of the domain or task
    ``name`` (``"domain"``, ``"task"``) in upstream's order.

    ``data`` is a local copy of the Hugging Face repository (default ``$MEMORY_BENCH_PATH``,
    else the built-in sample); ``upstream`` a THUIR/MemoryBench checkout, whose words the
    built-in sample's LoCoMo questions are then in. ``eval_mode`` is accepted for
    compatibility: upstream loads scoring models with it, and scoring here needs none loaded.
    """
    loaded = [
        MemoryBenchDataset(native, eval_mode)
        for native in _native.load_datasets(
            dataset_type, name, data=_path(data), upstream=_path(upstream)
        )
    ]
    return loaded[0] if dataset_type == "single" else loaded


def evaluate(
    dataset_type: str,
    name: str,
    predicts: List[Dict],
    *,
    llm: str = "offline",
    data: Optional[PathLike] = None,
    upstream: Optional[PathLike] = None,
) -> List[Dict]:
    """Scores ``predicts`` (``{"test_idx", "response", "dataset"}`` dicts; ``dataset`` may be
    left out for a single dataset, and is then filled in, as upstream does) against the
    datasets of ``dataset_type``/``name``: one ``{"test_idx", "metrics", "dataset"}`` dict per
    prediction, datasets in the set's order, each by ``test_idx``. Scores upstream computes as
    numpy numbers come back as :class:`NumpyFloat`, so that :func:`summary_results` counts them
    as upstream's does (0, in a summary of these details)."""
    for predict in predicts:
        _check("test_idx" in predict, "Each predict must have 'test_idx'")
        _check("response" in predict, "Each predict must have 'response'")
        if dataset_type == "single":
            if predict.get("dataset") is not None:
                _check(
                    predict["dataset"] == name,
                    f"Predict dataset {predict['dataset']} does not match expected {name}",
                )
            else:
                predict["dataset"] = name
        else:
            _check("dataset" in predict, "Each predict must have 'dataset'")
    loaded = load_memory_bench(dataset_type, name, eval_mode=True, data=data, upstream=upstream)
    datasets = [loaded] if dataset_type == "single" else loaded
    return _native.evaluate_datasets(
        [d._native for d in datasets], predicts, llm=llm, upstream=_path(upstream)
    )


def summary_results(
    dataset_type: str,
    name: str,
    predicts: List[Dict],
    evaluate_details: List[Dict],
    min_max_config_file: Optional[PathLike] = None,
) -> Dict[str, Any]:
    """Upstream's summary of ``evaluate``'s details: ``{"summary": {metric: mean}}`` for a
    single dataset; for a domain or task the per-group ``average``, ``minmax_normalized_average``
    and ``z_normalized_average`` (each ``[sum, count, mean]``), ``details``, and ``summary``
    with ``average``, ``weighted_average`` and ``z_score``, normalized with the statistics in
    ``min_max_config_file`` (upstream's ``final_evaluate_summary_wo_details.json`` layout;
    default: the copy built in, upstream's values). As upstream's, it counts a value whose type
    is not exactly ``int`` or ``float`` (:class:`NumpyFloat`, numpy's numbers) as 0: details read
    back from JSON count in full."""
    _check(
        len(predicts) == len(evaluate_details),
        f"Length mismatch: {len(predicts)} vs {len(evaluate_details)}",
    )
    if dataset_type == "single":
        for item in evaluate_details:
            _check(
                item.get("dataset") == name,
                f"Dataset name mismatch: {item.get('dataset')} vs {name}",
            )
    else:
        key = lambda x: (x["dataset"], x["test_idx"])  # noqa: E731
        for predict, item in zip(sorted(predicts, key=key), sorted(evaluate_details, key=key)):
            _check(
                (item["dataset"], item["test_idx"]) == (predict["dataset"], predict["test_idx"]),
                f"Index mismatch: {item['test_idx']}-{item['dataset']} vs "
                f"{predict['test_idx']}-{predict['dataset']}",
            )
    statistics = None
    if min_max_config_file is not None:
        with open(min_max_config_file, encoding="utf-8") as file:
            statistics = file.read()
    return _native.summarize(
        dataset_type, name, _as_upstream_counts(evaluate_details), statistics=statistics
    )
