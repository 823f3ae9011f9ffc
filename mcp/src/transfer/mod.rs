//! Moving one tenant between stores: `memorybench-mcp export`, `import` and `drop-tenant`.
//!
//! When a shard is added behind a consistent-hashing balancer, the tenants it takes over find
//! their memories on their old shard (docs/scale-out.md). `export` writes every namespace the
//! tenant owns (memories of every user and agent, derived namespaces, the ingest queue with
//! its pending dialogs, the knowledge graph) as JSON lines: per namespace, the engine's
//! [`ExportEntry`] stream, header first. `import` stores them in another store under the same
//! names and record ids, so the memory systems' state still names its records and the queue
//! resumes on the next start. `drop-tenant` then removes the tenant from the old store with
//! the deletion guarantee of `delete_all_memories` (forgotten, then compacted).
//!
//! An export ends with an end record ([`end`]): its namespaces with their counts and the
//! SHA-256 of every line before it, which `export` and `import` both print. An import that does
//! not reach it, or finds other namespaces, counts or digest, keeps nothing.
//!
//! All three open the store directly, so its server must be stopped: a store in use is refused
//! with the holder's process id.

mod end;

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

use mb_core::atomic_file::{partial_path, AtomicFile};
use mb_engine::{Engine, EngineOptions, ExportEntry, TransferCounts};

use crate::cli::TenantCommand;
use crate::error::McpError;
use crate::limits;
use crate::tenant::Tenant;
use end::{mismatch, Declared, End, EndLine, Hashing, ReadDigest, END_PREFIX};

/// Runs one tenant command on the store at `store`; returns the line to print.
pub fn run(
    store: &Path,
    graph_namespace: &str,
    command: &TenantCommand,
) -> Result<String, McpError> {
    let mut options = EngineOptions::default();
    options.sync_writes = true;
    // Only an import may start a store; exporting or dropping from a mistyped path must fail.
    options.create_if_missing = matches!(command, TenantCommand::Import { .. });
    let engine = Engine::open(store, options)?;
    let done = match command {
        TenantCommand::Export { tenant, out } => {
            let tenant = Tenant::new(tenant)?;
            let moved = match out {
                Some(path) if path.as_os_str() != "-" => {
                    export_to_file(&engine, &tenant, graph_namespace, path)?
                }
                _ => {
                    let stdout = std::io::stdout();
                    let mut out = BufWriter::new(stdout.lock());
                    export_tenant(&engine, &tenant, graph_namespace, &mut out)?
                }
            };
            format!("exported tenant {}: {moved}", tenant.name())
        }
        TenantCommand::Import { tenant, input } => {
            let tenant = Tenant::new(tenant)?;
            let moved = match input {
                Some(path) => {
                    let file = File::open(path)
                        .map_err(|e| McpError::Io(format!("{}: {e}", path.display())))?;
                    let mut reader = BufReader::new(file);
                    let source = path.display().to_string();
                    import_tenant(&engine, &tenant, graph_namespace, &mut reader, &source)?
                }
                None => {
                    let stdin = std::io::stdin();
                    let mut reader = stdin.lock();
                    import_tenant(
                        &engine,
                        &tenant,
                        graph_namespace,
                        &mut reader,
                        "standard input",
                    )?
                }
            };
            format!("imported tenant {}: {moved}", tenant.name())
        }
        TenantCommand::DropTenant { tenant } => {
            let tenant = Tenant::new(tenant)?;
            let dropped = drop_tenant(&engine, &tenant, graph_namespace)?;
            format!(
                "dropped tenant {}: {dropped} namespaces, store compacted",
                tenant.name()
            )
        }
    };
    engine.close()?;
    Ok(done)
}

/// Exports to `path` through a partial file beside it ([`AtomicFile`]), so the file is either
/// the whole export or not there. Only a regular file is written (or
/// replaced): a device, a directory, a pipe or a symbolic link at `path` is refused, as the
/// rename would replace the node itself (`--out -` writes to standard output).
fn export_to_file(
    engine: &Engine,
    tenant: &Tenant,
    graph_namespace: &str,
    path: &Path,
) -> Result<Moved, McpError> {
    let io = |e: std::io::Error| McpError::Io(format!("{}: {e}", path.display()));
    regular_or_absent(path)?;
    regular_or_absent(&partial_path(path))?;
    let mut out = AtomicFile::create(path).map_err(io)?;
    let moved = export_tenant(engine, tenant, graph_namespace, &mut out)?;
    out.commit().map_err(io)?;
    Ok(moved)
}

