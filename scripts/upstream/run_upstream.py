#!/usr/bin/env python3
"""Runs upstream MemoryBench's OWN off-policy pipeline (or, with --regime on-policy, its
on-policy one: src/on-policy.py) on our built-in sample, against an
OpenAI-compatible server (normally scripts/upstream/stub_llm.py), for a request-for-request
differential with our Rust harness.

Nothing of upstream is copied here: the checkout given by --upstream is imported and run.
  * src/off-policy.py's main() runs as is (loaded from the file), with two module-level
    names replaced: `load_memory_bench` (so the set "Sample" resolves to our sample, loaded
    by upstream's own memorybench._load_domain_or_task -> dataset classes -> load_from_hf,
    from a local Hugging-Face-layout directory written here) and `evaluate_and_summary`
    (evaluation/judging is skipped).
  * The Sample-Locomo rows (prompts, category-5 option order, info) are made by upstream's
    Locomo_Dataset._load_data and the train/test split by BaseDataset.get_test_ids. Both are
    commented out in upstream's files at this commit (upstream reads pre-built rows from the
    HF hub), so this script un-comments those exact blocks from the checkout at run time and
    executes them; their text is never stored in this project.
  * Sample-Stories is already in the HF row schema; only its split comes from get_test_ids.

Adaptations (all reported in OUT/run_info.json):
  * Locomo_Dataset asserts that its name ends in "-<0..9>" and the corpus hook
    (src/utils.load_corpus_to_memory) tests startswith("Locomo-"), so upstream sees
    Sample-Locomo under the name "Locomo-0"; outputs are renamed back.
  * Sample-Locomo's training rows record no dialogs (no `dialog_<stem>` column). Upstream
    would raise KeyError; like our harness, this script skips rows without the column (it
    empties that dataset's train split as off-policy sees it).
  * --limit N keeps the first N rows of each split, in stored order (test ids in the order
    get_test_ids drew them, train ids in loader order), before upstream loads them.
  * PYTHONHASHSEED is pinned (default 0) because Locomo's preamble names the speakers in
    `list(set(...))` order, which otherwise changes from run to run.
  * --fixed-time (MemoryOS only) replaces memoryos_chromadb's wall-clock get_timestamp(), so
    that the timestamps MemoryOS writes into its prompts do not change from run to run.

Usage:
  run_upstream.py --upstream /work/shared/upstream/MemoryBench --system bm25_message \
      --set-name Sample --limit 2 --base-url http://127.0.0.1:PORT/v1 --model stub-model \
      --out /tmp/up-bm25
"""

import argparse
import copy
import importlib
import importlib.util
import json
import math
import os
import sys
import textwrap
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SAMPLE_RAW = ROOT / "datasets" / "sample" / "raw"

SYSTEMS = ["wo_memory", "bm25_message", "bm25_dialog", "embedder_message", "embedder_dialog", "mem0", "a_mem", "memoryos"]

# Our catalog's Sample domain (configs/datasets/sample.json), in upstream's config shape.
# `alias` is the name upstream's dataset class is given.
SAMPLE_DATASETS = {
    "Sample-Locomo": {
        "alias": "Locomo-0",
        "class_name": "Locomo.Locomo_Dataset",
        "test_metrics": ["f1"],
        "max_output_len": 8192,
        "sample_count": None,
    },
    "Sample-Stories": {
        "alias": "Sample-Stories",
        "class_name": "WritingPrompts.WritingPrompts_Dataset",
        "test_metrics": ["meteor"],
        "max_output_len": 8192,
        "sample_count": None,
    },
}
SETS = {
    "Sample": ("domain", ["Sample-Locomo", "Sample-Stories"]),
    "Sample-Locomo": ("single", ["Sample-Locomo"]),
    "Sample-Stories": ("single", ["Sample-Stories"]),
}


