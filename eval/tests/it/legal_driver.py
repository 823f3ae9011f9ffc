import importlib.util, io, json, os, struct, sys, types, contextlib
checkout = sys.argv[1]
# BERTScore is not computed: its package is not installed, a stand-in module answers the import.
shim = types.ModuleType("bert_score")
def _no_bert(*args, **kwargs):
    raise RuntimeError("BERTScore is not computed")
shim.score = _no_bert
sys.modules["bert_score"] = shim
import nltk, nltk.corpus
if len(sys.argv) > 2:
    # NLTK's data folder holding WordNet 3.0 (common.rs, nltk_wordnet_home).
    nltk.data.path.insert(0, sys.argv[2])
else:
    # No WordNet data: a reader with no synsets, as the Rust side has then.
    object.__setattr__(nltk.corpus.wordnet, "synsets", lambda word, *a, **k: [])
folder = os.path.join(checkout, "src", "dataset", "judge")
spec = importlib.util.spec_from_file_location(
    "judge", os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])
package = importlib.util.module_from_spec(spec)
sys.modules["judge"] = package
spec.loader.exec_module(package)
from judge.calc_score import Evaluator
def bits(x):
    return None if x is None else struct.unpack("<Q", struct.pack("<d", float(x)))[0]
pairs = json.load(sys.stdin)
evaluator = Evaluator()
out = []
for generated, expected in pairs:
    try:
        with contextlib.redirect_stdout(sys.stderr):
            rm, jm, er, ej, gr, gj = evaluator.calc_meteor(generated, expected)
            m = evaluator.calc_metrics(generated, expected)
        row = {
            "reasoning_meteor": bits(rm), "judge_meteor": bits(jm),
            "exp_reasoning": er, "exp_judge": ej, "gen_reasoning": gr, "gen_judge": gj,
        }
        for key in ["crime_recall", "crime_precision", "time_score", "amount_score",
                    "penalcode_index_recall", "penalcode_index_precision"]:
            row[key] = bits(m[key])
        for key in ["exp_crime", "gen_crime", "exp_penalcode_index", "gen_penalcode_index"]:
            row[key] = sorted(m[key])
        for key in ["exp_time", "gen_time", "exp_amount", "gen_amount"]:
            row[key] = str(m[key])
        out.append(row)
    except Exception as error:
        out.append({"error": f"{type(error).__name__}: {error}"})
print(json.dumps(out, ensure_ascii=False))
