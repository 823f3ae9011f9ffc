//! The registry of memory systems: names, paper names, configuration files, dialog columns and
//! the runs upstream skips. The command line's choices, help and sweeps derive from it, so a
//! new memory system is one module plus one entry here.

use std::path::{Path, PathBuf};

use mb_datasets::catalog::DatasetType;

use crate::amem::AMem;
use crate::dense::DenseMemory;
use crate::error::MemoryError;
use crate::lexical::LexicalMemory;
use crate::mem0::Mem0;
use crate::memoryos::MemoryOs;
use crate::system::{check_retrieve_k, MemoryContext, MemorySystem, SystemSettings};
use crate::units::Granularity;
use crate::vanilla::Vanilla;

/// Opens a system's memory in a context.
type Builder = fn(&'static SystemSpec, MemoryContext) -> Result<Box<dyn MemorySystem>, MemoryError>;

/// One memory system's registry entry.
pub struct SystemSpec {
    /// Name on the command line and in result paths (upstream's code name).
    pub name: &'static str,
    /// Name in the paper's tables.
    pub paper_name: &'static str,
    /// Its settings file under `configs/memory/`.
    pub config_file: &'static str,
    /// That file's text as shipped, compiled in so that a binary run from anywhere (or moved
    /// elsewhere) reads the same settings; `--memory-config FILE` replaces it for a run.
    pub builtin_settings: &'static str,
    /// The stem of its pre-recorded dialog column on corpus datasets (`dialog_<stem>`).
    pub dialog_stem: &'static str,
    /// (dataset type, set) runs upstream does not make with it.
    pub skip_combinations: &'static [(DatasetType, &'static str)],
    /// Why upstream skips those runs.
    pub skip_reason: &'static str,
    /// Whether sweeps (`--baseline all`) include it.
    pub available_by_default: bool,
    /// Whether it needs an embedder.
    pub needs_embedder: bool,
    build: Builder,
}

impl SystemSpec {
    /// Opens (or creates) the system's memory in `context`.
    pub fn build(
        &'static self,
        context: MemoryContext,
    ) -> Result<Box<dyn MemorySystem>, MemoryError> {
        (self.build)(self, context)
    }

    /// The dialog column it memorises on corpus datasets.
    pub fn dialog_key(&self) -> String {
        format!("dialog_{}", self.dialog_stem)
    }

    /// Whether upstream skips this system for the run.
    pub fn skips(&self, kind: DatasetType, set: &str) -> bool {
        self.skip_combinations
            .iter()
            .any(|&(k, s)| k == kind && s == set)
    }

    /// Its settings: the shipped file compiled into the binary, or those of `custom`
    /// (`--memory-config`): a settings file, or a directory of files named like the shipped
    /// ones (a system without a file there keeps its shipped settings).
    pub fn settings(&self, custom: Option<&Path>) -> Result<SystemSettings, MemoryError> {
        match self.custom_file(custom) {
            None => parse_settings(
                &format!("configs/memory/{}", self.config_file),
                self.builtin_settings,
            ),
            Some(path) => {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| MemoryError::Config(format!("{}: {e}", path.display())))?;
                parse_settings(&path.display().to_string(), &text)
            }
        }
    }

    /// Where [`settings`](Self::settings) reads them from, for run records.
    pub fn settings_origin(&self, custom: Option<&Path>) -> String {
        match self.custom_file(custom) {
            Some(path) => path.display().to_string(),
            None => format!("built-in configs/memory/{}", self.config_file),
        }
    }

    fn custom_file(&self, custom: Option<&Path>) -> Option<PathBuf> {
        let path = custom?;
        if path.is_dir() {
            let file = path.join(self.config_file);
            file.exists().then_some(file)
        } else {
            Some(path.to_path_buf())
        }
    }
}

/// Settings from TOML `text`; errors name `origin` and the line and field at fault.
fn parse_settings(origin: &str, text: &str) -> Result<SystemSettings, MemoryError> {
    let settings: SystemSettings =
        toml::from_str(text).map_err(|e| MemoryError::Config(format!("{origin}: {e}")))?;
    check_retrieve_k(settings.retrieve_k)
        .map_err(|reason| MemoryError::Config(format!("{origin}: retrieve_k = {reason}")))?;
    Ok(settings)
}

