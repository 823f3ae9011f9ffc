//! An upstream MemoryBench checkout opened: every catalogued template read from its sources
//! and checked against the known version's hash.

use std::collections::btree_map::Entry as Slot;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use mb_core::{Lang, Message};

use crate::catalog::{entries, AnswerOf, Entry, Prompt, Select, KNOWN_COMMIT};
use crate::error::{Mismatch, UpstreamError};
use crate::python::{repr_dict_list, repr_str_list, string_runs, strip_pieces, Binding, StringRun};
use crate::template::Template;

/// The expression upstream's Mem0 fills today's date with.
const MEM0_TODAY: &str = "datetime.now().strftime(\"%Y-%m-%d\")";

/// A system message followed by a user message: how upstream sends most of its requests.
pub(crate) fn request(system: String, user: String) -> Vec<Message> {
    vec![Message::system(system), Message::user(user)]
}

/// Largest source file read (upstream's biggest is under 100 KB).
const MAX_SOURCE_BYTES: u64 = 4 << 20;

/// Upstream MemoryBench's wording, read from a checkout.
#[derive(Debug)]
pub struct Upstream {
    dir: PathBuf,
    head: Option<String>,
    templates: HashMap<Prompt, Template>,
    /// JuDGE's lexicon, read from the checkout the first time it is asked for.
    pub(crate) judge_lexicon: OnceLock<crate::lexicon::JudgeLexicon>,
}

impl Upstream {
    /// Reads every catalogued template from the checkout at `dir`. Any template that is
    /// missing or differs from the known version is reported (all of them, by file and
    /// function); nothing is used from a checkout that does not match.
    pub fn open(dir: &Path) -> Result<Upstream, UpstreamError> {
        if !dir.join("src/agent").is_dir() || !dir.join("memorybench.py").is_file() {
            return Err(UpstreamError::NotACheckout {
                dir: dir.to_path_buf(),
                kind: "THUIR/MemoryBench",
                reason: "it has no memorybench.py and src/agent/".into(),
            });
        }
        let templates = read_templates(dir, entries(), KNOWN_COMMIT)?;
        Ok(Upstream {
            dir: dir.to_path_buf(),
            head: git_head(dir),
            templates,
            judge_lexicon: OnceLock::new(),
        })
    }

    /// The checkout's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The template of `prompt`.
    pub fn template(&self, prompt: Prompt) -> Result<&Template, UpstreamError> {
        self.templates.get(&prompt).ok_or(UpstreamError::Field {
            prompt: "catalog",
            message: format!("{prompt:?} has no row in the catalog"),
        })
    }

    /// `prompt` filled with `values` (see [`Template::render`]).
    pub fn render(&self, prompt: Prompt, values: &[(&str, &str)]) -> Result<String, UpstreamError> {
        self.template(prompt)?.render(values)
    }

    /// The answer prompt of `of` in `lang`, filled with the memory `context` and the user's
    /// `question`: the text upstream puts in place of the user's last message.
    pub fn answer(
        &self,
        of: AnswerOf,
        lang: Lang,
        context: &str,
        question: &str,
    ) -> Result<String, UpstreamError> {
        let (context_field, question_field) = of.fields();
        self.render(
            Prompt::answer(of, lang),
            &[(context_field, context), (question_field, question)],
        )
    }

    /// Mem0's fact-extraction system message, with `today` (`YYYY-MM-DD`) where upstream puts
    /// the day its process started.
    pub fn mem0_fact_extraction(&self, today: &str) -> Result<String, UpstreamError> {
        self.render(Prompt::Mem0FactExtraction, &[(MEM0_TODAY, today)])
    }

