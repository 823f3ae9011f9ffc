//! Upstream's LLM user simulator (`FeedbackAgent._generate_llm_based_feedback`): the request it
//! sends about a row's conversation, as the dataset's evaluator builds it (persona, expertise,
//! criteria, task and evaluation context around `UserSimulator`'s frame), with the
//! `UserFeedback` schema pydantic writes for its `response_format`.
//!
//! Python's semantics are kept where upstream's code relies on them: `extract_data_field`'s
//! default for a field that is missing, `None` or `{}`; truthiness; `str()` of the row's
//! values; `.strip()` of the conversation; and the exceptions its code raises on a dataset name
//! or a field it cannot read ([`UpstreamError::Raises`]).

use mb_core::{Message, Role};
use serde_json::{Map, Value};

use crate::catalog::{entries, Prompt, SimulatorOf, SimulatorPart, UserPiece};
use crate::checkout::request;
use crate::python::{repr_json, strip};
use crate::{Upstream, UpstreamError};

mod schema;

pub use schema::FeedbackSchema;

/// What [`UpstreamError::Raises`] names as the request not sent.
const REQUEST: &str = "the user simulator's request";

/// The simulator's request about one row: its messages and its schema.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatorRequest {
    /// The evaluator's system prompt, then its user prompt.
    pub messages: Vec<Message>,
    /// The `response_format`'s schema.
    pub schema: FeedbackSchema,
}

/// The evaluator upstream's `EvaluatorFactory` chooses for a row's dataset name (its
/// `_normalize_dataset_name`: the lower-cased name searched for each family's words, in the
/// factory's order), or `None` where the factory raises (an unknown name).
pub fn simulator_of(dataset_name: &str) -> Option<SimulatorOf> {
    let name = dataset_name.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|word| name.contains(word));
    let of = if has(&["lexeval", "legal"]) {
        SimulatorOf::LexEval
    } else if has(&["writingbench"]) {
        SimulatorOf::WritingBench
    } else if has(&["hellobench"]) {
        SimulatorOf::HelloBench
    } else if has(&["ideabench", "idea"]) {
        SimulatorOf::IdeaBench
    } else if has(&["jre-l", "jrel", "journalist"]) {
        SimulatorOf::JreL
    } else if has(&["limitgen", "limit"]) {
        SimulatorOf::LimitGen
    } else if has(&["judge", "judgment"]) {
        SimulatorOf::Judge
    } else if has(&["writingprompts", "writing_prompts"]) {
        SimulatorOf::WritingPrompts
    } else if has(&["nfcats", "nf-cats"]) {
        SimulatorOf::NfCats
    } else {
        return None;
    };
    Some(of)
}

/// `UserSimulator.extract_data_field(data, 'info', key)`: the row's value, or `None` (the
/// caller's default) where it is missing, `None` or `{}`.
fn extract<'a>(info: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    info.get(key).filter(|value| match value {
        Value::Null => false,
        Value::Object(map) => !map.is_empty(),
        _ => true,
    })
}

/// Python's truthiness of a loaded JSON value.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// Python's `str()` of a loaded JSON value, as an f-string writes it.
fn str_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => repr_json(other),
    }
}

/// The extracted value's `str()`, or `default` where `extract_data_field` gives it.
fn field_or(info: &Map<String, Value>, key: &str, default: &str) -> String {
    extract(info, key).map_or_else(|| default.to_string(), str_of)
}

/// What Python raises on iterating `value` and calling `.get` on each item, for a value that
/// is not a list of dictionaries (a truthy one: a falsy one is never iterated).
fn dictionaries<'a>(
    value: &'a Value,
    field: &str,
) -> Result<Vec<&'a Map<String, Value>>, UpstreamError> {
    let raises = |what: &str| UpstreamError::Raises {
        request: REQUEST,
        reason: format!("the row's {field} {what}"),
    };
    let Value::Array(items) = value else {
        return Err(raises("is not a list of dictionaries"));
    };
    items
        .iter()
        .map(|item| {
            item.as_object()
                .ok_or_else(|| raises("holds an item that is not a dictionary"))
        })
        .collect()
}

