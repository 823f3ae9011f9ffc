//! What the harness knows of a memory system: its names, settings file, dialog column, needs
//! and the runs upstream skips, and how to open its memory. The [`crate::registry`] lists one
//! per system.

use std::path::{Path, PathBuf};

use mb_datasets::catalog::DatasetType;

use crate::error::MemoryError;
use crate::settings::{
    read_settings, NoOwnSettings, Overrides, OwnSettings, SettingsReader, SystemSettings,
};
use crate::system::{MemoryContext, MemorySystem};

/// Opens a system's memory in a context.
pub type Builder = fn(MemoryContext) -> Result<Box<dyn MemorySystem>, MemoryError>;

/// A settings file under `configs/memory/` and its text as shipped (see [`crate::settings_file!`]).
#[derive(Debug, Clone, Copy)]
pub struct SettingsFile {
    /// File name under `configs/memory/`.
    pub name: &'static str,
    /// The file's text, compiled in.
    pub text: &'static str,
}

/// The [`SettingsFile`] `configs/memory/<name>`, its text compiled into the binary.
#[macro_export]
macro_rules! settings_file {
    ($name:literal) => {
        $crate::SettingsFile {
            name: $name,
            text: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../configs/memory/",
                $name
            )),
        }
    };
}

/// One memory system's registry entry.
pub struct SystemSpec {
    /// Name on the command line and in result paths (upstream's code name).
    pub name: &'static str,
    /// Name in the paper's tables.
    pub paper_name: &'static str,
    /// Its settings file under `configs/memory/`, compiled in so that a binary run from
    /// anywhere (or moved elsewhere) reads the same settings; `--memory-config FILE` replaces
    /// it for a run.
    pub settings_file: SettingsFile,
    /// The stem of its pre-recorded dialog column on corpus datasets (`dialog_<stem>`).
    pub dialog_stem: &'static str,
    /// Whether it keeps no memory (Vanilla): nothing to memorize, retrieve or learn from, so
    /// regimes that feed a memory refuse it and `retrieve` has nothing to search.
    pub memoryless: bool,
    /// (dataset type, set) runs upstream does not make with it.
    pub skip_combinations: &'static [(DatasetType, &'static str)],
    /// Why upstream skips those runs.
    pub skip_reason: &'static str,
    /// Whether sweeps (`--baseline all`) include it.
    pub available_by_default: bool,
    /// Whether it needs an embedder.
    pub needs_embedder: bool,
    opening: Opening,
    read_settings: SettingsReader,
}

/// How a system's memory opens: natively, or in a Python host (`py:module.path:ClassName`).
#[derive(Clone, Copy)]
enum Opening {
    Native(Builder),
    Python(&'static str),
}

impl SystemSpec {
    /// An entry named `name` (and `paper_name` in the paper's tables) with its settings file
    /// and builder; its dialog column stem is its name, its file holds only the shared keys,
    /// it needs no embedder, every sweep includes it and upstream runs it everywhere, until the
    /// methods below say otherwise.
    pub const fn new(
        name: &'static str,
        paper_name: &'static str,
        settings_file: SettingsFile,
        build: Builder,
    ) -> SystemSpec {
        SystemSpec {
            name,
            paper_name,
            settings_file,
            dialog_stem: name,
            memoryless: false,
            skip_combinations: &[],
            skip_reason: "",
            available_by_default: true,
            needs_embedder: false,
            opening: Opening::Native(build),
            read_settings: read_settings::<NoOwnSettings>,
        }
    }

