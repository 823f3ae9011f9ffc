//! The page in a real browser (Debian's headless Chromium through chromedriver): a run is
//! configured by clicking the form, launched, watched to its end and browsed down to one
//! item's assembled prompt; a stepwise run shows its steps. The console stays free of errors
//! (scripts, the content security policy). Screenshots of the views are taken on the way;
//! with `MB_FRONTEND_SCREENSHOTS=DIR` they are also written there (docs/img for
//! docs/frontend.md).

use std::path::{Path, PathBuf};

use serde_json::json;

use super::webdriver::{Browser, CHROMEDRIVER, CHROMIUM};
use super::Served;

/// Where screenshots go: a temporary folder, and the one the variable names.
fn shoot(browser: &Browser, folder: &Path, name: &str) {
    browser.screenshot(&folder.join(format!("frontend-{name}.png")));
    if let Some(dir) = std::env::var_os("MB_FRONTEND_SCREENSHOTS") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        browser.screenshot(&dir.join(format!("frontend-{name}.png")));
    }
}

fn options(browser: &Browser, select: &str) -> Vec<String> {
    let values = browser.script(
        "return [...document.querySelectorAll(arguments[0] + ' option')].map(o => o.value);",
        json!([select]),
    );
    serde_json::from_value(values).unwrap()
}

/// The job the Watch view shows and its state (`data-job`, `data-state`).
fn shown_job(browser: &Browser) -> (String, String) {
    let shown = browser.script(
        "const j = document.getElementById('job'); return j ? [j.dataset.job || '', j.dataset.state || ''] : ['', ''];",
        json!([]),
    );
    serde_json::from_value(shown).unwrap()
}

/// Clicks Run and waits until the Watch view shows the new job ended; fails with the job's log
/// unless it exited.
fn run_and_watch(browser: &Browser, served: &Served) {
    browser.click("#run-button");
    browser.wait("the watch view", 30, |b| {
        b.script("return location.hash", json!([]))
            .as_str()
            .unwrap_or_default()
            .starts_with("#watch/")
    });
    let hash = browser.script("return location.hash", json!([]));
    let id = hash
        .as_str()
        .unwrap()
        .trim_start_matches("#watch/")
        .to_string();
    let job = served.ended(&id);
    assert_eq!(job["state"], "exited", "{}", served.job_log(&id));
    browser.wait("the page to show the job's end", 30, |b| {
        shown_job(b) == (id.clone(), "exited".to_string())
    });
}

#[test]
fn a_run_is_launched_watched_and_browsed_in_a_browser() {
    if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
        mb_core::test_data::skip(&format!(
            "{CHROMIUM} or {CHROMEDRIVER} is absent (scripts/setup.sh installs chromium and chromium-driver)"
        ));
        return;
    }
    let served = Served::start(|_| {}, &[], &[]);
    let shots = tempfile::tempdir().unwrap();
    let browser = Browser::start(1280, 900);
    browser.goto(&format!("{}/#run", served.base));
    browser.wait("the choices", 30, |b| options(b, "#baseline").len() > 3);

    // Fields that do not apply are hidden, as upstream's page hides them.
    browser.choose("#baseline", "embedder_message");
    browser.wait("the embedder field", 5, |b| b.shows("#embedder-field"));
    browser.choose("#baseline", "bm25_message");
    browser.wait("the embedder field hidden", 5, |b| {
        !b.shows("#embedder-field")
    });
    assert!(options(&browser, "#baseline").contains(&"wo_memory".to_string()));
    browser.choose("#regime", "on-policy");
    browser.wait("on-policy's fields", 5, |b| b.shows("#extra-step"));
    assert!(!options(&browser, "#baseline").contains(&"wo_memory".to_string()));
    browser.choose("#regime", "off-policy");
    browser.wait("on-policy's fields hidden", 5, |b| !b.shows("#extra-step"));

    browser.choose("#dataset_type", "domain");
    browser.choose("#set_name", "Sample");
    browser.choose("#baseline", "bm25_message");
    browser.choose("#llm", "offline");
    browser.type_into("#limit", "2");
    browser.wait("the command preview", 5, |b| {
        b.text("#command-preview").contains("--limit 2")
    });
    shoot(&browser, shots.path(), "run");

    run_and_watch(&browser, &served);
    browser.wait("the log", 10, |b| !b.text("#log").is_empty());
    browser.wait("the progress bars", 10, |b| b.shows("#progress .bar"));
    assert!(
        browser.text("#progress").contains("cases"),
        "{}",
        browser.text("#progress")
    );
    shoot(&browser, shots.path(), "watch");

    // The run's results, down to one item's assembled prompt.
    browser.click("#job-runs a.open-run");
    browser.wait("the run's items", 30, |b| {
        b.shows("#items tr[data-index=\"0\"]")
    });
    assert!(
        browser.text("#summary").contains("average"),
        "{}",
        browser.text("#summary")
    );
    browser.click("#items tr[data-index=\"0\"]");
    browser.wait("the item", 30, |b| !b.text("#item-prompt").is_empty());
    let prompt = browser.text("#item-prompt");
    let (_, jobs) = served.get("/api/jobs");
    let run = jobs[0]["run_dirs"][0].as_str().unwrap();
    let predictions = super::super::common::json(served.runs().join(run).join("predict.json"));
    let sent = crate::common::last_message(&predictions[0]).to_string();
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        words(&prompt),
        words(&sent),
        "the page shows the prompt that was sent"
    );
    for pane in [
        "#item-response",
        "#item-metrics",
        "#item-reference",
        "#item-question",
    ] {
        assert!(!browser.text(pane).trim().is_empty(), "{pane} is empty");
    }
    assert!(browser.shows("#item-retrieved li"));
    shoot(&browser, shots.path(), "item");

    browser.click("#show-report");
    browser.wait("the report's charts", 30, |b| b.shows("#report svg"));
    shoot(&browser, shots.path(), "results");

    // A stepwise run: its own field, then its steps.
    browser.goto(&format!("{}/#run", served.base));
    browser.wait("the choices", 30, |b| options(b, "#regime").len() > 3);
    browser.choose("#regime", "stepwise-off-policy");
    browser.wait("the batch size field", 5, |b| b.shows("#extra-batch-size"));
    browser.type_into("#extra-batch-size", "2");
    browser.type_into("#limit", "4");
    run_and_watch(&browser, &served);
    browser.click("#job-runs a.open-run");
    browser.wait("the step picker", 30, |b| b.shows("#step"));
    assert_eq!(options(&browser, "#step"), ["begin", "[0,2)", "[2,4)"]);
    browser.choose("#step", "[0,2)");
    browser.wait("the step's items", 30, |b| {
        b.shows("#items tr[data-index=\"7\"]")
    });

    let severe = browser.severe_console_entries();
    assert!(severe.is_empty(), "console errors: {severe:#?}");
    for name in ["run", "watch", "item", "results"] {
        assert!(shots.path().join(format!("frontend-{name}.png")).is_file());
    }
}
