//! The knowledge-graph tools against the reference server: the same scripted calls, over stdio,
//! to `@modelcontextprotocol/server-memory` (node, from `mcp/tests/node`: `npm install` there)
//! and to `memorybench-mcp` give the same results: text, structured content and errors, and
//! the same tool names, titles, descriptions, annotations and input fields.

use std::process::Command;

use crate::support::{is_error, node, npm_file, text, StdioClient};
use serde_json::{json, Value};

/// The scripted calls: creation with duplicates (within a call and against the graph),
/// unicode, observations on missing entities, deletes of missing things, searches.
fn script() -> Vec<(&'static str, Value)> {
    vec![
        ("read_graph", json!({})),
        (
            "create_entities",
            json!({"entities": [
                {"name": "Alice", "entityType": "person", "observations": ["likes tea", "works at Acme"]},
                {"name": "Acme", "entityType": "company", "observations": []},
                {"name": "Zoë 🦊", "entityType": "人物", "observations": ["speaks 日本語", "naïve café"]},
                {"name": "Alice", "entityType": "robot", "observations": ["duplicate in one call"]}
            ]}),
        ),
        (
            "create_entities",
            json!({"entities": [
                {"name": "Alice", "entityType": "person", "observations": []},
                {"name": "Bob", "entityType": "person", "observations": ["plays go", "plays go"]}
            ]}),
        ),
        (
            "create_relations",
            json!({"relations": [
                {"from": "Alice", "to": "Acme", "relationType": "works_at"},
                {"from": "Alice", "to": "Bob", "relationType": "knows"},
                {"from": "Alice", "to": "Bob", "relationType": "knows"},
                {"from": "Zoë 🦊", "to": "Ghost", "relationType": "haunts"}
            ]}),
        ),
        (
            "create_relations",
            json!({"relations": [
                {"from": "Alice", "to": "Acme", "relationType": "works_at"},
                {"from": "Bob", "to": "Alice", "relationType": "knows"}
            ]}),
        ),
        (
            "add_observations",
            json!({"observations": [
                {"entityName": "Bob", "contents": ["plays go", "likes tea", "new", "new"]},
                {"entityName": "Zoë 🦊", "contents": ["émoji ✓"]}
            ]}),
        ),
        (
            "add_observations",
            json!({"observations": [
                {"entityName": "Bob", "contents": ["should not be saved"]},
                {"entityName": "Nobody", "contents": ["x"]}
            ]}),
        ),
        ("read_graph", json!({})),
        ("search_nodes", json!({"query": "TEA"})),
        ("search_nodes", json!({"query": "日本"})),
        ("search_nodes", json!({"query": "company"})),
        ("search_nodes", json!({"query": "no such thing"})),
        ("open_nodes", json!({"names": ["Bob", "Missing"]})),
        ("open_nodes", json!({"names": []})),
        (
            "delete_observations",
            json!({"deletions": [
                {"entityName": "Alice", "observations": ["likes tea", "never there"]},
                {"entityName": "Missing", "observations": ["x"]}
            ]}),
        ),
        (
            "delete_relations",
            json!({"relations": [
                {"from": "Alice", "to": "Bob", "relationType": "knows"},
                {"from": "No", "to": "One", "relationType": "x"}
            ]}),
        ),
        ("read_graph", json!({})),
        (
            "delete_entities",
            json!({"entityNames": ["Alice", "Missing"]}),
        ),
        ("read_graph", json!({})),
        ("delete_entities", json!({"entityNames": []})),
        (
            "create_entities",
            json!({"entities": [
                {"name": "Alice", "entityType": "person", "observations": ["back again"]}
            ]}),
        ),
        ("open_nodes", json!({"names": ["Alice", "Zoë 🦊"]})),
        ("read_graph", json!({})),
        // Blank strings, which the reference keeps (issue 76: ours answered in the engine's
        // words).
        (
            "create_entities",
            json!({"entities": [{"name": "", "entityType": "", "observations": []}]}),
        ),
        (
            "create_relations",
            json!({"relations": [{"from": "", "to": "", "relationType": ""}]}),
        ),
        (
            "add_observations",
            json!({"observations": [{"entityName": "", "contents": [""]}]}),
        ),
        ("open_nodes", json!({"names": [""]})),
        ("read_graph", json!({})),
    ]
}

/// What must agree: the error flag, the text (for errors, the message after any prefix the
/// SDK adds), and the structured content.
fn comparable(result: &Value) -> Value {
    if is_error(result) {
        let message = text(result);
        let message = message.rsplit(": ").next().unwrap_or(message);
        json!({"error": message})
    } else {
        json!({"text": text(result), "structured": result.get("structuredContent")})
    }
}

/// What this server adds to the reference's tools (docs/mcp.md, "Paged reads"): optional input
/// fields and output properties, taken out of our description before it is compared (and
/// checked to be optional, so every call the reference accepts means the same here). These
/// tools also refuse unknown fields (`additionalProperties: false`), so that a misspelt
/// `limit` cannot return the whole graph unasked.
const EXTENSIONS: &[(&str, &[&str], &[&str])] = &[
    ("read_graph", &["cursor", "limit"], &["nextCursor"]),
    ("search_nodes", &["cursor", "limit"], &["nextCursor"]),
];

