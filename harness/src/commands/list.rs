//! `list`: the datasets, domains, tasks and memory systems the harness knows.

use std::io::Write;

use mb_baselines::registry;
use mb_datasets::catalog::{Catalog, DatasetType};

use crate::error::HarnessError;

/// Runs `list`: datasets, sets and memory systems.
pub fn run() -> Result<(), HarnessError> {
    let catalog = Catalog::builtin()?;
    let mut out = std::io::stdout().lock();
    let io = |e: std::io::Error| HarnessError::Output(e);
    for kind in [DatasetType::Domain, DatasetType::Task] {
        writeln!(out, "{}s:", kind.as_str()).map_err(io)?;
        for name in catalog.set_names(kind) {
            let datasets: Vec<String> = catalog
                .resolve(kind, name)?
                .into_iter()
                .map(|c| c.dataset_name)
                .collect();
            writeln!(out, "  {name}: {}", datasets.join(", ")).map_err(io)?;
        }
    }
    writeln!(out, "memory systems:").map_err(io)?;
    for spec in registry::REGISTRY {
        writeln!(
            out,
            "  {:<18} {:<8} settings {}",
            spec.name,
            spec.paper_name,
            spec.settings_origin(None)
        )
        .map_err(io)?;
    }
    Ok(())
}
