# Upstream's SFT data selection (src/action_feedback/train_sft_lora.py's load_and_filter_sft_data
# and extract_first_round_pairs), run by its own code on rows given as JSON on stdin:
# {"action": "like"|"copy", "datasets": [{"name": ..., "train": [upstream's row dicts]}]}.
# Prints {"published": the error the script as published ends with (or null),
#         "pairs": [[test_idx, system_prompt, instruction, output], ...]} where the pairs are
# those of its selection with each selected row's implicit feedback given back (the script
# drops it between the two steps). Run through mb_core::test_data::UpstreamPython, whose
# prelude names `root` (the checkout) and installs the heavy-import shims.
import contextlib, importlib.util, json, sys, types
source = json.load(sys.stdin)
sys.path.insert(0, root)
spec = importlib.util.spec_from_file_location(
    "train_sft_lora", f"{root}/src/action_feedback/train_sft_lora.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)

class Split:
    def __init__(self, rows): self.rows = rows
    def to_list(self): return self.rows
    def __len__(self): return len(self.rows)

class Set:
    def __init__(self, d):
        self.dataset_name = d["name"]
        self.dataset = {"train": Split(d["train"]), "test": Split([])}

sets = [Set(d) for d in source["datasets"]]
module.load_memory_bench = lambda kind, name, *rest, **kw: sets
action = source["action"]
args = types.SimpleNamespace(
    dataset_type="domain", set_name="Sample", action_feedback=action,
    require_like=action == "like", require_copy=action == "copy")
# As published: the selection drops each row's feedback before the pairs are extracted.
# (Upstream prints its statistics: sent to stderr, away from the JSON.)
with contextlib.redirect_stdout(sys.stderr):
    try:
        module.load_and_filter_sft_data(args)
        published = None
    except ValueError as e:
        published = str(e)
# With the dropped feedback given back to each selected row (by its dialog object).
feedback = {id(row["dialog"]): row["implicit_feedback"]
            for d in source["datasets"] for row in d["train"] if "dialog" in row}
extract = module.extract_first_round_pairs
def restored(dialogs, config):
    for entry in dialogs:
        entry["implicit_feedback"] = feedback[id(entry["dialog"])]
    return extract(dialogs, config)
module.extract_first_round_pairs = restored
with contextlib.redirect_stdout(sys.stderr):
    pairs = module.load_and_filter_sft_data(args)
print(json.dumps({"published": published, "pairs": [
    [p["test_idx"], p["system_prompt"], p["instruction"], p["output"]] for p in pairs]}))
