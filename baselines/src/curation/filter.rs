//! mem0's filter language over memories' metadata ([`Metadata`](crate::metadata::Metadata)), so that a
//! search or a listing keeps only the memories whose metadata match.
//!
//! A filter is a JSON object, an AND of one condition per key:
//! - `{"k": v}`: exact, type-strict match (`"3"` is not `3`, `3` is not `3.0`, `true` is not
//!   `1`) of a string, integer or boolean; on a list value any element may match;
//! - `{"k": [a, b]}`: any of the values; `{"k": "*"}`: no condition;
//! - `{"k": {op: v}}` with `op` one of `eq ne in nin gt gte lt lte contains icontains`: `ne`
//!   and `nin` need the key present; range bounds are numbers, or ISO dates/datetimes compared
//!   as instants (naive = UTC) when every bound is one; `contains`/`icontains` ask every word
//!   of the value to be a word of the string, ignoring case;
//! - `AND`, `OR`, `NOT` (or `$and`, `$or`, `$not`): lists of filters;
//! - dotted keys (`a.b`) reach into nested objects.
//!
//! These are the semantics of mem0's local store (`get_all`'s), which the `memorybench.mem0`
//! drop-in reproduces call for call; this is that language for the native surfaces.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use serde_json::{Map, Value};

use crate::error::MemoryError;
use crate::metadata::kind;

/// The most conditions (keys and list items, at every level) a filter may hold.
pub const MAX_FILTER_CONDITIONS: usize = 256;
/// The deepest nesting of `AND`/`OR`/`NOT` accepted.
pub const MAX_FILTER_DEPTH: usize = 8;
/// Most characters of a caller's key, operator or value an error quotes.
const QUOTED_CHARS: usize = 80;

/// `text` as an error quotes it: debug-quoted, at most [`QUOTED_CHARS`] characters of it.
fn quoted(text: &str) -> String {
    format!("{:?}", mb_core::excerpt(text, QUOTED_CHARS))
}

/// A compiled filter over metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataFilter {
    must: Vec<Condition>,
    should: Vec<MetadataFilter>,
    must_not: Vec<MetadataFilter>,
}

#[derive(Debug, Clone, PartialEq)]
enum Condition {
    Nested(MetadataFilter),
    Field { key: String, test: Test },
}