impl Upstream {
    /// A piece of the simulator's frame or schema, its text without fields.
    fn simulator_text(&self, part: SimulatorPart) -> Result<String, UpstreamError> {
        self.template(Prompt::Simulator(part))?.text()
    }

    /// A piece of `of`'s evaluator, filled with `values`.
    fn evaluator_piece(
        &self,
        of: SimulatorOf,
        piece: UserPiece,
        values: &[(&str, &str)],
    ) -> Result<String, UpstreamError> {
        self.render(Prompt::Simulator(SimulatorPart::Of(of, piece)), values)
    }

    /// The request upstream's simulator sends about a row of `dataset_name` (its
    /// `dataset_name` column) in `lang` (its `lang` column) with evaluation metadata `info`,
    /// after `conversation` (the row's prompt and the answers and replies so far): the
    /// evaluator's system and user prompts and the feedback schema. Where upstream's code
    /// raises instead of sending (an unknown dataset name, a field it cannot read), the error
    /// is [`UpstreamError::Raises`]: upstream then ends the conversation with no reaction.
    pub fn simulator_request(
        &self,
        dataset_name: &str,
        conversation: &[Message],
        lang: &str,
        info: &Map<String, Value>,
    ) -> Result<SimulatorRequest, UpstreamError> {
        let of = simulator_of(dataset_name).ok_or_else(|| UpstreamError::Raises {
            request: REQUEST,
            reason: format!("the evaluator factory knows no dataset named {dataset_name:?}"),
        })?;
        let domain = match of {
            SimulatorOf::WritingBench => self.writingbench_domain(dataset_name)?,
            _ => String::new(),
        };
        let system = self.simulator_system(of, &domain)?;
        let context = self.evaluation_context(of, &domain, info)?;
        let user = self.simulator_user(of, &domain, conversation, lang, &context)?;
        Ok(SimulatorRequest {
            messages: request(system, user),
            schema: self.simulator_schema()?,
        })
    }

    /// WritingBench's domain: the first of its domain names found in the dataset name, else
    /// its general one.
    fn writingbench_domain(&self, dataset_name: &str) -> Result<String, UpstreamError> {
        let of = SimulatorOf::WritingBench;
        for n in 0..4 {
            let test = self.evaluator_piece(of, UserPiece::DomainTest(n), &[])?;
            if dataset_name.contains(&test) {
                return self.evaluator_piece(of, UserPiece::Domain(n), &[]);
            }
        }
        self.evaluator_piece(of, UserPiece::Domain(4), &[])
    }

    /// `build_base_system_prompt` with `of`'s persona, expertise, criteria and additional
    /// context.
    fn simulator_system(&self, of: SimulatorOf, domain: &str) -> Result<String, UpstreamError> {
        let with_domain: &[(&str, &str)] = match of {
            SimulatorOf::WritingBench => &[("domain", domain)],
            _ => &[],
        };
        let persona = self.evaluator_piece(of, UserPiece::Persona, with_domain)?;
        let expertise = self.evaluator_piece(of, UserPiece::Expertise, &[])?;
        let additional = self.evaluator_piece(of, UserPiece::Additional, &[])?;
        let mut lines = Vec::new();
        for entry in entries() {
            if let Prompt::Simulator(SimulatorPart::Of(o, UserPiece::Criterion(_))) = entry.prompt {
                if o == of {
                    let criterion = self.template(entry.prompt)?.text()?;
                    lines.push(self.render(
                        Prompt::Simulator(SimulatorPart::CriterionLine),
                        &[("criteria", &criterion)],
                    )?);
                }
            }
        }
        let join = self.simulator_text(SimulatorPart::CriteriaJoin)?;
        let mut prompt = self.render(
            Prompt::Simulator(SimulatorPart::System),
            &[
                ("user_persona", &persona),
                ("domain_expertise", &expertise),
                ("criteria_text", &lines.join(&join)),
            ],
        )?;
        if !additional.is_empty() {
            prompt += &self.render(
                Prompt::Simulator(SimulatorPart::SystemSuffix),
                &[("additional_context", &additional)],
            )?;
        }
        Ok(prompt)
    }

