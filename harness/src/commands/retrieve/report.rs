//! The retrieval report: metrics overall and per group as JSON, and the table printed.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::score::{Cutoffs, Scored};

/// Measured ingestion of every corpus.
#[derive(Default)]
pub(crate) struct Ingestion {
    /// Corpora memorized.
    pub corpora: usize,
    /// Corpus turns memorized.
    pub turns: usize,
    /// Wall time memorizing.
    pub total: Duration,
    /// Of which embedding.
    pub embedding: Duration,
    /// Items the memories hold afterwards.
    pub items: u64,
}

pub(crate) fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

fn metrics_of(scored: &[&Scored], cutoffs: &Cutoffs) -> Value {
    let mut out = Map::new();
    out.insert("questions".into(), json!(scored.len()));
    for (i, k) in cutoffs.ks.iter().enumerate() {
        let avg = |f: &dyn Fn(&Scored) -> f64| json!(mean(scored.iter().map(|s| f(s))));
        out.insert(format!("recall@{k}"), avg(&|s| s.recall[i]));
        out.insert(format!("turn_recall@{k}"), avg(&|s| s.turn_recall[i]));
        out.insert(format!("ndcg@{k}"), avg(&|s| s.ndcg[i]));
        out.insert(format!("session_hit@{k}"), avg(&|s| s.session_hit[i]));
    }
    for (i, budget) in cutoffs.budgets.iter().enumerate() {
        out.insert(
            format!("budget_recall@{budget}"),
            json!(mean(scored.iter().map(|s| s.budget_recall[i]))),
        );
    }
    out.insert("mrr".into(), json!(mean(scored.iter().map(|s| s.mrr))));
    Value::Object(out)
}

pub(crate) fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

/// The report of a run: `relevance` says what counts as found, `corpora` names what was read.
pub(crate) fn report(
    spec: &mb_baselines::SystemSpec,
    cutoffs: &Cutoffs,
    relevance: &str,
    scored: &[Scored],
    ingestion: &Ingestion,
) -> Value {
    let all: Vec<&Scored> = scored.iter().collect();
    let mut groups: BTreeMap<&str, Vec<&Scored>> = BTreeMap::new();
    for s in scored {
        groups.entry(&s.group).or_default().push(s);
    }
    let per_group: Map<String, Value> = groups
        .iter()
        .map(|(g, list)| (g.to_string(), metrics_of(list, cutoffs)))
        .collect();
    let mut latencies: Vec<Duration> = scored.iter().map(|s| s.latency).collect();
    latencies.sort_unstable();
    let seconds = ingestion.total.as_secs_f64();
    json!({
        "system": spec.name,
        "paper_name": spec.paper_name,
        "relevance": relevance,
        "turn_recall": "T@k: retrieved units expanded into the corpus turns they cover, in order; recall over the first k turns",
        "budget_recall": "B@n: recall over the units that fit whole in the first n tokens (cl100k_base) of retrieved text",
        "conversations": ingestion.corpora,
        "overall": metrics_of(&all, cutoffs),
        "per_category": per_group,
        "ingestion_seconds": seconds,
        "ingestion_embedding_seconds": ingestion.embedding.as_secs_f64(),
        "ingestion_engine_seconds": ingestion.total.saturating_sub(ingestion.embedding).as_secs_f64(),
        "ingestion_turns": ingestion.turns,
        "ingestion_turns_per_second": if seconds > 0.0 { ingestion.turns as f64 / seconds } else { 0.0 },
        "items_stored": ingestion.items,
        "query_latency_ms": {"p50": percentile(&latencies, 0.5), "p95": percentile(&latencies, 0.95)},
    })
}

/// Prints the report as a table: a row per group and one for all questions.
pub(crate) fn print_table(
    out: &mut dyn Write,
    report: &Value,
    cutoffs: &Cutoffs,
) -> std::io::Result<()> {
    let text = |key: &str| report[key].as_str().unwrap_or_default().to_string();
    let number = |v: &Value| v.as_f64().unwrap_or(0.0);
    writeln!(
        out,
        "{} ({}), {} conversation(s); {}",
        text("system"),
        text("paper_name"),
        report["conversations"].as_u64().unwrap_or(0),
        text("relevance")
    )?;
    let mut header = format!("{:<27}{:>6}", "category", "n");
    for k in &cutoffs.ks {
        for name in ["R", "T", "NDCG", "S"] {
            header.push_str(&format!("{:>9}", format!("{name}@{k}")));
        }
    }
    for budget in &cutoffs.budgets {
        header.push_str(&format!("{:>9}", format!("B@{budget}")));
    }
    header.push_str(&format!("{:>8}", "MRR"));
    writeln!(out, "{header}")?;
    let row = |out: &mut dyn Write, name: &str, m: &Value| -> std::io::Result<()> {
        let mut line = format!("{name:<27}{:>6}", m["questions"].as_u64().unwrap_or(0));
        for k in &cutoffs.ks {
            for key in ["recall", "turn_recall", "ndcg", "session_hit"] {
                line.push_str(&format!("{:>9.3}", number(&m[format!("{key}@{k}")])));
            }
        }
        for budget in &cutoffs.budgets {
            line.push_str(&format!(
                "{:>9.3}",
                number(&m[format!("budget_recall@{budget}")])
            ));
        }
        line.push_str(&format!("{:>8.3}", number(&m["mrr"])));
        writeln!(out, "{line}")
    };
    if let Some(groups) = report["per_category"].as_object() {
        for (group, metrics) in groups {
            row(out, group, metrics)?;
        }
    }
    row(out, "all", &report["overall"])?;
    writeln!(
        out,
        "ingestion {:.3} s for {} turns ({:.0} turns/s; embedding {:.3} s, engine {:.3} s), {} items stored; query latency p50 {:.2} ms, p95 {:.2} ms",
        number(&report["ingestion_seconds"]),
        report["ingestion_turns"].as_u64().unwrap_or(0),
        number(&report["ingestion_turns_per_second"]),
        number(&report["ingestion_embedding_seconds"]),
        number(&report["ingestion_engine_seconds"]),
        report["items_stored"].as_u64().unwrap_or(0),
        number(&report["query_latency_ms"]["p50"]),
        number(&report["query_latency_ms"]["p95"]),
    )?;
    Ok(())
}