/// `tool` (ours) without its [`EXTENSIONS`].
fn without_extensions(mut tool: Value) -> Value {
    let Some((_, inputs, outputs)) = EXTENSIONS.iter().find(|(name, ..)| tool["name"] == *name)
    else {
        return tool;
    };
    let strict = tool["inputSchema"]
        .as_object_mut()
        .and_then(|schema| schema.remove("additionalProperties"));
    assert_eq!(
        strict,
        Some(json!(false)),
        "{} takes unknown fields",
        tool["name"]
    );
    for (schema, fields) in [("inputSchema", inputs), ("outputSchema", outputs)] {
        let required = tool[schema]["required"].clone();
        for field in fields.iter() {
            assert!(
                !required
                    .as_array()
                    .is_some_and(|r| r.contains(&json!(field))),
                "{} requires its extension {field}",
                tool["name"]
            );
            let removed = tool[schema]["properties"]
                .as_object_mut()
                .and_then(|p| p.remove(*field));
            assert!(removed.is_some(), "{} lacks {field}", tool["name"]);
        }
    }
    tool
}

/// What must agree in a tool's description: everything but the JSON Schema dialect (zod
/// writes draft-07, schemars 2020-12, the same keywords here), the SDK's `execution` field and,
/// for the output schema, property descriptions (the reference has none on `results`).
fn summary(tool: &Value) -> Value {
    let mut input = tool["inputSchema"].clone();
    if let Some(schema) = input.as_object_mut() {
        schema.remove("$schema");
    }
    let mut output_properties: Vec<String> = tool["outputSchema"]["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    output_properties.sort();
    json!({
        "name": tool["name"],
        "title": tool["title"],
        "description": tool["description"],
        "annotations": tool["annotations"],
        "input_schema": input,
        "output_properties": output_properties,
        "output_required": tool["outputSchema"]["required"],
    })
}

#[test]
fn knowledge_graph_tools_match_the_reference_server() {
    let Some(node) = node() else {
        return mb_core::test_data::skip(
            "node is not installed (apt-get install nodejs npm, then npm ci in mcp/tests/node)",
        );
    };
    let Some(reference_js) = npm_file("@modelcontextprotocol/server-memory/dist/index.js") else {
        return mb_core::test_data::skip(
            "@modelcontextprotocol/server-memory is not installed (cd mcp/tests/node && npm ci)",
        );
    };
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(node);
    command
        .arg(&reference_js)
        .env("MEMORY_FILE_PATH", dir.path().join("memory.jsonl"));
    let mut reference = StdioClient::start(command);
    let mut ours = StdioClient::ours(&dir.path().join("store"), &[]);

    let reference_tools: Vec<Value> = reference.tools().iter().map(summary).collect();
    let our_tools: Vec<Value> = ours
        .tools()
        .into_iter()
        .map(|t| summary(&without_extensions(t)))
        .collect();
    for tool in &reference_tools {
        let name = &tool["name"];
        let found = our_tools.iter().find(|t| &t["name"] == name);
        assert_eq!(found, Some(tool), "tool {name} differs");
    }

    for (step, (tool, arguments)) in script().into_iter().enumerate() {
        let expected = reference.call(tool, arguments.clone());
        let got = ours.call(tool, arguments.clone());
        assert_eq!(
            comparable(&got),
            comparable(&expected),
            "step {step}: {tool} {arguments}\nreference: {expected:#}\nours: {got:#}"
        );
    }

    // The graph as a resource, as the reference lists and reads it.
    let list = |client: &mut StdioClient| {
        client.request("resources/list", json!({}))["result"]["resources"].clone()
    };
    assert_eq!(list(&mut ours), list(&mut reference));
    let read = |client: &mut StdioClient| {
        client.request("resources/read", json!({"uri": "memory://knowledge-graph"}))["result"]
            ["contents"]
            .clone()
    };
    assert_eq!(read(&mut ours), read(&mut reference));

    // Our pages, joined, are the reference's whole reply.
    for (tool, arguments) in [
        ("read_graph", json!({})),
        ("search_nodes", json!({"query": "a"})),
    ] {
        let whole = reference.call(tool, arguments.clone())["structuredContent"].clone();
        assert_eq!(read_pages(&mut ours, tool, arguments, 1), whole, "{tool}");
    }
    let misspelt = ours.call("read_graph", json!({"limt": 1}));
    assert!(
        is_error(&misspelt) && text(&misspelt).contains("limt"),
        "{misspelt}"
    );

    // The graph persists: a new process on the same store reads the same graph.
    let final_graph = ours.call("read_graph", json!({}));
    drop(ours);
    let mut reopened = StdioClient::ours(&dir.path().join("store"), &[]);
    assert_eq!(
        comparable(&reopened.call("read_graph", json!({}))),
        comparable(&final_graph)
    );

    // The reference's file imported into a new store is the reference's graph.
    let file = dir.path().join("memory.jsonl");
    let file = file.to_str().unwrap();
    let mut imported = StdioClient::ours(&dir.path().join("imported"), &["--import-jsonl", file]);
    assert_eq!(
        comparable(&imported.call("read_graph", json!({}))),
        comparable(&reference.call("read_graph", json!({})))
    );
}

/// Every page of `tool` with `arguments` and `limit`, joined into one graph (relations in a
/// search's pages once each).
fn read_pages(client: &mut StdioClient, tool: &str, mut arguments: Value, limit: u32) -> Value {
    let (mut entities, mut relations) = (Vec::new(), Vec::<Value>::new());
    arguments["limit"] = json!(limit);
    for _ in 0..100 {
        let page = client.call(tool, arguments.clone());
        assert!(!is_error(&page), "{tool}: {page}");
        let page = &page["structuredContent"];
        entities.extend(page["entities"].as_array().cloned().unwrap_or_default());
        for relation in page["relations"].as_array().cloned().unwrap_or_default() {
            // A search's relation touching entities of two pages is in both.
            if tool == "read_graph" || !relations.contains(&relation) {
                relations.push(relation);
            }
        }
        match page.get("nextCursor") {
            Some(cursor) => arguments["cursor"] = cursor.clone(),
            None => return json!({"entities": entities, "relations": relations}),
        }
    }
    panic!("{tool}: more than 100 pages")
}
