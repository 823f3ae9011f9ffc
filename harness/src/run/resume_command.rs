//! The command line of a run, recorded in its `run_config.json` so that `--resume RUN_DIR`
//! needs no other flag, and printed on Ctrl-C as the command that continues the run.
//!
//! A run records its subcommand and arguments as given (`command`), with `--baseline` naming
//! the run's own system (a `--baseline all` run is one of several) and without `--resume` or
//! `--progress-file`. `mb-harness off-policy --resume DIR` then reads as the recorded command
//! followed by the flags given now: a flag given again (`--threads 8`) replaces the recorded
//! one, and the check that the experiment is the same ([`crate::run::dir`]) still refuses one
//! that changes it. A run started from arguments that are not all UTF-8 records no command and
//! is resumed with its flags, as before.

use std::ffi::OsString;
use std::path::Path;

use mb_eval::RUN_CONFIG;
use serde_json::Value;

/// The key of `run_config.json` holding the command.
pub const COMMAND: &str = "command";

/// Flags whose value belongs to one invocation, not to the run.
const NOT_RECORDED: [&str; 2] = ["--resume", "--progress-file"];

/// Spellings of the flag naming the memory system.
const BASELINE_FLAGS: [&str; 2] = ["--baseline", "--memory_system"];

/// This process's subcommand and arguments for the run of `system`, or `None` when an argument
/// is not UTF-8.
pub fn recorded_command(system: &str) -> Option<Vec<String>> {
    let words: Option<Vec<String>> = std::env::args_os()
        .skip(1)
        .map(|a| a.into_string().ok())
        .collect();
    Some(command_for(&words?, system))
}

/// `words` (subcommand first) without the per-invocation flags, naming `system`.
fn command_for(words: &[String], system: &str) -> Vec<String> {
    let mut command = Vec::with_capacity(words.len() + 2);
    let mut named = false;
    for (flag, covered) in split_flags(words, &[NOT_RECORDED, BASELINE_FLAGS].concat()) {
        match flag {
            Some(flag) if NOT_RECORDED.contains(&flag) => {}
            Some(_) => {
                command.extend(["--baseline".to_string(), system.to_string()]);
                named = true;
            }
            None => command.extend_from_slice(covered),
        }
    }
    if !named {
        command.extend(["--baseline".to_string(), system.to_string()]);
    }
    command
}

/// `words` in order, each a word alone (`None`) or one of `flags` with its value (`--flag
/// value` or `--flag=value`), so that a caller can drop or replace a flag whichever way it was
/// written.
fn split_flags<'w>(words: &'w [String], flags: &[&'w str]) -> Vec<(Option<&'w str>, &'w [String])> {
    let mut parts = Vec::with_capacity(words.len());
    let mut at = 0;
    while at < words.len() {
        let word = words[at].as_str();
        let (name, inline) = match word.split_once('=') {
            Some((name, _)) => (name, true),
            None => (word, false),
        };
        match flags.iter().find(|f| **f == name) {
            Some(flag) => {
                let end = if inline {
                    at + 1
                } else {
                    (at + 2).min(words.len())
                };
                parts.push((Some(*flag), &words[at..end]));
                at = end;
            }
            None => {
                parts.push((None, &words[at..at + 1]));
                at += 1;
            }
        }
    }
    parts
}

/// `args` (the program's, program name first) with the command recorded by the run that
/// `--resume` names put before the flags given now; `args` as they are when there is no
/// `--resume`, or the run recorded no command for this subcommand.
pub fn with_recorded_flags(args: Vec<OsString>) -> Vec<OsString> {
    let Some(dir) = resumed_dir(&args) else {
        return args;
    };
    let Some(recorded) = recorded_in(&dir) else {
        return args;
    };
    let subcommand = args.get(1).and_then(|a| a.to_str());
    if recorded.first().map(String::as_str) != subcommand || subcommand.is_none() {
        return args;
    }
    let mut merged: Vec<OsString> = args.iter().take(1).cloned().collect();
    merged.extend(recorded.into_iter().map(OsString::from));
    merged.extend(args.into_iter().skip(2));
    merged
}

