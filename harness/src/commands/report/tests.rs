//! The report's charts stay readable: drawn from realistic runs (all nine systems, most of them
//! spending next to no time on memory, so their points crowd the scatter's origin), no two
//! labels of a chart overlap and none leaves the picture.

use std::path::PathBuf;

use super::groups::{Curves, Group};
use super::key::GroupKey;
use super::runs::RunRow;
use super::{html, page};

/// The page of one group of `rows`, with the learning `curves` given.
fn drawn(rows: Vec<RunRow>, curves: Curves) -> String {
    let group = Group {
        key: rows[0].key.clone(),
        rows,
        curves,
    };
    page(&html::body(&[group]).unwrap())
}

/// The systems a full run compares, in the order the report lists them.
const SYSTEMS: [&str; 9] = [
    "a_mem",
    "bm25_dialog",
    "bm25_message",
    "embedder_dialog",
    "embedder_message",
    "hybrid",
    "mem0",
    "memoryos",
    "vanilla",
];

/// One system's off-policy run on the sample, with the costs such a system has on it (as
/// measured there): the retrieval systems and `vanilla` spend next to nothing on memory and
/// answer in about the same time, so four points sit on the scatter's origin and two more
/// close to its axis.
fn row(index: usize, system: &str) -> RunRow {
    // Memory and prediction seconds per case, LLM operations and model tokens per case.
    let (memory_seconds, prediction_seconds, llm_calls, tokens) = match system {
        "a_mem" => (0.170, 0.0445, 2.0, 1_830.0),
        "bm25_dialog" => (0.000_15, 0.0029, 1.0, 1_210.0),
        "bm25_message" => (0.000_39, 0.0027, 1.0, 1_190.0),
        "embedder_dialog" => (0.191, 0.0043, 1.0, 1_230.0),
        "embedder_message" => (0.731, 0.127, 1.0, 1_250.0),
        "hybrid" => (0.000_52, 0.0031, 1.0, 1_240.0),
        "mem0" => (0.260, 0.146, 15.2, 9_870.0),
        "memoryos" => (0.649, 0.0064, 15.8, 11_020.0),
        _ => (0.000_005, 0.0029, 1.3, 960.0),
    };
    let i = index as f64;
    RunRow {
        key: GroupKey {
            regime: "off-policy".into(),
            set: "domain/Sample".into(),
            llm: Some("offline".into()),
            cases: Some(10),
            limit: None,
            retrieve_k: None,
            prompts: mb_upstream::PARAPHRASED.into(),
            data: None,
            memory_embedder: None,
        },
        step: None,
        run_dir: PathBuf::from(format!("runs/off-policy/{system}")),
        system: system.into(),
        dir: PathBuf::from(format!("runs/off-policy/{system}")),
        score: Some(0.0038 + 0.0017 * i),
        memory_seconds,
        prediction_seconds,
        llm_calls,
        tokens,
        fallbacks: 0.0,
        dialog_seconds: (0..16)
            .map(|d| memory_seconds * (1.0 + 0.1 * d as f64))
            .collect(),
    }
}

/// Every system's score after each of eleven steps, the curves close together.
fn curves() -> Curves {
    let steps: Vec<String> = std::iter::once("begin".to_string())
        .chain((0..10).map(|s| format!("[{},{})", s * 100, (s + 1) * 100)))
        .collect();
    SYSTEMS
        .iter()
        .enumerate()
        .map(|(i, system)| {
            let points = steps
                .iter()
                .enumerate()
                .map(|(s, step)| (step.clone(), 0.3 + 0.01 * s as f64 + 0.002 * i as f64))
                .collect();
            (system.to_string(), points)
        })
        .collect()
}

/// A drawn label: its text and the box it covers, `(left, top, right, bottom)` in pixels.
#[derive(Debug)]
struct Label {
    text: String,
    area: (f64, f64, f64, f64),
}

/// The value of attribute `name` in the attributes of a tag.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// The number in an attribute such as `x="12.5"` or `font-size="9.6774"`.
fn number(tag: &str, name: &str) -> f64 {
    attribute(tag, name).map_or(0.0, |v| v.trim().parse().unwrap_or(0.0))
}

