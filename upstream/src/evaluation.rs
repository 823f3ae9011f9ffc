//! Upstream's evaluation texts: the judges' requests (NFCats, DialSim, HelloBench) and the
//! rule-based feedback of the datasets whose simulated user reacts by rule.

use mb_core::Message;

use crate::catalog::Prompt;
use crate::checkout::request;
use crate::{Upstream, UpstreamError};

/// The datasets whose simulated user reacts by rule, from the dataset's own metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleFeedbackOf {
    /// LoCoMo (an answer is right when its F1 exceeds 0.5).
    Locomo,
    /// DialSim (an answer is right when it is accurate).
    DialSim,
}

impl Upstream {
    /// What upstream's simulated user says to a `correct` (or wrong) answer on a dataset it
    /// judges by rule (LoCoMo, DialSim), where no model simulates the user.
    pub fn rule_feedback(
        &self,
        of: RuleFeedbackOf,
        correct: bool,
    ) -> Result<String, UpstreamError> {
        let prompt = match (of, correct) {
            (RuleFeedbackOf::Locomo, true) => Prompt::FeedbackLocomoRight,
            (RuleFeedbackOf::Locomo, false) => Prompt::FeedbackLocomoWrong,
            (RuleFeedbackOf::DialSim, true) => Prompt::FeedbackDialSimRight,
            (RuleFeedbackOf::DialSim, false) => Prompt::FeedbackDialSimWrong,
        };
        self.template(prompt)?.text()
    }

    /// DialSim's judge request for `prediction` against the `golden` answer to `question`: its
    /// system message, and its prompt with the three marks replaced in upstream's order (each
    /// replacement over the text the previous one left, as Python's chained `str.replace`).
    pub fn dialsim_judge(
        &self,
        question: &str,
        golden: &str,
        prediction: &str,
    ) -> Result<Vec<Message>, UpstreamError> {
        let text = |prompt| -> Result<String, UpstreamError> { self.template(prompt)?.text() };
        let system = text(Prompt::DialSimJudgeSystem)?;
        let prompt = text(Prompt::DialSimJudgeUser)?
            .replace(&text(Prompt::DialSimQuestionMark)?, question)
            .replace(&text(Prompt::DialSimAnswerMark)?, golden)
            .replace(&text(Prompt::DialSimPredictionMark)?, prediction);
        Ok(request(system, prompt))
    }

    /// HelloBench's checklist judge request: the request, its system message and its prompt, filled with
    /// the `instruction`, the `response` (re-tokenised by the caller as upstream does), the
    /// `checklist` as upstream's `json.dumps(checklist, ensure_ascii=False)` writes it, and its
    /// length.
    pub fn hellobench_checklist(
        &self,
        instruction: &str,
        response: &str,
        checklist: &str,
        items: usize,
    ) -> Result<Vec<Message>, UpstreamError> {
        let system = self.template(Prompt::HelloBenchJudgeSystem)?.text()?;
        let prompt = self.render(
            Prompt::HelloBenchJudgeUser,
            &[
                ("instruction", instruction),
                ("response", response),
                ("checklists", checklist),
                ("num_checklist", &items.to_string()),
            ],
        )?;
        Ok(request(system, prompt))
    }

    /// NFCats' judge request for the `answer` to `question`: its system message and its
    /// prompt.
    pub fn nfcats_judge(
        &self,
        question: &str,
        answer: &str,
    ) -> Result<Vec<Message>, UpstreamError> {
        let system = self.template(Prompt::NfcatsJudgeSystem)?.text()?;
        let prompt = self.render(Prompt::NfcatsJudge, &[("0", question), ("1", answer)])?;
        Ok(request(system, prompt))
    }
}