    /// Mem0's update prompt, as upstream's `get_update_memory_messages` writes it: its
    /// instructions, the `stored` memories (temporary id, text) or the note that none is
    /// stored, and the new `facts`, both lists as Python prints them.
    pub fn mem0_update(
        &self,
        stored: &[(&str, &str)],
        facts: &[&str],
    ) -> Result<String, UpstreamError> {
        let instructions = self.template(Prompt::Mem0UpdateInstructions)?.text()?;
        let memories = if stored.is_empty() {
            self.template(Prompt::Mem0UpdateNoMemories)?.text()?
        } else {
            let dicts: Vec<Vec<(&str, &str)>> = stored
                .iter()
                .map(|(id, text)| vec![("id", *id), ("text", *text)])
                .collect();
            self.render(
                Prompt::Mem0UpdateStoredMemories,
                &[("retrieved_old_memory_dict", &repr_dict_list(&dicts))],
            )?
        };
        self.render(
            Prompt::Mem0UpdateFrame,
            &[
                ("custom_update_memory_prompt", &instructions),
                ("current_memory_part", &memories),
                ("response_content", &repr_str_list(facts.iter().copied())),
            ],
        )
    }

    /// What a run records as its prompts' source: the known commit whose wording every
    /// template matched, and the checkout's own commit when git says it and it differs.
    pub fn provenance(&self) -> String {
        let known = &KNOWN_COMMIT[..12];
        let count = self.templates.len();
        match &self.head {
            Some(head) if !head.starts_with(known) => format!(
                "upstream THUIR/MemoryBench {known} ({count} templates identical; checkout at {})",
                &head[..head.len().min(12)]
            ),
            _ => format!("upstream THUIR/MemoryBench {known} ({count} templates)"),
        }
    }
}

/// Every template of `rows` read from the checkout at `dir`, each checked against its hash at
/// the `known` commit; all that are missing or differ are reported together (by file and
/// function), and nothing is returned from a checkout that does not match. Shared by the
/// MemoryBench and the LongMemEval checkouts.
pub(crate) fn read_templates<'a>(
    dir: &Path,
    rows: impl IntoIterator<Item = &'a Entry>,
    known: &str,
) -> Result<HashMap<Prompt, Template>, UpstreamError> {
    type Source = (&'static str, Option<&'static str>);
    let mut files: BTreeMap<Source, Result<Vec<StringRun>, String>> = BTreeMap::new();
    let mut mismatches = Vec::new();
    let mut templates = HashMap::new();
    for entry in rows {
        let runs = match files.entry((entry.file, entry.commented)) {
            Slot::Occupied(read) => read.into_mut(),
            Slot::Vacant(unread) => unread.insert(read_runs(dir, entry)?),
        };
        let extracted = match runs {
            Ok(runs) => extract(entry, runs, known),
            Err(problem) => Err(problem.clone()),
        };
        match extracted {
            Ok(template) => {
                templates.insert(entry.prompt, template);
            }
            Err(problem) => mismatches.push(Mismatch {
                prompt: entry.name,
                file: entry.file,
                scope: if entry.scope.is_empty() {
                    "module level".to_string()
                } else {
                    entry.scope.to_string()
                },
                problem,
            }),
        }
    }
    if !mismatches.is_empty() {
        return Err(UpstreamError::Changed(mismatches));
    }
    Ok(templates)
}

/// The string runs of `entry`'s file; a file that cannot be scanned is reported for each
/// template it should hold, a file that cannot be read ends the opening.
pub(crate) fn read_source(dir: &Path, file: &str) -> Result<String, UpstreamError> {
    let file = dir.join(file);
    mb_core::files::read_text(&file, MAX_SOURCE_BYTES).map_err(|e| UpstreamError::Read {
        file: file.clone(),
        message: e.to_string(),
    })
}

fn read_runs(dir: &Path, entry: &Entry) -> Result<Result<Vec<StringRun>, String>, UpstreamError> {
    let file = dir.join(entry.file);
    let text =
        mb_core::files::read_text(&file, MAX_SOURCE_BYTES).map_err(|e| UpstreamError::Read {
            file: file.clone(),
            message: e.to_string(),
        })?;
    let text = match entry.commented {
        None => text,
        Some(first) => match uncommented(&text, first) {
            Some(block) => block,
            None => {
                return Ok(Err(format!(
                    "no commented-out block starts with \"# {first}\""
                )))
            }
        },
    };
    Ok(string_runs(&text).map_err(|e| format!("the file cannot be scanned: {e}")))
}

