//! What a command prints on standard output, as a result rather than a panic.
//!
//! `println!` panics when standard output is gone (`mb-harness plan | head`), which the panic
//! hook would report as an internal error. A command prints through [`line()`] instead and
//! returns the failure as [`HarnessError::Output`]; `main` ends quietly when its kind is a
//! closed pipe, and says what failed otherwise (a full disk under a redirect).

use std::io::Write;

use crate::error::HarnessError;

/// Writes `text` and a newline to standard output.
pub(crate) fn line(text: impl std::fmt::Display) -> Result<(), HarnessError> {
    writeln!(std::io::stdout().lock(), "{text}").map_err(HarnessError::Output)
}
