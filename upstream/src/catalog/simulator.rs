//! The catalog's rows of upstream's LLM user simulator
//! (`FeedbackAgent._generate_llm_based_feedback`):
//! the frame `user_simulator.py` builds every request with, the `UserFeedback` schema's
//! descriptions (`feedback.py`), and each dataset evaluator's persona, expertise, criteria,
//! task and evaluation-context pieces (`src/agent/evaluators/`, their rows in `evaluators/`).

use super::Select::{self, Assigned, Nth};
use super::{row, Entry, Prompt};
use SimulatorPart::*;

/// One piece of the simulator's request shared by every dataset, or one dataset evaluator's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SimulatorPart {
    /// The system prompt (`build_base_system_prompt`): persona, expertise, criteria.
    System,
    /// What the system prompt appends with the evaluator's additional context.
    SystemSuffix,
    /// What joins the criteria lines.
    CriteriaJoin,
    /// One criterion's line.
    CriterionLine,
    /// The user prompt's head (`build_base_user_prompt`): the task and the conversation.
    UserHead,
    /// The sentence the head puts after the task (`prompt_context`).
    Focus,
    /// How the user prompt shows the evaluator's evaluation context.
    EvaluationContext,
    /// The language instruction for a Chinese row.
    LanguageZh,
    /// The language instruction for an English row.
    LanguageEn,
    /// The language instruction for a row in another language.
    LanguageOther,
    /// The user prompt's tail: the language instruction and the JSON format.
    Instructions,
    /// A user turn of the conversation (`format_conversation_history`).
    UserLine,
    /// An assistant turn of the conversation.
    AssistantLine,
    /// The `UserFeedback` model's docstring (the schema's description).
    FeedbackModel,
    /// The `ImplicitAction` enumeration's docstring.
    ActionEnum,
    /// The `UserBehavior` enumeration's docstring.
    BehaviorEnum,
    /// A `UserFeedback` field's description (reasoning, implicit action, behavior, response).
    Description(u8),
    /// The name the request gives the schema.
    SchemaName,
    /// A piece of one dataset evaluator's.
    Of(SimulatorOf, UserPiece),
}

/// A dataset evaluator of upstream's simulator (`EvaluatorFactory`'s nine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SimulatorOf {
    /// `LexEvalEvaluator`.
    LexEval,
    /// `WritingBenchEvaluator`.
    WritingBench,
    /// `HelloBenchEvaluator`.
    HelloBench,
    /// `IdeaBenchEvaluator`.
    IdeaBench,
    /// `JRELEvaluator`.
    JreL,
    /// `LimitGenEvaluator`.
    LimitGen,
    /// `JuDGEEvaluator`.
    Judge,
    /// `WritingPromptsEvaluator`.
    WritingPrompts,
    /// `NFCatsEvaluator`.
    NfCats,
}

/// A piece of a dataset evaluator's request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UserPiece {
    /// Who the simulated user is.
    Persona,
    /// What the user knows.
    Expertise,
    /// The `n`-th (0-based) thing the user judges answers by.
    Criterion(u8),
    /// The system prompt's additional context.
    Additional,
    /// What the user is doing (the user prompt's task description).
    Task,
    /// The `n`-th piece of the evaluation context, in the evaluator's own order.
    Context(u8),
    /// WritingBench's `n`-th domain name (the last one where the dataset names none).
    Domain(u8),
    /// What WritingBench looks for in the dataset name to choose the `n`-th domain.
    DomainTest(u8),
    /// LimitGen's category when the row has none.
    CategoryDefault,
    /// The `n`-th category of LimitGen's aspect mapping.
    AspectKey(u8),
    /// The aspect the `n`-th category maps to.
    AspectValue(u8),
    /// LimitGen's aspect of a category the mapping does not hold.
    AspectDefault,
}

/// The module of the shared frame.
const SIMULATOR: &str = "src/agent/user_simulator.py";
/// The module of the feedback agent and its schema.
const FEEDBACK: &str = "src/agent/feedback.py";
/// Where the frame's system prompt is built.
const SYSTEM: &str = "UserSimulator.build_base_system_prompt";
/// Where the frame's user prompt is built.
const USER: &str = "UserSimulator.build_base_user_prompt";
/// Where the conversation is written out.
const HISTORY: &str = "UserSimulator.format_conversation_history";

