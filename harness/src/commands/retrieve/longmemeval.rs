//! `retrieve --longmemeval FILE`: LongMemEval's retrieval evaluation on a memory system. The
//! file is read one question at a time; each question's haystack is memorized into a fresh
//! namespace (dated so that time-aware systems resolve "last week" against the question's
//! date), the question retrieves a full ranking, its units are expanded into turn ids and
//! scored with the official metrics at turn and session level, and the namespace is dropped,
//! so memory and disk stay bounded by one question whatever the file's size.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::time::Duration;

use mb_datasets::longmemeval::retrieval::{
    evaluate, evaluate_as_sessions, History, Scores, CUTOFFS,
};
use mb_datasets::longmemeval::{variant, Instance};
use serde_json::{json, Map, Value};

use super::report::{mean, percentile, Ingestion};
use super::{RetrieveArgs, RetrieveSetup};
use crate::commands::longmemeval::{for_each_question, Next};
use crate::error::HarnessError;

/// The most units a question ranks (a full ranking of S's haystacks; M's are cut here).
const MAX_DEPTH: usize = 2_000;

/// One scored question: official scores at each of [`CUTOFFS`].
struct Scored {
    question_type: String,
    turn: Vec<Scores>,
    session: Vec<Scores>,
    latency: Duration,
}

/// Runs `retrieve` over a LongMemEval file.
pub(super) fn run(
    args: &RetrieveArgs,
    setup: &RetrieveSetup,
    path: &Path,
) -> Result<(), HarnessError> {
    let history = args.history.history();
    let mut scored = Vec::new();
    let mut ingestion = Ingestion::default();
    let mut skipped: BTreeMap<&str, usize> = BTreeMap::new();
    let mut broken = Vec::new();
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_message("LongMemEval questions scored");
    let outcome = for_each_question(path, &mut broken, |instance| {
        if args.limit.is_some_and(|limit| scored.len() >= limit) {
            return Ok(Next::Stop);
        }
        if instance.is_abstention() {
            *skipped.entry("abstention").or_default() += 1;
        } else if !instance.is_scored(history) {
            *skipped.entry("no_evidence_in_history").or_default() += 1;
        } else {
            scored.push(score(setup, &instance, history, &mut ingestion)?);
            bar.inc(1);
        }
        Ok(Next::Continue)
    });
    bar.finish_and_clear();
    outcome?;
    let mut report = report(setup, args, path, &scored, &ingestion);
    report["skipped"] = json!(skipped);
    report["broken"] = json!(broken);
    setup.finish(args, report, |out, report| {
        print_table(out, report, &args.k)
    })
}

/// Memorizes one question's haystack, ranks, scores, and drops the namespace.
fn score(
    setup: &RetrieveSetup,
    instance: &Instance,
    history: History,
    ingestion: &mut Ingestion,
) -> Result<Scored, HarnessError> {
    let conversation = instance.conversation(history);
    let namespace = format!(
        "retrieve-longmemeval/{}/{}",
        setup.spec.name, instance.index
    );
    let (system, memory) = setup.memorize(
        namespace.clone(),
        &instance.question_day.iso(),
        &conversation,
        ingestion,
    )?;

    let corpus: Vec<&str> = conversation
        .sessions
        .iter()
        .flat_map(|s| s.turns.iter().map(|t| t.dia_id.as_str()))
        .collect();
    let depth = memory.units.len().clamp(1, MAX_DEPTH);
    let (retrieved, latency) = setup.retrieve(system.as_ref(), &instance.question, depth)?;
    let mut seen = HashSet::new();
    let ranked: Vec<&str> = retrieved
        .iter()
        .flat_map(|r| r.turns.iter().map(String::as_str))
        .filter(|t| seen.insert(*t))
        .collect();
    let scored = Scored {
        question_type: instance.question_type.to_string(),
        turn: CUTOFFS
            .iter()
            .map(|&k| evaluate(&ranked, &corpus, k))
            .collect(),
        session: CUTOFFS
            .iter()
            .map(|&k| evaluate_as_sessions(&ranked, &corpus, k))
            .collect(),
        latency,
    };
    drop(system);
    setup.store.engine.drop_namespace(&namespace)?;
    Ok(scored)
}