    /// `build_base_user_prompt` with `of`'s task and the evaluation `context`.
    fn simulator_user(
        &self,
        of: SimulatorOf,
        domain: &str,
        conversation: &[Message],
        lang: &str,
        context: &str,
    ) -> Result<String, UpstreamError> {
        let with_domain: &[(&str, &str)] = match of {
            SimulatorOf::WritingBench => &[("domain", domain)],
            _ => &[],
        };
        let task = self.evaluator_piece(of, UserPiece::Task, with_domain)?;
        let mut history = String::new();
        for message in conversation {
            let line = match message.role {
                Role::User => SimulatorPart::UserLine,
                Role::Assistant => SimulatorPart::AssistantLine,
                Role::System => continue,
            };
            history += &self.render(Prompt::Simulator(line), &[("content", &message.content)])?;
        }
        let focus = self.simulator_text(SimulatorPart::Focus)?;
        let mut prompt = self.render(
            Prompt::Simulator(SimulatorPart::UserHead),
            &[
                ("task_description", &task),
                ("prompt_context", &focus),
                ("conversation", strip(&history)),
            ],
        )?;
        if !context.is_empty() {
            prompt += &self.render(
                Prompt::Simulator(SimulatorPart::EvaluationContext),
                &[("evaluation_context", context)],
            )?;
        }
        let language = match lang {
            "zh" => self.simulator_text(SimulatorPart::LanguageZh)?,
            "en" => self.simulator_text(SimulatorPart::LanguageEn)?,
            other => self.render(
                Prompt::Simulator(SimulatorPart::LanguageOther),
                &[("lang", other)],
            )?,
        };
        prompt += &self.render(
            Prompt::Simulator(SimulatorPart::Instructions),
            &[("language_instruction", &language)],
        )?;
        Ok(prompt)
    }

    /// The evaluation context `of`'s evaluator builds from the row's `info` (empty where it
    /// builds none).
    fn evaluation_context(
        &self,
        of: SimulatorOf,
        domain: &str,
        info: &Map<String, Value>,
    ) -> Result<String, UpstreamError> {
        use SimulatorOf::*;
        let piece = |n: u8, values: &[(&str, &str)]| {
            self.evaluator_piece(of, UserPiece::Context(n), values)
        };
        let mut context = String::new();
        match of {
            LexEval | Judge | WritingPrompts => {
                if let Some(answer) = extract(info, "golden_answer").filter(|v| truthy(v)) {
                    context += &piece(0, &[("golden_answer", &str_of(answer))])?;
                    let notes = if of == WritingPrompts { 1..4 } else { 1..2 };
                    for n in notes {
                        context += &piece(n, &[])?;
                    }
                }
            }
            NfCats => context += &piece(0, &[])?,
            IdeaBench => {
                let title = field_or(info, "title", "");
                let abstract_ = field_or(info, "abstract", "");
                context += &piece(0, &[("title", &title), ("abstract", &abstract_)])?;
            }
            JreL => {
                let title = field_or(info, "pr-title", "");
                let abstract_ = field_or(info, "pr-abstract", "");
                context += &piece(0, &[("pr_title", &title), ("pr_abstract", &abstract_)])?;
            }
            HelloBench => {
                if let Some(checklist) = extract(info, "checklist").filter(|v| truthy(v)) {
                    context += &piece(0, &[])?;
                    for item in dictionaries(checklist, "checklist")? {
                        let content = item.get("checklist_content").map(str_of);
                        context += &piece(1, &[("content", content.as_deref().unwrap_or(""))])?;
                    }
                    context += &piece(2, &[])?;
                }
            }
            WritingBench => {
                context += &piece(0, &[("domain", domain)])?;
                if let Some(criteria) = extract(info, "criteria").filter(|v| truthy(v)) {
                    context += &piece(1, &[])?;
                    for (at, criterion) in dictionaries(criteria, "criteria")?.iter().enumerate() {
                        let i = (at + 1).to_string();
                        let name = match criterion.get("name") {
                            Some(name) => str_of(name),
                            None => piece(2, &[("i", &i)])?,
                        };
                        let description = criterion
                            .get("criteria_description")
                            .map(str_of)
                            .unwrap_or_default();
                        context += &piece(
                            3,
                            &[("i", &i), ("name", &name), ("description", &description)],
                        )?;
                    }
                    context += &piece(4, &[])?;
                }
            }
            LimitGen => {
                let (category, aspect) = self.limitgen_aspect(info)?;
                if let Some(truth) = extract(info, "ground_truth").filter(|v| truthy(v)) {
                    context += &piece(0, &[("ground_truth", &str_of(truth))])?;
                }
                if truthy(&category) {
                    context += &piece(1, &[("category", &str_of(&category))])?;
                }
                if !aspect.is_empty() {
                    context += &piece(2, &[("aspect", &aspect)])?;
                }
                if !context.is_empty() {
                    context += &piece(3, &[])?;
                }
            }
        }
        Ok(context)
    }

