//! The memory tools over stdio with the default memory system (hybrid, with the model-free
//! hashing embedder so no model files are needed): add, search, paged listing, get, update,
//! delete, per-user isolation, status; and bad arguments answered with a tool error naming the
//! field, after which the server still serves.

use std::process::Command;

use crate::support::{is_error, structured, text, StdioClient};
use serde_json::{json, Value};

/// A dialog to add, waiting for it to be memorized.
fn dialog(user: &str, text: &str) -> Value {
    json!({"user_id": user, "wait": true, "messages": [
        {"role": "user", "content": text},
        {"role": "assistant", "content": "I will remember that."}
    ]})
}

#[test]
fn memories_are_added_found_paged_edited_and_deleted_per_user() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = StdioClient::on_store(&dir.path().join("store"), &["--embedder", "hashing"]);
    for fact in [
        "My sister Ines lives in Lisbon.",
        "I am allergic to peanuts.",
        "Our dog Pixel is a border collie.",
    ] {
        let added = structured(&server.call("add_memory", dialog("u1", fact)));
        assert!(!added["added"].as_array().unwrap().is_empty(), "{added}");
    }
    structured(&server.call("add_memory", dialog("u2", "I live in Oslo.")));
    // A plain string, as mem0's add takes it, is one message from the user.
    let plain = structured(&server.call(
        "add_memory",
        json!({"user_id": "u3", "wait": true, "messages": "I play the cello on Sundays."}),
    ));
    let added = plain["added"].as_array().unwrap();
    assert!(
        added.iter().any(|m| m["text"]
            .as_str()
            .unwrap()
            .contains("user: I play the cello")),
        "{plain}"
    );

    let found = structured(&server.call(
        "search_memories",
        json!({"user_id": "u1", "query": "is he allergic to peanuts?", "limit": 2}),
    ));
    let results = found["results"].as_array().unwrap();
    assert!(results.len() <= 2 && !results.is_empty(), "{found}");
    assert!(
        results[0]["text"].as_str().unwrap().contains("peanuts"),
        "{found}"
    );
    assert!(results[0]["id"].is_u64(), "{found}");

    // Paging: every memory exactly once, in order.
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = structured(&server.call(
            "list_memories",
            json!({"user_id": "u1", "limit": 1, "cursor": cursor}),
        ));
        for memory in page["memories"].as_array().unwrap() {
            seen.push(memory["id"].as_u64().unwrap());
        }
        cursor = page["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    let all = structured(&server.call("list_memories", json!({"user_id": "u1", "limit": 100})));
    let ids: Vec<u64> = all["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_u64().unwrap())
        .collect();
    assert_eq!(seen, ids);
    // In the order they were stored; ids are opaque (they count nothing up, so they say
    // nothing of how much anyone else writes).
    let stored: Vec<u64> = all["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["created_at_ms"].as_u64().unwrap())
        .collect();
    assert!(stored.windows(2).all(|w| w[0] <= w[1]), "{all}");
    assert!(
        ids.windows(2).all(|w| w[0].abs_diff(w[1]) > 1 << 20),
        "{ids:?}"
    );

    // Another user's memories are not this user's.
    let other = structured(&server.call("list_memories", json!({"user_id": "u2"})));
    let other_id = other["memories"][0]["id"].as_u64().unwrap();
    assert!(!ids.contains(&other_id));
    let missing = server.call(
        "get_memory",
        json!({"user_id": "u1", "memory_id": other_id}),
    );
    assert!(
        is_error(&missing) && text(&missing).contains("not found"),
        "{missing}"
    );

    let first = ids[0];
    let updated = structured(&server.call(
        "update_memory",
        json!({"user_id": "u1", "memory_id": first, "text": "Ines moved to Porto."}),
    ));
    assert_eq!(updated["text"], "Ines moved to Porto.");
    let found = structured(&server.call(
        "search_memories",
        json!({"user_id": "u1", "query": "Porto", "limit": 1}),
    ));
    assert_eq!(found["results"][0]["id"], json!(first), "{found}");

    let deleted = structured(&server.call(
        "delete_memory",
        json!({"user_id": "u1", "memory_id": first}),
    ));
    assert_eq!(deleted["deleted"], json!(true));
    let deleted = structured(&server.call(
        "delete_memory",
        json!({"user_id": "u1", "memory_id": first}),
    ));
    assert_eq!(deleted["deleted"], json!(false));

    let status = structured(&server.call("memory_status", json!({})));
    assert_eq!(status["memory_system"], "hybrid");
    assert_eq!(status["queue_depth"], 0);
    assert_eq!(
        status["namespaces"].as_array().unwrap().len(),
        3,
        "{status}"
    );

    let history = server.call("memory_history", json!({"user_id": "u1"}));
    assert!(
        is_error(&history) && text(&history).contains("mem0"),
        "{history}"
    );

    structured(&server.call("delete_all_memories", json!({"user_id": "u1"})));
    let after = structured(&server.call("list_memories", json!({"user_id": "u1"})));
    assert_eq!(after["memories"], json!([]));
    let kept = structured(&server.call("list_memories", json!({"user_id": "u2"})));
    assert_eq!(kept["memories"], other["memories"]);

    // Nothing of u1 is left, the sessions the hybrid memory derived included; u2's are whole.
    assert!(server.terminate());
    let engine = mb_engine::Engine::open(dir.path().join("store"), Default::default()).unwrap();
    let names: Vec<String> = engine.namespaces().into_iter().map(|n| n.name).collect();
    assert!(
        !names.iter().any(|n| n.starts_with("mcp/memory/hybrid/u1")),
        "{names:?}"
    );
    assert_eq!(
        engine
            .count("mcp/memory/hybrid/u2/hybrid-sessions")
            .unwrap(),
        1
    );
}

#[test]
fn bad_arguments_are_tool_errors_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = StdioClient::on_store(&dir.path().join("store"), &["--embedder", "hashing"]);
    let long = "x".repeat(memorybench_mcp::limits::MAX_STRING_BYTES + 1);
    let cases = [
        ("add_memory", json!({"user_id": "u1"}), "messages"),
        (
            "add_memory",
            json!({"user_id": "u1", "messages": []}),
            "messages",
        ),
        (
            "add_memory",
            json!({"user_id": "u1", "messages": "  "}),
            "messages",
        ),
        (
            "add_memory",
            json!({"user_id": "u1", "messages": 7}),
            "messages",
        ),
        (
            "add_memory",
            json!({"user_id": "u1", "messages": [{"role": "robot", "content": "hi"}]}),
            "messages[0].role",
        ),
        (
            "add_memory",
            json!({"user_id": "a b", "messages": [{"role": "user", "content": "x"}]}),
            "user_id",
        ),
        (
            "search_memories",
            json!({"user_id": "u1", "query": 7}),
            "query",
        ),
        (
            "search_memories",
            json!({"user_id": "u1", "query": "x", "limit": 0}),
            "limit",
        ),
        (
            "search_memories",
            json!({"user_id": "u1", "query": "x", "limit": 1000}),
            "limit",
        ),
        (
            "search_memories",
            json!({"user_id": "u1", "query": long}),
            "query",
        ),
        (
            "get_memory",
            json!({"user_id": "u1", "memory_id": "seven"}),
            "memory_id",
        ),
        (
            "list_memories",
            json!({"user_id": "u1", "cursor": -1}),
            "cursor",
        ),
        (
            "update_memory",
            json!({"user_id": "u1", "memory_id": 1, "text": " "}),
            "text",
        ),
        ("delete_all_memories", json!({"user_id": ""}), "user_id"),
        (
            "create_entities",
            json!({"entities": [{"name": "a"}]}),
            "entities[0]",
        ),
        ("open_nodes", json!({"names": "a"}), "names"),
        ("search_nodes", json!({}), "query"),
    ];
    for (tool, arguments, field) in cases {
        let result = server.call(tool, arguments.clone());
        assert!(is_error(&result), "{tool} {arguments}: accepted: {result}");
        assert!(
            text(&result).contains(field),
            "{tool} {arguments}: the error does not name {field}: {}",
            text(&result)
        );
    }
    let too_many: Vec<Value> = (0..=memorybench_mcp::limits::MAX_ITEMS_PER_CALL)
        .map(|i| json!(i.to_string()))
        .collect();
    let result = server.call("open_nodes", json!({"names": too_many}));
    assert!(
        is_error(&result) && text(&result).contains("names"),
        "{result}"
    );
    // Still serving.
    let graph = structured(&server.call("read_graph", json!({})));
    assert_eq!(graph, json!({"entities": [], "relations": []}));
}

#[test]
fn a_dialog_is_found_by_a_search_right_after_its_add_whatever_the_workers_do() {
    // Workers memorize while the searches run: each dialog must be in the results or in
    // `pending`, never in neither (searching the memories before the queue missed about one
    // dialog in ten, those applied between the two searches).
    let dir = tempfile::tempdir().unwrap();
    let mut server = StdioClient::on_store(&dir.path().join("store"), &["--embedder", "hashing"]);
    for n in 0..80 {
        let text = format!("Marker number m{n}x is in the garden.");
        structured(&server.call(
            "add_memory",
            json!({"user_id": "u", "messages": [{"role": "user", "content": text}]}),
        ));
        let found = structured(&server.call(
            "search_memories",
            json!({"user_id": "u", "query": format!("m{n}x"), "limit": 5}),
        ));
        assert!(
            found.to_string().contains(&format!("m{n}x")),
            "dialog {n}: {found}"
        );
    }
}

/// mem0's scoping: a user's search also covers what their agents keep of them, an agent's only
/// its own; an id found that way is read, edited and deleted with the user's id alone.
#[test]
fn a_users_search_covers_their_agents_memories_and_an_agents_only_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = StdioClient::on_store(&dir.path().join("store"), &["--embedder", "hashing"]);
    structured(&server.call("add_memory", dialog("u4", "I keep bees in my garden.")));
    let mut travel = dialog("u4", "I always book a window seat on flights.");
    travel["agent_id"] = json!("travel");
    let kept = structured(&server.call("add_memory", travel));
    let agents_id = kept["added"][0]["id"].as_u64().unwrap();

    let user = structured(&server.call(
        "search_memories",
        json!({"user_id": "u4", "query": "window seat flights bees garden", "limit": 10}),
    ));
    let texts: Vec<(String, Value)> = user["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["text"].as_str().unwrap().to_string(),
                r["agent_id"].clone(),
            )
        })
        .collect();
    assert!(
        texts.iter().any(|(t, a)| t.contains("bees") && a.is_null()),
        "{user}"
    );
    assert!(
        texts
            .iter()
            .any(|(t, a)| t.contains("window seat") && a == "travel"),
        "{user}"
    );
    let agent = structured(&server.call(
        "search_memories",
        json!({"user_id": "u4", "agent_id": "travel", "query": "window seat flights bees garden", "limit": 10}),
    ));
    let agent_texts: Vec<&str> = agent["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["text"].as_str().unwrap())
        .collect();
    assert!(agent_texts.iter().all(|t| !t.contains("bees")), "{agent}");
    assert!(
        agent_texts.iter().any(|t| t.contains("window seat")),
        "{agent}"
    );

    // The agent's memory by its id, with the user's id alone.
    let got = structured(&server.call(
        "get_memory",
        json!({"user_id": "u4", "memory_id": agents_id}),
    ));
    assert!(
        got["text"].as_str().unwrap().contains("window seat"),
        "{got}"
    );
    let edited = structured(&server.call(
        "update_memory",
        json!({"user_id": "u4", "memory_id": agents_id, "text": "user: I prefer aisle seats now."}),
    ));
    assert_eq!(edited["id"], json!(agents_id));
    let deleted = structured(&server.call(
        "delete_memory",
        json!({"user_id": "u4", "memory_id": agents_id}),
    ));
    assert_eq!(deleted["deleted"], json!(true));
    // Another user reaches none of it.
    let stranger = server.call(
        "get_memory",
        json!({"user_id": "u5", "memory_id": agents_id}),
    );
    assert!(is_error(&stranger), "{stranger}");
}

