//! The critic's, the merged judges' and IdeaBench's rating and ranking requests against
//! upstream's own code, run by Python (the differential venv, heavy imports shimmed) on
//! instances whose model records what it is sent.

use crate::python::UpstreamPython;
use mb_upstream::{ideabench_fields, jre_l_fields, judge_fields, MergedOf};
use serde_json::{json, Value};

/// Runs each request of `case` through upstream's code and prints what its model was sent.
const MERGED_PY: &str = r#"
import sys, json, io, contextlib
sys.path.insert(0, root)
import importlib
with contextlib.redirect_stdout(io.StringIO()):
    from src.dataset.writingbench.critic import CriticAgent
    from src.dataset.writingbench.evaluate_benchmark import EvalAgent
    from src.dataset.writingbench.prompt import evaluate_system
    from src.dataset.JuDGE import JuDGE_Dataset
    from src.dataset.IdeaBench import IdeaBench_Dataset
    JreL = importlib.import_module("src.dataset.JRE-L").JRE_L_Dataset
case = json.loads(sys.stdin.read())
sent = {}
class Model:
    def __init__(self, name, reply):
        self.name, self.reply = name, reply
    def generate_response(self, messages, **kwargs):
        sent.setdefault(self.name, []).append({"messages": messages, "kwargs": kwargs})
        return self.reply
critic = object.__new__(CriticAgent)
critic.system_prompt = evaluate_system
critic.model = Model("critic", '{"score": 7, "reason": "fine"}')
c = case["critic"]
EvalAgent(critic).generate_score(c["response"], c["query"], c["criteria"])
def dataset(cls, name, reply):
    instance = object.__new__(cls)
    instance.openai_model = Model(name, reply)
    return instance
j = case["jrel"]
dataset(JreL, "jrel", "8").evaluate_single_only_one_metric(j["input"], {"pr-abstract": j["reference"]}, j["output"], j["scores"])
j = case["judge"]
dataset(JuDGE_Dataset, "judge", "6").evaluate_single_only_one_metric(j["input"], {"golden_answer": j["reference"]}, j["output"], j["scores"])
i = case["idea"]
idea = dataset(IdeaBench_Dataset, "idea", "5")
idea.evaluate_single_only_one_metric(i["input"], {"abstract": i["reference"]}, "unused", i["scores"])
ranker = dataset(IdeaBench_Dataset, "ranking", "1. **Hypothesis B**: x\n2. **Hypothesis A**: y")
ranked = ranker._get_llm_ranking(i["hypotheses"], i["reference"], "novelty")
rater = dataset(IdeaBench_Dataset, "rating", '```json\n{"rating": 6, "explanation": "close"}\n```')
rating = rater._get_llm_rating(i["hypotheses"][0], i["reference"])
print(json.dumps({"sent": sent, "ranked": ranked["r_target"], "rating": rating}))
"#;

fn contents(messages: &[mb_core::Message]) -> Value {
    serde_json::to_value(messages).unwrap()
}

#[test]
fn critic_merged_judges_and_idea_requests_are_what_upstreams_code_sends() {
    let Some(side) = UpstreamPython::find() else {
        return;
    };
    let upstream = &side.upstream;
    // Criteria as json.loads gives them; keys already in sorted order, as serde_json holds
    // them (docs/parity.md: WritingBench's criteria keys).
    let criteria = json!([{"criteria_description": "Is it \"clear\"? {x}", "name": "Clarity"}]);
    let hypotheses = ["Idea one {x}", "Idea two", "NULL"];
    let (rouge, cli, fkgl, dcrs) = (0.123_45_f64, 11.0_f64, 9.876_54_f64, 7.5_f64);
    let case = json!({
        "critic": {"query": "Write a brief.\n", "response": "A brief {y}.", "criteria": criteria},
        "jrel": {"input": "Paper {x}", "output": "Article", "reference": "Abstract",
                 "scores": {"Rouge-L": rouge, "BERTScore-F1": 0.5, "CLI": cli, "FKGL": fkgl, "DCRS": dcrs}},
        "judge": {"input": "Facts", "output": "Judgment", "reference": "Gold",
                  "scores": {"time_score": 0.25, "crime_recall": 1.0, "amount_score": null}},
        "idea": {"input": "Abstracts", "reference": "The paper's idea", "hypotheses": hypotheses,
                 "scores": {"best_hypothesis_by_bertf1": "Idea one {x}", "bert_score": 0.5,
                            "llm_rating_score": 6, "llm_novelty_ranking_score": 1.0 / 3.0,
                            "llm_feasibility_ranking_score": 0.0}},
    });
    let theirs: Value = side.run(MERGED_PY, &case.to_string());
    let sent = &theirs["sent"];

    let critic = upstream
        .critic(
            &mb_upstream::python::repr_json(&criteria),
            "Write a brief.\n",
            "A brief {y}.",
        )
        .unwrap();
    assert_eq!(sent["critic"][0]["messages"], contents(&critic));
    assert_eq!(
        sent["critic"][0]["kwargs"],
        json!({"max_tokens": 2048, "temperature": 1.0, "top_p": 0.95})
    );

    // BERTScore is not computed here: the one field that differs, by design (docs/parity.md).
    let mut fields = jre_l_fields(rouge, Some(0.5), cli, Some(fkgl), Some(dcrs));
    let jrel = upstream
        .merged_judge(MergedOf::JreL, "Paper {x}", "Article", "Abstract", &fields)
        .unwrap();
    assert_eq!(sent["jrel"][0]["messages"], contents(&jrel));
    fields[1].1 = "None".into();
    let without_bert = upstream
        .merged_judge(MergedOf::JreL, "Paper {x}", "Article", "Abstract", &fields)
        .unwrap();
    assert!(without_bert[1].content.contains("Score: None\n"));

    let present = ["time_score", "crime_recall", "amount_score"];
    let judge = upstream
        .merged_judge(
            MergedOf::Judge,
            "Facts",
            "Judgment",
            "Gold",
            &judge_fields(&present, Some(0.25)),
        )
        .unwrap();
    assert_eq!(sent["judge"][0]["messages"], contents(&judge));

    let idea = upstream
        .merged_judge(
            MergedOf::IdeaBench,
            "Abstracts",
            "Idea one {x}",
            "The paper's idea",
            &ideabench_fields(Some(0.5), &json!(6), 1.0 / 3.0, 0.0),
        )
        .unwrap();
    assert_eq!(sent["idea"][0]["messages"], contents(&idea));

    let ranking = upstream
        .idea_ranking("novelty", "The paper's idea", &hypotheses)
        .unwrap();
    assert_eq!(sent["ranking"][0]["messages"], contents(&ranking));
    assert_eq!(theirs["ranked"], 2);
    let rating = upstream
        .idea_rating("Idea one {x}", "The paper's idea")
        .unwrap();
    assert_eq!(sent["rating"][0]["messages"], contents(&rating));
    assert_eq!(theirs["rating"]["rating"], 6);
    assert_eq!(upstream.idea_separator().unwrap().len(), 20);
}
