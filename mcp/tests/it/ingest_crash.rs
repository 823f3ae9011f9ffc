//! Ingest that never blocks and survives `kill -9`: dialogs are acknowledged once queued (and
//! searchable at once as pending); the server is killed with SIGKILL while dialogs are still
//! queued; after a restart the queue resumes, and every acknowledged dialog is memorized
//! exactly once (no loss, no duplicate). Rounds repeat the kill at different moments.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::support::{structured, StdioClient};
use serde_json::{json, Value};

fn token(round: usize, n: usize) -> String {
    format!("tok{round}x{n}")
}

/// Every memory of `user`, through the paged listing.
fn all_memories(client: &mut StdioClient, user: &str) -> Vec<String> {
    let mut texts = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut args = json!({"user_id": user, "limit": 100});
        if !cursor.is_null() {
            args["cursor"] = cursor.clone();
        }
        let page = structured(&client.call("list_memories", args));
        for memory in page["memories"].as_array().unwrap() {
            texts.push(memory["text"].as_str().unwrap().to_string());
        }
        cursor = page["next_cursor"].clone();
        if cursor.is_null() {
            return texts;
        }
    }
}

fn wait_drained(client: &mut StdioClient) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = structured(&client.call("memory_status", json!({})));
        if status["queue_depth"] == json!(0) {
            assert_eq!(status["queue"]["failed"], json!(0), "{status}");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the queue did not drain: {status}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn kill_9_with_queued_dialogs_loses_nothing_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let mut acknowledged: Vec<String> = Vec::new();
    let mut max_depth_at_kill = 0;
    for round in 0..3 {
        let mut client = StdioClient::ours(&store, &["--workers", "1"]);
        let count = 150 + 50 * round;
        let mut depth = 0;
        for n in 0..count {
            let t = token(round, n);
            let added = structured(&client.call(
                "add_memory",
                json!({"user_id": "u", "messages": [
                    {"role": "user", "content": format!("note {t} for later")}]}),
            ));
            assert_eq!(added["queued"], json!(true));
            depth = added["queue_depth"].as_u64().unwrap();
            acknowledged.push(t);
        }
        // The last dialog is searchable before it is memorized.
        let last = token(round, count - 1);
        let found = structured(&client.call(
            "search_memories",
            json!({"user_id": "u", "query": last, "limit": 5}),
        ));
        let pending_or_done = found["pending"]
            .as_array()
            .unwrap()
            .iter()
            .chain(found["results"].as_array().unwrap())
            .any(|hit| hit["text"].as_str().unwrap().contains(&last));
        assert!(pending_or_done, "{found}");
        max_depth_at_kill = max_depth_at_kill.max(depth);
        client.kill_9();
    }
    // The test is real only if dialogs were still queued when the server was killed.
    assert!(max_depth_at_kill > 1, "the queue was empty at every kill");

    let mut client = StdioClient::ours(&store, &["--workers", "1"]);
    wait_drained(&mut client);
    let memories = all_memories(&mut client, "u");
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for text in &memories {
        for t in &acknowledged {
            if text.contains(&format!("note {t} for later")) {
                *seen.entry(t.as_str()).or_default() += 1;
            }
        }
    }
    for t in &acknowledged {
        assert_eq!(
            seen.get(t.as_str()),
            Some(&1),
            "{t} memorized {:?} times",
            seen.get(t.as_str())
        );
    }
    assert_eq!(memories.len(), acknowledged.len());
}

#[test]
fn sigterm_stops_cleanly_and_the_queue_resumes_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let mut client = StdioClient::ours(&store, &["--workers", "1"]);
    let tokens: Vec<String> = (0..200).map(|n| token(9, n)).collect();
    for t in &tokens {
        structured(&client.call(
            "add_memory",
            json!({"user_id": "u", "messages": [
                {"role": "user", "content": format!("note {t} for later")}]}),
        ));
    }
    // SIGTERM: the dialog being memorized finishes, the rest stays queued, the store closes.
    assert!(
        client.terminate(),
        "the server did not exit cleanly on SIGTERM"
    );
    let mut client = StdioClient::ours(&store, &["--workers", "1"]);
    wait_drained(&mut client);
    let memories = all_memories(&mut client, "u");
    assert_eq!(memories.len(), tokens.len());
    for t in &tokens {
        let needle = format!("note {t} for later");
        assert_eq!(
            memories.iter().filter(|m| m.contains(&needle)).count(),
            1,
            "{t}"
        );
    }
}
