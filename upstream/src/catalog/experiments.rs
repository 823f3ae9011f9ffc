//! The catalog's rows of the paper's other experiments: the feedback-usefulness prompt
//! (`src/test_feedback.py`) and RAPTOR's answer and summarization prompts (`src/agent/raptor.py`,
//! the vendored `baselines/raptor`).

use super::Select::{Assigned, Nth};
use super::{row, Entry, Prompt};
use Prompt::*;

/// RAPTOR's agent.
const RAPTOR_AGENT: &str = "src/agent/raptor.py";

/// Where the vendored RAPTOR asks for a cluster's summary (the model MemoryBench wires in).
const RAPTOR_SUMMARIZE: &str = "baselines/raptor/raptor/SummarizationModels.py";

/// Every prompt of these experiments, where it stands and its hash.
pub(super) static EXPERIMENT_ROWS: &[Entry] = &[
    row(
        FeedbackUsefulnessEn,
        "feedback_usefulness.en",
        "src/test_feedback.py",
        "process_single_data",
        Assigned("user_prompt", 0),
        "d53f8e002807dbe7",
    ),
    row(
        FeedbackUsefulnessZh,
        "feedback_usefulness.zh",
        "src/test_feedback.py",
        "process_single_data",
        Assigned("user_prompt", 1),
        "fe330a4f36bc9c3b",
    ),
    row(
        AnswerRaptorEn,
        "answer.raptor.en",
        RAPTOR_AGENT,
        "RAPTORAgent.generate_response",
        Assigned("user_prompt", 0),
        "3a67aa8942a9be70",
    ),
    row(
        AnswerRaptorZh,
        "answer.raptor.zh",
        RAPTOR_AGENT,
        "RAPTORAgent.generate_response",
        Assigned("user_prompt", 1),
        "44af3f0174020318",
    ),
    row(
        RaptorSummarizeSystem,
        "raptor.summarize.system",
        RAPTOR_SUMMARIZE,
        "TYCSummarizationModel.summarize",
        Nth(3),
        "776e84186ddaa3b9",
    ),
    row(
        RaptorSummarize,
        "raptor.summarize",
        RAPTOR_SUMMARIZE,
        "TYCSummarizationModel.summarize",
        Nth(7),
        "4ab197ee35e55204",
    ),
];
