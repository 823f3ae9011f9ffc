//! The rule-based feedback texts against upstream's own `FeedbackAgent`, run by Python (the
//! differential venv) with a dataset faked to score the answer right or wrong.

use crate::python::UpstreamPython;
use mb_upstream::RuleFeedbackOf;

/// Prints what upstream's feedback agent says to a right and a wrong LoCoMo and DialSim answer.
const FEEDBACK_PY: &str = r#"
import sys, json, io, contextlib, types
sys.path.insert(0, root)
with contextlib.redirect_stdout(io.StringIO()):
    from src.agent.feedback import FeedbackAgent
agent = object.__new__(FeedbackAgent)
def dataset(result):
    return types.SimpleNamespace(evaluate_single=lambda user_prompt, info, llm_response: result)
out = {}
for name, method, right, wrong in [
    ("locomo", agent._evaluate_locomo_with_instance, {"f1": 0.9}, {"f1": 0.1}),
    ("dialsim", agent._evaluate_dialsim_with_instance, {"accuracy": True}, {"accuracy": False}),
]:
    out[name] = [method(dataset(right), "q", "a", {"info": {}})[1], method(dataset(wrong), "q", "a", {"info": {}})[1]]
print(json.dumps(out))
"#;

#[test]
fn rule_feedback_is_what_upstreams_feedback_agent_says() {
    let Some(side) = UpstreamPython::find() else {
        return;
    };
    let upstream = &side.upstream;
    let theirs: serde_json::Value = side.run(FEEDBACK_PY, "");
    for (of, name) in [
        (RuleFeedbackOf::Locomo, "locomo"),
        (RuleFeedbackOf::DialSim, "dialsim"),
    ] {
        for (correct, index) in [(true, 0), (false, 1)] {
            assert_eq!(
                upstream.rule_feedback(of, correct).unwrap(),
                theirs[name][index].as_str().unwrap(),
                "{name} {correct}"
            );
        }
    }
}
