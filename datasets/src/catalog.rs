//! The dataset catalog: `configs/datasets/{each,domain,task}.json`.
//!
//! The files carry upstream's dataset configurations (names, domain and task tags, test
//! metrics, output limits, sizes and sampling) plus each dataset's language. `each` resolves a
//! single dataset; `domain` and `task` list their datasets in upstream's order, which summaries
//! and regimes follow.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// What a dataset's text is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatasetLang {
    /// English.
    En,
    /// Chinese.
    Zh,
    /// Given per row (WritingBench).
    PerRow,
}

/// One dataset's configuration.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct DatasetConfig {
    /// Name, e.g. `Locomo-0`.
    pub dataset_name: String,
    /// Task shape: `Long-Short`, `Short-Long`, `Long-Long` or `Short-Short`.
    pub task_tag: String,
    /// `Open-Domain`, `Legal` or `Academic&Knowledge`.
    pub domain_tag: String,
    /// Metrics its evaluation reports.
    pub test_metrics: Vec<String>,
    /// Answer length limit in tokens (`null` upstream means the default 8192).
    pub max_output_len: Option<u32>,
    /// Upstream's implementing class, e.g. `Locomo.Locomo_Dataset`.
    pub class_name: String,
    /// Rows before sampling, where upstream records it.
    #[serde(default)]
    pub dataset_size: Option<usize>,
    /// Rows kept by upstream's sampling, where set.
    #[serde(default)]
    pub sample_count: Option<usize>,
    /// Sampling seed, where set.
    #[serde(default)]
    pub random_seed: Option<u64>,
    /// Language.
    pub lang: DatasetLang,
}

impl DatasetConfig {
    /// The answer length limit, with upstream's default for `null`.
    pub fn max_output_tokens(&self) -> u32 {
        self.max_output_len.unwrap_or(8192)
    }
}

/// Why the catalog cannot answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// A catalog file cannot be read or parsed.
    #[error("{path}: {detail}")]
    File {
        /// The file.
        path: String,
        /// What went wrong (with line and column for parse errors).
        detail: String,
    },
    /// A name the catalog does not know.
    #[error("unknown {kind} {name:?} (known: {known})")]
    Unknown {
        /// `dataset`, `domain` or `task`.
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// The names it does know.
        known: String,
    },
}

/// How a run names its datasets: one dataset, a domain or a task (upstream's `dataset_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DatasetType {
    /// One dataset by name.
    Single,
    /// A domain's datasets (`Open-Domain`, `Legal`, `Academic&Knowledge`, and our `Sample`).
    Domain,
    /// A task shape's datasets (`Long-Short`, `Short-Long`, `Long-Long`, `Short-Short`).
    Task,
}

impl DatasetType {
    /// The name used on the command line and in result paths.
    pub fn as_str(self) -> &'static str {
        match self {
            DatasetType::Single => "single",
            DatasetType::Domain => "domain",
            DatasetType::Task => "task",
        }
    }
}

impl std::str::FromStr for DatasetType {
    type Err = CatalogError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "single" => Ok(DatasetType::Single),
            "domain" => Ok(DatasetType::Domain),
            "task" => Ok(DatasetType::Task),
            other => Err(CatalogError::Unknown {
                kind: "dataset type",
                name: other.to_string(),
                known: "single, domain, task".into(),
            }),
        }
    }
}

/// All dataset configurations.
#[derive(Debug, Clone)]
pub struct Catalog {
    each: BTreeMap<String, DatasetConfig>,
    domains: BTreeMap<String, Vec<DatasetConfig>>,
    tasks: BTreeMap<String, Vec<DatasetConfig>>,
}

impl Catalog {
    /// Reads `each.json`, `domain.json` and `task.json` from `dir` (`configs/datasets`), plus
    /// `sample.json` where present: the built-in sample datasets, listed as the domain
    /// `Sample` and added to the single datasets.
    pub fn load(dir: &Path) -> Result<Catalog, CatalogError> {
        let mut catalog = Catalog {
            each: read(&dir.join("each.json"))?,
            domains: read(&dir.join("domain.json"))?,
            tasks: read(&dir.join("task.json"))?,
        };
        let sample = dir.join("sample.json");
        if sample.exists() {
            catalog.add_sample(read(&sample)?);
        }
        Ok(catalog)
    }

    /// The catalog shipped in `configs/datasets/`, built into the binary so that it works
    /// from any directory.
    pub fn builtin() -> Result<Catalog, CatalogError> {
        fn parse<T: serde::de::DeserializeOwned>(
            name: &str,
            text: &str,
        ) -> Result<T, CatalogError> {
            serde_json::from_str(text).map_err(|e| CatalogError::File {
                path: format!("configs/datasets/{name} (built in)"),
                detail: e.to_string(),
            })
        }
        let mut catalog = Catalog {
            each: parse(
                "each.json",
                include_str!("../../configs/datasets/each.json"),
            )?,
            domains: parse(
                "domain.json",
                include_str!("../../configs/datasets/domain.json"),
            )?,
            tasks: parse(
                "task.json",
                include_str!("../../configs/datasets/task.json"),
            )?,
        };
        catalog.add_sample(parse(
            "sample.json",
            include_str!("../../configs/datasets/sample.json"),
        )?);
        Ok(catalog)
    }