    /// The entry of the Python class `target` (`module.path:ClassName`), named `name`
    /// (`py:<target>`): its settings file `configs/memory/python.toml` (interpreter, import
    /// path, the class's `config`), an embedder for its `models.embed`, BM25-M's recorded
    /// dialogs on corpus datasets, and never in sweeps of upstream's systems.
    pub fn python(
        name: &'static str,
        paper_name: &'static str,
        target: &'static str,
    ) -> SystemSpec {
        SystemSpec {
            opening: Opening::Python(target),
            ..SystemSpec::new(
                name,
                paper_name,
                crate::settings_file!("python.toml"),
                |_| {
                    Err(MemoryError::Config(
                        "a Python system opens in its host".into(),
                    ))
                },
            )
            .with_own_settings::<crate::python::PythonSettings>()
            .dialog_stem("bm25")
            .with_embedder()
            .beyond_upstream()
        }
    }

    /// The same entry, its settings file holding the system's own keys `T` beside the shared
    /// ones.
    pub const fn with_own_settings<T: OwnSettings>(self) -> SystemSpec {
        SystemSpec {
            read_settings: read_settings::<T>,
            ..self
        }
    }

    /// The same entry reading the pre-recorded dialog column `dialog_<stem>`.
    pub const fn dialog_stem(self, stem: &'static str) -> SystemSpec {
        SystemSpec {
            dialog_stem: stem,
            ..self
        }
    }

    /// The same entry, needing an embedder.
    pub const fn with_embedder(self) -> SystemSpec {
        SystemSpec {
            needs_embedder: true,
            ..self
        }
    }

    /// The same entry, keeping no memory.
    pub const fn memoryless(self) -> SystemSpec {
        SystemSpec {
            memoryless: true,
            ..self
        }
    }

    /// The same entry, left out of sweeps (`--baseline all`): not one of upstream's systems,
    /// so a sweep reproduces the paper's table; name it to run it.
    pub const fn beyond_upstream(self) -> SystemSpec {
        SystemSpec {
            available_by_default: false,
            ..self
        }
    }

    /// The same entry, skipped where upstream skips it, for `reason`.
    pub const fn skipping(
        self,
        combinations: &'static [(DatasetType, &'static str)],
        reason: &'static str,
    ) -> SystemSpec {
        SystemSpec {
            skip_combinations: combinations,
            skip_reason: reason,
            ..self
        }
    }

    /// Opens (or creates) the system's memory in `context`.
    pub fn build(&self, context: MemoryContext) -> Result<Box<dyn MemorySystem>, MemoryError> {
        match self.opening {
            Opening::Native(build) => build(context),
            Opening::Python(target) => Ok(Box::new(crate::python::PythonSystem::open(
                target, context,
            )?)),
        }
    }

    /// The dialog column it memorizes on corpus datasets.
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
            None => (self.read_settings)(
                &format!("configs/memory/{}", self.settings_file.name),
                self.settings_file.text,
            ),
            Some(path) => {
                let text = mb_core::files::read_text(&path, mb_core::files::SETTINGS_LIMIT)
                    .map_err(|e| MemoryError::Config(format!("{}: {e}", path.display())))?;
                (self.read_settings)(&path.display().to_string(), &text)
            }
        }
    }

    /// Its settings for a run: [`settings`](Self::settings) with the command line's
    /// `overrides` (`--retrieve-k`, `--embedder`) over the file's values. The one place those
    /// flags are applied.
    pub fn run_settings(
        &self,
        custom: Option<&Path>,
        overrides: &Overrides,
    ) -> Result<SystemSettings, MemoryError> {
        Ok(self.settings(custom)?.with_overrides(overrides.clone()))
    }

    /// Where [`settings`](Self::settings) reads them from, for run records.
    pub fn settings_origin(&self, custom: Option<&Path>) -> String {
        match self.custom_file(custom) {
            Some(path) => path.display().to_string(),
            None => format!("built-in configs/memory/{}", self.settings_file.name),
        }
    }

    fn custom_file(&self, custom: Option<&Path>) -> Option<PathBuf> {
        let path = custom?;
        if path.is_dir() {
            let file = path.join(self.settings_file.name);
            file.exists().then_some(file)
        } else {
            Some(path.to_path_buf())
        }
    }
}

impl std::fmt::Debug for SystemSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemSpec")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
