//! Opening the real upstream checkout, and copies of it with one template changed.

use std::path::{Path, PathBuf};

use mb_core::Lang;
use mb_upstream::{AnswerOf, Prompt, Upstream, UpstreamError};

/// The upstream checkout beside the project, or `None` (after a `skipped:` line, or a failure
/// under CI) when it is absent.
fn checkout() -> Option<PathBuf> {
    mb_core::test_data::upstream_checkout()
}

#[test]
fn every_catalogued_template_is_found_and_matches_the_known_version() {
    let Some(dir) = checkout() else { return };
    let upstream = match Upstream::open(&dir) {
        Ok(upstream) => upstream,
        Err(e) => panic!("{e}"),
    };
    let answer = upstream
        .render(
            Prompt::AnswerBm25En,
            &[("context", "C1\nC2"), ("question", "Q?")],
        )
        .unwrap();
    assert!(
        answer.starts_with("Context:\nC1\nC2\n\nUser: \nQ?\n\n"),
        "{answer}"
    );
    assert!(upstream.provenance().contains("9a33aae9d0c1"));
}

/// Copies the files the catalog reads into a new folder.
fn copy_checkout(from: &Path, to: &Path) {
    for file in [
        "memorybench.py",
        "src/agent/bm25.py",
        "src/agent/bm25_dialog.py",
        "src/agent/embedder.py",
        "src/agent/embedder_dialog.py",
        "src/agent/a_mem.py",
        "src/agent/mem0.py",
        "src/solver/base.py",
        "src/test_feedback.py",
        "src/agent/raptor.py",
        "baselines/raptor/raptor/SummarizationModels.py",
        "baselines/mem0/mem0/configs/prompts.py",
        "src/dataset/Locomo.py",
        "src/dataset/NFCats.py",
        "baselines/A_mem/agentic_memory/memory_system.py",
        "baselines/A_mem/agentic_memory/llm_controller.py",
        "baselines/MemoryOS/memoryos_chromadb/memoryos.py",
        "baselines/MemoryOS/memoryos_chromadb/prompts.py",
        "baselines/MemoryOS/memoryos_chromadb/utils.py",
        "src/agent/feedback.py",
        "src/dataset/DialSim.py",
        "src/dataset/HelloBench.py",
        "src/dataset/writingbench/prompt.py",
        "src/dataset/JRE-L.py",
        "src/dataset/JuDGE.py",
        "src/dataset/IdeaBench.py",
        "src/dataset/LimitGen.py",
        "src/agent/user_simulator.py",
        "src/agent/evaluators/lexeval_evaluator.py",
        "src/agent/evaluators/writingbench_evaluator.py",
        "src/agent/evaluators/hellobench_evaluator.py",
        "src/agent/evaluators/ideabench_evaluator.py",
        "src/agent/evaluators/jrel_evaluator.py",
        "src/agent/evaluators/limitgen_evaluator.py",
        "src/agent/evaluators/judge_evaluator.py",
        "src/agent/evaluators/writingprompts_evaluator.py",
        "src/agent/evaluators/nfcats_evaluator.py",
    ] {
        let target = to.join(file);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(from.join(file), target).unwrap();
    }
}

#[test]
fn a_change_inside_a_commented_out_loader_is_reported_too() {
    let Some(dir) = checkout() else { return };
    let copy = tempfile::tempdir().unwrap();
    copy_checkout(&dir, copy.path());
    let file = copy.path().join("src/dataset/Locomo.py");
    let text = std::fs::read_to_string(&file).unwrap();
    let changed = text.replacen("an approximate date.", "an approximate day.", 1);
    assert_ne!(text, changed);
    std::fs::write(&file, changed).unwrap();
    match Upstream::open(copy.path()) {
        Err(UpstreamError::Changed(mismatches)) => {
            assert_eq!(mismatches.len(), 1, "{mismatches:?}");
            assert_eq!(mismatches[0].prompt, "locomo.dated_suffix");
            assert_eq!(mismatches[0].scope, "_load_data");
        }
        other => panic!("expected a reported change, got {other:?}"),
    }
}