    fn add_sample(&mut self, sets: BTreeMap<String, Vec<DatasetConfig>>) {
        for (name, configs) in sets {
            for config in &configs {
                self.each
                    .insert(config.dataset_name.clone(), config.clone());
            }
            self.domains.insert(name, configs);
        }
    }

    /// The datasets a run over `name` covers, in upstream's order.
    pub fn resolve(
        &self,
        kind: DatasetType,
        name: &str,
    ) -> Result<Vec<DatasetConfig>, CatalogError> {
        Ok(match kind {
            DatasetType::Single => vec![self.dataset(name)?.clone()],
            DatasetType::Domain => self.domain(name)?.to_vec(),
            DatasetType::Task => self.task(name)?.to_vec(),
        })
    }

    /// Names of every dataset, domain or task, for help text and listings.
    pub fn set_names(&self, kind: DatasetType) -> Vec<&str> {
        match kind {
            DatasetType::Single => self.each.keys().map(String::as_str).collect(),
            DatasetType::Domain => self.domains.keys().map(String::as_str).collect(),
            DatasetType::Task => self.tasks.keys().map(String::as_str).collect(),
        }
    }

    /// One dataset.
    pub fn dataset(&self, name: &str) -> Result<&DatasetConfig, CatalogError> {
        self.each
            .get(name)
            .ok_or_else(|| unknown("dataset", name, self.each.keys()))
    }

    /// A domain's datasets, in upstream's order.
    pub fn domain(&self, name: &str) -> Result<&[DatasetConfig], CatalogError> {
        self.domains
            .get(name)
            .map(Vec::as_slice)
            .ok_or_else(|| unknown("domain", name, self.domains.keys()))
    }

    /// A task's datasets, in upstream's order.
    pub fn task(&self, name: &str) -> Result<&[DatasetConfig], CatalogError> {
        self.tasks
            .get(name)
            .map(Vec::as_slice)
            .ok_or_else(|| unknown("task", name, self.tasks.keys()))
    }

    /// Every dataset, by name.
    pub fn datasets(&self) -> impl Iterator<Item = &DatasetConfig> {
        self.each.values()
    }
}

fn read<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, CatalogError> {
    let fail = |detail: String| CatalogError::File {
        path: path.display().to_string(),
        detail,
    };
    let text = mb_core::files::read_text(path, mb_core::files::SETTINGS_LIMIT)
        .map_err(|e| fail(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| fail(e.to_string()))
}

fn unknown<'a>(
    kind: &'static str,
    name: &str,
    known: impl Iterator<Item = &'a String>,
) -> CatalogError {
    CatalogError::Unknown {
        kind,
        name: name.to_string(),
        known: known.cloned().collect::<Vec<_>>().join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        Catalog::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/datasets")).unwrap()
    }

    #[test]
    fn the_shipped_catalog_matches_the_reference_layout() {
        let catalog = catalog();
        assert_eq!(catalog.datasets().count(), 30);
        assert_eq!(Catalog::builtin().unwrap().datasets().count(), 30);
        let sizes: Vec<usize> = ["Open-Domain", "Legal", "Academic&Knowledge"]
            .iter()
            .map(|d| catalog.domain(d).unwrap().len())
            .collect();
        assert_eq!(sizes, [17, 5, 6]);
        let tasks: Vec<usize> = ["Long-Short", "Short-Long", "Long-Long", "Short-Short"]
            .iter()
            .map(|t| catalog.task(t).unwrap().len())
            .collect();
        assert_eq!(tasks, [16, 3, 6, 3]);
        let open = catalog.domain("Open-Domain").unwrap();
        assert_eq!(open[0].dataset_name, "Locomo-0");
        assert_eq!(open[10].dataset_name, "DialSim-friends");
        let locomo = catalog.dataset("Locomo-3").unwrap();
        assert_eq!(
            (locomo.test_metrics.as_slice(), locomo.lang),
            (&["f1".to_string()][..], DatasetLang::En)
        );
        assert_eq!(
            catalog
                .dataset("DialSim-friends")
                .unwrap()
                .max_output_tokens(),
            8192
        );
        assert_eq!(catalog.dataset("LexEval-QA").unwrap().lang, DatasetLang::Zh);
        // Every dataset of a domain or task is in `each`, with the same tags.
        for list in ["Open-Domain", "Legal", "Academic&Knowledge"]
            .iter()
            .map(|d| catalog.domain(d).unwrap())
        {
            for config in list {
                let single = catalog.dataset(&config.dataset_name).unwrap();
                assert_eq!(single.domain_tag, config.domain_tag);
                assert_eq!(single.task_tag, config.task_tag);
            }
        }
    }

    #[test]
    fn unknown_names_and_broken_files_are_named() {
        let catalog = catalog();
        let error = catalog.dataset("Locomo-99").unwrap_err().to_string();
        assert!(
            error.contains("Locomo-99") && error.contains("Locomo-9"),
            "{error}"
        );
        assert!(catalog.task("Long-Longer").is_err());
        let dir = std::env::temp_dir().join(format!("mb-catalog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("each.json"), "{\"X\": {\"dataset_name\": 3}}").unwrap();
        let error = Catalog::load(&dir).unwrap_err().to_string();
        assert!(
            error.contains("each.json") && error.contains("line 1"),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
