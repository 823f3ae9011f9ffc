//! The catalog's rows of LexEval's and JuDGE's user simulator (legal questions and criminal
//! judgments).

use super::{additional, context, criterion, expertise, last_criterion, persona, task};
use crate::catalog::Entry;
use crate::catalog::Select::{Assigned, Nth};
use crate::catalog::SimulatorOf::*;

/// Where each piece stands and its hash.
pub(super) static LEGAL_ROWS: &[Entry] = &[
    // LexEvalEvaluator
    persona(LexEval, "simulator.lexeval.persona", "592af8423376f2d1"),
    expertise(LexEval, "simulator.lexeval.expertise", "7247003efcf9c217"),
    additional(LexEval, "simulator.lexeval.additional", "f8081fa8d12c3d58"),
    task(LexEval, "simulator.lexeval.task", "1db7e35e1591746c"),
    criterion(
        LexEval,
        0,
        "simulator.lexeval.criterion.0",
        "4f1e6d6a151c8a39",
    ),
    criterion(
        LexEval,
        1,
        "simulator.lexeval.criterion.1",
        "1d8c13da7c7eb1e3",
    ),
    criterion(
        LexEval,
        2,
        "simulator.lexeval.criterion.2",
        "55eb7784e1f7222f",
    ),
    criterion(
        LexEval,
        3,
        "simulator.lexeval.criterion.3",
        "e94e8411550fba49",
    ),
    last_criterion(
        LexEval,
        4,
        "simulator.lexeval.criterion.4",
        "cee446ca23aa4b89",
    ),
    context(
        LexEval,
        0,
        "simulator.lexeval.reference",
        Assigned("evaluation_context", 1),
        "f80d203d24b58ef0",
    ),
    context(
        LexEval,
        1,
        "simulator.lexeval.reference_note",
        Nth(3),
        "40bad96f441aa2f8",
    ),
    // JuDGEEvaluator
    persona(Judge, "simulator.judge.persona", "9edcd22bcaa3c24f"),
    expertise(Judge, "simulator.judge.expertise", "29961ae3a7d16938"),
    additional(Judge, "simulator.judge.additional", "3c4af63604a31ead"),
    task(Judge, "simulator.judge.task", "9f9f0aab70e39dd9"),
    criterion(Judge, 0, "simulator.judge.criterion.0", "4cfcbab85d71a5f8"),
    criterion(Judge, 1, "simulator.judge.criterion.1", "65876e3ecd69c508"),
    criterion(Judge, 2, "simulator.judge.criterion.2", "6cc1d7a35f2f375d"),
    criterion(Judge, 3, "simulator.judge.criterion.3", "97862d2c9a2b8ceb"),
    criterion(Judge, 4, "simulator.judge.criterion.4", "5602ca6dba8e4492"),
    last_criterion(Judge, 5, "simulator.judge.criterion.5", "69a7d145ea3a3e8e"),
    context(
        Judge,
        0,
        "simulator.judge.reference",
        Assigned("evaluation_context", 1),
        "81a26639f85b981a",
    ),
    context(
        Judge,
        1,
        "simulator.judge.reference_note",
        Nth(3),
        "a34883332b9fc6ca",
    ),
];