#[test]
fn a_changed_template_is_reported_by_file_and_function_and_not_used() {
    let Some(dir) = checkout() else { return };
    let copy = tempfile::tempdir().unwrap();
    copy_checkout(&dir, copy.path());
    let file = copy.path().join("src/agent/mem0.py");
    let text = std::fs::read_to_string(&file).unwrap();
    let changed = text.replacen("User input: ", "User input:  ", 1);
    assert_ne!(text, changed);
    std::fs::write(&file, changed).unwrap();
    match Upstream::open(copy.path()) {
        Err(UpstreamError::Changed(mismatches)) => {
            assert_eq!(mismatches.len(), 1, "{mismatches:?}");
            assert_eq!(mismatches[0].file, "src/agent/mem0.py");
            assert_eq!(mismatches[0].scope, "Mem0Agent.generate_response");
        }
        other => panic!("expected a reported change, got {other:?}"),
    }
}

#[test]
fn a_criterion_added_to_an_evaluators_list_is_reported() {
    let Some(dir) = checkout() else { return };
    let copy = tempfile::tempdir().unwrap();
    copy_checkout(&dir, copy.path());
    let file = copy
        .path()
        .join("src/agent/evaluators/hellobench_evaluator.py");
    let text = std::fs::read_to_string(&file).unwrap();
    // One more item at the end of the list of criteria.
    let list = text.find("evaluation_criteria = [").unwrap();
    let end = list + text[list..].find(']').unwrap();
    let changed = format!("{}, \"More\"{}", &text[..end], &text[end..]);
    std::fs::write(&file, changed).unwrap();
    match Upstream::open(copy.path()) {
        Err(UpstreamError::Changed(mismatches)) => {
            assert_eq!(mismatches.len(), 1, "{mismatches:?}");
            assert_eq!(mismatches[0].prompt, "simulator.hellobench.criterion.2");
            assert!(mismatches[0].problem.contains("more than 3 items"));
        }
        other => panic!("expected a reported change, got {other:?}"),
    }
}

#[test]
fn a_folder_that_is_no_checkout_says_so() {
    let empty = tempfile::tempdir().unwrap();
    let error = Upstream::open(empty.path()).unwrap_err();
    assert!(
        matches!(error, UpstreamError::NotACheckout { .. }),
        "{error}"
    );
}

#[test]
fn every_answer_prompt_takes_the_context_and_the_question() {
    let Some(dir) = checkout() else { return };
    let upstream = Upstream::open(&dir).unwrap();
    let systems = [
        AnswerOf::Bm25,
        AnswerOf::Bm25Dialog,
        AnswerOf::Embedder,
        AnswerOf::EmbedderDialog,
        AnswerOf::AMem,
        AnswerOf::Mem0,
        AnswerOf::LongContext,
    ];
    for of in systems {
        for lang in [Lang::En, Lang::Zh] {
            let text = upstream
                .answer(of, lang, "CTX-1\nCTX-2", "QUESTION?")
                .unwrap();
            let context = text.find("CTX-1\nCTX-2").unwrap();
            let question = text.find("QUESTION?").unwrap();
            assert!(context < question, "{of:?} {lang:?}: {text}");
            assert!(text.len() > "CTX-1\nCTX-2QUESTION?".len() + 20);
        }
    }
}

/// What upstream's vendored Mem0 module itself writes, run by Python: the fact-extraction
/// prompt with the date it put in, and update prompts with no stored memory and with one.
const MEM0_PROMPTS_PY: &str = r#"
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("prompts", sys.argv[1])
prompts = importlib.util.module_from_spec(spec)
spec.loader.exec_module(prompts)
from datetime import datetime
print(json.dumps({
    "today": datetime.now().strftime("%Y-%m-%d"),
    "facts": prompts.FACT_RETRIEVAL_PROMPT,
    "empty": prompts.get_update_memory_messages([], ["Likes tea", "It's \"big\""]),
    "stored": prompts.get_update_memory_messages(
        [{"id": "0", "text": "Lives in\nOslo \\ caf\u00e9"}, {"id": "1", "text": "x"}],
        ["Moved to Bergen"]),
}))
"#;