/// The table's rows: each tool with the JSON arguments its second cell shows.
fn documented() -> Vec<(String, Vec<Value>)> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/mcp.md")).unwrap();
    let mut rows = Vec::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split(" | ").collect();
        let (Some(tool), Some(arguments)) = (cells.first(), cells.get(1)) else {
            continue;
        };
        let Some(tool) = tool.strip_prefix("| `").and_then(|t| t.strip_suffix('`')) else {
            continue;
        };
        let examples: Vec<Value> = arguments
            .split('`')
            .skip(1)
            .step_by(2)
            .filter_map(|part| serde_json::from_str::<Value>(part).ok())
            .filter(Value::is_object)
            .collect();
        if !examples.is_empty() {
            rows.push((tool.to_string(), examples));
        }
    }
    rows
}

/// docs/mcp.md's memory-tool examples, run: every memory tool the server lists is in the
/// documentation's table, and each example's arguments, sent as shown (ids and cursors taken
/// from the memory the first example makes, additions waited for), get an answer, not an error.
#[test]
fn every_memory_tool_is_documented_and_its_example_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_memorybench-mcp"));
    command.arg("--store").arg(dir.path().join("store")).args([
        "--memory-system",
        "mem0",
        "--embedder",
        "hashing",
    ]);
    let mut server = StdioClient::start(command);
    let rows = documented();
    let names: Vec<&str> = rows.iter().map(|(tool, _)| tool.as_str()).collect();
    for tool in server.tools() {
        let name = tool["name"].as_str().unwrap();
        let memory_tool = name.contains("memor");
        assert!(
            !memory_tool || names.contains(&name),
            "{name} is not in docs/mcp.md's table"
        );
    }
    let mut cursor = Value::Null;
    let mut ran = Vec::new();
    for (tool, examples) in rows {
        if !tool.contains("memor") {
            continue;
        }
        for mut arguments in examples {
            if tool == "add_memory" {
                arguments["wait"] = json!(true);
            }
            if arguments.get("memory_id").is_some() {
                let listed = server.call("list_memories", json!({"user_id": "alice"}));
                let first = &listed["structuredContent"]["memories"][0]["id"];
                assert!(first.is_u64(), "no memory to name: {listed}");
                arguments["memory_id"] = first.clone();
            }
            if arguments.get("cursor").is_some() {
                arguments["cursor"] = cursor.clone();
            }
            let result = server.call(&tool, arguments.clone());
            assert!(!is_error(&result), "{tool} {arguments}: {result}");
            if tool == "list_memories" {
                cursor = result["structuredContent"]["next_cursor"].clone();
            }
            ran.push(tool.clone());
        }
    }
    // Nine tools; the listing twice (its first page, then the next), the add, search, listing
    // and update also with metadata or filters.
    assert_eq!(ran.len(), 14, "{ran:?}");
}