fn metrics_of(scored: &[&Scored]) -> Value {
    let mut out = Map::new();
    out.insert("questions".into(), json!(scored.len()));
    for (level, pick) in [
        (
            "session",
            (|s: &Scored| s.session.clone()) as fn(&Scored) -> Vec<Scores>,
        ),
        ("turn", |s: &Scored| s.turn.clone()),
    ] {
        let mut level_metrics = Map::new();
        for (i, k) in CUTOFFS.iter().enumerate() {
            let at = |f: fn(&Scores) -> f64| json!(mean(scored.iter().map(|s| f(&pick(s)[i]))));
            level_metrics.insert(format!("recall_all@{k}"), at(|s| s.recall_all));
            level_metrics.insert(format!("recall_any@{k}"), at(|s| s.recall_any));
            level_metrics.insert(format!("ndcg_any@{k}"), at(|s| s.ndcg_any));
        }
        out.insert(level.into(), Value::Object(level_metrics));
    }
    Value::Object(out)
}

/// The peak resident memory of this process in MiB (Linux), for the report.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn report(
    setup: &RetrieveSetup,
    args: &RetrieveArgs,
    path: &Path,
    scored: &[Scored],
    ingestion: &Ingestion,
) -> Value {
    let mut groups: BTreeMap<&str, Vec<&Scored>> = BTreeMap::new();
    for s in scored {
        groups.entry(&s.question_type).or_default().push(s);
    }
    let all: Vec<&Scored> = scored.iter().collect();
    let mut latencies: Vec<Duration> = scored.iter().map(|s| s.latency).collect();
    latencies.sort_unstable();
    let seconds = ingestion.total.as_secs_f64();
    json!({
        "system": setup.spec.name,
        "paper_name": setup.spec.paper_name,
        "file": path.display().to_string(),
        "variant": variant(path),
        "history": format!("{:?}", args.history).to_lowercase(),
        "metrics": "official LongMemEval retrieval metrics: recall_all@k is the paper's Recall@k; session level converts the turn ranking as turn2session does",
        "overall": metrics_of(&all),
        "per_type": groups.iter().map(|(t, list)| (t.to_string(), metrics_of(list))).collect::<Map<String, Value>>(),
        "ingestion_seconds": seconds,
        "ingestion_embedding_seconds": ingestion.embedding.as_secs_f64(),
        "ingestion_turns": ingestion.turns,
        "ingestion_turns_per_second": if seconds > 0.0 { ingestion.turns as f64 / seconds } else { 0.0 },
        "items_stored": ingestion.items,
        "query_latency_ms": {"p50": percentile(&latencies, 0.5), "p95": percentile(&latencies, 0.95)},
        "peak_rss_mib": peak_rss_mib(),
    })
}

fn print_table(out: &mut dyn std::io::Write, report: &Value, ks: &[usize]) -> std::io::Result<()> {
    let number = |v: &Value| v.as_f64().unwrap_or(0.0);
    let ks: Vec<usize> = ks.iter().copied().filter(|k| CUTOFFS.contains(k)).collect();
    writeln!(
        out,
        "{} on {} ({} history); session-level R_all (the paper's Recall@k), R_any, NDCG; turn-level R_all",
        report["system"].as_str().unwrap_or_default(),
        report["file"].as_str().unwrap_or_default(),
        report["history"].as_str().unwrap_or_default(),
    )?;
    let mut header = format!("{:<27}{:>5}", "question type", "n");
    for k in &ks {
        for name in ["S.Rall", "S.Rany", "S.NDCG", "T.Rall"] {
            header.push_str(&format!("{:>11}", format!("{name}@{k}")));
        }
    }
    writeln!(out, "{header}")?;
    let row = |out: &mut dyn std::io::Write, name: &str, m: &Value| -> std::io::Result<()> {
        let mut line = format!("{name:<27}{:>5}", m["questions"].as_u64().unwrap_or(0));
        for k in &ks {
            for (level, key) in [
                ("session", "recall_all"),
                ("session", "recall_any"),
                ("session", "ndcg_any"),
                ("turn", "recall_all"),
            ] {
                line.push_str(&format!(
                    "{:>11.3}",
                    number(&m[level][format!("{key}@{k}")])
                ));
            }
        }
        writeln!(out, "{line}")
    };
    if let Some(types) = report["per_type"].as_object() {
        for (name, metrics) in types {
            row(out, name, metrics)?;
        }
    }
    row(out, "all", &report["overall"])?;
    writeln!(
        out,
        "skipped {}; broken (unknown evidence sessions) {}; ingestion {:.1} s for {} turns ({:.0} turns/s); query p50 {:.2} ms, p95 {:.2} ms; peak memory {:.0} MiB",
        report["skipped"],
        report["broken"].as_array().map_or(0, Vec::len),
        number(&report["ingestion_seconds"]),
        report["ingestion_turns"].as_u64().unwrap_or(0),
        number(&report["ingestion_turns_per_second"]),
        number(&report["query_latency_ms"]["p50"]),
        number(&report["query_latency_ms"]["p95"]),
        number(&report["peak_rss_mib"]),
    )
}
