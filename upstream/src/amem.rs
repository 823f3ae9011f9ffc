//! A-Mem's requests in upstream's words (`src/agent/a_mem.py` and the vendored
//! `baselines/A_mem`): a question's keywords, a note's analysis and the memory evolution, each
//! note shown as upstream's retrieval shows it.

use mb_core::Message;

use crate::catalog::Prompt;
use crate::checkout::request;
use crate::python::repr_str_list;
use crate::{Upstream, UpstreamError};

/// A memory note as A-Mem's evolution sees it: the new note, or one of its neighbours.
#[derive(Debug, Clone, Copy)]
pub struct AMemNote<'a> {
    /// What the note says.
    pub content: &'a str,
    /// Its one-sentence context (`General` until analyzed).
    pub context: &'a str,
    /// Its keywords.
    pub keywords: &'a [String],
    /// Its tags.
    pub tags: &'a [String],
    /// Its timestamp as the memory recorded it.
    pub timestamp: &'a str,
}

impl AMemNote<'_> {
    /// The note as upstream's `find_related_memories` lists a neighbour: its index, then
    /// tab-separated labelled fields, lists as Python prints them.
    fn neighbour_line(&self, index: usize) -> String {
        format!(
            "memory index:{index}\ttalk start time:{}\tmemory content: {}\tmemory context: {}\t\
             memory keywords: {}\tmemory tags: {}\n",
            self.timestamp,
            self.content,
            self.context,
            python_list(self.keywords),
            python_list(self.tags)
        )
    }
}

/// Python's `str()` of a list of strings.
fn python_list(items: &[String]) -> String {
    repr_str_list(items.iter().map(String::as_str))
}

impl Upstream {
    /// A-Mem's request for the keywords of `question` (one English prompt for every
    /// language).
    pub fn amem_query_keywords(&self, question: &str) -> Result<String, UpstreamError> {
        self.render(Prompt::AMemQueryKeywords, &[("question", question)])
    }

    /// A-Mem's request to analyze a note of `content`: the request, its client's system
    /// message and the prompt with the content appended.
    pub fn amem_analyze_note(&self, content: &str) -> Result<Vec<Message>, UpstreamError> {
        let system = self.template(Prompt::AMemSystem)?.text()?;
        let prompt = self.template(Prompt::AMemAnalyzeNote)?.text()?;
        Ok(request(system, prompt + content))
    }

    /// A-Mem's memory-evolution request for `note` against its `neighbours` (nearest
    /// first): its client's system message, and the evolution prompt filled with the note
    /// (keywords as Python prints the list), the neighbours as upstream's retrieval lists them
    /// and their number. One English prompt for every language.
    pub fn amem_evolve(
        &self,
        note: &AMemNote<'_>,
        neighbours: &[AMemNote<'_>],
    ) -> Result<Vec<Message>, UpstreamError> {
        let system = self.template(Prompt::AMemSystem)?.text()?;
        let listed: String = neighbours
            .iter()
            .enumerate()
            .map(|(index, neighbour)| neighbour.neighbour_line(index))
            .collect();
        let prompt = self.render(
            Prompt::AMemEvolve,
            &[
                ("content", note.content),
                ("context", note.context),
                ("keywords", &python_list(note.keywords)),
                ("nearest_neighbors_memories", &listed),
                ("neighbor_number", &neighbours.len().to_string()),
            ],
        )?;
        Ok(request(system, prompt))
    }
}