def parse_args():
    p = argparse.ArgumentParser(description="Run upstream MemoryBench's off-policy flow on the sample.")
    p.add_argument("--upstream", required=True, help="upstream MemoryBench checkout (read-only)")
    p.add_argument("--system", required=True, choices=SYSTEMS)
    p.add_argument("--set-name", default="Sample", choices=sorted(SETS))
    p.add_argument("--limit", type=int, default=None, help="first N rows of each test and train split")
    p.add_argument("--base-url", required=True, help="OpenAI-compatible base URL, e.g. http://127.0.0.1:PORT/v1")
    p.add_argument("--model", required=True)
    p.add_argument("--embedding-base-url", default=None, help="embeddings server (default: --base-url)")
    p.add_argument("--embedding-model", default=None, help="default: upstream config's embedder model")
    p.add_argument("--api-key", default="stub-key")
    p.add_argument("--out", required=True, help="output directory (created; caches, data and results go here)")
    p.add_argument("--threads", type=int, default=1,
                   help="upstream's --threads (upstream default 4; 1 keeps the request order deterministic)")
    p.add_argument("--retrieve-k", type=int, default=5, help="upstream's --retrieve_k (ineffective upstream)")
    p.add_argument("--hash-seed", default="0", help="PYTHONHASHSEED to pin (see module doc)")
    p.add_argument("--regime", default="off-policy", choices=["off-policy", "on-policy"],
                   help="which of upstream's runners: src/off-policy.py or src/on-policy.py")
    p.add_argument("--step", type=int, default=10, help="on-policy: upstream's --step")
    p.add_argument("--batch-size", type=int, default=100, help="on-policy: upstream's --batch_size")
    p.add_argument("--max-rounds", type=int, default=3, help="on-policy: upstream's --max_rounds")
    p.add_argument("--fixed-time", default=None, metavar="'YYYY-MM-DD HH:MM:SS'",
                   help="memoryos only: the time MemoryOS's get_timestamp() returns (default: the wall clock)")
    args = p.parse_args()
    if args.fixed_time is not None:
        if args.system != "memoryos":
            p.error("--fixed-time applies to --system memoryos only")
        import time
        try:
            time.strptime(args.fixed_time, "%Y-%m-%d %H:%M:%S")  # upstream's format
        except ValueError:
            p.error(f"--fixed-time {args.fixed_time!r} is not 'YYYY-MM-DD HH:MM:SS'")
    return args


# ---------------------------------------------------------------- upstream's commented code

