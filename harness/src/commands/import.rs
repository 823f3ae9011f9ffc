//! `import`: upstream's raw files into a MemoryBench-layout directory that `--data` reads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use mb_datasets::catalog::Catalog;
use mb_datasets::import::{self, LocomoWords, Paraphrase};
use mb_datasets::InMemorySource;
use mb_upstream::Upstream;

use crate::error::HarnessError;
use crate::stdout::line;

/// Arguments of `import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Where to write `dataset/<name>/{train,test}.jsonl` and `corpus/<name>.jsonl`.
    #[arg(long)]
    out: PathBuf,
    /// LoCoMo's `locomo10.json` (samples become Locomo-0, Locomo-1, …).
    #[arg(long)]
    locomo: Option<PathBuf>,
    /// NFCats' `test.csv`.
    #[arg(long)]
    nfcats: Option<PathBuf>,
    /// LexEval's QA file (`5_4.json`).
    #[arg(long)]
    lexeval_qa: Option<PathBuf>,
    /// HelloBench's directory of category files (`open_ended_qa.jsonl`, …).
    #[arg(long)]
    hellobench: Option<PathBuf>,
    /// An upstream THUIR/MemoryBench checkout: LoCoMo's questions are then framed in upstream's
    /// own words, as in the published rows (else in the project's paraphrase).
    #[arg(long, value_name = "DIR", env = "MEMORYBENCH_UPSTREAM")]
    upstream: Option<PathBuf>,
}

fn read(path: &Path) -> Result<String, HarnessError> {
    mb_core::files::read_text(path, mb_core::files::DATASET_LIMIT).map_err(|e| HarnessError::File {
        path: path.display().to_string(),
        detail: e.to_string(),
    })
}

/// Runs `import`.
pub fn run(args: &ImportArgs) -> Result<(), HarnessError> {
    let catalog = Catalog::builtin()?;
    let sample_count = |name: &str| -> Option<usize> {
        ["Open-Domain", "Legal", "Academic&Knowledge"]
            .iter()
            .filter_map(|d| catalog.domain(d).ok())
            .flatten()
            .find(|c| c.dataset_name == name)
            .and_then(|c| c.sample_count)
    };
    let words: Box<dyn LocomoWords> = match &args.upstream {
        Some(dir) => Box::new(Upstream::open(dir)?),
        None => Box::new(Paraphrase),
    };
    let mut source = InMemorySource::new("import");
    if let Some(path) = &args.locomo {
        let origin = path.display().to_string();
        let conversations = import::locomo(
            &read(path)?,
            &origin,
            |j| format!("Locomo-{j}"),
            sample_count("Locomo-0"),
            words.as_ref(),
        )?;
        if conversations.is_empty() {
            return Err(HarnessError::Usage(format!(
                "{origin}: holds no LoCoMo conversation (an empty list)"
            )));
        }
        for (name, stored) in conversations {
            source.insert(name, stored);
        }
    }
    if let Some(path) = &args.nfcats {
        let stored = import::nfcats(
            &read(path)?,
            &path.display().to_string(),
            sample_count("NFCats"),
        )?;
        source.insert("NFCats", stored);
    }
    if let Some(path) = &args.lexeval_qa {
        let stored = import::lexeval(
            &read(path)?,
            &path.display().to_string(),
            "LexEval-QA",
            sample_count("LexEval-QA"),
        )?;
        source.insert("LexEval-QA", stored);
    }
    if let Some(dir) = &args.hellobench {
        let mut files = BTreeMap::new();
        for file in import::HELLOBENCH_FILES {
            let path = dir.join(format!("{file}.jsonl"));
            if path.exists() {
                files.insert(file.to_string(), read(&path)?);
            }
        }
        for name in [
            "HelloBench-Academic&Knowledge-QA",
            "HelloBench-Academic&Knowledge-Writing",
            "HelloBench-Creative&Design",
        ] {
            source.insert(name, import::hellobench(&files, name)?);
        }
    }
    let names: Vec<String> = source.names().map(str::to_string).collect();
    if names.is_empty() {
        return Err(HarnessError::Usage(
            "nothing to import: give --locomo, --nfcats, --lexeval-qa or --hellobench".into(),
        ));
    }
    source.write_hf_layout(&args.out)?;
    line(format_args!(
        "imported {} into {}",
        names.join(", "),
        args.out.display()
    ))?;
    Ok(())
}
