//! Attribute filters: restrict a search to the records whose attributes say something.
//!
//! An agent's store mixes memories of many kinds (per user, per source, per session) in one
//! namespace; a filter keeps a search to one of them without a namespace per combination.
//! Conditions are exact string equalities on [`Record::attributes`], all of which must hold.

use std::collections::BTreeMap;

use crate::record::Record;

/// A conjunction of attribute equalities. The default filter matches every record.
///
/// ```
/// use mb_engine::Filter;
///
/// let filter = Filter::new().attribute("speaker", "Alice").attribute("session", "3");
/// assert_eq!(filter.conditions().count(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    equals: BTreeMap<String, String>,
}

impl Filter {
    /// The filter that matches every record.
    pub fn new() -> Filter {
        Filter::default()
    }

    /// Also requires attribute `key` to equal `value`. Naming a key twice keeps the last value.
    pub fn attribute(mut self, key: impl Into<String>, value: impl Into<String>) -> Filter {
        self.equals.insert(key.into(), value.into());
        self
    }

    /// Whether `record` satisfies every condition.
    pub fn matches(&self, record: &Record) -> bool {
        self.matches_attributes(|key| record.attribute(key))
    }

    /// Whether the attributes `attribute` looks up satisfy every condition (for records read
    /// in place rather than as a [`Record`]).
    pub(crate) fn matches_attributes<'a>(
        &self,
        attribute: impl Fn(&str) -> Option<&'a str>,
    ) -> bool {
        self.equals
            .iter()
            .all(|(key, value)| attribute(key) == Some(value.as_str()))
    }

    /// True for the filter that matches everything.
    pub fn is_empty(&self) -> bool {
        self.equals.is_empty()
    }

    /// The required `(key, value)` pairs, ordered by key.
    pub fn conditions(&self) -> impl Iterator<Item = (&str, &str)> {
        self.equals.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordId;

    fn record(attributes: &[(&str, &str)]) -> Record {
        Record {
            id: RecordId(1),
            text: "text".into(),
            body: None,
            attributes: attributes
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            created_at_ms: 0,
            seq: 1,
        }
    }

    #[test]
    fn every_condition_must_hold() {
        let filter = Filter::new().attribute("a", "1").attribute("b", "2");
        assert!(filter.matches(&record(&[("a", "1"), ("b", "2"), ("c", "3")])));
        assert!(!filter.matches(&record(&[("a", "1")])));
        assert!(!filter.matches(&record(&[("a", "1"), ("b", "3")])));
        assert!(Filter::new().matches(&record(&[])));
    }
}