    /// LimitGen's category (the row's, or its default) and the aspect its mapping gives it.
    fn limitgen_aspect(&self, info: &Map<String, Value>) -> Result<(Value, String), UpstreamError> {
        let of = SimulatorOf::LimitGen;
        let text = |piece: UserPiece| self.evaluator_piece(of, piece, &[]);
        let category = match extract(info, "category") {
            Some(category) => category.clone(),
            None => Value::String(text(UserPiece::CategoryDefault)?),
        };
        let key = match &category {
            Value::Array(_) | Value::Object(_) => {
                return Err(UpstreamError::Raises {
                    request: REQUEST,
                    reason: "the row's category is a list or a dictionary (unhashable)".into(),
                })
            }
            Value::String(key) => Some(key.as_str()),
            _ => None,
        };
        let mut aspect = None;
        for entry in entries() {
            if let Prompt::Simulator(SimulatorPart::Of(_, UserPiece::AspectKey(n))) = entry.prompt {
                // A dictionary literal keeps the last of equal keys.
                if key == Some(self.template(entry.prompt)?.text()?.as_str()) {
                    aspect = Some(text(UserPiece::AspectValue(n))?);
                }
            }
        }
        let aspect = match aspect {
            Some(aspect) => aspect,
            None => text(UserPiece::AspectDefault)?,
        };
        Ok((category, aspect))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dataset_names_map_as_the_factory_maps_them() {
        let of = |name| simulator_of(name);
        assert_eq!(of("LexEval-Judge"), Some(SimulatorOf::LexEval));
        assert_eq!(
            of("WritingBench-Politics&Law"),
            Some(SimulatorOf::WritingBench)
        );
        assert_eq!(of("JuDGE"), Some(SimulatorOf::Judge));
        assert_eq!(of("LimitGen-Syn"), Some(SimulatorOf::LimitGen));
        assert_eq!(of("WritingPrompts"), Some(SimulatorOf::WritingPrompts));
        assert_eq!(of("my-ideas"), Some(SimulatorOf::IdeaBench));
        assert_eq!(of("Journalist-Reports"), Some(SimulatorOf::JreL));
        assert_eq!(of("Locomo-0"), None);
    }

    #[test]
    fn fields_read_as_python_reads_them() {
        let info: Map<String, Value> = serde_json::from_value(json!({
            "a": null, "b": {}, "c": [], "d": "", "e": 0, "f": [1, "x", true], "g": 2.5,
        }))
        .unwrap();
        assert_eq!(extract(&info, "a"), None);
        assert_eq!(extract(&info, "b"), None);
        assert_eq!(extract(&info, "c"), Some(&json!([])));
        assert!(!truthy(&info["c"]) && !truthy(&info["d"]) && !truthy(&info["e"]));
        assert_eq!(str_of(&info["f"]), "[1, 'x', True]");
        assert_eq!(field_or(&info, "g", ""), "2.5");
        assert_eq!(field_or(&info, "z", "none here"), "none here");
        assert!(matches!(
            dictionaries(&json!("text"), "criteria"),
            Err(UpstreamError::Raises { .. })
        ));
        assert!(matches!(
            dictionaries(&json!([{}, 1]), "criteria"),
            Err(UpstreamError::Raises { .. })
        ));
    }
}
