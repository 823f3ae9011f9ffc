//! A damaged store file is reported as damage (by RocksDB's status code, never by words in its
//! message), naming the file and what the user can do; it is never mistaken for a store in use.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use mb_engine::{Engine, EngineOptions, Error, NamespaceOptions, NewRecord};

/// The largest `.sst` file under `dir`.
fn largest_table(dir: &Path) -> PathBuf {
    let mut tables: Vec<(u64, PathBuf)> = std::fs::read_dir(dir.join("store"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "sst"))
        .map(|path| (std::fs::metadata(&path).unwrap().len(), path))
        .collect();
    tables.sort();
    tables.pop().expect("a flushed store has table files").1
}

/// Inverts 64 bytes in the middle of `path`.
fn flip_middle(path: &Path) {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let middle = file.metadata().unwrap().len() / 2;
    let mut bytes = [0u8; 64];
    file.seek(SeekFrom::Start(middle)).unwrap();
    file.read_exact(&mut bytes).unwrap();
    for byte in &mut bytes {
        *byte = !*byte;
    }
    file.seek(SeekFrom::Start(middle)).unwrap();
    file.write_all(&bytes).unwrap();
    file.sync_all().unwrap();
}

/// Opening and reading every record, as a run that reuses the store does.
fn open_and_read(path: &Path) -> Result<usize, Error> {
    let engine = Engine::open(path, EngineOptions::default())?;
    let mut count = 0;
    for record in engine.records("notes")? {
        record?;
        count += 1;
    }
    Ok(count)
}

#[test]
fn a_damaged_table_file_says_damaged_and_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine");
    {
        let engine = Engine::open(&path, EngineOptions::default()).unwrap();
        engine
            .create_namespace("notes", NamespaceOptions::default())
            .unwrap();
        // Text that compresses poorly, so the table's data blocks fill its middle.
        for i in 0..4000u64 {
            let text = format!("note {i} {:x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            engine.put("notes", NewRecord::new(text)).unwrap();
        }
        engine.flush().unwrap();
    }
    assert_eq!(open_and_read(&path).unwrap(), 4000);
    let table = largest_table(&path);
    flip_middle(&table);
    // A stale pid in the holder file must not turn the damage into "in use".
    std::fs::write(path.join("HOLDER"), "1\n").unwrap();

    match open_and_read(&path) {
        Err(error @ Error::Damaged { .. }) => {
            let message = error.to_string();
            let name = table.file_name().unwrap().to_string_lossy().into_owned();
            assert!(message.contains(&name), "{message}");
            assert!(
                message.contains("backup") && message.contains("rebuild"),
                "{message}"
            );
            assert!(!message.contains("in use"), "{message}");
        }
        Err(other) => panic!("expected Damaged, got {other}"),
        Ok(count) => panic!("read {count} records from a damaged table"),
    }
}