/// The directory `--resume DIR` (or `--resume=DIR`) names.
fn resumed_dir(args: &[OsString]) -> Option<OsString> {
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--resume" {
            return words.next().cloned();
        }
        if let Some(dir) = word.to_str().and_then(|w| w.strip_prefix("--resume=")) {
            return Some(dir.into());
        }
    }
    None
}

/// The command `dir`'s run recorded, if it is a run directory that recorded one.
fn recorded_in(dir: &OsString) -> Option<Vec<String>> {
    let path = Path::new(dir).join(RUN_CONFIG);
    let config: Value = mb_eval::read_json(&path).ok()?;
    let words = config.get(COMMAND)?.as_array()?;
    // A command is a few dozen words; a longer one is not ours.
    if words.is_empty() || words.len() > 256 {
        return None;
    }
    words
        .iter()
        .map(|w| w.as_str().map(str::to_string))
        .collect()
}

/// Has Ctrl-C (or a SIGTERM) print the command that continues the run in `dir`: the program,
/// its subcommand and `--resume dir` when the run recorded its command, else this process's
/// own command line with its `--resume` replaced by `--resume dir`.
pub fn say_how_to_resume(dir: &Path, recorded: bool) {
    // Arguments need not be UTF-8 (a path); such a word is shown as near as text allows.
    let arguments: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut words: Vec<String> = if recorded {
        arguments.iter().take(2).map(|w| shell_word(w)).collect()
    } else {
        split_flags(&arguments, &NOT_RECORDED)
            .into_iter()
            .filter(|(flag, _)| flag.is_none())
            .flat_map(|(_, covered)| covered.iter().map(|w| shell_word(w)))
            .collect()
    };
    words.extend([
        "--resume".to_string(),
        shell_word(&dir.display().to_string()),
    ]);
    mb_llm::say_on_interrupt(&format!(
        "\nmb-harness: interrupted; continue the run with:\n  {}\n",
        words.join(" ")
    ));
}

/// `word` as a POSIX shell reads it back: as it is when it holds no special character, else in
/// single quotes.
pub(crate) fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_recorded_command_names_the_runs_system_and_drops_per_invocation_flags() {
        let given = words(
            "off-policy --baseline all --resume old --progress-file=p.jsonl --threads 2 --force",
        );
        assert_eq!(
            command_for(&given, "bm25_message"),
            words("off-policy --baseline bm25_message --threads 2 --force")
        );
        let given = words("on-policy --memory_system=mem0 --limit 3");
        assert_eq!(
            command_for(&given, "mem0"),
            words("on-policy --baseline mem0 --limit 3")
        );
        assert_eq!(
            command_for(&words("off-policy"), "bm25_message"),
            words("off-policy --baseline bm25_message")
        );
        // A flag without its value at the end is dropped alone.
        assert_eq!(
            command_for(&words("off-policy --limit 3 --resume"), "mem0"),
            words("off-policy --limit 3 --baseline mem0")
        );
    }

    #[test]
    fn resume_puts_the_recorded_command_before_the_flags_given_now() {
        let dir = tempfile::tempdir().unwrap();
        let config = serde_json::json!({"command": words("off-policy --baseline mem0 --limit 3")});
        std::fs::write(dir.path().join(RUN_CONFIG), config.to_string()).unwrap();
        let run = dir.path().to_str().unwrap();
        let os =
            |text: &str| -> Vec<OsString> { words(text).into_iter().map(Into::into).collect() };
        assert_eq!(
            with_recorded_flags(os(&format!("mb off-policy --resume {run} --threads 8"))),
            os(&format!(
                "mb off-policy --baseline mem0 --limit 3 --resume {run} --threads 8"
            ))
        );
        // Another subcommand, no --resume, or a directory without a command: as given.
        for given in [
            format!("mb on-policy --resume={run}"),
            "mb off-policy --threads 8".to_string(),
            "mb off-policy --resume /nonexistent".to_string(),
        ] {
            assert_eq!(with_recorded_flags(os(&given)), os(&given));
        }
    }
}
