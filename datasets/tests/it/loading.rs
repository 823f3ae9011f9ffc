//! Loading the Hugging Face layout (Arrow streams as `save_to_disk` writes them, Parquet and
//! JSON lines), and errors that name dataset, split, row and field.

use std::fs::{self, File};
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use mb_datasets::catalog::{Catalog, DatasetType};
use mb_datasets::row::Input;
use mb_datasets::{load, DataError, HfDirectory, SplitName};
use serde_json::{json, Value};

/// Rows as the HF copy stores them: `test_idx` an integer, every other column a string.
fn batch(rows: &[Value]) -> RecordBatch {
    let columns: Vec<String> = rows[0].as_object().unwrap().keys().cloned().collect();
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for column in &columns {
        if column == "test_idx" {
            fields.push(Field::new(column, DataType::Int64, false));
            arrays.push(Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|r| r[column].as_i64().unwrap()),
            )));
        } else {
            fields.push(Field::new(column, DataType::Utf8, true));
            arrays.push(Arc::new(StringArray::from_iter(
                rows.iter().map(|r| r[column].as_str().map(str::to_string)),
            )));
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

fn write_arrow(path: &Path, rows: &[Value]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let batch = batch(rows);
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new(File::create(path).unwrap(), &batch.schema())
            .unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();
}

fn write_parquet(path: &Path, rows: &[Value]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let batch = batch(rows);
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), None)
            .unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

fn write_jsonl(path: &Path, rows: &[Value]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    fs::write(path, text).unwrap();
}

fn lexeval_row(test_idx: i64) -> Value {
    json!({
        "test_idx": test_idx,
        "input_prompt": format!("问题 {test_idx}"),
        "dataset_name": "LexEval-QA",
        "lang": "zh",
        "info": format!("{{'golden_answer': '答案 {test_idx}'}}"),
        "dialog": "[{'role': 'user', 'content': '问题'}, {'role': 'assistant', 'content': '回答'}]",
        "implicit_feedback": "[{'round': 1, 'implicit_actions': ['like'], 'satisfaction_score': 4}]",
    })
}

fn locomo_rows(range: std::ops::Range<i64>) -> Vec<Value> {
    range
        .map(|i| {
            json!({
                "test_idx": i,
                "input_prompt": "",
                "input_chat_messages": "[{\"role\": \"user\", \"content\": \"When?\"}]",
                "dataset_name": "Locomo-0",
                "lang": "en",
                "info": "{\"golden_answer\": \"May\", \"category\": 2, \"evidence\": []}",
                "dialog_bm25": "[]",
                "implicit_feedback_bm25": "[]",
                "origin_question": "When?",
            })
        })
        .collect()
}

fn locomo_corpus() -> String {
    let sample = json!({"conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:00 pm on 1 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bo"}],
    }});
    format!("{}\n", json!({ "text": sample.to_string() }))
}

/// A directory with Locomo-0 in Arrow, LexEval-QA in Parquet and NFCats in JSON lines.
fn layout(root: &Path) {
    let data = root.join("dataset");
    write_arrow(
        &data.join("Locomo-0/train/data-00000-of-00001.arrow"),
        &locomo_rows(0..3),
    );
    write_arrow(
        &data.join("Locomo-0/test/data-00000-of-00001.arrow"),
        &locomo_rows(3..5),
    );
    fs::create_dir_all(root.join("corpus")).unwrap();
    fs::write(root.join("corpus/Locomo-0.jsonl"), locomo_corpus()).unwrap();
    let lexeval: Vec<Value> = (0..4).map(lexeval_row).collect();
    write_parquet(&data.join("LexEval-QA/train/0000.parquet"), &lexeval[..3]);
    write_parquet(&data.join("LexEval-QA/test/0000.parquet"), &lexeval[3..]);
    let nfcats = |i: i64| json!({"test_idx": i, "input_prompt": "Why?", "dataset_name": "NFCats", "lang": "en", "info": "{}"});
    write_jsonl(&data.join("NFCats/train.jsonl"), &[nfcats(10), nfcats(11)]);
    write_jsonl(&data.join("NFCats/test.jsonl"), &[nfcats(12)]);
}

