//! The catalog's rows of the nine dataset evaluators of upstream's user simulator
//! (`src/agent/evaluators/`): persona, expertise, criteria, additional context, task, the
//! evaluation context's pieces, WritingBench's domains and LimitGen's aspect mapping.

use super::simulator::{SimulatorOf, SimulatorPart, UserPiece};
use super::Select::{self, Assigned, Item, LastItem};
use super::{row, Entry, Prompt};
use SimulatorOf::*;
use UserPiece::*;

mod legal;
mod limitgen;
mod research;
mod writing;

/// Where an evaluator's method holds a piece: its system prompt or its user prompt.
#[derive(Clone, Copy)]
enum Method {
    System,
    User,
}

/// `SimulatorOf::place`: each evaluator's module and the scopes of its two prompt methods.
macro_rules! evaluators {
    ($($of:ident => $file:literal, $class:literal;)*) => {
        impl SimulatorOf {
            /// The evaluator's module, and its method's scope.
            const fn place(self, method: Method) -> (&'static str, &'static str) {
                match (self, method) {
                    $(
                        ($of, Method::System) => (
                            concat!("src/agent/evaluators/", $file),
                            concat!($class, ".generate_system_prompt"),
                        ),
                        ($of, Method::User) => (
                            concat!("src/agent/evaluators/", $file),
                            concat!($class, ".generate_user_prompt"),
                        ),
                    )*
                }
            }
        }
    };
}

evaluators! {
    LexEval => "lexeval_evaluator.py", "LexEvalEvaluator";
    WritingBench => "writingbench_evaluator.py", "WritingBenchEvaluator";
    HelloBench => "hellobench_evaluator.py", "HelloBenchEvaluator";
    IdeaBench => "ideabench_evaluator.py", "IdeaBenchEvaluator";
    JreL => "jrel_evaluator.py", "JRELEvaluator";
    LimitGen => "limitgen_evaluator.py", "LimitGenEvaluator";
    Judge => "judge_evaluator.py", "JuDGEEvaluator";
    WritingPrompts => "writingprompts_evaluator.py", "WritingPromptsEvaluator";
    NfCats => "nfcats_evaluator.py", "NFCatsEvaluator";
}

/// A piece of `of`'s, in the method `method`.
const fn piece(
    of: SimulatorOf,
    piece: UserPiece,
    method: Method,
    name: &'static str,
    select: Select,
    sha256: &'static str,
) -> Entry {
    let (file, scope) = of.place(method);
    row(
        Prompt::Simulator(SimulatorPart::Of(of, piece)),
        name,
        file,
        scope,
        select,
        sha256,
    )
}

/// The evaluator's persona.
const fn persona(of: SimulatorOf, name: &'static str, sha256: &'static str) -> Entry {
    piece(
        of,
        Persona,
        Method::System,
        name,
        Assigned("user_persona", 0),
        sha256,
    )
}

/// The evaluator's expertise.
const fn expertise(of: SimulatorOf, name: &'static str, sha256: &'static str) -> Entry {
    piece(
        of,
        Expertise,
        Method::System,
        name,
        Assigned("domain_expertise", 0),
        sha256,
    )
}

/// The evaluator's additional context.
const fn additional(of: SimulatorOf, name: &'static str, sha256: &'static str) -> Entry {
    piece(
        of,
        Additional,
        Method::System,
        name,
        Assigned("additional_context", 0),
        sha256,
    )
}

/// The evaluator's task description.
const fn task(of: SimulatorOf, name: &'static str, sha256: &'static str) -> Entry {
    piece(
        of,
        Task,
        Method::User,
        name,
        Assigned("task_description", 0),
        sha256,
    )
}

/// The evaluator's `n`-th criterion.
const fn criterion(of: SimulatorOf, n: u8, name: &'static str, sha256: &'static str) -> Entry {
    let select = Item("evaluation_criteria", n as usize);
    piece(of, Criterion(n), Method::System, name, select, sha256)
}

/// The evaluator's last criterion.
const fn last_criterion(of: SimulatorOf, n: u8, name: &'static str, sha256: &'static str) -> Entry {
    let select = LastItem("evaluation_criteria", n as usize);
    piece(of, Criterion(n), Method::System, name, select, sha256)
}

/// The `n`-th piece of the evaluator's evaluation context.
const fn context(
    of: SimulatorOf,
    n: u8,
    name: &'static str,
    select: Select,
    sha256: &'static str,
) -> Entry {
    piece(of, Context(n), Method::User, name, select, sha256)
}

/// A piece of how the evaluator reads the row (`scope`: its extracting method).
const fn extracted(
    of: SimulatorOf,
    piece: UserPiece,
    name: &'static str,
    scope: &'static str,
    select: Select,
    sha256: &'static str,
) -> Entry {
    let (file, _) = of.place(Method::User);
    row(
        Prompt::Simulator(SimulatorPart::Of(of, piece)),
        name,
        file,
        scope,
        select,
        sha256,
    )
}

/// Each dataset evaluator's pieces: where each stands and its hash.
pub(super) fn rows() -> impl Iterator<Item = &'static Entry> {
    legal::LEGAL_ROWS
        .iter()
        .chain(writing::WRITING_ROWS)
        .chain(research::RESEARCH_ROWS)
        .chain(limitgen::LIMITGEN_ROWS)
}
