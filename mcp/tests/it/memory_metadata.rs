//! Metadata and filters in the memory tools, as mem0 users bring them: metadata given on add
//! is on every memory made of the dialog (search results, listings, gets, after a restart);
//! `filters` in mem0's language keep only matching memories, queued dialogs included; an update
//! may replace it; bad metadata or filters are tool errors naming the field. And Mem0's history
//! names every memory by the id the tools take, a memory deleted before a restart included.

use crate::support::{is_error, structured, text, StdioClient};
use serde_json::{json, Value};

fn add(server: &mut StdioClient, text: &str, metadata: Value) -> Value {
    let mut arguments = json!({"user_id": "u1", "wait": true, "messages": text});
    if !metadata.is_null() {
        arguments["metadata"] = metadata;
    }
    structured(&server.call("add_memory", arguments))
}

/// The texts of a filtered search's results (and of its pending dialogs).
fn found(server: &mut StdioClient, filters: Value) -> Vec<String> {
    let result = structured(&server.call(
        "search_memories",
        json!({"user_id": "u1", "query": "ramen udon Lima cello queued", "limit": 10, "filters": filters}),
    ));
    let texts = |key: &str| -> Vec<String> {
        result[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["text"].as_str().unwrap().to_string())
            .collect()
    };
    let mut all = texts("results");
    all.extend(texts("pending"));
    all
}

