//! Raw tables: the rows of one split as stored, before typing.
//!
//! MemoryBench's Hugging Face copy is written by `datasets.save_to_disk` as Arrow IPC streams
//! (`*.arrow`); the Hub's converter exports the same rows as Parquet, and people pass them
//! around as JSON lines. All three read into the same shape: one JSON object per row whose
//! values are the stored cells (strings, integers, floats, booleans, nulls).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use serde_json::{Map, Value};

/// One stored row: column name to cell.
pub type RawRow = Map<String, Value>;

/// A table that cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TableError {
    /// The file cannot be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a readable Arrow, Parquet or JSON-lines table.
    #[error("{path}: {detail}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong, with the line or column where known.
        detail: String,
    },
}

/// The storage formats a split can come in, chosen by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// Arrow IPC stream or file (`.arrow`), as `save_to_disk` writes.
    Arrow,
    /// Apache Parquet (`.parquet`).
    Parquet,
    /// One JSON object per line (`.jsonl`, `.json`).
    JsonLines,
}

impl TableFormat {
    /// The format of a file, from its extension.
    pub fn of(path: &Path) -> Option<TableFormat> {
        match path.extension()?.to_str()? {
            "arrow" => Some(TableFormat::Arrow),
            "parquet" => Some(TableFormat::Parquet),
            "jsonl" | "json" => Some(TableFormat::JsonLines),
            _ => None,
        }
    }
}

/// Reads every row of one table file.
pub fn read_table(path: &Path) -> Result<Vec<RawRow>, TableError> {
    let format = TableFormat::of(path).ok_or_else(|| TableError::Format {
        path: path.display().to_string(),
        detail: "unknown table format (expected .arrow, .parquet or .jsonl)".into(),
    })?;
    match format {
        TableFormat::Arrow => guarded(path, || read_arrow(path)),
        TableFormat::Parquet => guarded(path, || read_parquet(path)),
        TableFormat::JsonLines => read_json_lines(path),
    }
}

/// Runs an Arrow or Parquet reader, turning a panic on damaged input (arrow-rs asserts on some
/// corrupt buffers instead of returning an error) into an error naming the file.
fn guarded(
    path: &Path,
    read: impl FnOnce() -> Result<Vec<RawRow>, TableError>,
) -> Result<Vec<RawRow>, TableError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).unwrap_or_else(|panic| {
        let reason = mb_core::panic::panic_text(panic.as_ref()).unwrap_or("the reader gave up");
        Err(TableError::Format {
            path: path.display().to_string(),
            detail: format!("damaged file ({reason})"),
        })
    })
}

/// Rows of a JSON-lines text (blank lines skipped); `origin` names it in errors.
pub fn parse_json_lines(text: &str, origin: &str) -> Result<Vec<RawRow>, TableError> {
    let mut rows = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if let Some(row) = json_line(line, origin, number + 1)? {
            rows.push(row);
        }
    }
    Ok(rows)
}

fn json_line(line: &str, origin: &str, number: usize) -> Result<Option<RawRow>, TableError> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str(line) {
        Ok(Value::Object(row)) => Ok(Some(row)),
        Ok(_) => Err(TableError::Format {
            path: origin.to_string(),
            detail: format!("line {number}: not a JSON object"),
        }),
        Err(e) => Err(TableError::Format {
            path: origin.to_string(),
            detail: format!("line {number}: {e}"),
        }),
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> TableError + '_ {
    move |source| TableError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn format_error(path: &Path) -> impl Fn(String) -> TableError + '_ {
    move |detail| TableError::Format {
        path: path.display().to_string(),
        detail,
    }
}

fn read_json_lines(path: &Path) -> Result<Vec<RawRow>, TableError> {
    let reader = BufReader::new(File::open(path).map_err(io_error(path))?);
    let origin = path.display().to_string();
    let mut rows = Vec::new();
    for (number, line) in reader.lines().enumerate() {
        let line = line.map_err(io_error(path))?;
        if let Some(row) = json_line(&line, &origin, number + 1)? {
            rows.push(row);
        }
    }
    Ok(rows)
}

