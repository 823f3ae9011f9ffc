//! What the merged judges are shown of a dataset's other metrics: each one's name, its value
//! or why it is missing, and what it means (the merged judges of JRE-L, JuDGE and IdeaBench
//! all take such a list).

/// One metric shown to the merged judge: its name, value (or why it is missing) and meaning.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownMetric {
    /// The metric's name, as upstream's prompt names it.
    pub name: &'static str,
    /// Its value; `Err` holds why it was not computed.
    pub value: Result<f64, &'static str>,
    /// What it measures and how to read it.
    pub meaning: &'static str,
}

/// A metric shown to the judge.
pub(super) fn shown(
    name: &'static str,
    value: Result<f64, &'static str>,
    meaning: &'static str,
) -> ShownMetric {
    ShownMetric {
        name,
        value,
        meaning,
    }
}

/// Why a metric needing BERTScore is missing.
pub(super) const NO_BERTSCORE: &str = "BERTScore needs a transformer model not shipped here";