#[test]
fn mem0_prompts_are_what_upstreams_own_module_writes() {
    let Some(dir) = checkout() else { return };
    let upstream = Upstream::open(&dir).unwrap();
    let out = match std::process::Command::new("python3")
        .args(["-c", MEM0_PROMPTS_PY])
        .arg(dir.join("baselines/mem0/mem0/configs/prompts.py"))
        .output()
    {
        Ok(out) if out.status.success() => out,
        Ok(out) => panic!("{}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => return mb_core::test_data::skip(&format!("python3 cannot run: {e}")),
    };
    let python: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let today = python["today"].as_str().unwrap();
    assert_eq!(
        upstream.mem0_fact_extraction(today).unwrap(),
        python["facts"].as_str().unwrap()
    );
    assert_eq!(
        upstream
            .mem0_update(&[], &["Likes tea", "It's \"big\""])
            .unwrap(),
        python["empty"].as_str().unwrap()
    );
    assert_eq!(
        upstream
            .mem0_update(
                &[("0", "Lives in\nOslo \\ caf\u{e9}"), ("1", "x")],
                &["Moved to Bergen"]
            )
            .unwrap(),
        python["stored"].as_str().unwrap()
    );
}

/// Module-level templates evaluated by Python itself (`ast.literal_eval` of each assignment,
/// then `str.format` as upstream fills them), without importing upstream's modules.
const MODULE_TEMPLATES_PY: &str = r#"
import ast, json, sys
def constant(path, name):
    for node in ast.parse(open(path, encoding="utf-8").read()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
def analyze_prompt(path):
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.FunctionDef) and node.name == "analyze_content":
            for inner in ast.walk(node):
                if isinstance(inner, ast.Assign) and getattr(inner.targets[0], "id", None) == "prompt":
                    return ast.literal_eval(inner.value.left)
root = sys.argv[1]
locomo = root + "/src/dataset/Locomo.py"
nfcats = root + "/src/dataset/NFCats.py"
print(json.dumps({
    "preamble": constant(locomo, "CONV_START_PROMPT").format("Nadia", "Ewan"),
    "question": constant(locomo, "QA_PROMPT").format("Where {is} it?"),
    "adversarial": constant(locomo, "QA_PROMPT_CAT_5").format("Which one?"),
    "nfcats": constant(nfcats, "prompt_template").format("How do I {x}?", "Like this.\n"),
    "a_mem": analyze_prompt(root + "/baselines/A_mem/agentic_memory/memory_system.py") + "A note.",
}))
"#;

#[test]
fn module_templates_fill_as_pythons_str_format_fills_them() {
    let Some(dir) = checkout() else { return };
    let upstream = Upstream::open(&dir).unwrap();
    let out = match std::process::Command::new("python3")
        .args(["-c", MODULE_TEMPLATES_PY])
        .arg(&dir)
        .output()
    {
        Ok(out) if out.status.success() => out,
        Ok(out) => panic!("{}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => return mb_core::test_data::skip(&format!("python3 cannot run: {e}")),
    };
    let python: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let render = |prompt, values: &[(&str, &str)]| upstream.render(prompt, values).unwrap();
    assert_eq!(
        render(Prompt::LocomoPreamble, &[("0", "Nadia"), ("1", "Ewan")]),
        python["preamble"].as_str().unwrap()
    );
    assert_eq!(
        render(Prompt::LocomoQuestion, &[("0", "Where {is} it?")]),
        python["question"].as_str().unwrap()
    );
    assert_eq!(
        render(Prompt::LocomoAdversarialQuestion, &[("0", "Which one?")]),
        python["adversarial"].as_str().unwrap()
    );
    let [system, prompt] = <[_; 2]>::try_from(
        upstream
            .nfcats_judge("How do I {x}?", "Like this.\n")
            .unwrap(),
    )
    .unwrap()
    .map(|message| message.content);
    assert!(!system.is_empty());
    assert_eq!(prompt, python["nfcats"].as_str().unwrap());
    let [system, prompt] = <[_; 2]>::try_from(upstream.amem_analyze_note("A note.").unwrap())
        .unwrap()
        .map(|message| message.content);
    assert!(!system.is_empty());
    assert_eq!(prompt, python["a_mem"].as_str().unwrap());
}

#[test]
fn judge_lexicon_is_read_and_checked() {
    let Some(dir) = checkout() else { return };
    let upstream = Upstream::open(&dir).unwrap();
    let lexicon = upstream.judge_lexicon().unwrap();
    assert!(lexicon.charges.len() > 400, "{}", lexicon.charges.len());
    assert!(lexicon.charges.iter().all(|name| name.ends_with('罪')));
    assert_eq!(lexicon.keywords.len(), 62);
    assert_eq!(lexicon.rare_keywords.len(), 67);
    // A key written twice keeps its first place.
    let first = lexicon.keywords.iter().position(|(k, _)| k == "安全事故");
    assert!(first.is_some_and(|at| at < 25));
    // Asked again, the same lexicon (read once).
    assert!(std::ptr::eq(lexicon, upstream.judge_lexicon().unwrap()));
}
