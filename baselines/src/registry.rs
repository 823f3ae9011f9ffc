//! The registry of memory systems, in upstream's order. The command line's choices, help and
//! sweeps derive from it, so a new memory system is one module, one entry here and one
//! settings file (docs/memory-systems.md walks through the steps).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use mb_datasets::catalog::DatasetType;

use crate::amem::{AMem, AMemSettings};
use crate::dense::DenseMemory;
use crate::error::MemoryError;
use crate::hybrid::{HybridFile, HybridMemory};
use crate::lexical::{LexicalMemory, LexicalSettings};
use crate::mem0::Mem0;
use crate::memoryos::{MemoryOs, MemoryOsSettings};
use crate::raptor::{Raptor, RaptorSettings};
use crate::settings_file;
use crate::spec::SystemSpec;
use crate::units::Granularity;
use crate::vanilla::Vanilla;

/// Every registered memory system, in upstream's order.
pub static REGISTRY: &[SystemSpec] = &[
    SystemSpec::new("wo_memory", "Vanilla", settings_file!("base.toml"), |context| {
        Ok(Box::new(Vanilla::new(context)))
    })
    .memoryless(),
    SystemSpec::new("bm25_message", "BM25-M", settings_file!("bm25.toml"), |context| {
        Ok(Box::new(LexicalMemory::new(context, Granularity::Message)?))
    })
    .with_own_settings::<LexicalSettings>()
    .dialog_stem("bm25"),
    SystemSpec::new("bm25_dialog", "BM25-S", settings_file!("bm25.toml"), |context| {
        Ok(Box::new(LexicalMemory::new(context, Granularity::Session)?))
    })
    .with_own_settings::<LexicalSettings>(),
    SystemSpec::new("embedder_message", "Emb-M", settings_file!("embedder.toml"), |context| {
        Ok(Box::new(DenseMemory::new(context, Granularity::Message)?))
    })
    .dialog_stem("embedder")
    .with_embedder(),
    SystemSpec::new("embedder_dialog", "Emb-S", settings_file!("embedder.toml"), |context| {
        Ok(Box::new(DenseMemory::new(context, Granularity::Session)?))
    })
    .with_embedder(),
    SystemSpec::new("a_mem", "A-Mem", settings_file!("a_mem.toml"), |context| {
        Ok(Box::new(AMem::new(context)?))
    })
    .with_own_settings::<AMemSettings>()
    .with_embedder(),
    SystemSpec::new("mem0", "Mem0", settings_file!("mem0.toml"), |context| {
        Ok(Box::new(Mem0::new(context)?))
    })
    .with_embedder()
    .skipping(
        &[(DatasetType::Domain, "Open-Domain"), (DatasetType::Task, "Long-Short")],
        "its fact extraction runs once per corpus turn, too slow over the LoCoMo and DialSim corpora",
    ),
    SystemSpec::new("memoryos", "MemoryOS", settings_file!("memoryos.toml"), |context| {
        Ok(Box::new(MemoryOs::new(context)?))
    })
    .with_own_settings::<MemoryOsSettings>()
    .with_embedder(),
    SystemSpec::new("raptor", "RAPTOR", settings_file!("raptor.toml"), |context| {
        Ok(Box::new(Raptor::new(context)?))
    })
    .with_own_settings::<RaptorSettings>()
    .with_embedder()
    .beyond_upstream(),
    SystemSpec::new("hybrid", "Hybrid", settings_file!("hybrid.toml"), |context| {
        Ok(Box::new(HybridMemory::new(context)?))
    })
    .with_own_settings::<HybridFile>()
    .with_embedder()
    .beyond_upstream(),
];

/// How `--baseline` names a memory system written in Python: `py:module.path:ClassName`.
pub const PYTHON_PREFIX: &str = "py:";

/// The entry named `name`: a registered system, or a Python class (`py:module.path:ClassName`).
pub fn get(name: &str) -> Result<&'static SystemSpec, MemoryError> {
    if let Some(target) = name.strip_prefix(PYTHON_PREFIX) {
        return python_entry(name, target);
    }
    REGISTRY.iter().find(|s| s.name == name).ok_or_else(|| {
        MemoryError::Config(format!(
            "unknown memory system {name:?} (known: {}; or a Python class, py:module.path:ClassName)",
            REGISTRY
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// The entry of a Python class, made once per name and kept for the process (entries are
/// `'static`, as the registry's are).
fn python_entry(name: &str, target: &str) -> Result<&'static SystemSpec, MemoryError> {
    static ENTRIES: OnceLock<Mutex<HashMap<String, &'static SystemSpec>>> = OnceLock::new();
    let (module, class) = target.rsplit_once(':').unwrap_or((target, ""));
    let identifier = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    if !module.split('.').all(identifier) || !identifier(class) {
        return Err(MemoryError::Config(format!(
            "{name:?}: name a Python memory system as py:module.path:ClassName"
        )));
    }
    let mut entries = ENTRIES
        .get_or_init(Mutex::default)
        .lock()
        .map_err(|_| MemoryError::Config("the Python systems' table is poisoned".into()))?;
    if let Some(entry) = entries.get(name) {
        return Ok(entry);
    }
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    let entry: &'static SystemSpec = Box::leak(Box::new(SystemSpec::python(
        leak(name),
        leak(class),
        leak(target),
    )));
    entries.insert(name.to_string(), entry);
    Ok(entry)
}