def uncommented_block(path, header):
    """The commented-out method starting with `# <header>` in `path`, un-commented."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip().startswith("# " + header))
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    block = []
    for n, line in enumerate(lines[start:], start):
        if not line.strip():
            # a blank line inside the block (base.py's docstring has one) continues it
            following = next((l for l in lines[n + 1:] if l.strip()), "")
            if following.startswith(indent + "#"):
                block.append("")
                continue
            break
        if not line.startswith(indent + "#"):
            break
        body = line[len(indent) + 1:]
        block.append(body[1:] if body.startswith(" ") else body)
    source = textwrap.dedent("\n".join(block)) + "\n"
    compile(source, f"{path}:{header}", "exec")
    return source


def upstream_function(path, header, module_globals, name):
    namespace = dict(module_globals)
    exec(compile(uncommented_block(path, header), f"{path} (commented-out {name})", "exec"), namespace)
    return namespace[name]


def upstream_split(upstream, rows):
    """BaseDataset.get_test_ids (commented out upstream) on rows in loader order."""
    base = importlib.import_module("src.dataset.base")
    get_test_ids = upstream_function(
        Path(upstream) / "src/dataset/base.py", "def get_test_ids(", vars(base), "get_test_ids")
    # The commented method reads self.total and self.dataset (a list of rows).
    holder = types.SimpleNamespace(total=len(rows), dataset=rows)
    return get_test_ids(holder, truncate_size=None, test_ratio=0.2)


def upstream_locomo_rows(upstream, raw_path, alias):
    """Locomo_Dataset._load_data (commented out upstream) on our raw LoCoMo file."""
    locomo = importlib.import_module("src.dataset.Locomo")
    load_data = upstream_function(
        Path(upstream) / "src/dataset/Locomo.py", "def _load_data(", vars(locomo), "_load_data")
    holder = types.SimpleNamespace(data_path=str(raw_path), dataset_name=alias)
    return load_data(holder)


# ---------------------------------------------------------------- local HF-layout data

def as_hf_row(row):
    """HF MemoryBench stores every non-scalar column as a string."""
    out = {}
    for key, value in row.items():
        if isinstance(value, (dict, list)):
            value = json.dumps(value, ensure_ascii=False)
        out[key] = value
    return out


def write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def build_hf_dir(upstream, hf_dir, names, limit):
    """Writes our sample as a local copy of the THUIR/MemoryBench HF layout; returns a report."""
    report = {}
    configs = []
    for name in names:
        spec = SAMPLE_DATASETS[name]
        alias = spec["alias"]
        if name == "Sample-Locomo":
            raw_path = SAMPLE_RAW / "sample_locomo.json"
            rows = upstream_locomo_rows(upstream, raw_path, alias)
            samples = json.loads(raw_path.read_text(encoding="utf-8"))
            write_jsonl(hf_dir / "corpus" / f"{alias}.jsonl", [{"text": json.dumps(samples[0], ensure_ascii=False)}])
        else:
            rows = [json.loads(l) for l in (SAMPLE_RAW / "sample_stories.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
        split = upstream_split(upstream, rows)
        by_idx = {r["test_idx"]: r for r in rows}
        stored = {s: [by_idx[i] for i in split[s]] for s in ("train", "test")}
        kept = {s: (stored[s][:limit] if limit else stored[s]) for s in stored}
        for s in ("train", "test"):
            write_jsonl(hf_dir / "dataset" / alias / f"{s}.jsonl", [as_hf_row(r) for r in kept[s]])
        configs.append(alias)
        report[name] = {
            "upstream_name": alias,
            "split_test_ids": split["test"],
            "split_train_ids": split["train"],
            "kept_test_ids": [r["test_idx"] for r in kept["test"]],
            "kept_train_ids": [r["test_idx"] for r in kept["train"]],
        }
    # The dataset card that maps config names to files (as the hub repo's README does).
    card = ["---", "configs:"]
    for alias in configs:
        card += [f"- config_name: {alias}", "  data_files:"]
        for s in ("train", "test"):
            card += [f"  - split: {s}", f"    path: dataset/{alias}/{s}.jsonl"]
    card += ["---", "", "Local copy of the built-in sample in THUIR/MemoryBench's layout (made by run_upstream.py).", ""]
    (hf_dir / "README.md").write_text("\n".join(card), encoding="utf-8")
    return report


# ---------------------------------------------------------------- config

def memory_system_config(upstream, system, args):
    utils = importlib.import_module("src.utils")
    rel = utils.get_memory_system_config_file(system, None)
    config = json.loads((Path(upstream) / rel).read_text(encoding="utf-8"))
    llm = config.setdefault("llm_config", {})
    llm["model"] = args.model
    if config.get("llm_provider", "openai") == "vllm":
        llm["vllm_base_url"] = args.base_url
    else:
        llm["openai_base_url"] = args.base_url
    llm["api_key"] = args.api_key
    embedding_url = args.embedding_base_url or args.base_url
    if "embedder_base_url" in config:  # embedder_message / embedder_dialog
        config["embedder_base_url"] = embedding_url
        if args.embedding_model:
            config["embedder_model"] = args.embedding_model
    if "embedder_config" in config:  # mem0
        emb = config["embedder_config"]
        if config.get("embedder_provider") == "vllm":
            emb["vllm_base_url"] = embedding_url
        else:
            emb["openai_base_url"] = embedding_url
        emb["api_key"] = args.api_key
        if args.embedding_model:
            emb["model"] = args.embedding_model
    return rel, config


# ---------------------------------------------------------------- main

def main():
    args = parse_args()
    if os.environ.get("PYTHONHASHSEED") != args.hash_seed:
        env = dict(os.environ, PYTHONHASHSEED=args.hash_seed)
        os.execve(sys.executable, [sys.executable] + sys.argv, env)

    # Upstream swallows request errors (wo_memory then shrinks its context, the others answer
    # "Error: Unable to generate response."), so make sure the server is there first.
    import urllib.request
    try:
        urllib.request.urlopen(args.base_url.rstrip("/") + "/models", timeout=10).read()
    except Exception as error:
        sys.exit(f"run_upstream: no OpenAI-compatible server at {args.base_url} ({error})")

    upstream = Path(args.upstream).resolve()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    hf_dir = out / "hf"

    # Environment upstream reads; nothing may leave this machine.
    os.environ["MEMORY_BENCH_PATH"] = str(hf_dir)
    os.environ["HF_DATASETS_CACHE"] = str(out / "hf_cache")
    os.environ["HF_HOME"] = str(out / "hf_home")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["VLLM_API_KEY"] = args.api_key
    os.environ["OPENAI_API_KEY"] = args.api_key          # embedder agents' OpenAI() reads it
    os.environ["OPENAI_BASE_URL"] = args.base_url
    os.environ["MEM0_TELEMETRY"] = "False"                # mem0's posthog telemetry
    os.environ["MEM0_DIR"] = str(out / "mem0_home")
    os.environ["ANONYMIZED_TELEMETRY"] = "False"          # chromadb's posthog telemetry (MemoryOS)
    os.environ.setdefault("TQDM_DISABLE", "1")
    sys.dont_write_bytecode = True                        # the checkout is read-only

    sys.path.insert(0, str(upstream))
    # Upstream's README installs its vendored mem0 with `pip install -e baselines/mem0`, so
    # that the top-level `mem0.*` imports of src/agent/mem0.py and of the vendored code itself
    # resolve to the vendored source. Putting that folder first on sys.path does the same
    # (the venv's PyPI mem0ai==0.1.116, the vendored version, only supplies the dependencies
    # and the "mem0ai" distribution metadata that mem0/__init__.py reads).
    sys.path.insert(0, str(upstream / "baselines" / "mem0"))
    sys.path.insert(0, str(HERE / "shims"))
    import heavy_import_shims
    heavy_import_shims.install()
    if args.system in ("a_mem", "memoryos"):
        # A-Mem and MemoryOS (utils.get_embedding) embed in-process with sentence-transformers:
        # the stand-in embeds on the stub's embeddings endpoint instead, as the harness's
        # --embedder does.
        import sentence_transformer_stand_in
        sentence_transformer_stand_in.install(args.embedding_base_url or args.base_url, args.api_key)
    os.chdir(out)  # upstream's relative default paths land in OUT

    # The runner: src/off-policy.py or src/on-policy.py, loaded from the checkout.
    runner_file = "off-policy.py" if args.regime == "off-policy" else "on-policy.py"
    spec = importlib.util.spec_from_file_location("upstream_runner", upstream / "src" / runner_file)
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    memorybench = importlib.import_module("memorybench")
    upstream_utils = importlib.import_module("src.utils")

    dataset_type, names = SETS[args.set_name]
    data_report = build_hf_dir(upstream, hf_dir, names, args.limit)

    # The set's dataset config, in upstream's domain.json shape.
    set_config = {args.set_name: [
        {"dataset_name": SAMPLE_DATASETS[n]["alias"], **{k: v for k, v in SAMPLE_DATASETS[n].items() if k != "alias"}}
        for n in names
    ]}
    set_config_file = out / "set_config.json"
    set_config_file.write_text(json.dumps(set_config, indent=2), encoding="utf-8")

    dialog_key = upstream_utils.get_dialog_key(args.system)
    skipped_train = {}

    def load_memory_bench(kind, name, eval_mode=False):
        assert name == args.set_name, name
        datasets_ = memorybench._load_domain_or_task(name, str(set_config_file), eval_mode)
        for dataset in datasets_:
            train = dataset.dataset["train"]
            # (Off-policy memorizes recorded dialogs; on-policy makes its own from these rows.)
            recorded = args.regime == "off-policy"
            if recorded and dataset.has_corpus and args.system != "wo_memory" and dialog_key not in train.column_names and len(train):
                skipped_train[dataset.dataset_name] = len(train)
                dataset.dataset["train"] = train.select([])
        return datasets_[0] if kind == "single" else datasets_

    def skip_evaluation(dataset_type_, set_name_, predicts, output_dir):
        print(f"[run_upstream] evaluation skipped ({len(predicts)} predictions in {output_dir})")

    runner.load_memory_bench = load_memory_bench
    if args.system == "mem0":
        # Upstream gives mem0 no vector-store path, so mem0 uses its default local Qdrant
        # folder /tmp/qdrant (wiped on open). Keep that folder inside OUT instead, so that
        # runs do not share it; nothing sent to the model changes.
        agent_mem0 = importlib.import_module("src.agent.mem0")
        vector_store_config = agent_mem0.VectorStoreConfig
        qdrant_path = str(out / "qdrant")
        agent_mem0.VectorStoreConfig = lambda config=None, **kw: vector_store_config(
            config={**(config or {}), "path": qdrant_path}, **kw)
    runner.evaluate_and_summary = skip_evaluation
    adaptations = []
    if args.fixed_time is not None:
        # MemoryOS stamps QA pairs, pages, sessions and knowledge with utils.get_timestamp()
        # (the wall clock), and the stamps reach its prompts ("(Time: ...)" in the answer
        # prompt) and its heat (recency decay). The function is imported by name into several
        # modules, so it is replaced in each module that holds it, not only in utils.
        mos_utils = importlib.import_module("baselines.MemoryOS.memoryos_chromadb.utils")
        wall_clock = mos_utils.get_timestamp
        replaced = []
        for name, module in sorted(sys.modules.items()):
            if name.startswith("baselines.MemoryOS.memoryos_chromadb") and getattr(module, "get_timestamp", None) is wall_clock:
                module.get_timestamp = lambda: args.fixed_time
                replaced.append(name.rsplit(".", 1)[-1])
        adaptations.append(f"memoryos_chromadb get_timestamp() returns {args.fixed_time!r} (replaced in: {', '.join(replaced)})")

    config_rel, config = memory_system_config(upstream, args.system, args)
    config_file = out / "memory_system_config.json"
    config_file.write_text(json.dumps(config, indent=2), encoding="utf-8")

    run_args = argparse.Namespace(
        dataset_type=dataset_type,
        set_name=args.set_name,
        memory_system=args.system,
        memory_system_config=str(config_file),
        memory_cache_prefix=str(out) + "/",
        output_dir=str(out / "results"),
        threads=args.threads,
        retrieve_k=args.retrieve_k,
    )
    if args.regime == "on-policy":
        # The simulated user's model (configs/memory_systems/feedback.json) on the same server.
        feedback = json.loads((upstream / "configs/memory_systems/feedback.json").read_text(encoding="utf-8"))
        feedback["llm_config"].update(model=args.model, vllm_base_url=args.base_url, api_key=args.api_key)
        feedback_file = out / "feedback_config.json"
        feedback_file.write_text(json.dumps(feedback, indent=2), encoding="utf-8")
        run_args.feedback_agent_config = str(feedback_file)
        run_args.step, run_args.batch_size, run_args.max_rounds = args.step, args.batch_size, args.max_rounds
        # main() opens the memory system's config file itself
    runner.main(run_args)

    # Collect upstream's predictions (on-policy: the last step's) and rename the aliases back.
    result_dirs = sorted((out / "results" / dataset_type / args.set_name / args.system).glob("start_at_*"))
    if args.regime == "off-policy":
        predict_file = result_dirs[-1] / "predict.json"
    else:
        predict_file = result_dirs[-1] / f"step_{args.step - 1}" / "test_predicts.json"
    predicts = json.loads(predict_file.read_text(encoding="utf-8"))
    back = {SAMPLE_DATASETS[n]["alias"]: n for n in names}
    for p in predicts:
        p["dataset"] = back.get(p["dataset"], p["dataset"])
    (out / "predict.json").write_text(json.dumps(predicts, indent=2, ensure_ascii=False), encoding="utf-8")

    info = {
        "upstream": str(upstream),
        "system": args.system,
        "regime": args.regime,
        "set_name": args.set_name,
        "dataset_type": dataset_type,
        "limit": args.limit,
        "threads": args.threads,
        "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED"),
        "adaptations": adaptations,
        "memory_system_config_from": config_rel,
        "memory_system_config": config,
        "datasets": data_report,
        "dialog_key": None if args.system == "wo_memory" else dialog_key,
        "train_rows_skipped_for_missing_dialog_column": skipped_train,
        "shimmed_modules": heavy_import_shims.used(),
        "stand_ins": sorted(n for n, m in sys.modules.items() if getattr(m, "__stand_in__", False)),
        "mem0_package": getattr(sys.modules.get("mem0"), "__file__", None),
        "upstream_predict_json": str(predict_file),
        "predictions": len(predicts),
    }
    (out / "run_info.json").write_text(json.dumps(info, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"[run_upstream] {len(predicts)} predictions -> {out / 'predict.json'}; details in {out / 'run_info.json'}")


if __name__ == "__main__":
    main()
