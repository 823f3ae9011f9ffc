//! Deletion that deletes, through the MCP server: a user's dialogs carrying unique markers are
//! memorized by Mem0 (records, vectors, BM25 postings, Mem0's history), edited and queued;
//! `delete_all_memories` removes them and compacts; then no byte of any marker is left in any
//! file of the store (write-ahead log, table files, lexical segments), while another user's
//! memories are whole after a restart.

use std::path::Path;

use crate::support::{structured, StdioClient};
use mb_core::residue::{files_holding, markers};
use serde_json::json;

/// The deleted user: its id is a marker too (namespace names hold it).
const USER: &str = "vctmQzXwKr";

/// The server's arguments: Mem0, so that history and derived state are deleted too.
const MEM0_HASHING: &[&str] = &["--memory-system", "mem0", "--embedder", "hashing"];

/// The files under `dir` holding `mark`.
fn files_with(dir: &Path, mark: &str) -> Vec<std::path::PathBuf> {
    files_holding(dir, mark).unwrap()
}

#[test]
fn delete_all_memories_leaves_no_byte_of_the_user() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let marks = markers(12, 3636);
    let mut client = StdioClient::on_store(&store, MEM0_HASHING);
    for (i, mark) in marks.iter().enumerate() {
        let agent = if i % 3 == 0 {
            json!("helper")
        } else {
            json!(null)
        };
        structured(&client.call(
            "add_memory",
            json!({"user_id": USER, "agent_id": agent, "wait": i % 2 == 0, "messages": [
                {"role": "user", "content": format!("My code word is {mark}. I like hiking.")},
                {"role": "assistant", "content": "Noted."}]}),
        ));
        structured(&client.call(
            "add_memory",
            json!({"user_id": "keeper", "wait": true, "messages": [
                {"role": "user", "content": format!("I have {i} cats and live in Oslo.")}]}),
        ));
    }
    // An edit, logged in Mem0's history with the marker as old text.
    let listed = structured(&client.call("list_memories", json!({"user_id": USER})));
    let first = listed["memories"][0]["id"].as_u64().unwrap();
    structured(&client.call(
        "update_memory",
        json!({"user_id": USER, "memory_id": first, "text": format!("Code word {} changed", marks[0])}),
    ));
    let history = structured(&client.call("memory_history", json!({"user_id": USER})));
    let events = history["events"].as_array().unwrap();
    assert!(events.iter().any(|e| e["event"] == "UPDATE"), "{history}");
    // The history names memories by the ids the other tools take: the updated one by `first`,
    // and an id it shows can be read and edited.
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "UPDATE" && e["memory_id"] == json!(first)),
        "{history}"
    );
    let shown = events
        .iter()
        .find(|e| e["event"] == "ADD")
        .and_then(|e| e["memory_id"].as_u64())
        .unwrap();
    let got = structured(&client.call("get_memory", json!({"user_id": USER, "memory_id": shown})));
    assert_eq!(got["id"], json!(shown));
    let keeper_before = structured(&client.call("list_memories", json!({"user_id": "keeper"})));
    // The test is real: the markers are on disk before the deletion.
    for mark in marks.iter().map(String::as_str).chain([USER]) {
        assert!(
            !files_with(&store, mark).is_empty(),
            "{mark} never reached the disk"
        );
    }

    let deleted = structured(&client.call("delete_all_memories", json!({"user_id": USER})));
    assert_eq!(deleted["deleted_namespaces"], json!(2), "{deleted}");
    assert_eq!(deleted["compacted"], json!(true));
    for mark in marks.iter().map(String::as_str).chain([USER]) {
        let left = files_with(&store, mark);
        assert!(left.is_empty(), "{mark} left in {left:?}");
    }
    let gone = structured(&client.call("list_memories", json!({"user_id": USER})));
    assert_eq!(gone["memories"], json!([]));
    let history = structured(&client.call("memory_history", json!({"user_id": USER})));
    assert_eq!(history["events"], json!([]));
    assert!(client.terminate(), "the server did not stop cleanly");
    for mark in marks.iter().map(String::as_str).chain([USER]) {
        let left = files_with(&store, mark);
        assert!(left.is_empty(), "{mark} left in {left:?} after closing");
    }

    let mut client = StdioClient::on_store(&store, MEM0_HASHING);
    let keeper_after = structured(&client.call("list_memories", json!({"user_id": "keeper"})));
    assert_eq!(keeper_after, keeper_before);
}