/// The commented-out block whose first line is `# {first}`, without its comment marks: the
/// lines that follow at the same indentation, each starting with `#` (blank lines inside it
/// kept), with `#` and one following space removed.
fn uncommented(text: &str, first: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|line| line.trim_start().starts_with(&format!("# {first}")))?;
    let indent = &lines[start][..lines[start].len() - lines[start].trim_start().len()];
    let marked = |line: &str| line.starts_with(indent) && line[indent.len()..].starts_with('#');
    let mut block = String::new();
    for (at, line) in lines.iter().enumerate().skip(start) {
        if line.trim().is_empty() {
            // A blank line continues the block when a marked line follows it.
            let next = lines[at + 1..].iter().find(|l| !l.trim().is_empty());
            if next.is_some_and(|l| marked(l)) {
                block.push('\n');
                continue;
            }
            break;
        }
        if !marked(line) {
            break;
        }
        let body = &line[indent.len() + 1..];
        block.push_str(body.strip_prefix(' ').unwrap_or(body));
        block.push('\n');
    }
    Some(block)
}

/// The template `entry` points at, or what is wrong with it.
fn extract(entry: &Entry, runs: &[StringRun], known: &str) -> Result<Template, String> {
    let mut in_scope = runs.iter().filter(|run| run.scope == entry.scope);
    let run = match entry.select {
        Select::Assigned(name, nth) => in_scope
            .filter(|run| run.binding == Binding::Assigned(name.to_string()))
            .nth(nth)
            .ok_or_else(|| format!("no string #{} assigned to {name}", nth + 1))?,
        Select::Nth(nth) => in_scope
            .nth(nth)
            .ok_or_else(|| format!("the scope has no string #{}", nth + 1))?,
        Select::Returned(nth) => in_scope
            .filter(|run| run.binding == Binding::Returned)
            .nth(nth)
            .ok_or_else(|| format!("no string #{} returned", nth + 1))?,
        Select::Item(name, index) | Select::LastItem(name, index) => {
            let item = |at: usize| {
                let binding = Binding::ListItem {
                    name: name.to_string(),
                    index: at,
                };
                runs.iter()
                    .find(|run| run.scope == entry.scope && run.binding == binding)
            };
            if matches!(entry.select, Select::LastItem(..)) && item(index + 1).is_some() {
                return Err(format!("the list {name} has more than {} items", index + 1));
            }
            item(index).ok_or_else(|| format!("the list {name} has no item #{}", index + 1))?
        }
    };
    let source: String = run.literals.iter().map(|l| l.source.as_str()).collect();
    let found = sha256_prefix(&source);
    if found != entry.sha256 {
        return Err(format!(
            "the text at line {} differs from {} (sha256 {found}, known {})",
            run.line,
            &known[..known.len().min(12)],
            entry.sha256
        ));
    }
    let mut numbered = 0;
    let mut pieces = Vec::new();
    for literal in &run.literals {
        let more = literal
            .pieces(entry.format, &mut numbered)
            .map_err(|e| format!("line {}: {e}", run.line))?;
        pieces.extend(more);
    }
    if entry.strip {
        pieces = strip_pieces(pieces);
    }
    Ok(Template::new(entry.name, pieces))
}

pub(crate) fn sha256_prefix(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The commit the checkout's git says it is at, if it has one.
pub(crate) fn git_head(dir: &Path) -> Option<String> {
    let git = dir.join(".git");
    let head = std::fs::read_to_string(git.join("HEAD")).ok()?;
    let head = head.trim();
    let Some(reference) = head.strip_prefix("ref: ") else {
        return Some(head.to_string());
    };
    if let Ok(commit) = std::fs::read_to_string(git.join(reference)) {
        return Some(commit.trim().to_string());
    }
    let packed = std::fs::read_to_string(git.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (commit, name) = line.split_once(' ')?;
        (name == reference).then(|| commit.to_string())
    })
}
