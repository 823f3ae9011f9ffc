//! A directory written by engine format 1, where every family of stored data had a RocksDB
//! column family of its own, opens with this build: upgraded once, under the directory's lock,
//! it keeps every record, vector, state value, count and counter that
//! `fixtures/make_format_1.py` wrote with a format-1 build.

use std::path::Path;

use mb_engine::{Engine, EngineOptions, Filter, NewRecord, RecordId};
use parking_lot::Mutex;

/// The fault point cuts short every upgrade in the process while it is set: the tests that
/// upgrade take turns.
static UPGRADING: Mutex<()> = Mutex::new(());

/// The format-1 fixture, copied into a fresh directory (the upgrade rewrites it).
fn format_1_engine() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let engine_dir = dir.path().join("engine");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-1");
    copy_dir(&fixture, &engine_dir);
    (dir, engine_dir)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn marker(engine_dir: &Path) -> String {
    std::fs::read_to_string(engine_dir.join("MEMORY_ENGINE")).unwrap()
}

/// The RocksDB column families of the engine's store, sorted.
fn column_families(engine_dir: &Path) -> Vec<String> {
    let options = rocksdb::Options::default();
    let mut names = rocksdb::DB::list_cf(&options, engine_dir.join("store")).unwrap();
    names.sort();
    names
}

/// The column families of an upgraded store: RocksDB's default one and the vectors'.
const UPGRADED: [&str; 2] = ["default", "vectors"];

fn ids(records: impl IntoIterator<Item = RecordId>) -> Vec<u64> {
    let mut ids: Vec<u64> = records.into_iter().map(|id| id.0).collect();
    ids.sort_unstable();
    ids
}

/// Everything the fixture's script wrote, as it left it.
fn check_fixture(engine: &Engine) {
    let mut names: Vec<String> = engine.namespaces().into_iter().map(|n| n.name).collect();
    names.sort();
    assert_eq!(names, ["chat", "notes"]);
    assert_eq!(engine.count("notes").unwrap(), 5);
    assert_eq!(engine.count("chat").unwrap(), 5);

    let first = engine.get("notes", RecordId(1)).unwrap().unwrap();
    assert_eq!(first.text, "note 0 about tea");
    assert_eq!(first.body.as_deref(), Some("body of note 0"));
    assert_eq!(first.attribute("topic"), Some("tea"));
    assert_eq!(first.created_at_ms, 1_700_000_000_000);
    let updated = engine.get("notes", RecordId(2)).unwrap().unwrap();
    assert_eq!(updated.text, "note 2 rewritten about rain and tea");
    assert_eq!(updated.attribute("session"), Some("s2"));
    for deleted in [4, 5, 8] {
        assert!(engine.get("notes", RecordId(deleted)).unwrap().is_none());
    }
    let chat = engine.get("chat", RecordId(9)).unwrap().unwrap();
    assert_eq!(chat.text, "chat line 0 mentions tea");

    let vectors = engine.get_vectors("notes", RecordId(2)).unwrap();
    assert_eq!(vectors, [("tiny".to_string(), vec![0.0, 0.0, 1.0, 0.0])]);
    let nearest = engine
        .search_vector("notes", "tiny", &[0.0, 0.0, 1.0, 0.0], 1)
        .unwrap();
    assert_eq!(nearest[0].record.id, RecordId(2));
    let rain = engine.search_text("notes", "rain", 10).unwrap();
    assert_eq!(ids(rain.iter().map(|hit| hit.record.id)), [2, 3]);
    assert!(engine.search_text("notes", "piano", 10).unwrap().is_empty());
    let s0 = engine
        .records_where("notes", &Filter::new().attribute("session", "s0"))
        .unwrap();
    assert_eq!(ids(s0.iter().map(|record| record.id)), [1, 7]);

    // The Python package stores state values as JSON text.
    let alice: String = engine.get_state("notes", "heat/alice").unwrap().unwrap();
    let alice: serde_json::Value = serde_json::from_str(&alice).unwrap();
    assert_eq!(alice, serde_json::json!({"level": 3}));
    assert_eq!(
        engine.state_keys("notes", "heat/").unwrap(),
        ["heat/alice", "heat/bob"]
    );
    let cursor = engine.get_state::<String>("chat", "cursor").unwrap();
    assert_eq!(cursor.as_deref(), Some("13"));
}

#[test]
fn a_format_1_directory_is_upgraded_and_keeps_everything() {
    let _turn = UPGRADING.lock();
    let (_dir, engine_dir) = format_1_engine();
    assert!(marker(&engine_dir).contains("format 1"));
    let engine = Engine::open(&engine_dir, EngineOptions::default()).unwrap();
    assert!(
        marker(&engine_dir).contains(&format!("format {}", mb_engine::ENGINE_FORMAT)),
        "{}",
        marker(&engine_dir)
    );
    check_fixture(&engine);
    // The record counter came through: a new record gets an id past every old one (14 was
    // the dropped namespace's).
    let new = engine
        .put("notes", NewRecord::new("written after the upgrade"))
        .unwrap();
    assert!(new.0 > 14, "{new:?}");
    engine.close().unwrap();

    assert_eq!(column_families(&engine_dir), UPGRADED);

    let engine = Engine::open(&engine_dir, EngineOptions::default()).unwrap();
    check_fixture_with(&engine, new);
}

/// [`check_fixture`] with one more record in `notes`, `new`.
fn check_fixture_with(engine: &Engine, new: RecordId) {
    assert_eq!(engine.count("notes").unwrap(), 6);
    let found = engine.search_text("notes", "upgrade", 10).unwrap();
    assert_eq!(ids(found.iter().map(|hit| hit.record.id)), [new.0]);
    engine.delete("notes", new).unwrap();
    check_fixture(engine);
}

#[test]
fn an_upgrade_cut_short_is_finished_by_the_next_open() {
    let _turn = UPGRADING.lock();
    let (_dir, engine_dir) = format_1_engine();
    fail::cfg("store::upgrade::dropped", "return").unwrap();
    let cut = Engine::open(&engine_dir, EngineOptions::default());
    fail::remove("store::upgrade::dropped");
    assert!(cut.is_err(), "the fault point was not reached");
    // Only a finished upgrade marks the directory current; one old column family of five
    // was dropped.
    assert!(marker(&engine_dir).contains("format 1"));
    assert_eq!(column_families(&engine_dir).len(), UPGRADED.len() + 4);

    let engine = Engine::open(&engine_dir, EngineOptions::default()).unwrap();
    check_fixture(&engine);
    assert!(!marker(&engine_dir).contains("format 1"));
    engine.close().unwrap();
    assert_eq!(column_families(&engine_dir), UPGRADED);
}