/// `path` is a regular file or nothing: anything else is refused, naming what it is.
fn regular_or_absent(path: &Path) -> Result<(), McpError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => Ok(()),
        Ok(meta) => {
            let kind = if meta.file_type().is_symlink() {
                "a symbolic link"
            } else if meta.is_dir() {
                "a directory"
            } else {
                "a device, pipe or socket"
            };
            Err(McpError::Io(format!(
                "{}: is {kind}; an export is written only to a regular file (--out - writes \
                 to standard output)",
                path.display()
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(McpError::Io(format!("{}: {e}", path.display()))),
    }
}

/// What a command moved, summed over the tenant's namespaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Moved {
    /// Namespaces.
    pub namespaces: usize,
    /// Records, vectors and state values.
    pub counts: TransferCounts,
    /// The export's SHA-256 (of every line before its end record), written or verified.
    pub sha256: String,
}

impl Moved {
    fn add(&mut self, counts: TransferCounts) {
        self.namespaces += 1;
        self.counts.records += counts.records;
        self.counts.vectors += counts.vectors;
        self.counts.state += counts.state;
    }
}

impl std::fmt::Display for Moved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} namespaces, {} records, {} vectors, {} state values",
            self.namespaces, self.counts.records, self.counts.vectors, self.counts.state
        )?;
        if !self.sha256.is_empty() {
            write!(f, "; sha256 {}", self.sha256)?;
        }
        Ok(())
    }
}

/// The namespaces of `tenant` in `engine`, sorted.
pub fn tenant_namespaces(engine: &Engine, tenant: &Tenant, graph_namespace: &str) -> Vec<String> {
    let mut names: Vec<String> = engine
        .namespaces()
        .into_iter()
        .map(|info| info.name)
        .filter(|name| tenant.owns(name, graph_namespace))
        .collect();
    names.sort();
    names
}

/// Writes every namespace of `tenant` to `out` as JSON lines, then the end record.
pub fn export_tenant(
    engine: &Engine,
    tenant: &Tenant,
    graph_namespace: &str,
    out: &mut dyn Write,
) -> Result<Moved, McpError> {
    let mut moved = Moved::default();
    let mut declared = Vec::new();
    let mut hashing = Hashing::new(out);
    for name in tenant_namespaces(engine, tenant, graph_namespace) {
        let counts = engine.export_namespace(&name, |entry| {
            serde_json::to_writer(&mut hashing, &entry).map_err(std::io::Error::other)?;
            hashing.write_all(b"\n")
        })?;
        moved.add(counts);
        declared.push(Declared::new(&name, counts));
    }
    let (sha256, out) = hashing.finish();
    let end = EndLine {
        end: End {
            namespaces: declared,
            sha256: sha256.clone(),
        },
    };
    let written = serde_json::to_writer(&mut *out, &end)
        .map_err(std::io::Error::other)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    written.map_err(|e| McpError::Io(format!("writing the export: {e}")))?;
    moved.sha256 = sha256;
    Ok(moved)
}

/// Stores the namespaces of an export read from `input` (named `source` in errors), every one
/// of which must belong to `tenant`. A namespace the store already has is refused unless it
/// is empty (a server creates a tenant's graph namespace on its first call), so nothing
/// stored is overwritten; on any error the namespaces this import stored are dropped again.
pub fn import_tenant(
    engine: &Engine,
    tenant: &Tenant,
    graph_namespace: &str,
    input: &mut dyn BufRead,
    source: &str,
) -> Result<Moved, McpError> {
    let mut lines = Lines::new(input);
    let mut imported = Vec::new();
    let result = import_all(engine, tenant, graph_namespace, &mut lines, &mut imported);
    if result.is_err() {
        for name in &imported {
            if let Err(e) = engine.drop_namespace(name) {
                tracing::warn!("undoing the import of {name:?}: {e}");
            }
        }
    }
    result.map_err(|e| match e {
        Failure::At { line, message } => McpError::Io(format!("{source}, line {line}: {message}")),
        Failure::Other(e) => e,
    })
}

/// Why an import stopped: at a line of the input, or for another reason.
enum Failure {
    At { line: u64, message: String },
    Other(McpError),
}

impl From<McpError> for Failure {
    fn from(e: McpError) -> Self {
        Failure::Other(e)
    }
}

impl From<mb_engine::Error> for Failure {
    fn from(e: mb_engine::Error) -> Self {
        Failure::Other(e.into())
    }
}

