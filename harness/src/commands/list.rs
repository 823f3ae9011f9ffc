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
    writeln!(
        out,
        "memory systems (`--baseline all` runs those marked \"all\" that upstream runs on the set):"
    )
    .map_err(io)?;
    for spec in registry::REGISTRY {
        let swept = if spec.available_by_default {
            "all"
        } else {
            "beyond upstream, named alone"
        };
        writeln!(
            out,
            "  {:<18} {:<8} {:<29} settings {}",
            spec.name,
            spec.paper_name,
            swept,
            spec.settings_origin(None)
        )
        .map_err(io)?;
    }
    writeln!(
        out,
        "  py:module.path:ClassName    a memory system written in Python (docs/memory-systems.md, \"In Python\"), named alone"
    )
    .map_err(io)?;
    Ok(())
}
