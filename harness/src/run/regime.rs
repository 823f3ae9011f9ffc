//! What the four regimes share: set up once, run every chosen system, print one table.
//!
//! Off-policy, train-performance, stepwise off-policy and on-policy differ in what they do with
//! one system's memory; loading the data, the store, the model roles and the systems, looping
//! over the systems and reporting are the same, and live here once.

use std::future::Future;

use mb_baselines::SystemSpec;

use crate::error::HarnessError;
use crate::run::cases::Outcome;
use crate::run::table::print_table;
use crate::run::{RunArgs, RunSetup};

/// One regime: its shared flags, and what it does with one system.
pub trait Regime {
    /// Whether a memoryless system (Vanilla) may run: regimes whose point is a memory that
    /// changes refuse it.
    const ACCEPTS_MEMORYLESS: bool;

    /// The flags every regime shares.
    fn run_args(&self) -> &RunArgs;

    /// Runs the regime for one system; the rows it adds to the printed table.
    fn run_system(
        &self,
        setup: &RunSetup,
        spec: &'static SystemSpec,
    ) -> impl Future<Output = Result<Vec<Outcome>, HarnessError>>;
}

/// Runs `regime` for every system its flags choose, one after the other, and prints the
/// table of their outcomes.
pub fn run_regime<R: Regime>(regime: &R) -> Result<(), HarnessError> {
    let setup = RunSetup::new(regime.run_args(), R::ACCEPTS_MEMORYLESS)?;
    let mut rows = Vec::new();
    for &spec in &setup.specs {
        rows.extend(
            setup
                .services
                .runtime
                .block_on(regime.run_system(&setup, spec))?,
        );
    }
    print_table(&rows);
    Ok(())
}