fn read_arrow(path: &Path) -> Result<Vec<RawRow>, TableError> {
    let bad = format_error(path);
    let bytes = std::fs::read(path).map_err(io_error(path))?;
    check_ipc_framing(&bytes)
        .map_err(|detail| bad(format!("not a readable Arrow IPC stream or file: {detail}")))?;
    // `save_to_disk` writes the streaming format; accept the file format too.
    match arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(&bytes), None) {
        Ok(reader) => batches_to_rows(reader.map(|b| b.map_err(|e| e.to_string())), &bad),
        Err(stream_error) => {
            let reader = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(&bytes), None)
                .map_err(|file_error| {
                    bad(format!(
                        "not an Arrow IPC stream ({stream_error}) nor file ({file_error})"
                    ))
                })?;
            batches_to_rows(reader.map(|b| b.map_err(|e| e.to_string())), &bad)
        }
    }
}

/// Checks an Arrow IPC stream's framing before arrow-rs reads it: every message's metadata must
/// parse and its body must fit in the bytes that follow. arrow-rs allocates a message's body at
/// the length the file declares, so one damaged length would otherwise exhaust memory.
fn check_ipc_framing(bytes: &[u8]) -> Result<(), String> {
    // The file format opens with "ARROW1" and two bytes of padding, then the stream.
    let mut at = if bytes.starts_with(b"ARROW1") { 8 } else { 0 };
    let word = |at: usize| -> Option<u32> {
        let four = bytes.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes([four[0], four[1], four[2], four[3]]))
    };
    loop {
        // Streams may end without their end marker; arrow-rs says what is missing.
        let Some(mut length) = word(at) else {
            return Ok(());
        };
        at += 4;
        if length == u32::MAX {
            let Some(after) = word(at) else {
                return Ok(());
            };
            length = after;
            at += 4;
        }
        if length == 0 {
            return Ok(());
        }
        let end = at
            .checked_add(length as usize)
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| format!("message metadata of {length} bytes runs past the end"))?;
        let message = arrow_ipc::root_as_message(&bytes[at..end])
            .map_err(|e| format!("damaged message metadata ({e})"))?;
        at = end;
        let body = usize::try_from(message.bodyLength())
            .ok()
            .filter(|&body| body <= bytes.len() - at)
            .ok_or_else(|| {
                format!(
                    "a message body of {} bytes with {} bytes left",
                    message.bodyLength(),
                    bytes.len() - at
                )
            })?;
        at += body;
    }
}

fn read_parquet(path: &Path) -> Result<Vec<RawRow>, TableError> {
    let bad = format_error(path);
    let file = File::open(path).map_err(io_error(path))?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|builder| builder.build())
        .map_err(|e| bad(e.to_string()))?;
    batches_to_rows(reader.map(|b| b.map_err(|e| e.to_string())), &bad)
}

fn batches_to_rows(
    batches: impl Iterator<Item = Result<RecordBatch, String>>,
    bad: &dyn Fn(String) -> TableError,
) -> Result<Vec<RawRow>, TableError> {
    let mut rows = Vec::new();
    for batch in batches {
        let batch = batch.map_err(bad)?;
        let schema = batch.schema();
        let mut batch_rows = vec![Map::new(); batch.num_rows()];
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            let cells = cells(column)
                .map_err(|detail| bad(format!("column {:?}: {detail}", field.name())))?;
            for (row, cell) in batch_rows.iter_mut().zip(cells) {
                row.insert(field.name().clone(), cell);
            }
        }
        rows.extend(batch_rows);
    }
    Ok(rows)
}