impl std::fmt::Debug for SystemSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemSpec")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Every registered memory system, in upstream's order.
pub static REGISTRY: &[SystemSpec] = &[
    SystemSpec {
        name: "wo_memory",
        paper_name: "Vanilla",
        config_file: "base.toml",
        builtin_settings: include_str!("../../configs/memory/base.toml"),
        dialog_stem: "wo_memory",
        skip_combinations: &[],
        skip_reason: "",
        available_by_default: true,
        needs_embedder: false,
        build: |spec, context| Ok(Box::new(Vanilla::new(spec, context))),
    },
    SystemSpec {
        name: "bm25_message",
        paper_name: "BM25-M",
        config_file: "bm25.toml",
        builtin_settings: include_str!("../../configs/memory/bm25.toml"),
        dialog_stem: "bm25",
        skip_combinations: &[],
        skip_reason: "",
        available_by_default: true,
        needs_embedder: false,
        build: |spec, context| {
            Ok(Box::new(LexicalMemory::new(
                spec,
                context,
                Granularity::Message,
            )?))
        },
    },
    SystemSpec {
        name: "bm25_dialog",
        paper_name: "BM25-S",
        config_file: "bm25.toml",
        builtin_settings: include_str!("../../configs/memory/bm25.toml"),
        dialog_stem: "bm25_dialog",
        skip_combinations: &[],
        skip_reason: "",
        available_by_default: true,
        needs_embedder: false,
        build: |spec, context| {
            Ok(Box::new(LexicalMemory::new(
                spec,
                context,
                Granularity::Session,
            )?))
        },
    },
    SystemSpec {
        name: "embedder_message",
        paper_name: "Emb-M",
        config_file: "embedder.toml",
        builtin_settings: include_str!("../../configs/memory/embedder.toml"),
        dialog_stem: "embedder",
        skip_combinations: &[],
        skip_reason: "",
        available_by_default: true,
        needs_embedder: true,
        build: |spec, context| {
            Ok(Box::new(DenseMemory::new(
                spec,
                context,
                Granularity::Message,
            )?))
        },
    },
    SystemSpec {
        name: "embedder_dialog",
        paper_name: "Emb-S",
        config_file: "embedder.toml",
        builtin_settings: include_str!("../../configs/memory/embedder.toml"),
        dialog_stem: "embedder_dialog",
        skip_combinations: &[],
        skip_reason: "",
        available_by_default: true,
        needs_embedder: true,
        build: |spec, context| {
            Ok(Box::new(DenseMemory::new(
                spec,
                context,
                Granularity::Session,
            )?))
        },
    },
    SystemSpec {
        name: "a_mem",
        paper_name: "A-Mem",
        config_file: "a_mem.toml",
        builtin_settings: include_str!("../../configs/memory/a_mem.toml"),
        dialog_stem: "a_mem",
        skip_combinations: &[],
        skip_reason: "",
        available_by_default: true,
        needs_embedder: true,
        build: |spec, context| Ok(Box::new(AMem::new(spec, context)?)),
    },
    SystemSpec {
        name: "mem0",
        paper_name: "Mem0",
        config_file: "mem0.toml",
        builtin_settings: include_str!("../../configs/memory/mem0.toml"),
        dialog_stem: "mem0",
        skip_combinations: &[
            (DatasetType::Domain, "Open-Domain"),
            (DatasetType::Task, "Long-Short"),
        ],
        skip_reason: "its fact extraction runs once per corpus turn, too slow over the LoCoMo and DialSim corpora",
        available_by_default: true,
        needs_embedder: true,
        build: |spec, context| Ok(Box::new(Mem0::new(spec, context)?)),
    },
    SystemSpec {
        name: "memoryos",
        paper_name: "MemoryOS",
        config_file: "memoryos.toml",
        builtin_settings: include_str!("../../configs/memory/memoryos.toml"),
        dialog_stem: "memoryos",
        skip_combinations: &[],
        skip_reason: "",
        available_by_default: true,
        needs_embedder: true,
        build: |spec, context| Ok(Box::new(MemoryOs::new(spec, context)?)),
    },
];

