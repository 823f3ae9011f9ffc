//! An export's last line, the end record: every namespace it holds with its counts, and the
//! SHA-256 of every byte before it. An import that does not reach it, or whose namespaces,
//! counts or digest differ from it, was given a cut or altered file and keeps nothing.

use std::io::Write;

use mb_engine::TransferCounts;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How the end record's line starts (nothing else in an export does: entries start with
/// `{"kind":`).
pub(super) const END_PREFIX: &str = "{\"end\":";

/// The end record, the export's last line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EndLine {
    pub end: End,
}

/// What an export holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct End {
    /// Each namespace, in the order written, with what it holds.
    pub namespaces: Vec<Declared>,
    /// SHA-256 (hex) of every byte of the export before this line.
    pub sha256: String,
}

/// One namespace of an export and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Declared {
    pub name: String,
    pub records: u64,
    pub vectors: u64,
    pub state: u64,
}

impl Declared {
    /// `name` holding `counts`.
    pub fn new(name: &str, counts: TransferCounts) -> Declared {
        Declared {
            name: name.to_string(),
            records: counts.records,
            vectors: counts.vectors,
            state: counts.state,
        }
    }
}

/// A writer that hashes what goes through it.
pub(super) struct Hashing<'a> {
    inner: &'a mut dyn Write,
    hasher: Sha256,
}

impl<'a> Hashing<'a> {
    pub fn new(inner: &'a mut dyn Write) -> Hashing<'a> {
        Hashing {
            inner,
            hasher: Sha256::new(),
        }
    }

    /// The digest of everything written so far, and the inner writer.
    pub fn finish(self) -> (String, &'a mut dyn Write) {
        (hex(self.hasher.finalize().as_slice()), self.inner)
    }
}

impl Write for Hashing<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.inner.write(buf)?;
        self.hasher.update(&buf[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The running digest of an import's lines.
#[derive(Default)]
pub(super) struct ReadDigest(Sha256);

impl ReadDigest {
    /// Adds one line as read (its newline included).
    pub fn update(&mut self, line: &str) {
        self.0.update(line.as_bytes());
    }

    /// The digest so far, hex.
    pub fn hex(&self) -> String {
        hex(self.0.clone().finalize().as_slice())
    }
}

/// Lower-case hexadecimal of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why an import's end record does not match what it read, if it does not.
pub(super) fn mismatch(end: &End, read: &[Declared], digest: &str) -> Option<String> {
    if end.sha256 != digest {
        return Some(format!(
            "the export's digest is {} but its lines hash to {digest}: the file was altered",
            mb_core::excerpt(&end.sha256, 80)
        ));
    }
    if end.namespaces.len() != read.len() {
        return Some(format!(
            "the end record lists {} namespaces, the file holds {}",
            end.namespaces.len(),
            read.len()
        ));
    }
    end.namespaces
        .iter()
        .zip(read)
        .find(|(declared, got)| declared != got)
        .map(|(declared, got)| {
            format!(
                "namespace {:?}: the end record declares {} records, {} vectors and {} state \
                 values; {:?} holds {}, {} and {}",
                declared.name,
                declared.records,
                declared.vectors,
                declared.state,
                got.name,
                got.records,
                got.vectors,
                got.state
            )
        })
}
