//! The report compares only comparable runs, and its page is navigable: drawn from run
//! directories as the regimes write them (a `run_config.json` with the keys `run_dir_in`
//! records, a summary, the predictions), a trial on four cases with another model stands in a
//! section of its own instead of replacing a full run; runs of one group share their charts;
//! the contents link every section; learning curves sit in their run's section.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{page, report_body, runs};

/// A run to write: off-policy, offline, all ten cases of the sample, unless said otherwise.
struct Run<'a> {
    regime: &'a str,
    system: &'a str,
    /// The start time in its directory's name (`start_at_…`).
    started: &'a str,
    llm: &'a str,
    limit: Option<u64>,
    cases: usize,
    score: f64,
    memory_embedder: Option<&'a str>,
    data: Option<&'a str>,
    /// The steps of a stepwise or on-policy run, each with its own summary and predictions.
    steps: &'a [&'a str],
}

impl<'a> Run<'a> {
    fn new(system: &'a str, started: &'a str, score: f64) -> Self {
        Run {
            regime: "off-policy",
            system,
            started,
            llm: "offline",
            limit: None,
            cases: 10,
            score,
            memory_embedder: None,
            data: None,
            steps: &[],
        }
    }
}

fn write(path: PathBuf, value: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// Writes `run` under `root` as the regime does; returns its run directory.
fn write_run(root: &Path, run: &Run) -> PathBuf {
    let dir = root.join(format!(
        "{}/results/domain/Sample/{}/start_at_{}",
        run.regime, run.system, run.started
    ));
    std::fs::create_dir_all(&dir).unwrap();
    write(
        dir.join("run_config.json"),
        &json!({
            "regime": format!("{}/results", run.regime),
            "dataset_type": "domain",
            "set_name": "Sample",
            "memory_system": run.system,
            "memory_system_config": "built-in configs/memory/bm25.toml",
            "memory_settings": {"retrieve_k": 5},
            "data": run.data,
            "llm": run.llm,
            "output_handling": "upstream",
            "reasks": 2,
            "embedder": null,
            "memory_embedder": run.memory_embedder,
            "store": "store",
            "output_dir": "runs",
            "threads": 4,
            "retrieve_k": null,
            "limit": run.limit,
            "date": "2026-12-07",
            "numpy_scores": "as-zero",
            "prompts": mb_upstream::PARAPHRASED,
        }),
    );
    let predictions: Vec<Value> = (0..run.cases)
        .map(|i| {
            json!({
                "test_idx": i,
                "messages": [{"role": "user", "content": format!("question {i}")}],
                "response": format!("answer {i}"),
                "dataset": if i % 2 == 0 { "Sample-Locomo" } else { "Sample-Stories" },
            })
        })
        .collect();
    let details: Vec<Value> = (0..run.cases).map(|i| json!({"test_idx": i})).collect();
    let summary = |score: f64| {
        json!({
            "summary": {"average": score},
            "prompts": mb_upstream::PARAPHRASED,
            "timing": {
                "cases": run.cases,
                "memory_processing_seconds_per_case": 0.0004,
                "prediction_seconds_per_case": 0.0029,
                "llm_calls_per_case": 1.0,
                "tokens_per_case": 0.0,
                "fallbacks": {"memory": 0.0, "prediction": 0.0, "by_operation": {}},
            },
        })
    };
    if run.steps.is_empty() {
        write(dir.join("summary.json"), &summary(run.score));
        write(dir.join("predict.json"), &json!(predictions));
        write(dir.join("evaluate_details.json"), &json!(details));
    }
    for (i, step) in run.steps.iter().enumerate() {
        let step_dir = dir.join(step);
        std::fs::create_dir_all(&step_dir).unwrap();
        write(
            step_dir.join("summary.json"),
            &summary(run.score + 0.01 * i as f64),
        );
        write(step_dir.join("test_predicts.json"), &json!(predictions));
        write(step_dir.join("evaluate_details.json"), &json!(details));
    }
    dir
}

/// The sections of a report body: (id, the section's HTML).
fn sections(body: &str) -> Vec<(String, &str)> {
    body.split("<section id=\"")
        .skip(1)
        .map(|part| {
            let id = &part[..part.find('"').unwrap()];
            (id.to_string(), &part[..part.find("</section>").unwrap()])
        })
        .collect()
}

/// The one section whose heading holds `heading`.
fn section<'a>(sections: &'a [(String, &'a str)], heading: &str) -> &'a str {
    let found: Vec<&str> = sections
        .iter()
        .filter(|(_, html)| html.contains(&format!("<h2>{heading}</h2>")))
        .map(|(_, html)| *html)
        .collect();
    assert_eq!(found.len(), 1, "{heading}: {sections:?}");
    found[0]
}

/// Whether a picture has a label reading `text` alone.
fn labelled(svg: &str, text: &str) -> bool {
    svg.contains(&format!(">\n{text}\n</text>"))
}

/// The score chart of a section: its first picture.
fn score_chart(section: &str) -> &str {
    let start = section.find("<svg").unwrap();
    &section[start..start + section[start..].find("</svg>").unwrap()]
}

#[test]
fn a_trial_on_another_model_stands_apart_instead_of_replacing_a_full_run() {
    let root = tempfile::tempdir().unwrap();
    // A full offline run, then a newer one of the same system (it replaces the first), then
    // a newer still trial: `--llm local --limit 2`, two cases of each of the two test sets.
    write_run(
        root.path(),
        &Run::new("bm25_message", "2026-12-01-10-00-00", 0.2718),
    );
    write_run(
        root.path(),
        &Run::new("bm25_message", "2026-12-02-10-00-00", 0.3141),
    );
    write_run(
        root.path(),
        &Run {
            llm: "local",
            limit: Some(2),
            cases: 4,
            ..Run::new("bm25_message", "2026-12-03-10-00-00", 0.9265)
        },
    );
    let body = report_body(&[root.path().to_path_buf()]).unwrap().unwrap();
    let all = sections(&body);
    assert_eq!(all.len(), 2, "{body}");
    let full = section(&all, "off-policy — domain/Sample — llm offline, 10 cases");
    let trial = section(&all, "off-policy — domain/Sample — llm local, 4 cases");
    // Each shows its own run and nothing of the other's, in its table and its charts.
    assert!(full.contains("<td>0.3141</td>") && score_chart(full).contains("0.3141"));
    assert!(
        !full.contains("0.9265") && !full.contains("0.2718"),
        "{full}"
    );
    assert!(trial.contains("<td>0.9265</td>") && score_chart(trial).contains("0.9265"));
    assert!(!trial.contains("0.3141"), "{trial}");
    // The line below the heading names the rest of what the runs share.
    assert!(full.contains("<p class=\"key\">limit none · retrieve_k system default · prompts paraphrased (not comparable with the paper) · data built-in</p>"), "{full}");
    assert!(trial.contains("limit 2 ·"), "{trial}");
    // The page holds no inline style: a page embedding the body may forbid it.
    assert!(!body.contains("style="), "{body}");
    assert!(page(&body).starts_with("<!doctype html>"));
}

#[test]
fn systems_of_one_group_share_a_chart_whatever_they_embed_with() {
    let root = tempfile::tempdir().unwrap();
    write_run(
        root.path(),
        &Run::new("bm25_message", "2026-12-01-10-00-00", 0.31),
    );
    write_run(
        root.path(),
        &Run::new("bm25_dialog", "2026-12-01-10-00-01", 0.29),
    );
    let embedding = |system, embedder| Run {
        memory_embedder: Some(embedder),
        ..Run::new(system, "2026-12-01-10-00-02", 0.4)
    };
    write_run(root.path(), &embedding("embedder_message", "onnx"));
    write_run(root.path(), &embedding("embedder_dialog", "hashing"));
    let body = report_body(&[root.path().to_path_buf()]).unwrap().unwrap();
    let all = sections(&body);
    // BM25 has no embedder: it stands beside the systems of each embedder, which never stand
    // beside each other.
    assert_eq!(all.len(), 2, "{body}");
    for (embedder, system, other) in [
        ("onnx", "embedder_message", "embedder_dialog"),
        ("hashing", "embedder_dialog", "embedder_message"),
    ] {
        let (_, html) = all
            .iter()
            .find(|(_, html)| html.contains(&format!("memory embedder {embedder}</p>")))
            .unwrap();
        let chart = score_chart(html);
        for name in ["bm25_message", "bm25_dialog", system] {
            assert!(labelled(chart, name), "{name}: {chart}");
        }
        assert!(!html.contains(other), "{html}");
    }
}

#[test]
fn the_contents_link_every_section_and_every_section_links_back() {
    let root = tempfile::tempdir().unwrap();
    write_run(
        root.path(),
        &Run::new("bm25_message", "2026-12-01-10-00-00", 0.3),
    );
    write_run(
        root.path(),
        &Run {
            llm: "local",
            limit: Some(2),
            cases: 4,
            ..Run::new("bm25_message", "2026-12-02-10-00-00", 0.9)
        },
    );
    write_run(
        root.path(),
        &Run {
            regime: "step_off-policy",
            steps: &["begin", "[0,10)", "[10,16)"],
            ..Run::new("bm25_dialog", "2026-12-02-10-00-00", 0.2)
        },
    );
    let body = report_body(&[root.path().to_path_buf()]).unwrap().unwrap();
    let nav = &body[..body.find("</nav>").unwrap()];
    assert!(nav.starts_with("<nav id=\"report-top\""), "{nav}");
    let links: Vec<&str> = nav
        .split("href=\"#")
        .skip(1)
        .map(|l| &l[..l.find('"').unwrap()])
        .collect();
    let all = sections(&body);
    let ids: Vec<&str> = all.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(links, ids);
    assert_eq!(ids.len(), 3);
    for (id, html) in &all {
        assert!(
            id.starts_with("g-") && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "{id}"
        );
        assert!(
            html.contains("href=\"#report-top\">back to top</a>"),
            "{id}"
        );
    }
    // The same runs, the same ids: a link to a section keeps working.
    assert_eq!(
        body,
        report_body(&[root.path().to_path_buf()]).unwrap().unwrap()
    );
}

#[test]
fn learning_curves_sit_in_the_section_of_their_runs() {
    let root = tempfile::tempdir().unwrap();
    let steps = ["begin", "[0,10)", "[10,16)"];
    write_run(
        root.path(),
        &Run::new("bm25_message", "2026-12-01-10-00-00", 0.3),
    );
    for system in ["bm25_message", "bm25_dialog"] {
        write_run(
            root.path(),
            &Run {
                regime: "step_off-policy",
                steps: &steps,
                ..Run::new(system, "2026-12-02-10-00-00", 0.2)
            },
        );
    }
    let trial = write_run(
        root.path(),
        &Run {
            regime: "step_off-policy",
            steps: &steps,
            llm: "local",
            limit: Some(2),
            cases: 4,
            ..Run::new("bm25_message", "2026-12-03-10-00-00", 0.7)
        },
    );
    let body = report_body(&[root.path().to_path_buf()]).unwrap().unwrap();
    let all = sections(&body);
    assert_eq!(all.len(), 3, "{body}");
    let off_policy = section(&all, "off-policy — domain/Sample — llm offline, 10 cases");
    assert!(!off_policy.contains("score after each step"));
    let full = section(
        &all,
        "step_off-policy — domain/Sample — llm offline, 10 cases",
    );
    let local = section(&all, "step_off-policy — domain/Sample — llm local, 4 cases");
    for (html, systems) in [
        (full, &["bm25_dialog", "bm25_message"][..]),
        (local, &["bm25_message"][..]),
    ] {
        assert_eq!(html.matches("score after each step").count(), 1, "{html}");
        // The curve comes first, its steps in order, then each step's charts.
        let curve = &html[html.find("score after each step").unwrap()..];
        let curve = &curve[..curve.find("</svg>").unwrap()];
        let at = |label: &str| curve.find(label).unwrap_or_else(|| panic!("{label}"));
        assert!(at("begin") < at("[0,10)") && at("[0,10)") < at("[10,16)"));
        for system in systems {
            assert!(labelled(curve, system), "{system}: {curve}");
        }
        assert_eq!(html.matches("<details").count(), steps.len());
    }
    assert!(!local.contains("bm25_dialog"), "{local}");
    // A step's cases are counted from its own predictions.
    let key = runs::read_run(&trial.join("[0,10)")).unwrap().unwrap().key;
    assert_eq!(
        (key.cases, key.regime.as_str()),
        (Some(4), "step_off-policy")
    );
}

#[test]
fn what_a_run_records_is_escaped_and_no_runs_is_no_report() {
    let root = tempfile::tempdir().unwrap();
    write_run(
        root.path(),
        &Run {
            data: Some("/data/<b>set</b>&more"),
            llm: "/home/me/<llm>.toml",
            ..Run::new("bm25_message", "2026-12-01-10-00-00", 0.3)
        },
    );
    let body = report_body(&[root.path().to_path_buf()]).unwrap().unwrap();
    assert!(!body.contains("<b>") && !body.contains("<llm>"), "{body}");
    assert!(
        body.contains("data /data/&lt;b&gt;set&lt;/b&gt;&amp;more"),
        "{body}"
    );
    // The heading names the settings file alone; the line below it gives its path.
    assert!(
        body.contains("llm &lt;llm&gt;.toml, 10 cases</h2>"),
        "{body}"
    );
    assert!(
        body.contains("llm settings /home/me/&lt;llm&gt;.toml"),
        "{body}"
    );

    let empty = tempfile::tempdir().unwrap();
    assert!(report_body(&[empty.path().to_path_buf()])
        .unwrap()
        .is_none());
}