/// The entry named `name`.
pub fn get(name: &str) -> Result<&'static SystemSpec, MemoryError> {
    REGISTRY.iter().find(|s| s.name == name).ok_or_else(|| {
        MemoryError::Config(format!(
            "unknown memory system {name:?} (known: {})",
            REGISTRY
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// The systems a sweep runs.
pub fn default_systems() -> impl Iterator<Item = &'static SystemSpec> {
    REGISTRY.iter().filter(|s| s.available_by_default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stems_and_files_follow_upstream() {
        let keys: Vec<String> = REGISTRY.iter().map(SystemSpec::dialog_key).collect();
        assert_eq!(
            keys,
            [
                "dialog_wo_memory",
                "dialog_bm25",
                "dialog_bm25_dialog",
                "dialog_embedder",
                "dialog_embedder_dialog",
                "dialog_a_mem",
                "dialog_mem0",
                "dialog_memoryos"
            ]
        );
        assert_eq!(get("bm25_dialog").unwrap().paper_name, "BM25-S");
        let error = get("bm26").unwrap_err().to_string();
        assert!(
            error.contains("bm26") && error.contains("embedder_message"),
            "{error}"
        );
        for spec in REGISTRY {
            let expected = match spec.name {
                "mem0" => 10,
                "memoryos" => 7,
                _ => 5,
            };
            assert_eq!(
                spec.settings(None).unwrap().retrieve_k,
                expected,
                "{}",
                spec.name
            );
        }
        let mem0 = get("mem0").unwrap();
        assert!(
            mem0.skips(DatasetType::Domain, "Open-Domain")
                && !mem0.skips(DatasetType::Domain, "Legal")
        );
    }

    #[test]
    fn shipped_settings_are_upstreams_and_a_file_replaces_them() {
        let bm25 = get("bm25_message").unwrap();
        let shipped = bm25.settings(None).unwrap();
        assert_eq!(shipped.query_syntax, mb_engine::QuerySyntax::Whoosh);
        assert!(!shipped.cjk_analyzer);
        assert!(bm25
            .settings_origin(None)
            .contains("configs/memory/bm25.toml"));

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain.toml");
        std::fs::write(&file, "retrieve_k = 3\nquery_syntax = \"plain\"\n").unwrap();
        let replaced = bm25.settings(Some(&file)).unwrap();
        assert_eq!(replaced.query_syntax, mb_engine::QuerySyntax::Plain);
        assert_eq!(replaced.retrieve_k, 3);
        assert_eq!(
            bm25.settings_origin(Some(&file)),
            file.display().to_string()
        );

        std::fs::write(&file, "retrieve_k = 3\nquery_sintax = \"plain\"\n").unwrap();
        let error = bm25.settings(Some(&file)).unwrap_err().to_string();
        assert!(
            error.contains("plain.toml")
                && error.contains("query_sintax")
                && error.contains("line 2"),
            "{error}"
        );
        assert!(bm25
            .settings(Some(&dir.path().join("missing.toml")))
            .is_err());

        // A directory replaces the files it has and keeps the shipped ones otherwise.
        let custom = tempfile::tempdir().unwrap();
        std::fs::write(custom.path().join("mem0.toml"), "retrieve_k = 2\n").unwrap();
        assert_eq!(
            get("mem0")
                .unwrap()
                .settings(Some(custom.path()))
                .unwrap()
                .retrieve_k,
            2
        );
        assert_eq!(bm25.settings(Some(custom.path())).unwrap(), shipped);
        assert!(bm25
            .settings_origin(Some(custom.path()))
            .starts_with("built-in"));
    }

    /// The directories the README offers for `--memory-config` change what they say they
    /// change and nothing else.
    #[test]
    fn shipped_alternative_directories() {
        let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/memory");
        let plain = configs.join("plain-queries");
        for spec in REGISTRY {
            let (shipped, custom) = (spec.settings(None).unwrap(), spec.settings(Some(&plain)));
            let custom = custom.unwrap();
            if spec.name.starts_with("bm25") {
                assert_eq!(custom.query_syntax, mb_engine::QuerySyntax::Plain);
                let as_shipped = SystemSettings {
                    query_syntax: shipped.query_syntax,
                    ..custom
                };
                assert_eq!(as_shipped, shipped, "{}", spec.name);
            } else {
                assert_eq!(custom, shipped, "{}", spec.name);
            }
        }
        let paper = configs.join("paper");
        for spec in REGISTRY {
            let custom = spec.settings(Some(&paper)).unwrap();
            let embedder = custom.embedder.clone();
            let paper_embedder =
                ["embedder_message", "embedder_dialog", "mem0"].contains(&spec.name);
            assert_eq!(
                embedder.ends_with("configs/embedder/paper.toml"),
                paper_embedder,
                "{}: {embedder}",
                spec.name
            );
        }
    }
}