/// The box a `<text>` element covers: about 0.6 em per character and 1 em high, placed by its
/// anchor (`text-anchor`), its vertical shift (`dy`) and its rotation (`transform`).
fn text_box(tag: &str, text: &str) -> (f64, f64, f64, f64) {
    let size = number(tag, "font-size");
    let (x, y) = (number(tag, "x"), number(tag, "y"));
    let width = 0.6 * size * text.chars().count() as f64;
    let left = match attribute(tag, "text-anchor") {
        Some("middle") => x - width / 2.0,
        Some("end") => x - width,
        _ => x,
    };
    // The baseline, then 0.76 em of letters above it and 0.24 em below.
    let baseline = y + match attribute(tag, "dy") {
        Some("0.76em") => 0.76 * size,
        Some("0.5ex") => 0.25 * size,
        Some("-0.5ex") => -0.25 * size,
        Some(other) => panic!("unexpected dy {other}"),
        None => 0.0,
    };
    let corners = [
        (left, baseline - 0.76 * size),
        (left + width, baseline - 0.76 * size),
        (left, baseline + 0.24 * size),
        (left + width, baseline + 0.24 * size),
    ];
    let corners = match attribute(tag, "transform") {
        Some(transform) => {
            let inside = transform
                .strip_prefix("rotate(")
                .and_then(|t| t.strip_suffix(')'))
                .unwrap_or_else(|| panic!("unexpected transform {transform}"));
            let parts: Vec<f64> = inside
                .split([',', ' '])
                .filter(|p| !p.is_empty())
                .map(|p| p.parse().unwrap())
                .collect();
            let (angle, cx, cy) = match parts[..] {
                [angle] => (angle, 0.0, 0.0),
                [angle, cx, cy] => (angle, cx, cy),
                _ => panic!("unexpected transform {transform}"),
            };
            let (sin, cos) = angle.to_radians().sin_cos();
            corners.map(|(px, py)| {
                let (dx, dy) = (px - cx, py - cy);
                (cx + dx * cos - dy * sin, cy + dx * sin + dy * cos)
            })
        }
        None => corners,
    };
    let xs = corners.map(|c| c.0);
    let ys = corners.map(|c| c.1);
    (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        ys.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

/// The non-empty labels of one SVG.
fn labels(svg: &str) -> Vec<Label> {
    let mut found = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find("<text") {
        rest = &rest[start..];
        let tag_end = rest.find('>').unwrap();
        let close = rest.find("</text>").unwrap();
        let text = rest[tag_end + 1..close]
            .trim()
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&");
        if !text.is_empty() {
            let area = text_box(&rest[..tag_end], &text);
            found.push(Label { text, area });
        }
        rest = &rest[close..];
    }
    found
}

/// Each `<svg>…</svg>` of a page, with its width and height.
fn svgs(html: &str) -> Vec<(&str, f64, f64)> {
    html.split("<svg")
        .skip(1)
        .map(|part| {
            let svg = &part[..part.find("</svg>").unwrap()];
            let tag = &svg[..svg.find('>').unwrap()];
            (svg, number(tag, "width"), number(tag, "height"))
        })
        .collect()
}

/// Whether two boxes share more than a hair of area.
fn overlap(a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)) -> bool {
    let width = a.2.min(b.2) - a.0.max(b.0);
    let height = a.3.min(b.3) - a.1.max(b.1);
    width > 0.5 && height > 0.5
}

/// Asserts that no two labels of any chart of `html` overlap and that all lie in their chart,
/// listing every offence; returns each chart's label texts.
fn assert_readable(html: &str) -> Vec<Vec<String>> {
    let mut charts = Vec::new();
    let mut offences = Vec::new();
    for (svg, width, height) in svgs(html) {
        let found = labels(svg);
        let caption = found.first().map_or("", |l| l.text.as_str());
        for (i, a) in found.iter().enumerate() {
            let (left, top, right, bottom) = a.area;
            if left < -0.5 || top < -0.5 || right > width + 0.5 || bottom > height + 0.5 {
                offences.push(format!(
                    "in {caption:?}: {:?} at {:?} leaves the {width}x{height} picture",
                    a.text, a.area
                ));
            }
            for b in &found[i + 1..] {
                if overlap(a.area, b.area) {
                    offences.push(format!(
                        "in {caption:?}: {:?} at {:?} overlaps {:?} at {:?}",
                        a.text, a.area, b.text, b.area
                    ));
                }
            }
        }
        charts.push(found.into_iter().map(|l| l.text).collect());
    }
    assert!(
        offences.is_empty(),
        "{} unreadable labels:\n{}",
        offences.len(),
        offences.join("\n")
    );
    charts
}

#[test]
fn no_two_chart_labels_overlap() {
    let rows: Vec<RunRow> = SYSTEMS.iter().enumerate().map(|(i, s)| row(i, s)).collect();
    let html = drawn(rows, curves());
    let charts = assert_readable(&html);
    // Score, LLM operations, tokens, efficiency, memorization, learning curve.
    assert_eq!(charts.len(), 6);
    // Every chart still names every system, each in a label of its own.
    for texts in &charts {
        for system in SYSTEMS {
            assert!(
                texts.iter().any(|t| t == system),
                "{system} is not a label of its own in {texts:?}"
            );
        }
    }
}

#[test]
fn labels_stay_apart_when_every_point_sits_on_the_origin() {
    // A run on hardware so fast that every system reports zero seconds.
    let rows: Vec<RunRow> = SYSTEMS
        .iter()
        .enumerate()
        .map(|(i, s)| RunRow {
            memory_seconds: 0.0,
            prediction_seconds: 0.0,
            dialog_seconds: vec![0.0; 3],
            ..row(i, s)
        })
        .collect();
    let html = drawn(rows, Curves::new());
    for texts in assert_readable(&html) {
        for system in SYSTEMS {
            assert!(texts.iter().any(|t| t == system), "{system}: {texts:?}");
        }
    }
}

/// A deterministic stream of numbers in [0, 1): the same pages on every run.
fn numbers(mut seed: u64) -> impl FnMut() -> f64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 1_000_000) as f64 / 1_000_000.0
    }
}