/// A piece of the shared frame (`user_simulator.py`).
const fn frame(
    part: SimulatorPart,
    name: &'static str,
    scope: &'static str,
    select: Select,
    sha256: &'static str,
) -> Entry {
    row(
        Prompt::Simulator(part),
        name,
        SIMULATOR,
        scope,
        select,
        sha256,
    )
}

/// A piece of the feedback schema or request (`feedback.py`).
const fn schema(
    part: SimulatorPart,
    name: &'static str,
    scope: &'static str,
    select: Select,
    sha256: &'static str,
) -> Entry {
    row(
        Prompt::Simulator(part),
        name,
        FEEDBACK,
        scope,
        select,
        sha256,
    )
}

/// The shared frame and the schema: where each stands and its hash.
pub(in crate::catalog) static SIMULATOR_ROWS: &[Entry] = &[
    frame(
        System,
        "simulator.system",
        SYSTEM,
        Assigned("prompt", 0),
        "3587b278681d45c0",
    ),
    frame(
        SystemSuffix,
        "simulator.system_suffix",
        SYSTEM,
        Nth(4),
        "452f21a58028f126",
    ),
    frame(
        CriteriaJoin,
        "simulator.criteria_join",
        SYSTEM,
        Assigned("criteria_text", 0),
        "d7a5e915306d21dc",
    ),
    frame(
        CriterionLine,
        "simulator.criterion_line",
        SYSTEM,
        Nth(2),
        "1a5b6c1de1336cf0",
    ),
    frame(
        UserHead,
        "simulator.user_head",
        USER,
        Assigned("prompt", 0),
        "84b5ff1a2948c398",
    ),
    frame(
        Focus,
        "simulator.focus",
        USER,
        Assigned("prompt_context", 0),
        "26c185275a509b75",
    ),
    frame(
        EvaluationContext,
        "simulator.evaluation_context",
        USER,
        Nth(5),
        "d1c3ab4e90d15a71",
    ),
    frame(
        LanguageZh,
        "simulator.language.zh",
        USER,
        Assigned("language_instruction", 0),
        "2b0c320b48303669",
    ),
    frame(
        LanguageEn,
        "simulator.language.en",
        USER,
        Assigned("language_instruction", 1),
        "4b41b34fab6165fa",
    ),
    frame(
        LanguageOther,
        "simulator.language.other",
        USER,
        Assigned("language_instruction", 2),
        "3df3c0a212ea0076",
    ),
    frame(
        Instructions,
        "simulator.instructions",
        USER,
        Nth(11),
        "cd6db1d97e223225",
    ),
    frame(
        UserLine,
        "simulator.user_line",
        HISTORY,
        Nth(7),
        "e3113d760a21883c",
    ),
    frame(
        AssistantLine,
        "simulator.assistant_line",
        HISTORY,
        Nth(9),
        "8771026a08db60ea",
    ),
    schema(
        FeedbackModel,
        "simulator.schema.model",
        "UserFeedback",
        Nth(0),
        "3e9a78bb41d921da",
    ),
    schema(
        ActionEnum,
        "simulator.schema.action",
        "ImplicitAction",
        Nth(0),
        "195dc18b740a3b8d",
    ),
    schema(
        BehaviorEnum,
        "simulator.schema.behavior",
        "UserBehavior",
        Nth(0),
        "c2154862cc96a2f9",
    ),
    schema(
        Description(0),
        "simulator.schema.reasoning",
        "UserFeedback",
        Assigned("description", 0),
        "9524659070e656e9",
    ),
    schema(
        Description(1),
        "simulator.schema.implicit_action",
        "UserFeedback",
        Assigned("description", 1),
        "8fe2bb1361505bd8",
    ),
    schema(
        Description(2),
        "simulator.schema.behavior_field",
        "UserFeedback",
        Assigned("description", 2),
        "ced35a3167820cec",
    ),
    schema(
        Description(3),
        "simulator.schema.response",
        "UserFeedback",
        Assigned("description", 3),
        "7c75f247b4cfa03a",
    ),
    schema(
        SchemaName,
        "simulator.schema.name",
        "FeedbackAgent._generate_llm_based_feedback",
        Nth(11),
        "7b466ea8f5bd7517",
    ),
];
