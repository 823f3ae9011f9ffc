//! `@modelcontextprotocol/conformance` (npm, unmodified) against our Streamable HTTP transport.
//!
//! The suite's server scenarios split in two: protocol checks any server must pass
//! (initialization, ping, tool listing, SSE streams, DNS-rebinding protection), run here and
//! required to pass; and checks of the suite's own fixture server (tools named `test_*`,
//! resources, prompts, completion, logging, sampling, elicitation) that a memory server does not
//! have; docs/mcp.md lists those and how to run any scenario by hand.

use std::process::Command;

use crate::support::{node, npm_file, ours_http};

/// The scenarios a server without the suite's fixtures must pass.
const SCENARIOS: &[&str] = &[
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

#[test]
fn the_conformance_suite_passes_its_protocol_scenarios() {
    let Some(node) = node() else {
        return mb_core::test_data::skip(
            "node is not installed (apt-get install nodejs npm, then npm ci in mcp/tests/node)",
        );
    };
    let Some(suite) = npm_file("@modelcontextprotocol/conformance/dist/index.js") else {
        return mb_core::test_data::skip(
            "@modelcontextprotocol/conformance is not installed (cd mcp/tests/node && npm ci)",
        );
    };
    let dir = tempfile::tempdir().unwrap();
    let (mut server, url) = ours_http(&dir.path().join("store"));
    let mut failed = Vec::new();
    for scenario in SCENARIOS {
        let output = Command::new(&node)
            .arg(&suite)
            .args(["server", "--url", &url, "--scenario", scenario])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() || !stdout.contains(" 0 failed") {
            failed.push(format!(
                "{scenario}:\n{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        failed.is_empty(),
        "failed scenarios:\n{}",
        failed.join("\n")
    );
}