#[derive(Debug, Clone, PartialEq)]
enum Test {
    AnyOf(Vec<Value>),
    NoneOf(Vec<Value>),
    Numbers(Bounds<f64>),
    Instants(Bounds<DateTime<Utc>>),
    Words(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
struct Bounds<T> {
    gt: Option<T>,
    gte: Option<T>,
    lt: Option<T>,
    lte: Option<T>,
}

impl<T: PartialOrd> Bounds<T> {
    fn holds(&self, point: &T) -> bool {
        self.gt.as_ref().is_none_or(|b| point > b)
            && self.gte.as_ref().is_none_or(|b| point >= b)
            && self.lt.as_ref().is_none_or(|b| point < b)
            && self.lte.as_ref().is_none_or(|b| point <= b)
    }
}

impl MetadataFilter {
    /// Compiles `filters` (named `field` in errors); `None` when it sets no condition.
    pub fn compile(filters: &Value, field: &str) -> Result<Option<MetadataFilter>, MemoryError> {
        let mut budget = MAX_FILTER_CONDITIONS;
        let filter = compile(filters, field, 0, &mut budget)?;
        Ok((!filter.is_empty()).then_some(filter))
    }

    /// Whether `metadata` satisfies the filter.
    pub fn matches(&self, metadata: &Map<String, Value>) -> bool {
        self.must.iter().all(|c| c.matches(metadata))
            && !self.must_not.iter().any(|f| f.matches(metadata))
            && (self.should.is_empty() || self.should.iter().any(|f| f.matches(metadata)))
    }

    fn is_empty(&self) -> bool {
        self.must.is_empty() && self.should.is_empty() && self.must_not.is_empty()
    }
}

impl Condition {
    fn matches(&self, metadata: &Map<String, Value>) -> bool {
        match self {
            Condition::Nested(filter) => filter.matches(metadata),
            Condition::Field { key, test } => {
                let values = values_at(metadata, key);
                !values.is_empty() && values.into_iter().any(|v| test.holds(v))
            }
        }
    }
}

impl Test {
    fn holds(&self, value: &Value) -> bool {
        match self {
            Test::AnyOf(options) => options.iter().any(|o| same(value, o)),
            Test::NoneOf(options) => !value.is_null() && !options.iter().any(|o| same(value, o)),
            Test::Numbers(bounds) => match value {
                Value::Number(n) => n.as_f64().is_some_and(|n| bounds.holds(&n)),
                _ => false,
            },
            Test::Instants(bounds) => value
                .as_str()
                .and_then(instant)
                .is_some_and(|t| bounds.holds(&t)),
            Test::Words(wanted) => value.as_str().is_some_and(|text| {
                let have = words(text);
                !wanted.is_empty() && wanted.iter().all(|w| have.contains(w))
            }),
        }
    }
}

fn compile(
    filters: &Value,
    field: &str,
    depth: usize,
    budget: &mut usize,
) -> Result<MetadataFilter, MemoryError> {
    let bad = |what: String| MemoryError::BadInput(format!("{field}: {what}"));
    let Value::Object(conditions) = filters else {
        return Err(bad(format!("must be an object, got {}", kind(filters))));
    };
    if depth > MAX_FILTER_DEPTH {
        return Err(bad(format!("nests deeper than {MAX_FILTER_DEPTH} levels")));
    }
    let mut filter = MetadataFilter {
        must: Vec::new(),
        should: Vec::new(),
        must_not: Vec::new(),
    };
    for (key, value) in conditions {
        *budget = budget.checked_sub(1).ok_or_else(|| {
            bad(format!(
                "holds more than {MAX_FILTER_CONDITIONS} conditions"
            ))
        })?;
        let logical = match key.as_str() {
            "AND" | "$and" => Some("AND"),
            "OR" | "$or" => Some("OR"),
            "NOT" | "$not" => Some("NOT"),
            _ => None,
        };
        let Some(logical) = logical else {
            if let Some(test) =
                field_test(value).map_err(|e| bad(format!("{}: {e}", quoted(key))))?
            {
                filter.must.push(Condition::Field {
                    key: key.clone(),
                    test,
                });
            }
            continue;
        };
        let Value::Array(items) = value else {
            return Err(bad(format!(
                "{logical} takes a list of filters, got {}",
                kind(value)
            )));
        };
        for (i, item) in items.iter().enumerate() {
            let sub = compile(item, &format!("{field}.{logical}[{i}]"), depth + 1, budget)?;
            if sub.is_empty() {
                continue;
            }
            match logical {
                "AND" => filter.must.push(Condition::Nested(sub)),
                "OR" => filter.should.push(sub),
                _ => filter.must_not.push(sub),
            }
        }
    }
    Ok(filter)
}

/// The test of one key's condition; `None` for the wildcard `"*"`.
fn field_test(value: &Value) -> Result<Option<Test>, String> {
    let Value::Object(ops) = value else {
        return Ok(match value {
            Value::String(s) if s == "*" => None,
            Value::Array(_) => Some(Test::AnyOf(value_list(value, "in")?)),
            _ => Some(Test::AnyOf(vec![exact(value)?])),
        });
    };
    let ranged: Vec<&str> = ["gt", "gte", "lt", "lte"]
        .into_iter()
        .filter(|op| ops.contains_key(*op))
        .collect();
    if !ranged.is_empty() {
        if ops.len() != ranged.len() {
            return Err("range operators cannot be mixed with others (use AND)".into());
        }
        return range(ops).map(Some);
    }
    let [(op, operand)] = ops.iter().collect::<Vec<_>>()[..] else {
        return Err(format!(
            "one operator per key, got {} (use AND to combine)",
            ops.len()
        ));
    };
    Ok(Some(match op.as_str() {
        "eq" => Test::AnyOf(vec![exact(operand)?]),
        "ne" => Test::NoneOf(vec![exact(operand)?]),
        "in" => Test::AnyOf(value_list(operand, "in")?),
        "nin" => Test::NoneOf(value_list(operand, "nin")?),
        "contains" | "icontains" => match operand {
            Value::String(text) => Test::Words(words(text)),
            other => return Err(format!("{op} takes a string, got {}", kind(other))),
        },
        other => {
            return Err(format!(
                "unknown operator {} (expected eq, ne, in, nin, gt, gte, lt, lte, contains \
                 or icontains)",
                quoted(other)
            ))
        }
    }))
}

fn exact(value: &Value) -> Result<Value, String> {
    match value {
        Value::String(_) | Value::Bool(_) => Ok(value.clone()),
        Value::Number(n) if !n.is_f64() => Ok(value.clone()),
        other => Err(format!(
            "an exact match takes a string, integer or boolean, got {}",
            kind(other)
        )),
    }
}

fn value_list(value: &Value, op: &str) -> Result<Vec<Value>, String> {
    let Value::Array(items) = value else {
        return Err(format!("{op} takes a list, got {}", kind(value)));
    };
    let strings = items.iter().all(Value::is_string);
    let integers = items.iter().all(|v| v.is_i64() || v.is_u64());
    if !(strings || integers) {
        return Err(format!(
            "{op} takes a list of only strings or only integers"
        ));
    }
    Ok(items.clone())
}

fn range(ops: &Map<String, Value>) -> Result<Test, String> {
    let dated = ops.values().all(|v| v.as_str().and_then(instant).is_some());
    if dated {
        let bound = |op: &str| ops.get(op).and_then(Value::as_str).and_then(instant);
        return Ok(Test::Instants(Bounds {
            gt: bound("gt"),
            gte: bound("gte"),
            lt: bound("lt"),
            lte: bound("lte"),
        }));
    }
    let number = |op: &str| -> Result<Option<f64>, String> {
        match ops.get(op) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(other) => Err(format!(
                "{op} takes a number or an ISO date, got {}",
                match other {
                    Value::String(s) => quoted(s),
                    other => kind(other).to_string(),
                }
            )),
        }
    };
    Ok(Test::Numbers(Bounds {
        gt: number("gt")?,
        gte: number("gte")?,
        lt: number("lt")?,
        lte: number("lte")?,
    }))
}

/// Every value `key` (dotted) selects in `metadata`, a list value unwrapped one level.
fn values_at<'a>(metadata: &'a Map<String, Value>, key: &str) -> Vec<&'a Value> {
    let mut parts = key.split('.');
    let Some(first) = parts.next() else {
        return Vec::new();
    };
    let mut at = metadata.get(first);
    for part in parts {
        at = at.and_then(|v| v.get(part));
    }
    match at {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(value) => vec![value],
        None => Vec::new(),
    }
}