/// The cells of one column as JSON values.
fn cells(column: &Arc<dyn Array>) -> Result<Vec<Value>, String> {
    let n = column.len();
    let each = |f: &dyn Fn(usize) -> Value| -> Vec<Value> {
        (0..n)
            .map(|i| if column.is_null(i) { Value::Null } else { f(i) })
            .collect()
    };
    macro_rules! numbers {
        ($t:ty) => {{
            let values = column.as_primitive::<$t>();
            each(&|i| Value::from(values.value(i)))
        }};
    }
    Ok(match column.data_type() {
        DataType::Null => vec![Value::Null; n],
        DataType::Utf8 => {
            let values = column.as_string::<i32>();
            each(&|i| Value::from(values.value(i)))
        }
        DataType::LargeUtf8 => {
            let values = column.as_string::<i64>();
            each(&|i| Value::from(values.value(i)))
        }
        DataType::Utf8View => {
            let values = column.as_string_view();
            each(&|i| Value::from(values.value(i)))
        }
        DataType::Boolean => {
            let values = column.as_boolean();
            each(&|i| Value::from(values.value(i)))
        }
        DataType::Int8 => numbers!(Int8Type),
        DataType::Int16 => numbers!(Int16Type),
        DataType::Int32 => numbers!(Int32Type),
        DataType::Int64 => numbers!(Int64Type),
        DataType::UInt8 => numbers!(UInt8Type),
        DataType::UInt16 => numbers!(UInt16Type),
        DataType::UInt32 => numbers!(UInt32Type),
        DataType::UInt64 => numbers!(UInt64Type),
        DataType::Float32 => numbers!(Float32Type),
        DataType::Float64 => numbers!(Float64Type),
        other => {
            return Err(format!(
                "unsupported type {other} (MemoryBench stores text and integers)"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{Field, Schema};
    use serde_json::json;

    fn batch() -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("test_idx", DataType::Int64, false),
            Field::new("info", DataType::Utf8, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(vec![4, 9])),
                Arc::new(StringArray::from(vec![Some("{'a': 1}"), None])),
            ],
        )
        .unwrap()
    }

    fn expected() -> Vec<RawRow> {
        vec![
            json!({"test_idx": 4, "info": "{'a': 1}"})
                .as_object()
                .unwrap()
                .clone(),
            json!({"test_idx": 9, "info": null})
                .as_object()
                .unwrap()
                .clone(),
        ]
    }

    #[test]
    fn arrow_stream_and_file_read_alike() {
        let dir = tempfile::tempdir().unwrap();
        let stream = dir.path().join("data-00000-of-00001.arrow");
        let batch = batch();
        let mut writer = arrow_ipc::writer::StreamWriter::try_new(
            File::create(&stream).unwrap(),
            &batch.schema(),
        )
        .unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        assert_eq!(read_table(&stream).unwrap(), expected());

        let file = dir.path().join("file.arrow");
        let mut writer =
            arrow_ipc::writer::FileWriter::try_new(File::create(&file).unwrap(), &batch.schema())
                .unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        assert_eq!(read_table(&file).unwrap(), expected());
    }

    #[test]
    fn parquet_reads_like_arrow() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0000.parquet");
        let batch = batch();
        let mut writer = parquet::arrow::ArrowWriter::try_new(
            File::create(&path).unwrap(),
            batch.schema(),
            None,
        )
        .unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        assert_eq!(read_table(&path).unwrap(), expected());
    }

    #[test]
    fn broken_files_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("test.jsonl");
        std::fs::write(&jsonl, "{\"test_idx\": 1}\n\n{\"test_idx\": \n").unwrap();
        let error = read_table(&jsonl).unwrap_err().to_string();
        assert!(
            error.contains("test.jsonl") && error.contains("line 3"),
            "{error}"
        );

        let arrow = dir.path().join("bad.arrow");
        std::fs::write(&arrow, b"not arrow at all").unwrap();
        let error = read_table(&arrow).unwrap_err().to_string();
        assert!(
            error.contains("bad.arrow") && error.contains("Arrow IPC"),
            "{error}"
        );

        let parquet = dir.path().join("bad.parquet");
        std::fs::write(&parquet, b"PAR1 broken").unwrap();
        assert!(read_table(&parquet)
            .unwrap_err()
            .to_string()
            .contains("bad.parquet"));
    }
}