#[test]
fn every_storage_format_loads_into_typed_rows() {
    let dir = tempfile::tempdir().unwrap();
    layout(dir.path());
    let source = HfDirectory::open(dir.path()).unwrap();
    let catalog = Catalog::builtin().unwrap();

    let locomo = &load(&source, &catalog, DatasetType::Single, "Locomo-0").unwrap()[0];
    assert_eq!((locomo.train.len(), locomo.test.len()), (3, 2));
    assert_eq!(locomo.row(4).unwrap().0, SplitName::Test);
    assert!(matches!(locomo.test[0].input, Input::Chat(ref m) if m[0].content == "When?"));
    assert!(locomo.train[0].dialog_for("bm25").is_some());
    assert_eq!(
        locomo.corpus.as_ref().unwrap().sessions[0].turns[0].text,
        "Hi Bo"
    );

    let lexeval = &load(&source, &catalog, DatasetType::Single, "LexEval-QA").unwrap()[0];
    assert_eq!(lexeval.test[0].golden_answer(), Some("答案 3"));
    assert_eq!(
        lexeval.train[0].dialog_for("").unwrap().feedback[0].satisfaction_score,
        Some(4.0)
    );

    let nfcats = &load(&source, &catalog, DatasetType::Single, "NFCats").unwrap()[0];
    assert_eq!(nfcats.test[0].test_idx, 12);
    assert!(nfcats.corpus.is_none());
}

fn error_of(root: &Path, dataset: &str) -> String {
    let source = HfDirectory::open(root).unwrap();
    let catalog = Catalog::builtin().unwrap();
    load(&source, &catalog, DatasetType::Single, dataset)
        .unwrap_err()
        .to_string()
}

#[test]
fn corrupt_data_is_named_by_dataset_split_row_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    layout(root);
    let data = root.join("dataset");

    // Bad JSON in a string column.
    let mut rows: Vec<Value> = (0..3).map(lexeval_row).collect();
    rows[1]["info"] = json!("{'golden_answer': '答案");
    write_parquet(&data.join("LexEval-QA/train/0000.parquet"), &rows);
    let error = error_of(root, "LexEval-QA");
    for part in [
        "LexEval-QA",
        "train split",
        "row 1",
        "test_idx 1",
        "\"info\"",
    ] {
        assert!(error.contains(part), "{part} missing from: {error}");
    }

    // A missing column.
    let mut rows = vec![lexeval_row(0)];
    rows[0].as_object_mut().unwrap().remove("lang");
    write_jsonl(&data.join("NFCats/test.jsonl"), &rows);
    let error = error_of(root, "NFCats");
    assert!(
        error.contains("test split") && error.contains("row 0") && error.contains("\"lang\""),
        "{error}"
    );

    // Duplicate test_idx across splits.
    write_arrow(
        &data.join("Locomo-0/test/data-00000-of-00001.arrow"),
        &locomo_rows(2..4),
    );
    let error = error_of(root, "Locomo-0");
    assert!(
        error.contains("duplicate test_idx 2") && error.contains("Locomo-0"),
        "{error}"
    );

    // Missing corpus file.
    write_arrow(
        &data.join("Locomo-0/test/data-00000-of-00001.arrow"),
        &locomo_rows(3..5),
    );
    fs::remove_file(root.join("corpus/Locomo-0.jsonl")).unwrap();
    let error = error_of(root, "Locomo-0");
    assert!(
        error.contains("missing corpus file corpus/Locomo-0.jsonl"),
        "{error}"
    );

    // Unknown dataset, and a known one with no data.
    let error = error_of(root, "Locomo-42");
    assert!(error.contains("unknown dataset \"Locomo-42\""), "{error}");
    let error = error_of(root, "JuDGE");
    assert!(
        error.contains("JuDGE") && error.contains("no train split"),
        "{error}"
    );
    assert!(matches!(
        HfDirectory::open(root.join("nowhere")),
        Err(DataError::Source(_))
    ));
}

/// Arrow and Parquet files with bytes flipped or cut off (seeded; `MB_FUZZ_CASES` runs more)
/// give rows or an error naming the file, never a panic.
#[test]
fn damaged_arrow_and_parquet_files_are_errors_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<Value> = (0..4).map(lexeval_row).collect();
    let (arrow, parquet) = (dir.path().join("ok.arrow"), dir.path().join("ok.parquet"));
    write_arrow(&arrow, &rows);
    write_parquet(&parquet, &rows);
    let originals = [fs::read(&arrow).unwrap(), fs::read(&parquet).unwrap()];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    let cases = mb_llm::testing::fuzz_cases(400);
    for case in 0..cases {
        let (original, name) = if case % 2 == 0 {
            (&originals[0], "damaged.arrow")
        } else {
            (&originals[1], "damaged.parquet")
        };
        let mut bytes = original.clone();
        if next(4) == 0 {
            bytes.truncate(next(bytes.len()));
        } else {
            for _ in 0..1 + next(8) {
                let at = next(bytes.len());
                bytes[at] ^= 1 << next(8);
            }
        }
        let path = dir.path().join(name);
        fs::write(&path, &bytes).unwrap();
        if let Err(error) = mb_datasets::table::read_table(&path) {
            assert!(error.to_string().contains(name), "{error}");
        }
    }
}
