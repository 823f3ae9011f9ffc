//! `parse_column` on Python `repr` output of random nested values made by the machine's CPython.

use std::process::Command;

use mb_core::pyliteral::parse_column;
use serde_json::Value;

const PYTHON: &str = r#"
import json, random
rng = random.Random(7)
alphabet = ["a", "Z", " ", "'", '"', "\\", "\n", "\t", "é", "中", "\x00", "\u200b", "😀", "{", "]", ":"]
def text():
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
def value(depth):
    kind = rng.randint(0, 8 if depth < 4 else 4)
    if kind == 0: return None
    if kind == 1: return rng.random() < 0.5
    if kind == 2: return rng.randint(-10**12, 10**12)
    if kind == 3: return round(rng.uniform(-1e6, 1e6), rng.randint(0, 6))
    if kind == 4: return text()
    if kind in (5, 6): return {text(): value(depth + 1) for _ in range(rng.randint(0, 4))}
    if kind == 7: return [value(depth + 1) for _ in range(rng.randint(0, 4))]
    return tuple(value(depth + 1) for _ in range(rng.randint(0, 4)))
cases = [value(0) for _ in range(400)]
print(json.dumps([[repr(v), json.dumps(v)] for v in cases]))
"#;

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn python_reprs_parse_to_the_same_values() {
    let output = Command::new("python3")
        .args(["-c", PYTHON])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let cases: Vec<(String, String)> = serde_json::from_slice(&output.stdout).unwrap();
    let mut python_only = 0;
    for (repr, json) in &cases {
        let expected: Value = serde_json::from_str(json).unwrap();
        let parsed = parse_column(repr).unwrap_or_else(|e| panic!("{repr}: {e}"));
        assert!(
            same(&parsed, &expected),
            "{repr}\n  ours: {parsed}\n  json: {expected}"
        );
        python_only += usize::from(serde_json::from_str::<Value>(repr).is_err());
    }
    eprintln!("{} values, {python_only} of them not JSON", cases.len());
    assert!(python_only > 200, "the cases must exercise Python syntax");
}
