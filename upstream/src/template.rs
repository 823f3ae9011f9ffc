//! A prompt template as upstream wrote it, and filling it as Python fills it.

use crate::error::UpstreamError;
use crate::python::Piece;

/// One of upstream's prompt texts: literal text and replacement fields, each field named by
/// the expression (or `str.format` name) upstream fills it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    name: &'static str,
    pieces: Vec<Piece>,
}

impl Template {
    pub(crate) fn new(name: &'static str, pieces: Vec<Piece>) -> Template {
        Template { name, pieces }
    }

    /// The catalog name of the prompt this is.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The keys of its fields, in order, each once.
    pub fn fields(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = Vec::new();
        for piece in &self.pieces {
            if let Piece::Field { key, .. } = piece {
                if !keys.contains(&key.as_str()) {
                    keys.push(key);
                }
            }
        }
        keys
    }

    /// The text with every field filled from `values` (key, value), as Python's `str()` of
    /// each value would fill it. Every field must be given and every value must fill one: a
    /// mismatch is a caller's error, never a silently different prompt.
    pub fn render(&self, values: &[(&str, &str)]) -> Result<String, UpstreamError> {
        for (key, _) in values {
            if !self.fields().contains(key) {
                return Err(self.field_error(format!("it has no field {{{key}}}")));
            }
        }
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Field {
                    key,
                    conversion,
                    spec,
                } => {
                    if conversion.is_some_and(|c| c != 's') || !spec.is_empty() {
                        return Err(self.field_error(format!(
                            "field {{{key}}} has a conversion or format spec this reader does not apply"
                        )));
                    }
                    let value = values
                        .iter()
                        .find(|(k, _)| k == key)
                        .map(|(_, v)| *v)
                        .ok_or_else(|| self.field_error(format!("no value for {{{key}}}")))?;
                    out.push_str(value);
                }
            }
        }
        Ok(out)
    }

    /// The text of a template without fields.
    pub fn text(&self) -> Result<String, UpstreamError> {
        self.render(&[])
    }

    fn field_error(&self, message: String) -> UpstreamError {
        UpstreamError::Field {
            prompt: self.name,
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template() -> Template {
        Template::new(
            "test",
            vec![
                Piece::Text("Context:\n".into()),
                Piece::Field {
                    key: "context".into(),
                    conversion: None,
                    spec: String::new(),
                },
                Piece::Text(" / ".into()),
                Piece::Field {
                    key: "context".into(),
                    conversion: None,
                    spec: String::new(),
                },
            ],
        )
    }

    #[test]
    fn fills_every_occurrence() {
        assert_eq!(
            template().render(&[("context", "c")]).unwrap(),
            "Context:\nc / c"
        );
        assert_eq!(template().fields(), vec!["context"]);
    }

    #[test]
    fn a_missing_or_unknown_field_is_an_error() {
        assert!(template().render(&[]).is_err());
        let extra = template().render(&[("context", "c"), ("question", "q")]);
        assert!(matches!(extra, Err(UpstreamError::Field { .. })));
    }
}