fn import_all(
    engine: &Engine,
    tenant: &Tenant,
    graph_namespace: &str,
    lines: &mut Lines<'_>,
    imported: &mut Vec<String>,
) -> Result<Moved, Failure> {
    let mut moved = Moved::default();
    let mut read = Vec::new();
    while let Some((line, header)) = lines.next_entry()? {
        let ExportEntry::Namespace { name, .. } = &header else {
            return Err(Failure::At {
                line,
                message: "expected a namespace header".into(),
            });
        };
        let at = |message: String| Failure::At { line, message };
        if !tenant.owns(name, graph_namespace) {
            return Err(at(format!(
                "namespace {name:?} is not tenant {:?}'s",
                tenant.name()
            )));
        }
        if name.split('/').any(|part| matches!(part, "" | "." | "..")) {
            return Err(at(format!(
                "namespace {name:?} has an empty, `.` or `..` part: no server would ever reach it"
            )));
        }
        if engine.namespace(name).is_ok() {
            if engine.count(name)? > 0 || !engine.state_keys(name, "")?.is_empty() {
                return Err(at(format!(
                    "namespace {name:?} already holds memories in this store; nothing of it \
                     was changed (drop the tenant here first to replace it)"
                )));
            }
            engine.drop_namespace(name)?;
        }
        let name = name.clone();
        // A line that cannot be read stops the engine's import through an error item; the
        // failure itself, with its line, is kept here and reported instead of that error.
        let mut unreadable = None;
        let entries = std::iter::once(Ok(header)).chain(std::iter::from_fn(|| {
            match lines.next_in_namespace() {
                Ok(entry) => entry.map(Ok),
                Err(failure) => {
                    unreadable = Some(failure);
                    Some(Err(mb_engine::Error::Background(
                        "the export stopped being readable".into(),
                    )))
                }
            }
        }));
        let result = engine.import_namespace(entries);
        if let Some(failure) = unreadable {
            return Err(failure);
        }
        match result {
            Ok((_, counts)) => {
                read.push(Declared::new(&name, counts));
                imported.push(name);
                moved.add(counts);
            }
            Err(mb_engine::Error::InvalidImport { entry, reason }) => {
                return Err(Failure::At {
                    line: line + entry - 1,
                    message: reason,
                })
            }
            Err(e) => return Err(at(format!("namespace {name:?}: {e}"))),
        }
    }
    let Some((line, end, digest)) = lines.end.take() else {
        return Err(Failure::At {
            line: lines.line,
            message: "the export ends before its end record: it was cut short (or written \
                      by a version without one); nothing was imported"
                .into(),
        });
    };
    if let Some(why) = mismatch(&end, &read, &digest) {
        return Err(Failure::At {
            line,
            message: format!("{why}; nothing was imported"),
        });
    }
    moved.sha256 = digest;
    Ok(moved)
}

/// The export's lines, parsed one entry at a time, with one entry of look-ahead so that a
/// namespace's entries end where the next header begins.
struct Lines<'a> {
    input: &'a mut dyn BufRead,
    line: u64,
    peeked: Option<(u64, ExportEntry)>,
    buffer: String,
    /// The digest of the lines read before the end record.
    digest: ReadDigest,
    /// The end record once read: its line, itself and the digest of the lines before it.
    end: Option<(u64, End, String)>,
}

impl<'a> Lines<'a> {
    fn new(input: &'a mut dyn BufRead) -> Lines<'a> {
        Lines {
            input,
            line: 0,
            peeked: None,
            buffer: String::new(),
            digest: ReadDigest::default(),
            end: None,
        }
    }

    /// The next entry with its line number; `None` at the end.
    fn next_entry(&mut self) -> Result<Option<(u64, ExportEntry)>, Failure> {
        if let Some(peeked) = self.peeked.take() {
            return Ok(Some(peeked));
        }
        self.buffer.clear();
        self.line += 1;
        let line = self.line;
        let limit = limits::MAX_EXPORT_LINE_BYTES as u64 + 1;
        let read = Read::take(&mut *self.input, limit)
            .read_line(&mut self.buffer)
            .map_err(|e| Failure::At {
                line,
                message: format!("cannot read: {e}"),
            })?;
        if read == 0 {
            return Ok(None);
        }
        if self.buffer.len() > limits::MAX_EXPORT_LINE_BYTES {
            return Err(Failure::At {
                line,
                message: format!("longer than {} bytes", limits::MAX_EXPORT_LINE_BYTES),
            });
        }
        if self.end.is_some() {
            return Err(Failure::At {
                line,
                message: "nothing may follow the export's end record".into(),
            });
        }
        if self.buffer.starts_with(END_PREFIX) {
            let end: EndLine = serde_json::from_str(&self.buffer).map_err(|e| Failure::At {
                line,
                message: format!("not an end record: {e}"),
            })?;
            self.end = Some((line, end.end, self.digest.hex()));
            // What follows, if anything, is refused by the next call.
            return self.next_entry();
        }
        self.digest.update(&self.buffer);
        // Entries are numbered by line, so a blank line is refused rather than skipped.
        let entry = serde_json::from_str(&self.buffer).map_err(|e| Failure::At {
            line,
            message: format!("not an export entry: {e}"),
        })?;
        Ok(Some((line, entry)))
    }

    /// The next entry of the current namespace; `None` at the next header or the end.
    fn next_in_namespace(&mut self) -> Result<Option<ExportEntry>, Failure> {
        match self.next_entry()? {
            Some((line, entry @ ExportEntry::Namespace { .. })) => {
                self.peeked = Some((line, entry));
                Ok(None)
            }
            Some((_, entry)) => Ok(Some(entry)),
            None => Ok(None),
        }
    }
}

/// Forgets every namespace of `tenant` and compacts the store, so no byte of it is left
/// (docs/service.md, "Deletion"). Returns how many namespaces were removed.
pub fn drop_tenant(
    engine: &Engine,
    tenant: &Tenant,
    graph_namespace: &str,
) -> Result<usize, McpError> {
    let names = tenant_namespaces(engine, tenant, graph_namespace);
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let forgotten = engine.forget(&refs)?;
    engine.compact()?;
    Ok(forgotten)
}