#[test]
fn metadata_travels_with_memories_and_filters_select_by_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let mut server = StdioClient::on_store(
        &store,
        &["--memory-system", "bm25_message", "--embedder", "hashing"],
    );
    let ramen = add(
        &mut server,
        "I love ramen.",
        json!({"topic": "food", "n": 3, "day": "2024-05-02"}),
    );
    assert_eq!(ramen["added"][0]["metadata"]["topic"], "food", "{ramen}");
    add(
        &mut server,
        "I flew to Lima.",
        json!({"topic": "travel", "n": 7}),
    );
    add(&mut server, "I play the cello.", Value::Null);

    let only = |texts: Vec<String>, wanted: &str| {
        assert!(!texts.is_empty(), "nothing found for {wanted}");
        assert!(texts.iter().all(|t| t.contains(wanted)), "{texts:?}");
    };
    only(found(&mut server, json!({"topic": "food"})), "ramen");
    only(found(&mut server, json!({"n": {"gte": 5}})), "Lima");
    only(
        found(&mut server, json!({"day": {"gt": "2024-05-01"}})),
        "ramen",
    );
    only(
        found(
            &mut server,
            json!({"NOT": [{"topic": "travel"}], "n": {"in": [3, 7]}}),
        ),
        "ramen",
    );
    let either = found(&mut server, json!({"OR": [{"topic": "food"}, {"n": 7}]}));
    assert_eq!(either.len(), 2, "{either:?}");
    assert_eq!(found(&mut server, json!({"topic": "*"})).len(), 3);
    assert!(found(&mut server, json!({"topic": "sport"})).is_empty());

    // A queued dialog is found by its metadata before (or after) it is memorized.
    structured(&server.call(
        "add_memory",
        json!({"user_id": "u1", "messages": "A queued note.", "metadata": {"topic": "later"}}),
    ));
    only(found(&mut server, json!({"topic": "later"})), "queued");
    only(found(&mut server, json!({"topic": "food"})), "ramen");

    // An update replaces the metadata when given one, keeps it otherwise.
    let id = ramen["added"][0]["id"].clone();
    let kept = structured(&server.call(
        "update_memory",
        json!({"user_id": "u1", "memory_id": id, "text": "I love ramen and udon."}),
    ));
    assert_eq!(kept["metadata"]["topic"], "food", "{kept}");
    let moved = structured(&server.call(
        "update_memory",
        json!({"user_id": "u1", "memory_id": id, "text": "I love udon.", "metadata": {"topic": "noodles"}}),
    ));
    assert_eq!(moved["metadata"], json!({"topic": "noodles"}), "{moved}");
    only(found(&mut server, json!({"topic": "noodles"})), "udon");

    // Bad metadata and filters are tool errors naming the field; the server still serves.
    for (tool, arguments, field) in [
        (
            "add_memory",
            json!({"user_id": "u1", "messages": "x", "metadata": ["a"]}),
            "metadata",
        ),
        (
            "search_memories",
            json!({"user_id": "u1", "query": "x", "filters": {"n": 1.5}}),
            "filters",
        ),
        (
            "search_memories",
            json!({"user_id": "u1", "query": "x", "filters": {"n": {"regex": "a"}}}),
            "filters",
        ),
        (
            "search_memories",
            json!({"user_id": "u1", "query": "x", "filters": {"OR": {"n": 1}}}),
            "filters",
        ),
        (
            "update_memory",
            json!({"user_id": "u1", "memory_id": id, "text": "y", "metadata": 3}),
            "metadata",
        ),
    ] {
        let result = server.call(tool, arguments.clone());
        assert!(is_error(&result), "{tool} {arguments}: {result}");
        assert!(text(&result).contains(field), "{tool}: {}", text(&result));
    }
    let big = json!({"k": "x".repeat(20_000)});
    let result = server.call(
        "add_memory",
        json!({"user_id": "u1", "messages": "x", "metadata": big}),
    );
    assert!(
        is_error(&result) && text(&result).contains("bytes"),
        "{result}"
    );

    // After a restart the metadata is read back from the store.
    drop(server);
    let mut server = StdioClient::on_store(
        &store,
        &["--memory-system", "bm25_message", "--embedder", "hashing"],
    );
    let got = structured(&server.call("get_memory", json!({"user_id": "u1", "memory_id": id})));
    assert_eq!(got["metadata"], json!({"topic": "noodles"}), "{got}");
    let listed = structured(&server.call("list_memories", json!({"user_id": "u1"})));
    let tagged = listed["memories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["metadata"]["topic"] == "travel")
        .count();
    assert_eq!(tagged, 1, "{listed}");
    // A filtered listing pages through the matching memories only.
    let page = |cursor: Value| {
        let mut arguments = json!({"user_id": "u1", "limit": 1, "filters": {"n": {"in": [3, 7]}}});
        if !cursor.is_null() {
            arguments["cursor"] = cursor;
        }
        arguments
    };
    let first = structured(&server.call("list_memories", page(Value::Null)));
    assert_eq!(
        first["memories"][0]["metadata"]["topic"], "travel",
        "{first}"
    );
    assert!(first["next_cursor"].is_null(), "{first}");
    let none = structured(&server.call(
        "list_memories",
        json!({"user_id": "u1", "filters": {"topic": "sport"}}),
    ));
    assert_eq!(none["memories"], json!([]), "{none}");
    only(found(&mut server, json!({"topic": "travel"})), "Lima");
}

#[test]
fn mem0_history_names_a_memory_deleted_before_a_restart_by_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let mut server = StdioClient::on_store(
        &store,
        &["--memory-system", "mem0", "--embedder", "hashing"],
    );
    let added = add(
        &mut server,
        "I am allergic to peanuts.",
        json!({"kind": "health"}),
    );
    let memory = &added["added"][0];
    assert_eq!(memory["metadata"]["kind"], "health", "{added}");
    let id = memory["id"].clone();
    structured(&server.call("delete_memory", json!({"user_id": "u1", "memory_id": id})));
    drop(server);

    let mut server = StdioClient::on_store(
        &store,
        &["--memory-system", "mem0", "--embedder", "hashing"],
    );
    let history = structured(&server.call("memory_history", json!({"user_id": "u1"})));
    let events = history["events"].as_array().unwrap();
    let about: Vec<&Value> = events
        .iter()
        .filter(|e| e["doc_id"] == events[0]["doc_id"])
        .collect();
    let kinds: Vec<&str> = about.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["ADD", "DELETE"], "{history}");
    assert!(about.iter().all(|e| e["memory_id"] == id), "{history}");
}