/// Equality that keeps booleans, integers and floats apart.
fn same(value: &Value, other: &Value) -> bool {
    match (value, other) {
        (Value::Number(a), Value::Number(b)) => a.is_f64() == b.is_f64() && a == b,
        _ => value == other,
    }
}

/// An ISO date (`2024-05-01`, midnight UTC), naive datetime (UTC) or RFC 3339 datetime.
fn instant(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(moment) = DateTime::parse_from_rfc3339(text) {
        return Some(moment.with_timezone(&Utc));
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(text, format) {
            return Some(naive.and_utc());
        }
    }
    let day = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    Some(day.and_hms_opt(0, 0, 0)?.and_utc())
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keeps(filter: Value, metadata: Value) -> bool {
        let Value::Object(metadata) = metadata else {
            panic!("metadata must be an object")
        };
        MetadataFilter::compile(&filter, "filters")
            .unwrap()
            .is_none_or(|f| f.matches(&metadata))
    }

    fn refused(filter: Value) -> String {
        MetadataFilter::compile(&filter, "filters")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn equality_is_type_strict_and_lists_match_any_element() {
        assert!(keeps(json!({"topic": "food"}), json!({"topic": "food"})));
        assert!(!keeps(json!({"topic": "food"}), json!({"topic": "work"})));
        assert!(!keeps(json!({"n": 3}), json!({"n": "3"})));
        assert!(!keeps(json!({"n": 3}), json!({"n": 3.0})));
        assert!(!keeps(json!({"flag": true}), json!({"flag": 1})));
        assert!(keeps(json!({"tags": "a"}), json!({"tags": ["b", "a"]})));
        assert!(keeps(
            json!({"topic": ["x", "food"]}),
            json!({"topic": "food"})
        ));
        assert!(keeps(json!({"topic": "*"}), json!({})));
        assert!(!keeps(json!({"topic": "food"}), json!({})));
        assert!(keeps(json!({"a.b": 1}), json!({"a": {"b": 1}})));
    }

    #[test]
    fn operators_ranges_and_dates() {
        let m = json!({"n": 5, "day": "2024-05-02", "at": "2024-05-02T10:00:00+02:00"});
        assert!(keeps(json!({"n": {"gte": 5, "lt": 6}}), m.clone()));
        assert!(!keeps(json!({"n": {"gt": 5}}), m.clone()));
        assert!(keeps(json!({"day": {"gt": "2024-05-01"}}), m.clone()));
        assert!(!keeps(json!({"day": {"lt": "2024-05-02"}}), m.clone()));
        assert!(keeps(
            json!({"at": {"lt": "2024-05-02T09:00:00Z"}}),
            m.clone()
        ));
        assert!(keeps(json!({"n": {"in": [4, 5]}}), m.clone()));
        assert!(!keeps(json!({"n": {"nin": [4, 5]}}), m.clone()));
        assert!(keeps(json!({"n": {"ne": 4}}), m.clone()));
        assert!(!keeps(json!({"gone": {"ne": 4}}), m.clone()));
        assert!(keeps(
            json!({"t": {"icontains": "Green tea"}}),
            json!({"t": "likes green TEA a lot"})
        ));
        assert!(!keeps(
            json!({"t": {"contains": "tea"}}),
            json!({"t": "teapot"})
        ));
    }

    #[test]
    fn logical_lists_combine_filters() {
        let m = json!({"c": "red", "n": 2});
        assert!(keeps(json!({"OR": [{"c": "blue"}, {"n": 2}]}), m.clone()));
        assert!(!keeps(json!({"OR": [{"c": "blue"}, {"n": 3}]}), m.clone()));
        assert!(!keeps(json!({"NOT": [{"c": "red"}]}), m.clone()));
        assert!(!keeps(
            json!({"AND": [{"c": "red"}, {"c": "blue"}]}),
            m.clone()
        ));
        assert!(keeps(json!({"$and": [{"c": "red"}, {"n": {"lte": 2}}]}), m));
    }

    #[test]
    fn bad_filters_are_refused_naming_the_key() {
        assert!(refused(json!(["x"])).contains("must be an object"));
        assert!(refused(json!({"n": 1.5})).contains("\"n\""));
        assert!(refused(json!({"n": {"gt": "soon"}})).contains("ISO date"));
        assert!(refused(json!({"n": {"regex": "a"}})).contains("unknown operator"));
        assert!(refused(json!({"n": {"gt": 1, "eq": 2}})).contains("mixed"));
        assert!(refused(json!({"OR": {"c": 1}})).contains("list of filters"));
        assert!(refused(json!({"OR": [{"c": [1, "a"]}]})).contains("filters.OR[0]"));
        let long = "k".repeat(10_000);
        let message = refused(json!({ long.clone(): 1.5 }));
        assert!(message.len() < 400 && !message.contains(&long), "{message}");
        let mut deep = json!({"c": 1});
        for _ in 0..=MAX_FILTER_DEPTH {
            deep = json!({ "AND": [deep] });
        }
        assert!(refused(deep).contains("deeper"));
        let wide: Map<String, Value> = (0..=MAX_FILTER_CONDITIONS)
            .map(|i| (format!("k{i}"), json!(1)))
            .collect();
        assert!(refused(Value::Object(wide)).contains("more than"));
    }
}
