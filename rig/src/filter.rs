//! rig search filters translated to engine attribute filters.
//!
//! rig's canonical filter ([`Filter`]) is a tree of `eq`, `gt`, `lt`, `and` and `or` over JSON
//! values. The engine filters by string equality of record attributes, all conditions ANDed
//! ([`mb_engine::Filter`]). `eq` on a string, boolean or integer and `and` of such translate
//! exactly (documents store those fields as attributes, see [`crate::document`]); everything
//! else is refused with [`Error::UnsupportedFilter`] rather than approximated.

use rig_core::vector_store::request::Filter;
use serde_json::Value;

use crate::document::attribute_text;
use crate::error::{Error, Result};

/// rig's canonical JSON filter: the filter type of [`EngineIndex`](crate::EngineIndex).
pub type RigFilter = Filter<Value>;

/// The engine filter equivalent to `filter`, or `None` when no record can match it (two
/// conditions require different values of one attribute).
pub fn to_engine_filter(filter: &RigFilter) -> Result<Option<mb_engine::Filter>> {
    let mut conditions: Vec<(String, String)> = Vec::new();
    collect(filter, &mut conditions)?;
    let mut engine = mb_engine::Filter::new();
    for (index, (key, value)) in conditions.iter().enumerate() {
        let contradicted = conditions[..index]
            .iter()
            .any(|(earlier, other)| earlier == key && other != value);
        if contradicted {
            return Ok(None);
        }
        engine = engine.attribute(key.clone(), value.clone());
    }
    Ok(Some(engine))
}

/// Appends the equalities of `filter` to `conditions`.
fn collect(filter: &RigFilter, conditions: &mut Vec<(String, String)>) -> Result<()> {
    match filter {
        Filter::Eq(key, value) => {
            let text = attribute_text(value).ok_or_else(|| {
                Error::UnsupportedFilter(format!(
                    "eq({key:?}, {value}): attributes are compared as text, so only strings, \
                     booleans and integers can be matched"
                ))
            })?;
            conditions.push((key.clone(), text));
            Ok(())
        }
        Filter::And(left, right) => {
            collect(left, conditions)?;
            collect(right, conditions)
        }
        Filter::Gt(key, _) => Err(unsupported("gt", key)),
        Filter::Lt(key, _) => Err(unsupported("lt", key)),
        Filter::Or(_, _) => Err(Error::UnsupportedFilter(
            "or: mb-engine filters are conjunctions of attribute equalities".into(),
        )),
    }
}

fn unsupported(operator: &str, key: &str) -> Error {
    Error::UnsupportedFilter(format!(
        "{operator}({key:?}, ..): mb-engine filters compare attributes for equality only"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rig_core::vector_store::request::SearchFilter;
    use serde_json::json;

    #[test]
    fn equalities_and_conjunctions_translate() {
        let filter = RigFilter::eq("speaker", json!("Maya"))
            .and(RigFilter::eq("session", json!(2)))
            .and(RigFilter::eq("pinned", json!(true)));
        let engine = to_engine_filter(&filter).unwrap().unwrap();
        let conditions: Vec<_> = engine.conditions().collect();
        assert_eq!(
            conditions,
            vec![("pinned", "true"), ("session", "2"), ("speaker", "Maya")]
        );
    }

    #[test]
    fn contradictions_match_nothing_and_repeats_are_fine() {
        let contradiction =
            RigFilter::eq("speaker", json!("Maya")).and(RigFilter::eq("speaker", json!("Jon")));
        assert!(to_engine_filter(&contradiction).unwrap().is_none());
        let repeat =
            RigFilter::eq("speaker", json!("Maya")).and(RigFilter::eq("speaker", json!("Maya")));
        assert!(to_engine_filter(&repeat).unwrap().is_some());
    }

    #[test]
    fn other_forms_are_refused() {
        for filter in [
            RigFilter::gt("session", json!(1)),
            RigFilter::lt("session", json!(1)),
            RigFilter::eq("a", json!("x")).or(RigFilter::eq("b", json!("y"))),
            RigFilter::eq("score", json!(0.5)),
            RigFilter::eq("tags", json!(["x"])),
            RigFilter::eq("a", json!("x")).and(RigFilter::gt("b", json!(1))),
        ] {
            let error = to_engine_filter(&filter).unwrap_err();
            assert!(matches!(error, Error::UnsupportedFilter(_)), "{error}");
        }
    }
}
