//! `plan`: the runs of a sweep (regimes × sets × systems) and the shard each belongs to (see
//! [`super::sweep`]).

use clap::Args;

use super::sweep::{default_store, plan, Shard, SweepSpec};
use crate::error::HarnessError;
use crate::stdout::line;

/// `mb-harness plan`: the sweep's runs and their shards.
#[derive(Args, Debug, Clone)]
pub struct PlanArgs {
    /// The sweep.
    #[command(flatten)]
    pub spec: SweepSpec,
    /// Number of shards to assign the runs to.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub shards: u32,
}

/// Prints the plan: one line per run with its shard and command.
pub fn run(args: &PlanArgs) -> Result<(), HarnessError> {
    let runs = plan(&args.spec)?;
    line(format_args!(
        "{} runs in {} shard(s)",
        runs.len(),
        args.shards
    ))?;
    for (i, run) in runs.iter().enumerate() {
        let shard = i % args.shards as usize;
        let store = default_store(
            &args.spec.output_dir,
            Shard {
                index: shard as u32,
                count: args.shards,
            },
        );
        let arguments = run.arguments(&args.spec.output_dir, &store, &args.spec.flags);
        line(format_args!(
            "shard {shard}: mb-harness {}",
            arguments.join(" ")
        ))?;
    }
    Ok(())
}
