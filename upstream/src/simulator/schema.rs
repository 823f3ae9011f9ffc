//! The simulator's `response_format`: `UserFeedback.model_json_schema()` as pydantic 2 writes
//! it, its descriptions read from `feedback.py`.

use serde_json::{json, Value};

use crate::catalog::SimulatorPart;
use crate::python::is_space;
use crate::{Upstream, UpstreamError};

/// The simulator's structured-output schema, as upstream sends it.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedbackSchema {
    /// The name the request gives the schema.
    pub name: String,
    /// `UserFeedback.model_json_schema()`, as pydantic 2 writes it.
    pub schema: Value,
}

impl FeedbackSchema {
    /// The request's `response_format`, as upstream's client sends it.
    pub fn response_format(&self) -> Value {
        json!({"type": "json_schema", "json_schema": {"name": self.name, "schema": self.schema}})
    }
}

/// pydantic's description of a class from its docstring (`inspect.cleandoc` of a one-line
/// docstring: its leading white space removed).
fn docstring(text: String) -> Result<String, UpstreamError> {
    if text.contains('\n') {
        return Err(UpstreamError::Field {
            prompt: "simulator.schema",
            message: "a docstring of several lines is not read".into(),
        });
    }
    Ok(text.trim_start_matches(is_space).to_string())
}

impl Upstream {
    /// `UserFeedback.model_json_schema()` as pydantic 2 writes it (the model's, the
    /// enumerations' and the fields' descriptions read from `feedback.py`), and the name the
    /// request gives it.
    pub fn simulator_schema(&self) -> Result<FeedbackSchema, UpstreamError> {
        let describe = |n: u8| self.simulator_text(SimulatorPart::Description(n));
        let enumeration = |doc: SimulatorPart, title: &str, values: &[&str]| {
            Ok::<_, UpstreamError>(json!({
                "description": docstring(self.simulator_text(doc)?)?,
                "enum": values,
                "title": title,
                "type": "string",
            }))
        };
        let schema = json!({
            "$defs": {
                "ImplicitAction": enumeration(
                    SimulatorPart::ActionEnum,
                    "ImplicitAction",
                    &["like", "dislike", "copy", "none"],
                )?,
                "UserBehavior": enumeration(
                    SimulatorPart::BehaviorEnum,
                    "UserBehavior",
                    &["continue_conversation", "end_conversation"],
                )?,
            },
            "description": docstring(self.simulator_text(SimulatorPart::FeedbackModel)?)?,
            "properties": {
                "reasoning": {"description": describe(0)?, "title": "Reasoning", "type": "string"},
                "implicit_action": {"$ref": "#/$defs/ImplicitAction", "description": describe(1)?},
                "behavior": {"$ref": "#/$defs/UserBehavior", "description": describe(2)?},
                "response": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": null,
                    "description": describe(3)?,
                    "title": "Response",
                },
            },
            "required": ["reasoning", "implicit_action", "behavior"],
            "title": "UserFeedback",
            "type": "object",
        });
        Ok(FeedbackSchema {
            name: self.simulator_text(SimulatorPart::SchemaName)?,
            schema,
        })
    }
}