/// The systems a sweep runs.
pub fn default_systems() -> impl Iterator<Item = &'static SystemSpec> {
    REGISTRY.iter().filter(|s| s.available_by_default)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

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
                "dialog_memoryos",
                "dialog_raptor",
                "dialog_hybrid"
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
                "mem0" | "raptor" => 10,
                "memoryos" => 7,
                _ => 5,
            };
            assert_eq!(
                spec.settings(None).unwrap().retrieve_k(),
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
        // The hybrid memory and RAPTOR (which upstream cannot run) are beyond upstream: named,
        // not swept; the hybrid's file states its defaults.
        let hybrid = get("hybrid").unwrap();
        assert!(!default_systems().any(|s| s.name == "hybrid" || s.name == "raptor"));
        assert_eq!(default_systems().count(), REGISTRY.len() - 2);
        assert_eq!(
            hybrid
                .settings(None)
                .unwrap()
                .own::<HybridFile>()
                .unwrap()
                .hybrid,
            crate::hybrid::HybridSettings::default()
        );
    }

    #[test]
    fn a_python_class_is_an_entry_of_its_own() {
        let spec = get("py:pkg.memories:MyMemory").unwrap();
        assert_eq!(
            (spec.name, spec.paper_name),
            ("py:pkg.memories:MyMemory", "MyMemory")
        );
        assert!(std::ptr::eq(spec, get("py:pkg.memories:MyMemory").unwrap()));
        assert!(!spec.available_by_default && spec.needs_embedder && !spec.memoryless);
        assert_eq!(spec.dialog_key(), "dialog_bm25");
        let settings = spec.settings(None).unwrap();
        assert_eq!(
            settings.own::<crate::python::PythonSettings>().unwrap(),
            crate::python::PythonSettings::default()
        );
        assert_eq!(settings.retrieve_k(), 5);
        for bad in [
            "py:",
            "py:mod",
            "py:mod:",
            "py:1mod:X",
            "py:mod:X.Y",
            "py:mod-x:X",
            "py::X",
        ] {
            let error = get(bad).unwrap_err().to_string();
            assert!(error.contains("py:module.path:ClassName"), "{bad}: {error}");
        }
    }

    #[test]
    fn shipped_settings_are_upstreams_and_a_file_replaces_them() {
        let bm25 = get("bm25_message").unwrap();
        let shipped = bm25.settings(None).unwrap();
        let syntax = |settings: &crate::SystemSettings| {
            settings.own::<LexicalSettings>().unwrap().query_syntax
        };
        assert_eq!(syntax(&shipped), mb_engine::QuerySyntax::Whoosh);
        assert!(!shipped.cjk_analyzer());
        assert!(bm25
            .settings_origin(None)
            .contains("configs/memory/bm25.toml"));

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain.toml");
        std::fs::write(&file, "retrieve_k = 3\nquery_syntax = \"plain\"\n").unwrap();
        let replaced = bm25.settings(Some(&file)).unwrap();
        assert_eq!(syntax(&replaced), mb_engine::QuerySyntax::Plain);
        assert_eq!(replaced.retrieve_k(), 3);
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
                .retrieve_k(),
            2
        );
        assert_eq!(bm25.settings(Some(custom.path())).unwrap(), shipped);
        assert!(bm25
            .settings_origin(Some(custom.path()))
            .starts_with("built-in"));
    }

    /// The directories docs/harness.md offers for `--memory-config` change what they say they
    /// change and nothing else.
    #[test]
    fn shipped_alternative_directories() {
        let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/memory");
        let plain = configs.join("plain-queries");
        for spec in REGISTRY {
            let (shipped, custom) = (spec.settings(None).unwrap(), spec.settings(Some(&plain)));
            let custom = custom.unwrap();
            if spec.name.starts_with("bm25") {
                let own = |s: &crate::SystemSettings| s.own::<LexicalSettings>().unwrap();
                assert_eq!(own(&custom).query_syntax, mb_engine::QuerySyntax::Plain);
                let as_shipped = custom.with_own(&own(&shipped)).unwrap();
                assert_eq!(as_shipped, shipped, "{}", spec.name);
            } else {
                assert_eq!(custom, shipped, "{}", spec.name);
            }
        }
        let paper = configs.join("paper");
        for spec in REGISTRY {
            let custom = spec.settings(Some(&paper)).unwrap();
            let embedder = custom.embedder().to_string();
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