#[test]
fn labels_stay_apart_at_any_scale() {
    let mut next = numbers(12_345);
    for round in 0..200 {
        // One to nine systems; seconds from microseconds to hours, tokens up to millions;
        // most points crowded by the origin, some exactly on it.
        let systems = &SYSTEMS[..1 + round % SYSTEMS.len()];
        let memory_scale = 10f64.powi((next() * 10.0) as i32 - 6);
        let prediction_scale = 10f64.powi((next() * 10.0) as i32 - 6);
        let token_scale = 10f64.powi((next() * 7.0) as i32);
        let rows: Vec<RunRow> = systems
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let crowded = if next() < 0.6 { 0.001 } else { 1.0 };
                let memory_seconds = if next() < 0.1 {
                    0.0
                } else {
                    memory_scale * crowded * next()
                };
                RunRow {
                    memory_seconds,
                    prediction_seconds: prediction_scale * crowded * next(),
                    tokens: token_scale * next(),
                    llm_calls: 20.0 * next(),
                    score: Some(next()),
                    dialog_seconds: (0..1 + (next() * 40.0) as usize)
                        .map(|_| memory_seconds * next())
                        .collect(),
                    ..row(i, s)
                }
            })
            .collect();
        let steps = (next() * 30.0) as usize;
        let series = systems
            .iter()
            .map(|s| {
                let names = std::iter::once("begin".to_string())
                    .chain((0..steps).map(|k| format!("[{},{})", k * 1000, (k + 1) * 1000)));
                (s.to_string(), names.map(|n| (n, next())).collect())
            })
            .collect();
        let html = drawn(rows, series);
        for texts in assert_readable(&html) {
            for system in systems {
                assert!(texts.iter().any(|t| t == system), "round {round}: {system}");
            }
        }
    }
}
