//! The knowledge graph's byte bounds through the binary (issue 76, D3: a 200 MB graph gave a
//! 380 MB `read_graph` reply and 2.2 GB of server memory): the graph stops growing at
//! `--max-graph-bytes` with an error naming the flag, also after a restart; an unpaged reply
//! over `--max-reply-bytes` is refused saying how to page, and the pages hold the whole graph.

use crate::support::{is_error, text, StdioClient};
use serde_json::{json, Value};

const FLAGS: &[&str] = &["--max-graph-bytes", "8KiB", "--max-reply-bytes", "2KiB"];

/// Creates entities of about 500 bytes until the graph refuses one; returns how many it took.
fn fill(server: &mut StdioClient) -> (usize, String) {
    for n in 0..100 {
        let entity = json!({"name": format!("e{n}"), "entityType": "t",
                            "observations": ["x".repeat(500)]});
        let result = server.call("create_entities", json!({"entities": [entity]}));
        if is_error(&result) {
            return (n, text(&result).to_string());
        }
    }
    panic!("the graph never filled")
}

fn pages(server: &mut StdioClient) -> (usize, Vec<Value>) {
    let (mut count, mut entities) = (0, Vec::new());
    let mut arguments = json!({"limit": 1000});
    loop {
        let page = server.call("read_graph", arguments.clone());
        assert!(!is_error(&page), "{page}");
        count += 1;
        let page = &page["structuredContent"];
        entities.extend(page["entities"].as_array().cloned().unwrap_or_default());
        match page.get("nextCursor") {
            Some(cursor) => arguments["cursor"] = cursor.clone(),
            None => return (count, entities),
        }
    }
}

#[test]
fn the_graph_and_each_reply_are_bounded_in_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let mut server = StdioClient::ours(&store, FLAGS);
    let (held, error) = fill(&mut server);
    assert_eq!(held, 16, "16 entities of 503 bytes fit in 8 KiB: {error}");
    assert!(error.contains("--max-graph-bytes"), "{error}");

    let whole = server.call("read_graph", json!({}));
    assert!(is_error(&whole), "{whole}");
    assert!(
        text(&whole).contains("--max-reply-bytes") && text(&whole).contains("cursor"),
        "{}",
        text(&whole)
    );
    let (count, entities) = pages(&mut server);
    assert_eq!(
        (count, entities.len()),
        (4, 16),
        "4 entities of 503 bytes per 2 KiB page"
    );
    let search = server.call("search_nodes", json!({"query": "xxx"}));
    assert!(text(&search).contains("search_nodes"), "{search}");
    let resource = server.request("resources/read", json!({"uri": "memory://knowledge-graph"}));
    assert!(
        resource["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("--max-reply-bytes"),
        "{resource}"
    );
    drop(server);

    // The bound holds for a graph loaded from the store, which is counted as it loads.
    let mut server = StdioClient::ours(&store, FLAGS);
    let (more, _) = fill(&mut server);
    assert_eq!(more, 16, "e0..e15 exist already; no other fits");
    let deleted = server.call("delete_entities", json!({"entityNames": ["e0", "e1"]}));
    assert!(!is_error(&deleted), "{deleted}");
    let (count, entities) = pages(&mut server);
    assert_eq!((count, entities.len()), (4, 14));
    let room = server.call(
        "create_entities",
        json!({"entities": [{"name": "new", "entityType": "t", "observations": ["x".repeat(500)]}]}),
    );
    assert!(!is_error(&room), "deleting freed room: {room}");
}
